#!/usr/bin/env python3
"""torch.compile'd training: an MLP compiled by Inductor (Triton kernels and cuBLAS GEMMs), one
NVTX range "step" per iteration, its batch copied from pageable memory each step.

A profiler should show: Triton kernels (triton_poi_fused_*) beside cuBLAS's sm80_xmma_gemm_*
kernels, whose names differ only past their first 33 characters; a pageable host-to-device
copy per step; the compilation inside the first steps. Recorded at two batch sizes it is a pair
for `profview diff`: per iteration of "step", cuBLAS picks other GEMM kernels (tile sizes) for
the larger batch, and the copy grows with it.

Usage: python3 torch_compile_train.py BATCH [steps=40]
Prints: the batch, the steps and the last loss to 2 decimals.
"""
import sys

import torch


def main() -> int:
    batch = int(sys.argv[1])
    steps = int(sys.argv[2]) if len(sys.argv) > 2 else 40
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(1024, 4096), torch.nn.GELU(),
                                torch.nn.Linear(4096, 4096), torch.nn.GELU(),
                                torch.nn.Linear(4096, 10)).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    compiled = torch.compile(model)
    x_host = torch.randn(batch, 1024)  # pageable on purpose: a synchronous copy each step
    y = torch.randint(0, 10, (batch,), device="cuda")
    for _ in range(steps):
        torch.cuda.nvtx.range_push("step")
        x = x_host.to("cuda", non_blocking=True)
        loss = torch.nn.functional.cross_entropy(compiled(x), y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        torch.cuda.nvtx.range_pop()
    print(f"torch_compile_train: batch={batch} steps={steps} loss={loss.item():.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
