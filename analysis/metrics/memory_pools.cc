#include "analysis/metrics/memory_pools.h"

#include <algorithm>
#include <map>
#include <numeric>
#include <utility>

namespace libprof::analysis {

MemoryPoolReport AnalyzeMemoryPools(const ProcessTrace& trace) {
  MemoryPoolAccumulator pools;
  pools.Add(trace.records);
  return pools.Finish(trace.header.pid);
}

void MemoryPoolAccumulator::Add(const TraceRecords& records) {
  MemoryPoolReport& report = report_;
  std::map<std::pair<uint32_t, uint64_t>, MemoryPoolStats>& pools = pools_;
  const std::vector<MemoryOp>& ops = records.memory_ops;
  std::vector<size_t> order(ops.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return ops[a].time_ns < ops[b].time_ns; });
  for (size_t i : order) {
    const MemoryOp& op = ops[i];
    const bool allocation = op.operation == MemoryOperation::kAllocation;
    if (op.pool_type == 0) {
      if (allocation) {
        ++report.direct_allocations;
        report.direct_bytes += op.bytes;
      }
      continue;
    }
    auto [it, added] = pools.try_emplace({op.device_id, op.pool_address});
    MemoryPoolStats& p = it->second;
    if (added) {
      p.device_id = op.device_id;
      p.pool_address = op.pool_address;
      p.pool_type = op.pool_type;
    }
    if (allocation) {
      ++report.pooled_allocations;
      report.pooled_bytes += op.bytes;
      ++p.allocations;
      p.allocated_bytes += op.bytes;
    } else if (op.operation == MemoryOperation::kRelease) {
      ++p.releases;
      p.released_bytes += op.bytes;
    }
    // A local pool that holds an allocation has a size: without one, the writer did not record
    // the pool's details.
    if (op.pool_type != kPoolTypeLocal || op.pool_bytes == 0) continue;
    if (p.details && op.pool_release_threshold != p.release_threshold) p.threshold_changed = true;
    p.details = true;
    p.release_threshold = op.pool_release_threshold;
    p.peak_pool_bytes = std::max(p.peak_pool_bytes, op.pool_bytes);
    p.peak_used_bytes = std::max(p.peak_used_bytes, op.pool_used_bytes);
  }
}

MemoryPoolReport MemoryPoolAccumulator::Finish(uint32_t pid) {
  MemoryPoolReport report = std::move(report_);
  report.pid = pid;
  for (auto& [key, pool] : pools_) report.pools.push_back(pool);
  pools_.clear();
  return report;
}

}  // namespace libprof::analysis
