#include "analysis/metrics/memory_timeline.h"

#include <algorithm>
#include <map>
#include <numeric>
#include <optional>
#include <string_view>
#include <unordered_map>

#include "analysis/model/call_sites.h"

namespace libprof::analysis {
namespace {

// cudaErrorMemoryAllocation (driver_types.h) and CUDA_ERROR_OUT_OF_MEMORY (cuda.h) are both 2.
constexpr int32_t kOutOfMemory = 2;

}  // namespace

bool IsAllocatingApi(const std::string& name) {
  for (std::string_view prefix : {"cudaMalloc", "cudaHostAlloc", "cuMemAlloc", "cuMemCreate",
                                  "cuMemHostAlloc", "cuMemAllocManaged"}) {
    if (name.starts_with(prefix)) return true;
  }
  return false;
}

std::vector<DeviceMemorySeries> DeviceMemoryOverTime(const TraceRecords& records) {
  MemoryTimelineBuilder builder;
  builder.Add(records);
  return builder.Finish(ProcessTrace{}).devices;
}

void MemoryTimelineBuilder::Add(const TraceRecords& records) {
  const std::vector<MemoryOp>& ops = records.memory_ops;
  std::vector<size_t> order(ops.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return ops[a].time_ns < ops[b].time_ns; });
  auto step = [&](uint32_t device, uint64_t t) {
    DeviceMemorySeries& s = series_[device];
    s.device_id = device;
    const uint64_t bytes = in_use_[device];
    // Changes at the same instant are one step: where the sum settled.
    if (!s.steps.empty() && s.steps.back().time_ns == t) {
      s.steps.back().bytes = bytes;
    } else {
      s.steps.push_back({t, bytes});
    }
    s.peak_bytes = std::max(s.peak_bytes, bytes);
  };
  for (size_t i : order) {
    const MemoryOp& op = ops[i];
    if (op.operation == MemoryOperation::kAllocation) {
      if (op.memory_kind != MemoryKind::kDevice) {
        live_.erase(op.address);  // an address reused by another kind is no longer device memory
        continue;
      }
      live_[op.address] = {op.bytes, op.device_id};
      in_use_[op.device_id] += op.bytes;
      step(op.device_id, op.time_ns);
    } else if (op.operation == MemoryOperation::kRelease) {
      auto it = live_.find(op.address);
      if (it == live_.end()) continue;
      uint64_t& used = in_use_[it->second.device_id];
      used -= std::min(used, it->second.bytes);
      const uint32_t device = it->second.device_id;
      live_.erase(it);
      step(device, op.time_ns);
    }
  }
}

void MemoryTimelineBuilder::AddFailed(const ProcessTrace& trace, const TraceIndex& index) {
  // Failed allocations: outermost calls only (the driver call inside a failing cudaMalloc fails
  // too, and is the same failure).
  std::optional<CallSites> sites;
  const std::vector<ApiCall>& calls = trace.records.api_calls;
  for (size_t i = 0; i < calls.size(); ++i) {
    const ApiCall& c = calls[i];
    if (c.return_value != kOutOfMemory || index.IsNested(i)) continue;
    const std::string& name = index.ApiName(c);
    if (!IsAllocatingApi(name)) continue;
    FailedAllocation f;
    f.api = name;
    f.start_ns = c.start_ns;
    f.duration_ns = c.end_ns > c.start_ns ? c.end_ns - c.start_ns : 0;
    f.thread_id = c.thread_id;
    f.return_value = c.return_value;
    if (c.stack_id != 0) {
      if (!sites) sites.emplace(trace);
      f.call_site = sites->Of(c.stack_id).Text();
    }
    failed_.push_back(std::move(f));
  }
}

MemoryTimeline MemoryTimelineBuilder::Finish(const ProcessTrace& whole) {
  MemoryTimeline timeline;
  timeline.pid = whole.header.pid;
  timeline.file = whole.path;
  timeline.origin_ns = whole.origin_ns;
  timeline.end_ns = whole.end_ns();
  for (auto& [device, s] : series_) timeline.devices.push_back(std::move(s));
  series_.clear();
  for (FailedAllocation& f : failed_) {
    for (const DeviceMemorySeries& d : timeline.devices) {
      // The last step at or before the call's start.
      auto after = std::upper_bound(d.steps.begin(), d.steps.end(), f.start_ns,
                                    [](uint64_t t, const MemoryStep& s) { return t < s.time_ns; });
      f.in_use.push_back({d.device_id, after == d.steps.begin() ? 0 : std::prev(after)->bytes});
    }
    timeline.failed.push_back(std::move(f));
  }
  failed_.clear();
  std::stable_sort(timeline.failed.begin(), timeline.failed.end(),
                   [](const auto& a, const auto& b) { return a.start_ns < b.start_ns; });
  return timeline;
}

MemoryTimeline BuildMemoryTimeline(const ProcessTrace& trace, const TraceIndex& index) {
  MemoryTimelineBuilder builder;
  builder.Add(trace.records);
  builder.AddFailed(trace, index);
  return builder.Finish(trace);
}

}  // namespace libprof::analysis
