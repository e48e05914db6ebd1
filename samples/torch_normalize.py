#!/usr/bin/env python3
"""Seed 000 in PyTorch: a normalize loop whose norm is read back to the host every iteration,
with NVTX ranges naming the Python code that made each CUDA call.

Native call stacks (LIBPROF_BACKTRACE) end in the interpreter's frames for Python programs, so
they can say "cudaMemcpyAsync <- at::native::_local_scalar_dense_cuda (libtorch_cuda.so)" but
not which Python line asked. NVTX ranges can: libprof records them, and `profview findings`
prints the ranges around each blocking call ("in NVTX normalize > norm.item"), `profview
summary --nvtx norm.item` narrows every table to them. Two ways to open a range:
  - torch.cuda.nvtx.range("name") (a context manager; range_push/range_pop also work);
  - the `nvtx` package (pip install nvtx): @nvtx.annotate("name") on a function, or
    `with nvtx.annotate("name"):`. Used here when installed.

Usage: python3 torch_normalize.py [iterations=50]
Prints: the iterations and the last norm (1.0000 once the vector is normalised).
"""
import contextlib
import sys

import torch

try:  # optional: the NVTX package's decorator names a whole function
    import nvtx

    annotate = nvtx.annotate
except ImportError:
    def annotate(message):  # without the package, no range: the program runs the same
        del message
        return contextlib.nullcontext()


def spin(x: torch.Tensor) -> None:
    # GPU work queued faster than the GPU runs it, for the copy behind .item() to wait for: each
    # pass reads and writes the 256 MiB vector (about 0.15 ms on an H200), while launching it
    # takes the host a few µs. (With a small vector the GPU keeps up and nothing waits.)
    for _ in range(20):
        x.mul_(1.0)


def normalize_loop(x: torch.Tensor, iterations: int) -> float:
    norm = 0.0
    for _ in range(iterations):
        with torch.cuda.nvtx.range("normalize"):
            spin(x)
            with torch.cuda.nvtx.range("norm.item"):
                norm = torch.linalg.vector_norm(x).item()  # the blocking device-to-host copy
            x.div_(norm)
    return norm


def main() -> int:
    iterations = int(sys.argv[1]) if len(sys.argv) > 1 else 50
    x = torch.rand(1 << 26, device="cuda") + 1.0
    with annotate("normalize_loop"):
        normalize_loop(x, iterations)
    last = torch.linalg.vector_norm(x).item()
    print(f"torch_normalize: iterations={iterations} last_norm={last:.4f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
