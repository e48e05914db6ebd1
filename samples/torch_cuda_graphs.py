#!/usr/bin/env python3
"""CUDA graphs through PyTorch: an 8-layer MLP captured once (torch.cuda.graph) and replayed 100
times, each replay in an NVTX range "replay" and followed by a blocking .item().

A profiler should show: the graph's kernels (per node by default; one record per launch with
LIBPROF_TRACE=...,graph), one cudaGraphLaunch per replay, and the host blocked in
cudaStreamSynchronize behind each replay's graph.

Usage: python3 torch_cuda_graphs.py
Prints: the sum of the replays' outputs to 1 decimal.
"""
import sys

import torch


def main() -> int:
    torch.manual_seed(0)
    model = torch.nn.Sequential(*[torch.nn.Linear(512, 512) for _ in range(8)]).cuda()
    static_x = torch.randn(256, 512, device="cuda")
    side = torch.cuda.Stream()  # warm-up on a side stream, as torch.cuda.graph requires
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(3):
            model(static_x)
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        static_y = model(static_x)
    total = 0.0
    for _ in range(100):
        torch.cuda.nvtx.range_push("replay")
        static_x.copy_(torch.randn(256, 512, device="cuda"))
        graph.replay()
        total += static_y.sum().item()
        torch.cuda.nvtx.range_pop()
    print(f"torch_cuda_graphs: total={total:.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
