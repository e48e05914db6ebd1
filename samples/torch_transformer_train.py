#!/usr/bin/env python3
"""PyTorch: a 4-layer transformer encoder trained in bf16 autocast with fused AdamW, its batches
prefetched from pinned memory on a side stream (non_blocking copies), NVTX "step" ranges.

A profiler should show: cuBLAS/cuDNN kernels launched from two host threads (the main thread's
forward pass and autograd's backward thread), the pinned copies on their own stream, the
model's parameters copied from pageable memory once, and that start-up (CUDA and library
loading, the first steps loading their kernels) ends before the loop runs at speed.

Usage: LD_PRELOAD=build/libprof/libprof.so python3 samples/torch_transformer_train.py [steps=30]
"""
import sys

import torch

torch.manual_seed(0)
dev = "cuda"
layer = torch.nn.TransformerEncoderLayer(512, 8, 2048, batch_first=True, dropout=0.0)
model = torch.nn.TransformerEncoder(layer, 4).to(dev)
head = torch.nn.Linear(512, 10).to(dev)
opt = torch.optim.AdamW(list(model.parameters()) + list(head.parameters()), lr=1e-4, fused=True)
steps = int(sys.argv[1]) if len(sys.argv) > 1 else 30
host = [torch.randn(32, 128, 512).pin_memory() for _ in range(4)]
labels = [torch.randint(0, 10, (32,)).pin_memory() for _ in range(4)]
side = torch.cuda.Stream()


def fetch(i):
    with torch.cuda.stream(side):
        return host[i % 4].to(dev, non_blocking=True), labels[i % 4].to(dev, non_blocking=True)


nxt = fetch(0)
for i in range(steps):
    torch.cuda.nvtx.range_push("step")
    torch.cuda.current_stream().wait_stream(side)
    x, y = nxt
    x.record_stream(torch.cuda.current_stream())
    y.record_stream(torch.cuda.current_stream())
    nxt = fetch(i + 1)
    with torch.autocast("cuda", dtype=torch.bfloat16):
        out = head(model(x).mean(1))
        loss = torch.nn.functional.cross_entropy(out.float(), y)
    opt.zero_grad(set_to_none=True)
    loss.backward()
    opt.step()
    torch.cuda.nvtx.range_pop()
print(f"xf: loss={loss.item():.4f}")
