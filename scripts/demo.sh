#!/usr/bin/env bash
# The main job, end to end. Builds libprof and profview; where a GPU is present, records
# samples/normalize_nrm2 (seed 000's normalize! loop) under libprof and analyses that trace;
# elsewhere analyses the trace of the same program recorded on an H100, samples/traces/.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh  # only what is missing; a no-op on a ready machine
cmake -S . -B build >/dev/null
cmake --build build -j "$(nproc)" --target profview $( [[ -e /dev/nvidiactl ]] && echo libprof normalize_nrm2 )
if [[ -e /dev/nvidiactl && -x build/samples/normalize_nrm2 ]]; then
  trace=build/demo-normalize_nrm2.pb
  rm -f "$trace"
  lib=$PWD/build/libprof/libprof.so
  LIBPROF_OUTPUT=$trace CUDA_INJECTION64_PATH=$lib NVTX_INJECTION64_PATH=$lib \
    build/samples/normalize_nrm2
else
  trace=samples/traces/normalize_nrm2.pb
  echo "demo: no GPU here; analysing the recorded trace $trace"
fi
build/viewer-cli/profview summary "$trace"
build/viewer-cli/profview findings "$trace"
