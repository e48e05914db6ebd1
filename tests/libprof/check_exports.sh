#!/usr/bin/env bash
# Proves libprof.so is safe to inject: it exports only its injection entry points, and needs no
# shared library beyond libc, libm, libdl, libpthread, libgcc/libstdc++ (none: static), ld.so.
# CUPTI and the CUDA driver are dlopen'd, so they must not appear either.
set -euo pipefail
lib="$1"
exports=$(nm -D --defined-only "$lib" | awk '{print $3}' | sort)
expected=$'InitializeInjection\nInitializeInjectionNvtx2\nInitializeInjectionNvtxExtension'
if [[ "$exports" != "$expected" ]]; then
  echo "FAIL: $lib exports:"; echo "$exports"; echo "expected only:"; echo "$expected"; exit 1
fi
needed=$(readelf -d "$lib" | awk '/NEEDED/ {gsub(/[\[\]]/, "", $5); print $5}')
for n in $needed; do
  case "$n" in
    libc.so.*|libm.so.*|libdl.so.*|libpthread.so.*|ld-linux*|libgcc_s.so.*) ;;
    *) echo "FAIL: $lib depends on $n"; exit 1 ;;
  esac
done
echo "OK: exports {$(echo $exports)}; needs {$(echo $needed)}"
