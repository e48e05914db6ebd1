#!/usr/bin/env bash
# Runs on the lent GPU machine (see .library/device): the GPU tests, then records the fixture
# traces committed under samples/traces/. Expects build-device/ (a Release build made on the dev
# machine, object files removed) carried along, with Debian's libprotobuf in
# build-device/carrylib. Everything worth keeping goes to $OUT.
set -uo pipefail
repo=$PWD
# The test binary holds absolute paths of the build tree; make them valid here.
mkdir -p /work && [[ -e /work/main ]] || ln -s "$repo" /work/main
export LD_LIBRARY_PATH=/work/main/build-device/carrylib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export LIBPROF_TEST_PYTHON=${LIBPROF_TEST_PYTHON:-python3}
out=${OUT:-/tmp/out}
mkdir -p "$out/traces"
nvidia-smi -L
b=/work/main/build-device
"$b/tests/gpu/gpu_capture_test" ${GTEST_FILTER:+--gtest_filter=$GTEST_FILTER} >"$out/gpu_test.log" 2>&1
echo "gpu_capture_test exit code: $?"
grep -E "^\[  (PASSED|FAILED|SKIPPED) |^\[==========\]|tests? (passed|failed)" "$out/gpu_test.log" | tail -40

lib=$b/libprof/libprof.so
record() {  # record NAME PROGRAM ARGS...: one trace into $out/traces/NAME.pb
  local name=$1; shift
  rm -f "/tmp/$name.pb"
  LIBPROF_OUTPUT=/tmp/$name.pb CUDA_INJECTION64_PATH=$lib NVTX_INJECTION64_PATH=$lib \
    timeout 120 "$@" >/dev/null 2>"/tmp/$name.stderr"
  echo "$name: exit $?, $(stat -c %s /tmp/$name.pb 2>/dev/null) bytes"
  cat "/tmp/$name.stderr"
  cp "/tmp/$name.pb" "$out/traces/$name.pb" 2>/dev/null
}
[[ -n "${SKIP_RECORD:-}" ]] && exit 0
record normalize_nrm2 $b/samples/normalize_nrm2 20
record pageable_vs_pinned $b/samples/pageable_vs_pinned 16 2
record nvtx_ranges $b/samples/nvtx_ranges
record stream_overlap $b/samples/stream_overlap --order per-chunk
record launch_bound $b/samples/launch_bound 2000
# Pairs for profview diff's golden tests (issue 13).
record normalize_nrm2_readback $b/samples/normalize_nrm2 20
record normalize_nrm2_on_device $b/samples/normalize_nrm2 20 --result-on-device
record pageable_vs_pinned_pageable $b/samples/pageable_vs_pinned 16 2 --host pageable
record pageable_vs_pinned_pinned $b/samples/pageable_vs_pinned 16 2 --host pinned

# A first look at the cost per launch (bench/ has the real benchmark): launch_bound, 200k launches.
if [[ -n "${QUICK_OVERHEAD:-}" ]]; then
  for round in 1 2 3; do
    for mode in none libprof; do
      env=()
      [[ $mode == libprof ]] && env=(LIBPROF_OUTPUT=/tmp/oh.pb LIBPROF_FORCE_OVERWRITE=1 CUDA_INJECTION64_PATH=$lib)
      start=$(date +%s%N)
      env "${env[@]}" $b/samples/launch_bound 200000 >/dev/null
      echo "round $round $mode: $(( ($(date +%s%N) - start) / 1000000 )) ms for 200000 launches"
    done
  done
fi
