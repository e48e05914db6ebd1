#include "analysis/rules/memory_rules.h"

#include <algorithm>
#include <optional>

#include "analysis/model/api_names.h"
#include "analysis/model/call_sites.h"
#include "analysis/rules/framework_hints.h"
#include "analysis/metrics/memory.h"
#include "analysis/model/units.h"

namespace libprof::analysis {
namespace {

std::string Dur(uint64_t ns) { return FormatDuration(static_cast<double>(ns)); }

// The host time of a pair after the group's first one (which sets up memory or a pool).
std::optional<uint64_t> SteadyPairNs(const ChurnGroup& g) {
  if (g.pairs < 2) return std::nullopt;
  return (g.host_ns - g.first_pair_host_ns) / (g.pairs - 1);
}

// Whether the memory went back through PyTorch's torch.cuda.empty_cache(): a native frame of
// the release's stack is its emptyCache.
bool FreedByEmptyCache(const ProcessTrace& trace, uint32_t free_stack_id) {
  const std::vector<FrameView> frames = FramesOfStack(trace, free_stack_id);
  return std::any_of(frames.begin(), frames.end(), [](const FrameView& frame) {
    return !frame.python && IsEmptyCacheFunction(frame.function);
  });
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
    if (!IsAsyncApi(g.api) || !steady) continue;
    if (!async_pair_ns || *steady < *async_pair_ns) {
      async_pair_ns = steady;
      async_api = g.api + "/" + g.free_api;
    }
  }
  for (const ChurnGroup& g : report.churn) {
    if (IsAsyncApi(g.api) || g.pairs < options.churn_min_pairs || g.host_ns < options.min_wait_ns) {
      continue;
    }
    Finding f;
    f.rule = RuleId::kAllocChurn;
    f.api = g.api;
    f.file = trace.path;
    f.pid = trace.header.pid;
    f.thread_id = g.thread_id;
    f.host_start_ns = g.first_ns > trace.origin_ns ? g.first_ns - trace.origin_ns : 0;
    f.host_duration_ns = g.last_ns > g.first_ns ? g.last_ns - g.first_ns : 0;
    AllocChurnDetails details;
    details.free_api = g.free_api;
    details.bytes = g.bytes;
    details.pairs = g.pairs;
    details.pairs_host_ns = g.host_ns;
    details.implicit_syncs = g.implicit_syncs;
    details.sync_wait_ns = g.sync_wait_ns;
    const uint64_t later = g.host_ns - g.first_pair_host_ns;
    details.caching_saving_ns = later;
    f.blocked_ns = later;
    const std::string pair = g.api + "/" + g.free_api;
    f.explanation = pair + " of " + FormatBytes(g.bytes) + " repeated " + std::to_string(g.pairs) +
                    " times over " + Dur(f.host_duration_ns) + ": their calls held the host " +
                    Dur(g.host_ns) + " (" + Dur(g.host_ns / g.pairs) + " a pair), and " +
                    std::to_string(g.implicit_syncs) + " of them synchronised the device, " +
                    "waiting " + Dur(g.sync_wait_ns) + " for earlier work. ";
    // PyTorch's caching allocator already reuses memory, unless the program empties its cache.
    if (FreedByEmptyCache(trace, g.free_stack_id)) {
      f.explanation += "PyTorch's caching allocator would keep this memory and reuse it, but "
                       "torch.cuda.empty_cache() gave it back to CUDA each time: without that "
                       "call in the loop, up to " +
                       Dur(later) + " would be saved (every pair after the first)";
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
