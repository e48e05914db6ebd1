#!/usr/bin/env bash
# Runs on the lent GPU machine (see .library/device): the gpu tests, then records the fixture
# traces committed under samples/traces/. Expects the build folder built on the dev machine at
# /work/main/build (carried along) and Debian's shared libraries the test binaries need in
# .carry/lib. Results land in $OUT.
set -uo pipefail
repo=$PWD
# Test binaries carry absolute paths of the build tree; make them valid here.
mkdir -p /work && [[ -e /work/main ]] || ln -s "$repo" /work/main
export LD_LIBRARY_PATH=$repo/.carry/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
nvidia-smi -L
out=${OUT:-/tmp/out}
mkdir -p "$out"
cd /work/main/build
ctest -L gpu --output-on-failure --timeout 300 2>&1 | tee "$out/ctest-gpu.log" | tail -n 80
lib=/work/main/build/libprof/libprof.so
mkdir -p "$out/traces"
record() {  # record NAME ARGS...: one trace per sample into $out/traces/NAME.pb
  local name=$1; shift
  rm -f "/tmp/$name.pb"
  LIBPROF_OUTPUT=/tmp/$name.pb CUDA_INJECTION64_PATH=$lib NVTX_INJECTION64_PATH=$lib "$@" \
    >/dev/null 2>"$out/traces/$name.stderr" && cp "/tmp/$name.pb" "$out/traces/$name.pb"
  ls -l "$out/traces/$name.pb"
}
s=/work/main/build/samples
record normalize_nrm2 $s/normalize_nrm2 20
record pageable_vs_pinned $s/pageable_vs_pinned
record nvtx_ranges $s/nvtx_ranges
