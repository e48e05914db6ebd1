#!/usr/bin/env python3
"""Real models (issue 19, "Cost, measured"): what a profiler adds to a step of
  resnet: a torchvision ResNet-18 training step, batch 32 of 64x64 images, SGD, the loss read
          with loss.item() each step (as training scripts do: one blocking call per step);
  gpt2:   a GPT-2-small-sized transformers model (GPT2LMHeadModel(GPT2Config()): 12 layers, 768
          wide, 124M parameters) forward pass, batch 8 x 128 tokens, no grad, the next token read
          with .item() (as greedy generation does).
Random weights from the config: nothing is downloaded. Each workload is warmed up, then timed
from a synchronize to a synchronize.
Modes: none | kineto-cpu-cuda (torch.profiler with CPU and CUDA activities around the timed
steps). libprof and the CUPTI floor are applied from outside (LD_PRELOAD / injection), mode none.

Usage: torch_models_bench.py [--mode none] [--workload resnet|gpt2|both] [--steps N]
Prints: resnet_ms_per_step=X and/or gpt2_ms_per_step=Y (means), and the median step of each
(resnet_median_ms_per_step, gpt2_median_ms_per_step).
"""
import argparse
import statistics
import sys
import time

import torch


def resnet_workload():
    import torchvision

    model = torchvision.models.resnet18(weights=None, num_classes=100).cuda()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    loss_fn = torch.nn.CrossEntropyLoss()
    images = torch.randn(32, 3, 64, 64, device="cuda")
    labels = torch.randint(0, 100, (32,), device="cuda")

    def body(count):
        total = 0.0
        for _ in range(count):
            optimizer.zero_grad(set_to_none=True)
            loss = loss_fn(model(images), labels)
            loss.backward()
            optimizer.step()
            total += loss.item()
        return total
    return body


def gpt2_workload():
    import transformers

    model = transformers.GPT2LMHeadModel(transformers.GPT2Config()).cuda().eval()
    tokens = torch.randint(0, 50257, (8, 128), device="cuda")

    def body(count):
        last = 0
        with torch.no_grad():
            for _ in range(count):
                logits = model(tokens).logits
                last = logits[0, -1].argmax().item()
        return last
    return body


def timed_ms_per_step(body, steps, mode):
    """(mean, median) milliseconds a step. Each step ends in a blocking .item(), so timing steps
    one by one adds no synchronisation; the median shows the typical step, the mean includes the
    rare slow ones (a profiler's periodic flush, the machine's noise)."""
    body(5)  # warm-up: allocator, cuDNN/cuBLAS plans, lazy modules
    torch.cuda.synchronize()

    def run():
        times = []
        start = time.perf_counter()
        for _ in range(steps):
            t0 = time.perf_counter()
            body(1)
            times.append(time.perf_counter() - t0)
        torch.cuda.synchronize()
        return (time.perf_counter() - start) * 1e3 / steps, statistics.median(times) * 1e3

    if mode == "none":
        return run()
    activities = [torch.profiler.ProfilerActivity.CPU, torch.profiler.ProfilerActivity.CUDA]
    with torch.profiler.profile(activities=activities):
        return run()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--mode", choices=["none", "kineto-cpu-cuda"], default="none")
    parser.add_argument("--workload", choices=["resnet", "gpt2", "both"], default="both")
    parser.add_argument("--steps", type=int, default=40)
    args = parser.parse_args()
    if not torch.cuda.is_available():
        print("torch_models_bench: no CUDA device", file=sys.stderr)
        return 1
    if args.workload in ("resnet", "both"):
        mean, median = timed_ms_per_step(resnet_workload(), args.steps, args.mode)
        print(f"resnet_ms_per_step={mean:.4f}\nresnet_median_ms_per_step={median:.4f}", flush=True)
    if args.workload in ("gpt2", "both"):
        mean, median = timed_ms_per_step(gpt2_workload(), args.steps, args.mode)
        print(f"gpt2_ms_per_step={mean:.4f}\ngpt2_median_ms_per_step={median:.4f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
