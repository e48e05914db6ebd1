#!/usr/bin/env python3
"""torch.distributed with the NCCL backend, world size 1: collectives of known sizes.

One process, one GPU, one rank. NCCL annotates each call with an NVTX range of its "NCCL" domain
whose payload (NVTX payload extension) carries the communicator, the message size and the
reduction; libprof records them (NVTX_INJECTION64_PATH). On one rank NCCL moves no data between
GPUs: an in-place SUM does nothing on the device, AVG runs a one-rank kernel (x * 1/n), an
out-of-place all_gather copies. So the trace holds every kind of device work a collective range
can contain, with sizes a test can check:

  5 x all_reduce SUM of 262144 float32   (1 MiB each, no device work)
  5 x all_reduce AVG of 1048576 float32  (4 MiB each, a kernel each)
  5 x all_reduce AVG of 4194304 float32  (16 MiB each)
  3 x all_gather_into_tensor of 262144 float32 (1 MiB message, a copy each)

Usage: python3 torch_allreduce.py
Prints: one line with the sums (deterministic).
"""
import os
import sys

import torch
import torch.distributed as dist


def main() -> int:
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ.setdefault("MASTER_PORT", "29533")
    torch.cuda.set_device(0)
    dist.init_process_group("nccl", rank=0, world_size=1, device_id=torch.device("cuda:0"))
    total = 0.0
    for elements, op, calls in ((262144, dist.ReduceOp.SUM, 5), (1048576, dist.ReduceOp.AVG, 5),
                                (4194304, dist.ReduceOp.AVG, 5)):
        x = torch.ones(elements, device="cuda")
        for _ in range(calls):
            dist.all_reduce(x, op=op)
        total += float(x.sum().item())
    src = torch.ones(262144, device="cuda")
    dst = torch.empty(262144, device="cuda")
    for _ in range(3):
        dist.all_gather_into_tensor(dst, src)
    total += float(dst.sum().item())
    torch.cuda.synchronize()
    dist.destroy_process_group()
    print(f"torch_allreduce: total={int(total)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
