#!/usr/bin/env bash
# Builds libprof and runs every test. GPU tests (label gpu) skip with a reason where no GPU is
# present. Usage: scripts/test.sh [--sanitize]  (ASan+UBSan build of the CPU tests, in build-asan)
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh  # only what is missing; a no-op on a ready machine
build=build
args=()
if [[ "${1:-}" == "--sanitize" ]]; then
  build=build-asan
  args=(-DLIBPROF_SANITIZE=ON -DLIBPROF_BUILD_SAMPLES=OFF -DCMAKE_BUILD_TYPE=Debug)
fi
cmake -S . -B "$build" "${args[@]}" >/dev/null
cmake --build "$build" -j "$(nproc)"
ctest --test-dir "$build" --output-on-failure -j "$(nproc)"
