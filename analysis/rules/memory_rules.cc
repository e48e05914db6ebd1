#include "analysis/rules/memory_rules.h"

#include <algorithm>
#include <optional>

#include "analysis/metrics/memory.h"
#include "analysis/model/api_names.h"
#include "analysis/model/call_sites.h"
#include "analysis/model/one_time_work.h"
#include "analysis/model/units.h"
#include "analysis/rules/framework_hints.h"

namespace libprof::analysis {
namespace {

std::string Dur(uint64_t ns) { return FormatDuration(static_cast<double>(ns)); }

// The host time of a pair after the group's first one (which sets up memory or a pool).
std::optional<uint64_t> SteadyPairNs(const ChurnGroup& g) {
  if (g.pairs < 2) return std::nullopt;
  return (g.host_ns - g.first_pair_host_ns) / (g.pairs - 1);
}

// Who emptied PyTorch's caching allocator, when the memory went back that way: told by the
// release's native frames.
CacheEmptying EmptiedBy(const ProcessTrace& trace, uint32_t free_stack_id) {
  const std::vector<FrameView> frames = FramesOfStack(trace, free_stack_id);
  std::vector<std::string_view> native;
  std::vector<PythonFrameRef> python_frames;
  for (const FrameView& frame : frames) {
    if (frame.python) {
      python_frames.push_back({frame.file, frame.function});
    } else {
      native.push_back(frame.function);
    }
  }
  return WhoEmptiedCache(native, python_frames);
}

// Whether `api` allocates pinned host memory (cudaHostAlloc, cudaMallocHost, cuMemHostAlloc,
// cuMemAllocHost).
bool IsHostAllocation(std::string_view api) { return api.find("Host") != std::string_view::npos; }

// Whether a stream-ordered group's pool gave its memory back to the OS between the pairs: its
// release threshold was below the size allocated, and synchronisations followed the frees.
bool GivesMemoryBack(const ChurnGroup& g) {
  return g.pool_release_threshold < g.bytes && g.release_syncs > 0;
}

// The advice for a group whose frees or allocations (`alloc_frames`, the allocations' stack)
// say why they churn, ending with the saving (`later`): PyTorch's cache emptied, thrust's
// temporary storage, a library's plan or handle made per call, JAX's platform allocator. None
// for the rest (a caching allocator is the advice).
std::optional<std::string> KnownCause(const ProcessTrace& trace, const ChurnGroup& g,
                                      const std::vector<FrameView>& alloc_frames, uint64_t later) {
  const std::string saving = Dur(later) + " (every pair after the first)";
  const CacheEmptying emptying = EmptiedBy(trace, g.free_stack_id);
  if (emptying.who == CacheEmptying::Who::kProgram && !emptying.host) {
    return "PyTorch's caching allocator would keep this memory and reuse it, but "
           "torch.cuda.empty_cache() gave it back to CUDA each time: without that call in the "
           "loop, up to " +
           saving + " would be saved";
  }
  if (emptying.who != CacheEmptying::Who::kNone) {
    return CacheEmptyingAdvice(emptying) + "; keeping the memory would save up to " + saving;
  }
  // Thrust's algorithms allocate their temporary storage per call through cudaMalloc (its
  // default memory resource; .carry/s16/thrust_sort.cu on the H200): the fix is thrust's
  // allocator, passed in its execution policy.
  if (std::any_of(alloc_frames.begin(), alloc_frames.end(), [](const FrameView& f) {
        return f.function.starts_with("thrust::") &&
               f.function.find("temporary_allocator") != std::string::npos;
      })) {
    return "These are thrust's temporary storage: each algorithm call (sort, reduce, scan...) "
           "allocates it with cudaMalloc and frees it with cudaFree. Pass thrust a caching "
           "allocator in its execution policy (thrust::cuda::par(allocator).on(stream), as "
           "thrust's custom_temporary_allocation example does), or call CUB with a buffer "
           "allocated once: that would save up to " +
           saving;
  }
  // A library's plan or handle made per call allocates its workspace each time: the fix is the
  // plan's or handle's, not an allocator.
  if (OneTimeWorkOf(alloc_frames) == OneTimeWork::kLibrarySetUp) {
    return "These allocations are a CUDA library's set-up (a cuFFT plan, or a cuBLAS, cuDNN, "
           "cuSPARSE or cuSOLVER handle, allocating its workspace): made once and reused, the "
           "plan or handle would save up to " +
           saving;
  }
  // JAX frees device memory only with its platform allocator, which its documentation calls
  // very slow (pinned host memory, cuMemHostAlloc's, is another matter).
  if (RecordedInJax(trace) && !IsHostAllocation(g.api)) {
    return "In JAX, only XLA_PYTHON_CLIENT_ALLOCATOR=platform allocates and frees each buffer "
           "like this; without it, JAX's allocator keeps and reuses the memory "
           "(XLA_PYTHON_CLIENT_PREALLOCATE=false lets its pool grow as needed), saving up to " +
           saving;
  }
  return std::nullopt;
}

// An alloc-churn finding of group `g` with what every one says: its span, from the first
// allocation to the last free, and the group's figures in its details.
Finding ChurnFinding(const ProcessTrace& trace, const ChurnGroup& g, AllocChurnDetails* details) {
  Finding f;
  f.rule = RuleId::kAllocChurn;
  f.api = g.api;
  f.file = trace.path;
  f.pid = trace.header.pid;
  f.thread_id = g.thread_id;
  f.host_start_ns = g.first_ns > trace.origin_ns ? g.first_ns - trace.origin_ns : 0;
  f.host_duration_ns = g.last_ns > g.first_ns ? g.last_ns - g.first_ns : 0;
  details->free_api = g.free_api;
  details->bytes = g.bytes;
  details->pairs = g.pairs;
  details->pairs_host_ns = g.host_ns;
  details->implicit_syncs = g.implicit_syncs;
  details->sync_wait_ns = g.sync_wait_ns;
  return f;
}

// A stream-ordered pair served from the pool's own memory costs the host a few µs (samples/
// alloc_loop's recorded trace: 2.06 µs after the first); one that maps the memory again costs
// far more (.carry/s16/mallocasync.cu on the H200, 1 GiB: 1.38-1.40 ms per cudaMallocAsync).
// Below this per pair, the group is not worth a finding whatever its threshold.
constexpr uint64_t kRemappedPairNs = 50'000;

// alloc-churn for a stream-ordered group whose pool gives the memory back at each
// synchronisation: the later pairs' host time and the synchronisations' time not waiting for
// the GPU are what a release threshold above the size would save.
void PoolGivesMemoryBack(const ProcessTrace& trace, const ChurnGroup& g,
                         const FindingsOptions& options, std::vector<Finding>* out) {
  if (g.pairs < options.churn_min_pairs) return;
  const uint64_t later = g.host_ns - g.first_pair_host_ns;
  const uint64_t saving = later + g.release_sync_ns;
  if (saving < options.min_wait_ns || saving < (g.pairs - 1) * kRemappedPairNs) return;
  AllocChurnDetails details;
  Finding f = ChurnFinding(trace, g, &details);
  details.caching_saving_ns = saving;
  details.pool_release_threshold = g.pool_release_threshold;
  details.release_sync_ns = g.release_sync_ns;
  f.blocked_ns = saving;
  f.explanation =
      g.api + "/" + g.free_api + " of " + FormatBytes(g.bytes) + " repeated " +
      std::to_string(g.pairs) + " times over " + Dur(f.host_duration_ns) +
      ": their calls held the host " + Dur(g.host_ns) + " (" + Dur(g.host_ns / g.pairs) +
      " a pair), and the " + std::to_string(g.release_syncs) +
      " synchronisations after the frees spent " + Dur(g.release_sync_ns) +
      " not waiting for the GPU. The memory pool's release threshold is " +
      FormatBytes(g.pool_release_threshold) + ", below the " + FormatBytes(g.bytes) +
      " freed into it: at each synchronisation the pool gives that memory back to the OS, and "
      "the next allocation maps it again. Raise the threshold to keep it in the pool "
      "(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &bytes) on the "
      "device's pool from cudaDeviceGetMemPool, bytes at least " +
      FormatBytes(g.bytes) + ", or UINT64_MAX): that would save up to " + Dur(saving) +
      " (every pair after the first, and the synchronisations' give-back)";
  f.details = std::move(details);
  out->push_back(std::move(f));
}

}  // namespace

void FindMemoryFindings(const RuleInput& input, std::vector<Finding>* out) {
  ChurnFindings(input.trace, AnalyzeMemory(input.trace, input.index, input.model), input.options,
                out);
}

void ChurnFindings(const ProcessTrace& trace, const MemoryReport& report,
                   const FindingsOptions& options, std::vector<Finding>* out) {  // The cheapest stream-ordered group, to price cudaMallocAsync with this program's own calls.
  std::optional<uint64_t> async_pair_ns;
  std::string async_api;
  for (const ChurnGroup& g : report.churn) {
    const std::optional<uint64_t> steady = SteadyPairNs(g);
    if (!IsAsyncApi(g.api) || !steady || GivesMemoryBack(g)) continue;
    if (!async_pair_ns || *steady < *async_pair_ns) {
      async_pair_ns = steady;
      async_api = g.api + "/" + g.free_api;
    }
  }
  for (const ChurnGroup& g : report.churn) {
    if (IsAsyncApi(g.api)) {
      if (GivesMemoryBack(g)) PoolGivesMemoryBack(trace, g, options, out);
      continue;
    }
    if (g.pairs < options.churn_min_pairs || g.host_ns < options.min_wait_ns) continue;
    // An autotuner's or a compiler's allocations are paid once per compilation, like its waits
    // (one_time_work.h): XLA's autotuning allocated 8 B of pinned memory 172 times to check its
    // candidates (.carry/s17b/jax_scan.py on the H200). A library's set-up is said below.
    const std::vector<FrameView> alloc_frames = FramesOfStack(trace, g.alloc_stack_id);
    if (const OneTimeWork work = OneTimeWorkOf(alloc_frames);
        work != OneTimeWork::kNone && work != OneTimeWork::kLibrarySetUp) {
      continue;
    }
    AllocChurnDetails details;
    Finding f = ChurnFinding(trace, g, &details);
    const uint64_t later = g.host_ns - g.first_pair_host_ns;
    details.caching_saving_ns = later;
    f.blocked_ns = later;
    const std::string pair = g.api + "/" + g.free_api;
    f.explanation =
        pair + " of " + FormatBytes(g.bytes) + " repeated " + std::to_string(g.pairs) +
        " times over " + Dur(f.host_duration_ns) + ": their calls held the host " + Dur(g.host_ns) +
        " (" + Dur(g.host_ns / g.pairs) + " a pair), and " +
        (g.implicit_syncs == 0
             ? std::string("none of them waited for earlier work on the device. ")
             : std::to_string(g.implicit_syncs) + " of them synchronised the device, waiting " +
                   Dur(g.sync_wait_ns) + " for earlier work. ");
    // PyTorch's caching allocator already reuses memory, unless its cache is emptied.
    if (const std::optional<std::string> advice = KnownCause(trace, g, alloc_frames, later)) {
      f.explanation += *advice;
      f.details = std::move(details);
      out->push_back(std::move(f));
      continue;
    }
    // Pinned host memory has no stream-ordered allocator to offer: reuse is the advice.
    if (IsHostAllocation(g.api)) {
      f.explanation +=
          "Pinned host memory is slow to allocate (the driver pins and maps every page) and to "
          "free (cudaFreeHost synchronises the device): allocating the pinned buffers once and "
          "reusing them (a pool of pinned buffers, as PyTorch's pin_memory() and CuPy's "
          "PinnedMemoryPool keep) would save up to " +
          Dur(later) + " (every pair after the first)";
      f.details = std::move(details);
      out->push_back(std::move(f));
      continue;
    }
    f.explanation += "A caching allocator (allocate once and reuse, as PyTorch's does) would "
                     "save up to " +
                     Dur(later) + " (every pair after the first)";
    if (async_pair_ns) {
      const uint64_t async_cost = (g.pairs - 1) * *async_pair_ns;
      const uint64_t saving = later > async_cost ? later - async_cost : 0;
      details.async_saving_ns = saving;
      f.explanation += "; " + async_api + " on a stream would save about " + Dur(saving) +
                       " (its pairs cost " + Dur(*async_pair_ns) +
                       " each after the first in this trace) and does not synchronise the device";
    } else {
      f.explanation +=
          "; cudaMallocAsync/cudaFreeAsync on a stream do not synchronise the "
          "device and reuse the pool's memory (this trace has no such pairs to "
          "price them)";
    }
    f.details = std::move(details);
    out->push_back(std::move(f));
  }
}

}  // namespace libprof::analysis
