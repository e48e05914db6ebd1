#!/usr/bin/env python3
"""Two autotuners at work in a PyTorch program, then a steady loop: cuDNN's algorithm search
(torch.backends.cudnn.benchmark) for each of three input shapes of a conv net, and
@triton.autotune timing eight configs of an elementwise kernel; then each step reads its result
back with .item() (marked: the wait).

A profiler should show: the search's event and device synchronisations and Triton's do_bench
synchronisations as one-time work (paid once per shape or key, not the loop's), each named for
its tuner, and the .item() per step as the steady state's wait at its line.

Usage: python3 torch_autotune.py [steps=20]
Prints: a checksum of what was read back (the same with and without a profiler, up to the
algorithms cuDNN picks, which may differ in the last digits).
"""
import sys

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.autotune(
    configs=[triton.Config({"BLOCK": b}, num_warps=w) for b in (256, 512, 1024, 2048) for w in (4, 8)],
    key=["n"],
)
@triton.jit
def scale_add(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(out_ptr + offs, 0.5 * tl.load(x_ptr + offs, mask=m) + tl.load(y_ptr + offs, mask=m), mask=m)


def main(steps: int) -> None:
    torch.manual_seed(0)
    torch.backends.cudnn.benchmark = True
    net = nn.Sequential(nn.Conv2d(3, 64, 3, padding=1), nn.ReLU(), nn.Conv2d(64, 64, 3, padding=1)).cuda().eval()
    # 32M elements: each launch runs longer on the GPU (about 0.1 ms) than it takes to issue, so
    # Triton's do_bench queues work ahead and its synchronisations wait (with 4M the host could
    # fall behind the GPU and the waits shrank under 20 µs in one run of four).
    x = torch.randn(1 << 25, device="cuda")
    y = torch.randn(1 << 25, device="cuda")
    out = torch.empty_like(x)
    total = 0.0
    with torch.inference_mode():
        for step in range(steps):
            size = (96, 128, 160)[step % 3]  # a new shape on each of the first three steps
            image = torch.randn(16, 3, size, size, device="cuda")
            n = x.numel()
            scale_add[lambda meta: (triton.cdiv(n, meta["BLOCK"]),)](x, y, out, n)
            total += net(image).float().mean().item() + out[:16].sum().item()  # the wait
    print(f"torch_autotune: steps={steps} total={total:.4f}")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 20)
