#!/usr/bin/env python3
"""JAX: a jitted two-layer step run 60 times, block_until_ready after each (run with
XLA_PYTHON_CLIENT_PREALLOCATE=false so that JAX does not take most of the GPU's memory).

A profiler should show: XLA's fused GEMM kernels (gemm_fusion_dot_*), the driver API only (JAX
calls no CUDA runtime), many threads of XLA's own with NVTX ranges (TSL's) but no CUDA calls,
a short cuStreamSynchronize each step (block_until_ready; a few µs, the step's kernels are
short), and XLA's autotuning while it compiles the step: candidate kernels timed with event and
stream synchronisations and redzone checks copied back, which libprof marks as one-time work
(H200, 2026-11-29: 358 host findings, all but the program's own two pageable uploads inside
xla::Autotuner::GetTunedConfig).

Usage: python3 jax_loop.py
Prints: the first element of the result, to 4 decimals.
"""
import sys

import jax
import jax.numpy as jnp


def main() -> int:
    key = jax.random.PRNGKey(0)
    w1 = jax.random.normal(key, (1024, 2048))
    w2 = jax.random.normal(key, (2048, 1024))

    @jax.jit
    def step(x):
        return jnp.tanh(jnp.tanh(x @ w1) @ w2)

    x = jax.random.normal(key, (512, 1024))
    for _ in range(60):
        x = step(x) * 0.01
        x.block_until_ready()
    print(f"jax_loop: x00={float(x[0, 0]):.4f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
