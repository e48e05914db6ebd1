// `profview findings`: why host time was spent waiting, and on what. Each rule has a stable id
// (an interface, like the JSON field names):
//   blocked-on-prior-work  a copy or memset call that waited for earlier device work it had to
//                          follow (same stream, legacy default stream, event wait)
//   sync-api               explicit synchronisation (cudaDeviceSynchronize, cudaStreamSynchronize,
//                          cudaEventSynchronize, cuCtxSynchronize, ...) and what it waited for
//   implicit-sync          calls that synchronise the device as a side effect (cudaFree, ...)
//   pageable-async-memcpy  an *Async copy with pageable host memory (synchronous in practice)
//   sync-memcpy            a synchronous copy (host-to-device up to 64 KiB excluded)
//   sync-memset            a synchronous memset
//   gpu-idle-gaps          the GPU idle for longer than a threshold, with why (idle_breakdown.h)
//   gpu-low-utilization    a chunk of the trace where the GPU was busy less than a threshold
//   gpu-idle-breakdown     a device idle for a large share of its active span, with why: while
//                          the host launched, was blocked in synchronising calls, or otherwise
//   alloc-churn            cudaMalloc/cudaFree (or other synchronous allocation) pairs of one size
//                          repeating: host time, implicit synchronisations, what reuse would save
//   no-overlap-default-stream  copies and kernels serialised by the legacy default stream or by
//                          pageable host memory, and how much could have overlapped
// The last two are pattern rules: each finding sums many calls (which may also have findings of
// their own), so their time is an estimate of what a change would save, not added to the rest.
//
// Layer: viewer-cli/ analysis library. Pure computation over a ProcessTrace.
//
// Accounting: per API call, the wait on earlier work (blocked-on-prior-work, sync-api or
// implicit-sync: at most one of them) and the call's own cost (pageable-async-memcpy,
// sync-memcpy or sync-memset: host time minus that wait) never add up to more than its host
// time. GPU rules report idle device time instead of host time.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "viewer-cli/trace_loader.h"

namespace libprof::viewer {

struct FindingsOptions {
  // A wait (or synchronous cost) shorter than this is not reported. 20 µs: the threshold of the
  // blocking-copy algorithm in shared/notes/cupti-facts.md section 5; below it a wait is within
  // the noise of a CUDA call's own overhead.
  uint64_t min_wait_ns = 20'000;
  // gpu-idle-gaps: Nsight Systems' gpu_gaps default, 500 ms.
  uint64_t gap_threshold_ns = 500'000'000;
  // gpu-low-utilization: Nsight Systems' gpu_time_util defaults, 30 chunks, under 50% busy.
  uint32_t util_chunks = 30;
  double util_threshold = 0.5;
  // sync-memcpy: host-to-device copies up to this size are excluded (they return once the data
  // is staged; Nsight Systems' cuda_memcpy_sync rule does the same).
  uint64_t sync_memcpy_min_h2d_bytes = 64 * 1024;
  // gpu-idle-breakdown: reported when the device was idle at least this share of its active
  // span; 0.5 is the bar gpu-low-utilization applies per chunk (Nsight Systems' gpu_time_util).
  double idle_share = 0.5;
  // alloc-churn: groups with at least this many pairs. 5: a judgement, a loop rather than a few
  // buffers reallocated once; not from a measurement.
  uint64_t churn_min_pairs = 5;
};

struct Blamed {
  std::string kind;  // "kernel", "memcpy", "memset", "graph"
  std::string name;
  uint64_t correlation_id = 0;
  uint32_t stream_id = 0;
  uint64_t overlap_ns = 0;          // of its execution with the host wait
  uint64_t launched_before_ns = 0;  // how long before the waiting call it was issued
  std::string via;                  // "stream", "legacy-default-stream", "event", "device", "own"
};

// One frame of a finding's call stack, innermost first.
struct FindingFrame {
  std::string function;  // demangled; "" when unknown
  std::string module;    // "app" for the program, else the module's file name; "" when unknown
  uint64_t module_offset = 0;
};

struct Finding {
  std::string rule;
  std::string api;  // "" for GPU rules
  std::string file;
  uint32_t pid = 0;
  uint32_t thread_id = 0;
  uint64_t correlation_id = 0;
  uint64_t host_start_ns = 0;  // relative to the recording start (ProcessTrace::origin_ns)
  uint64_t host_duration_ns = 0;
  uint64_t blocked_ns = 0;  // <= host_duration_ns
  std::optional<uint32_t> stream_id;
  std::optional<uint64_t> bytes;
  std::string copy_kind, src_kind, dst_kind;  // "" when not a copy
  std::vector<Blamed> blamed;                 // largest overlap first, at most kMaxBlamed
  uint64_t blamed_omitted = 0;
  std::vector<std::string> nvtx;  // enclosing NVTX ranges on the thread, outermost first
  // Where the call came from, when its stack was recorded (viewer-cli/call_sites.h):
  // "cudaMemcpyAsync ← cublasSnrm2_v2 (libcublas.so.13) ← NormalizeLoop (app)"; "" when not.
  std::string call_site;
  std::vector<FindingFrame> stack;
  std::string explanation;
  // GPU rules.
  std::optional<uint32_t> device_id;
  std::optional<double> utilization;             // gpu-low-utilization: busy share of the chunk
  std::optional<uint64_t> launch_bound_idle_ns;  // idle time in which the GPU waited for launches
  std::optional<uint64_t> kernels;               // kernels that ran in the chunk
  std::string host_activity;                     // gpu-idle-gaps: what the host did meanwhile
  // GPU idle rules: the idle time by cause (idle_breakdown.h); they add up to blocked_ns.
  std::optional<uint64_t> idle_launch_ns, idle_sync_ns, idle_other_ns;
  // gpu-idle-breakdown: mean kernel duration and mean host time of the calls that launched them.
  std::optional<uint64_t> mean_kernel_ns, launches, mean_launch_ns;
  // alloc-churn (api is the allocating API, bytes the size).
  std::string free_api;
  std::optional<uint64_t> pairs, pairs_host_ns, implicit_syncs, sync_wait_ns;
  std::optional<uint64_t> caching_saving_ns, async_saving_ns;
  // no-overlap-default-stream: "legacy-default-stream" or "pageable-memory", and the copies and
  // kernels serialised (kernels above counts them).
  std::string serialised_by;
  std::optional<uint64_t> copies, copy_ns, kernel_ns;
};

inline constexpr size_t kMaxBlamed = 16;

// Every finding of one process, ordered by time.
std::vector<Finding> FindFindings(const ProcessTrace& trace, const FindingsOptions& options);

// Findings with the same rule, API, first blamed name, serialised_by and call site, worst
// (largest blocked_ns) first.
struct FindingGroup {
  Finding worst;
  uint64_t count = 0;
  uint64_t total_blocked_ns = 0;
  uint64_t total_host_ns = 0;
};
// Groups sorted by total_blocked_ns (the time lost), largest first.
std::vector<FindingGroup> GroupFindings(const std::vector<Finding>& findings);

}  // namespace libprof::viewer
