#!/usr/bin/env python3
"""The .item() loop of issue 19, as a new user writes it: every step reads a norm back to the host
with .item(), which waits for all the work queued before it. libprof's finding for that wait
should name this file's line (marked "the wait"), not PyTorch's C++.

Usage: python3 torch_item_loop.py [steps=200] [--abort-after-steps N]
  --abort-after-steps N: after N steps, wait two seconds and call os.abort(), as a crashing
  program would (the trace must keep the call stacks of the calls it holds).
Prints: the steps and the last norm.
"""
import os
import sys
import time

import torch


def step(x: torch.Tensor) -> float:
    for _ in range(20):  # queued faster than the GPU runs it: 64 MiB read and written per pass
        x.mul_(1.0)
    norm = x.norm().item()  # the wait
    x.div_(norm)
    return norm


def main() -> int:
    args = sys.argv[1:]
    abort_after = None
    if "--abort-after-steps" in args:
        i = args.index("--abort-after-steps")
        abort_after = int(args[i + 1])
        del args[i:i + 2]
    steps = int(args[0]) if args else 200
    x = torch.rand(1 << 24, device="cuda") + 1.0
    norm = 0.0
    for i in range(steps):
        norm = step(x)
        if abort_after is not None and i + 1 == abort_after:
            print(f"torch_item_loop: aborting after {abort_after} steps", flush=True)
            # Periodic flushes of the profiler happen meanwhile, as in a long run. Half a second
            # was too short once in five runs on the H100 (7 calls of ~120 reached the trace):
            # how much is delivered before a crash is CUPTI's timing, not what the test checks.
            time.sleep(2.0)
            os.abort()
    print(f"torch_item_loop: steps={steps} last_norm={norm:.4f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
