// Synthetic traces shared by the unit tests and the golden files (make_golden_traces writes them
// to disk). Each models a situation from the issue with known, hand-computed answers.
#pragma once

#include "tests/analysis/trace_builder.h"

namespace libprof::analysis::testing {

// CUBLAS.nrm2 as in CUDA.jl's discussion: two kernels on stream 7 and a 4-byte device→pageable
// cudaMemcpyAsync that waits ~4.9 ms for them, plus the usual noise (capture-info queries,
// cudaGetLastError) and nested driver calls. 5.03 ms long.
TraceBuilder Nrm2Scenario();

// Several streams and rules in one process (see the comments in scenarios.cc for each call):
// two streams where only one had to wait, the legacy default stream, a non-blocking and a
// per-thread default stream, cudaStreamSynchronize, cudaEventSynchronize through an event,
// cudaFree (no device work of its own), a synchronous memcpy and memset, a graph launch.
TraceBuilder StreamsScenario();

// Four threads, each with its own stream: every thread's D→H copy waits for its own stream's
// kernel only. NVTX ranges nest on each thread ("step" › "copy"), and a start/end range opened
// on thread 1 is ended on thread 2.
TraceBuilder ThreadsScenario();

// A launch loop of tiny kernels (GPU mostly idle, launch-bound), then a 600 ms idle gap while
// the host sits in cudaMalloc-free host work, then a busy period. Exercises gpu-idle-gaps and
// gpu-low-utilization.
TraceBuilder IdleScenario();

// 100 launches of 2 µs kernels whose calls take 8 µs (launch-bound), then a
// cudaStreamSynchronize, 80 µs of host work and a synchronous pageable cudaMemcpy: every cause
// of the idle breakdown with hand-computable times (see scenarios.cc).
TraceBuilder LaunchBoundScenario();

// Copies and kernels that could not overlap: four chunks (HtoD 100 µs, kernel 50 µs, DtoH
// 100 µs) on the legacy default stream; then a pageable copy that holds the host followed by a
// kernel on another non-blocking stream (a pair), and three that are not pairs (same stream,
// a cudaStreamSynchronize between, a pinned copy that returned at once). See scenarios.cc.
TraceBuilder OverlapScenario();

// Only API calls, no device activity.
TraceBuilder HostOnlyScenario();

// The normalize loop of samples/normalize_nrm2 with call stacks (LIBPROF_BACKTRACE=blocking):
// three iterations of a 1 ms SpinKernel (launch without a stack) and cuBLAS nrm2, whose
// cudaMemcpyAsync (statically linked cudart inside libcublas.so.13) waits for it, called from
// NormalizeLoop in the program; then a cudaMemcpy from the program's own static cudart in
// CopyBack, and a cudaStreamSynchronize through libcudart.so.13 from libtorch_cuda.so, whose
// outer frames include one no module contains.
TraceBuilder CallSitesScenario();

// A training loop of `steps` NVTX ranges "step" (each 1 ms, with a nested "forward"), on stream
// 7: a 380 µs "gemm" kernel (+0, 5 or 10 µs, by step) and a 50 µs "relu", then a 4-byte
// copy of the loss to the host. With `blocking_readback` the copy is a cudaMemcpyAsync to
// pageable memory that holds the host until the kernels end (~430 µs: a finding); without, it
// goes to pinned memory and returns at once. For profview diff and check (per iteration).
TraceBuilder TrainingStepsScenario(int steps, bool blocking_readback, uint32_t pid = 8080);
// The issue-19 `.item()` loop: 86 ms of start-up (a context, a first allocation and copy, two
// lazily loaded modules, 80 ms of cuLibraryLoadData), then 20 steps whose cudaStreamSynchronize
// waits 976 µs for a norm kernel, with one module loaded late (2 ms) before step 15. See
// scenarios.cc.
TraceBuilder StartUpScenario();

}  // namespace libprof::analysis::testing
