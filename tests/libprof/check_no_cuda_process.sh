#!/usr/bin/env bash
# Proves libprof is invisible in a process that never initialises CUDA: preloaded into a plain
# program (and with the injection variables set, as collect.sh sets them), the program's stdout
# and exit code are unchanged, nothing is printed on stderr, and no trace file is written.
set -euo pipefail
lib="$1"
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cd "$dir"
expected=$(printf 'hello\n')
for mode in preload injection; do
  env=(LD_PRELOAD="$lib")
  [[ $mode == injection ]] && env=(CUDA_INJECTION64_PATH="$lib" NVTX_INJECTION64_PATH="$lib" LD_PRELOAD="$lib")
  set +e
  out=$(env "${env[@]}" LIBPROF_LOG_LEVEL=info sh -c 'echo hello; exit 7' 2>"$dir/stderr")
  code=$?
  set -e
  [[ "$out" == "$expected" ]] || { echo "FAIL ($mode): stdout changed: '$out'"; exit 1; }
  [[ $code -eq 7 ]] || { echo "FAIL ($mode): exit code $code, want 7"; exit 1; }
  [[ ! -s "$dir/stderr" ]] || { echo "FAIL ($mode): stderr: $(cat "$dir/stderr")"; exit 1; }
  if compgen -G "$dir/*.pb" >/dev/null; then echo "FAIL ($mode): a trace was written"; exit 1; fi
done
echo "OK: no output, no trace, exit code kept"
