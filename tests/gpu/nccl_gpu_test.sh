#!/usr/bin/env bash
# GPU test of the NCCL collectives (issue 17): torch.distributed with the NCCL backend, world
# size 1, runs all-reduces and all-gathers of known sizes under libprof.so; profview collectives
# must show them with the right operation, count and bytes (samples/torch_allreduce.py says
# which). Exits 77 (skipped) without a GPU or without torch.
# usage: nccl_gpu_test.sh LIBPROF_SO PROFVIEW TORCH_ALLREDUCE_PY [TRACE_OUT]
set -uo pipefail
lib=$1 profview=$2 script=$3 trace=${4:-$(mktemp -d)/torch_allreduce.pb}
python=${LIBPROF_TEST_PYTHON:-python3}
# NVLink multicast stays off (a program using it can take a shared host's GPUs out of service).
export NCCL_NVLS_ENABLE=${NCCL_NVLS_ENABLE:-0}
export TORCH_SYMM_MEM_DISABLE_MULTICAST=${TORCH_SYMM_MEM_DISABLE_MULTICAST:-1}
export NVSHMEM_DISABLE_NVLS=${NVSHMEM_DISABLE_NVLS:-1}
if [[ ! -e /dev/nvidiactl ]] || ! nvidia-smi -L >/dev/null 2>&1; then
  echo "SKIP: no GPU here"; exit 77
fi
if ! "$python" -c 'import torch.distributed' 2>/dev/null; then
  echo "SKIP: no torch for $python"; exit 77
fi
rm -f "$trace"
LIBPROF_OUTPUT=$trace CUDA_INJECTION64_PATH=$lib NVTX_INJECTION64_PATH=$lib \
  timeout 300 "$python" "$script" || { echo "FAIL: $script exit $?"; exit 1; }
"$profview" collectives "$trace" || { echo "FAIL: profview collectives"; exit 1; }
"$profview" collectives --format json "$trace" | "$python" "$(dirname "$0")/check_collectives.py"
