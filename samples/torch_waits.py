#!/usr/bin/env python3
"""Every common way a PyTorch program waits for the GPU, each after a GEMM of a few
milliseconds: x.item(), x.cpu(), x.tolist(), torch.cuda.synchronize(), printing a tensor,
float(x) and bool(x). None of them says in the source that it waits.

A profiler should show: each line (marked) as the call site of a host wait on the GEMM before
it, and say in PyTorch's words what the line did: read a number from a CUDA tensor (item, float,
bool), copy a tensor to the CPU (cpu, tolist), torch.cuda.synchronize(), format a tensor as
text (printing).

Usage: python3 torch_waits.py [rounds=5]
Prints: a checksum of what was read back.
"""
import sys

import torch


def main(rounds: int) -> None:
    torch.manual_seed(0)
    a = torch.randn(8192, 8192, device="cuda") * 1e-2
    total = 0.0
    for _ in range(rounds):
        x = a @ a
        total += x[0, 0].item()  # item
        x = a @ a
        total += float(x[:4, :4].cpu().sum())  # cpu
        x = a @ a
        total += sum(x[0, :4].tolist())  # tolist
        x = a @ a
        torch.cuda.synchronize()  # synchronize
        x = a @ a
        total += len(str(x[0, :2]))  # print
        x = a @ a
        total += float(x[0, 0])  # float
        x = a @ a
        total += bool(x[0, 0] > 0)  # bool
    print(f"torch_waits: rounds={rounds} checksum={total:.4f}")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 5)
