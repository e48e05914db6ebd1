#!/usr/bin/env python3
"""PyTorch's TunableOp at work, then a steady loop: with TunableOp on, the first GEMM of each of
three shapes times candidate cuBLAS/cuBLASLt solutions (waiting on an event after each timed
batch) before it runs; then each step multiplies the three pairs and reads a value back with
.item() every few steps (marked: the wait).

A profiler should show: the tuning's event synchronisations as one-time work (PyTorch's TunableOp
tuning, paid once per shape), and the .item() read-backs as the steady state's waits at their
line. The results file TunableOp writes goes to a temporary folder, removed at the end.

Usage: python3 torch_tunableop.py [steps=20]
Prints: a checksum of what was read back (the same with and without a profiler, up to the
solutions TunableOp picks, which may differ in the last digits).
"""
import os
import shutil
import sys
import tempfile

import torch


def main(steps):
    folder = tempfile.mkdtemp(prefix="tunableop_")
    torch.cuda.tunable.enable(True)
    torch.cuda.tunable.tuning_enable(True)
    torch.cuda.tunable.set_filename(os.path.join(folder, "tunableop_results.csv"))
    torch.manual_seed(0)
    shapes = [(4096, 4096, 4096), (8192, 2048, 4096), (2048, 8192, 4096)]
    pairs = [(torch.randn(m, k, device="cuda", dtype=torch.float16),
              torch.randn(k, n, device="cuda", dtype=torch.float16)) for m, k, n in shapes]
    total = 0.0
    for step in range(steps):
        for a, b in pairs:
            c = a @ b
        if step % 5 == 4:
            total += c.float().abs().mean().item()  # the wait
    torch.cuda.synchronize()
    torch.cuda.tunable.enable(False)  # (no results file written at exit)
    shutil.rmtree(folder, ignore_errors=True)
    print(f"torch_tunableop: steps={steps} total={total:.3f}")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 20)
