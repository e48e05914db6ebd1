#!/usr/bin/env python3
"""PyTorch eager loop: the launch-bound pattern of seed 002 as PyTorch users meet it.

1000 in-place additions on a 32-element tensor (one tiny kernel each), a small matmul, then one
synchronisation, all inside an NVTX range pushed through torch.cuda.nvtx.

A profiler injected with LD_PRELOAD should show: ~1000 elementwise kernels with launch gaps
between them, a GEMM kernel, the NVTX range "torch_loop" around them (torch's own NVTX instance
reads NVTX_INJECTION64_PATH, which libprof sets before main), and the copy behind .item()/.sum().

Usage: python3 torch_loop.py [iterations=1000]
Prints: the final sums (deterministic: integers held exactly in float32).
"""
import sys

import torch


def main() -> int:
    iterations = int(sys.argv[1]) if len(sys.argv) > 1 else 1000
    x = torch.ones(32, device="cuda")
    torch.cuda.nvtx.range_push("torch_loop")
    for _ in range(iterations):
        x.add_(1)
    a = torch.ones(64, 64, device="cuda")
    product = a @ a
    torch.cuda.synchronize()
    torch.cuda.nvtx.range_pop()
    print(f"torch_loop: iterations={iterations} sum={int(x.sum().item())} "
          f"matmul_sum={int(product.sum().item())}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
