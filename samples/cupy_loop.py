#!/usr/bin/env python3
"""CuPy: elementwise kernels, a cuBLAS matrix product and a read-back to pageable memory per
iteration (seeds 000 and 003 outside PyTorch).

A profiler should show: cuBLAS's GEMM kernel and CuPy's elementwise kernels, and each
cp.asnumpy copy (device to pageable) blocked first on the product, then copying synchronously.

Usage: python3 cupy_loop.py
Prints: the sum of the first elements read back, to 1 decimal.
"""
import sys

import cupy as cp


def main() -> int:
    cp.random.seed(0)
    a = cp.random.rand(2048, 2048, dtype=cp.float32)
    acc = 0.0
    for _ in range(50):
        b = cp.tanh(a) * 0.5 + 0.25
        c = b @ a
        host = cp.asnumpy(c[:256])  # device -> pageable, blocks behind the product
        acc += float(host[0, 0])
    print(f"cupy_loop: acc={acc:.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
