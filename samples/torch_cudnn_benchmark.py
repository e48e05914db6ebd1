#!/usr/bin/env python3
"""PyTorch: a conv net's inference loop with torch.backends.cudnn.benchmark. cuDNN times candidate
algorithms on the first steps (each candidate kernel launched, then an event or device
synchronisation); then the loop runs at speed in fp16 (autocast) with channels_last and a
blocking .item() per step.

A profiler should show: start-up, cuDNN's search with its 80 event and device synchronisations
(each on another candidate kernel) as waits paid once, a row per API, and the steady state's
per-step cudaStreamSynchronize of the .item() waiting for the network's last kernels. Where
start-up ends depends on the run (H200, 2026-11-29): on a first run (cold caches) the search took
2 s with the GPU 5% busy and fell inside the warm-up; with warm caches
(samples/traces/torch_cudnn_benchmark.pb) the GPU was busier than the warm-up's 10% bar, so
start-up ends at 0.87 s (147 ms of it context creation inside cudaDeviceGetStreamPriorityRange),
before the search does. Either way the search's synchronisations are marked as cuDNN's search
from their stacks (cudnn_frontend::time_sorted_plan), "sync-api (autotuning)" in the golden.

Usage: python3 torch_cudnn_benchmark.py [steps=60]
Prints the sum of the outputs (the same with and without a profiler).
"""
import sys

import torch
import torch.nn as nn


def main(steps):
    torch.manual_seed(0)
    torch.backends.cudnn.benchmark = True
    layers = []
    for c in (3, 64, 128, 256):
        out = max(64, c * 2)
        layers += [nn.Conv2d(c, out, 3, padding=1), nn.BatchNorm2d(out), nn.ReLU()]
    net = nn.Sequential(*layers, nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(512, 10))
    net = net.cuda().eval().to(memory_format=torch.channels_last)
    x = torch.randn(64, 3, 128, 128, device="cuda").to(memory_format=torch.channels_last)
    total = 0.0
    with torch.inference_mode(), torch.autocast("cuda", dtype=torch.float16):
        for _ in range(steps):
            total += net(x).float().sum().item()
    print(f"torch_cudnn_benchmark: steps={steps} sum={total:.3f}")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 60)
