#!/usr/bin/env python3
"""Blocking CUDA calls made with and without the GIL, for libprof's Python frame reader: the same
cudaDeviceSynchronize called through ctypes.PyDLL (the GIL stays held) and through ctypes.CDLL
(ctypes releases it, as PyTorch does around its ops): both must be named by their line, from the
main thread and from a second Python thread, and nothing may crash. The CUDA runtime is the one torch
loaded.

Usage: python3 torch_gil_free_sync.py [calls=50]
Prints: the calls made and whether every one returned cudaSuccess.
"""
import ctypes
import sys
import threading

import torch


def cudart_path() -> str:
    with open("/proc/self/maps") as maps:
        for line in maps:
            if "libcudart.so" in line:
                return line.split()[-1]
    raise RuntimeError("no libcudart.so loaded")


def with_gil(lib, calls: int) -> bool:
    return all(lib.cudaDeviceSynchronize() == 0 for _ in range(calls))  # sync with the GIL


def without_gil(lib, calls: int) -> bool:
    return all(lib.cudaDeviceSynchronize() == 0 for _ in range(calls))  # sync without the GIL


def main() -> int:
    calls = int(sys.argv[1]) if len(sys.argv) > 1 else 50
    x = torch.ones(1 << 20, device="cuda")
    x.mul_(2.0)
    path = cudart_path()
    holding = ctypes.PyDLL(path)
    releasing = ctypes.CDLL(path)
    ok = with_gil(holding, calls) and without_gil(releasing, calls)
    results = []
    thread = threading.Thread(
        target=lambda: results.append(with_gil(holding, calls) and without_gil(releasing, calls)))
    thread.start()
    thread.join()
    ok = ok and results == [True]
    print(f"torch_gil_free_sync: calls={4 * calls} all_ok={ok}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
