// Synthetic traces shared by the unit tests and the golden files (make_golden_traces writes them
// to disk). Each models a situation from the issue with known, hand-computed answers.
#pragma once

#include <vector>

#include "tests/analysis/trace_builder.h"

namespace libprof::analysis::testing {

// CUBLAS.nrm2 as in CUDA.jl's discussion: two kernels on stream 7 and a 4-byte device→pageable
// cudaMemcpyAsync that waits ~4.9 ms for them, plus the usual noise (capture-info queries,
// cudaGetLastError) and nested driver calls. 5.03 ms long.
TraceBuilder Nrm2Scenario();

// PyTorch's start as libprof records it: queries the default API filter leaves out (cudaGetDevice,
// cudaStreamIsCapturing) but for the one inside which the context was created
// (cudaDeviceGetStreamPriorityRange, 120 ms), and the same query made again after it, as
// LIBPROF_API_FILTER=all records them; then one launch.
TraceBuilder FilteredCallCreatesTheContextScenario();

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

// Downloads queued behind uploads on one stream (two-way-copies-one-stream): four steps, each an
// 8 MiB pinned upload of 200 µs on non-blocking stream 17 and an 8 MiB pinned download of 200 µs
// issued 3 µs after it, queued behind it (waits 200 µs each: 800 µs could overlap), while a
// 100 µs kernel runs on stream 18 (the copies run 305 µs of each pair's 400 µs alone); then
// four that do not count: an upload queued behind a download, a
// download issued after its upload ended, a kernel between the two, a pageable download. See
// scenarios.cc.
TraceBuilder TwoWayCopiesScenario();

// Four ranks of one job (one trace each, clocks off by 0, +150, -70 and +310 µs) running three
// 8 MiB AllReduces of 500 µs of transfer on one communicator: in #1 rank 3 arrives 2.1 ms after
// the others (which arrive 10 µs apart), so they wait 2.12, 2.11 and 2.10 ms (6.33 ms in all);
// in #0 and #2 the ranks arrive 10 µs apart (not late: under --min-wait). Exercises late-rank and `profview collectives`.
std::vector<TraceBuilder> LateRankScenario();

// Two processes of host "node1" (pids 7100 and 7101) on the same GPU (one UUID, device 0 in
// both): each launches 20 kernels of 100 µs, one every 500 µs, A from 1 ms, B from 3.25 ms
// (their kernels interleave: 1 to 10.6 ms and 3.25 to 12.85 ms, 2 ms busy each, shared from
// 3.25 to 10.6 ms); and a third process (7102) on another GPU of that host at the same time.
// Exercises shared-gpu.
std::vector<TraceBuilder> SharedGpuScenario();

// Only API calls, no device activity.
// A copy between two GPUs staged through host memory, then the same copy direct (staged-peer-copy).
TraceBuilder StagedPeerCopyScenario();
// A stream that waits on host functions: the host issues 20 steps at once on stream 14, each a
// 100 µs kernel, a cudaLaunchHostFunc and another 100 µs kernel; each host function runs 2 ms on
// CUDA's callback thread, so the second kernel starts 2 ms after the first ends; then a
// cudaStreamSynchronize. `with_streams`: the host-function calls carry their stream, as libprof
// records it (older traces do not).
TraceBuilder HostFunctionScenario(bool with_streams = true);
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

// NVTX "step" ranges of 990 µs every 1 ms with a gemm kernel each, but the first, which takes
// `first_us` and, when longer, holds a module load and a kernel "autotune" (a just-in-time
// compiler's first step): the warm-up iteration of diff and check.
TraceBuilder WarmUpStepsScenario(int steps, double first_us);
// The issue-19 `.item()` loop: 86 ms of start-up (a context, a first allocation and copy, two
// lazily loaded modules, 80 ms of cuLibraryLoadData), then 20 steps whose cudaStreamSynchronize
// waits 976 µs for a norm kernel, with one module loaded late (2 ms) before step 15. See
// scenarios.cc.
TraceBuilder StartUpScenario();

// Unified memory (LIBPROF_TRACE uvm), hand-computable (see scenarios.cc): a 256 MiB managed
// buffer faulted over to GPU 0 by kernel "touch" (fault groups and 256 MiB host→device inside
// it), a fault group between kernels, a kernel on GPU 1 with faults of its own, a fault group
// that starts in kernel "tail" and ends after it; 64 CPU faults pulling 64 × 4 MiB back;
// three thrashing events and one throttling; one record of a counter kind from a newer writer;
// a cudaMalloc that fails with out of memory while 1 GiB of device memory is in use.
TraceBuilder UnifiedMemoryScenario();

// Memory pools (issue 12), hand-computable (see scenarios.cc): on GPU 0 a direct cudaMalloc of
// 64 MiB and 4 cudaMallocAsync of 8 MiB from the default local pool (release threshold 0, the
// pool growing to 32 MiB) each freed with cudaFreeAsync; on GPU 1 a local pool whose threshold
// is raised from 0 to "keep all" between its 2 allocations of 16 MiB, and one allocation of
// 4 MiB from a pool imported from another process.
TraceBuilder MemoryPoolScenario();

// A CUDA graph captured (two launches), instantiated, launched `launches_per_graph` times and,
// when `rebuild`, destroyed at each of `steps` steps; else instantiated at the first step only
// (graph-rebuild, graph_rules.h).
TraceBuilder GraphRebuildScenario(int steps, int launches_per_graph, bool rebuild);

}  // namespace libprof::analysis::testing
