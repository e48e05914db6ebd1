#!/usr/bin/env python3
"""PyTorch eager loops (issue 5, "Overhead" 2): what a profiler adds per op in a launch-bound
PyTorch program, where each eager op makes several trivial runtime calls besides its launch.

Workloads, each warmed up first, then timed from a synchronize to a synchronize:
  add: x.add_(1) on a 32-float CUDA tensor, --ops times (100k);
  mlp: a training step of 3 Linear layers 512 wide, batch 64, MSE loss, SGD, --steps times (2000).
Modes: none | kineto-cpu-cuda (torch.profiler, CPU+CUDA activities, around the timed loop only)
| kineto-cuda (CUDA activities only). libprof is applied from outside (LD_PRELOAD) in mode none.
--export PATH (kineto modes, add only) also writes the Chrome trace, for its size.

Usage: torch_loop_bench.py --mode none [--workload add|mlp|both] [--ops N] [--steps N]
Prints: add_us_per_op=X and/or mlp_us_per_step=Y.
"""
import argparse
import sys
import time

import torch


def add_workload():
    x = torch.zeros(32, device="cuda")

    def body(count):
        for _ in range(count):
            x.add_(1)
    return body


def mlp_workload():
    model = torch.nn.Sequential(
        torch.nn.Linear(512, 512), torch.nn.ReLU(),
        torch.nn.Linear(512, 512), torch.nn.ReLU(),
        torch.nn.Linear(512, 512)).cuda()
    opt = torch.optim.SGD(model.parameters(), lr=1e-3)
    loss_fn = torch.nn.MSELoss()
    x = torch.randn(64, 512, device="cuda")
    target = torch.randn(64, 512, device="cuda")

    def body(count):
        for _ in range(count):
            opt.zero_grad(set_to_none=True)
            loss_fn(model(x), target).backward()
            opt.step()
    return body


def timed_us_per_iter(body, count, mode, export):
    """Runs body(count) under the profiler the mode asks for; returns host us per iteration."""
    body(max(count // 20, 50))  # warm-up: allocator, kernels, cuBLAS handles
    torch.cuda.synchronize()
    if mode == "none":
        start = time.perf_counter()
        body(count)
        torch.cuda.synchronize()
        return (time.perf_counter() - start) * 1e6 / count
    activities = [torch.profiler.ProfilerActivity.CUDA]
    if mode == "kineto-cpu-cuda":
        activities.insert(0, torch.profiler.ProfilerActivity.CPU)
    with torch.profiler.profile(activities=activities) as prof:
        start = time.perf_counter()
        body(count)
        torch.cuda.synchronize()
        elapsed = time.perf_counter() - start
    if export:
        prof.export_chrome_trace(export)
    return elapsed * 1e6 / count


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--mode", choices=["none", "kineto-cpu-cuda", "kineto-cuda"], default="none")
    parser.add_argument("--workload", choices=["add", "mlp", "both"], default="both")
    parser.add_argument("--ops", type=int, default=100_000)
    parser.add_argument("--steps", type=int, default=2000)
    parser.add_argument("--export", default="")
    args = parser.parse_args()
    if not torch.cuda.is_available():
        print("torch_loop_bench: no CUDA device", file=sys.stderr)
        return 1
    if args.workload in ("add", "both"):
        us = timed_us_per_iter(add_workload(), args.ops, args.mode, args.export)
        print(f"add_us_per_op={us:.4f}", flush=True)
    if args.workload in ("mlp", "both"):
        us = timed_us_per_iter(mlp_workload(), args.steps, args.mode, "")
        print(f"mlp_us_per_step={us:.4f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
