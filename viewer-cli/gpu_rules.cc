#include "viewer-cli/gpu_rules.h"

#include <algorithm>
#include <map>
#include <optional>
#include <unordered_map>

#include "viewer-cli/intervals.h"
#include "viewer-cli/units.h"

namespace libprof::viewer {
namespace {

std::string Dur(uint64_t ns) { return FormatDuration(static_cast<double>(ns)); }

uint64_t Duration(uint64_t start, uint64_t end) { return end > start ? end - start : 0; }

class GpuRules {
 public:
  GpuRules(const ProcessTrace& trace, const TraceIndex& index, const FindingsOptions& options,
           std::vector<Finding>* out)
      : trace_(trace), index_(index), options_(options), records_(trace.records), out_(*out) {}

  void Run() {
    const auto& ops = index_.device_ops();
    std::map<uint32_t, std::vector<uint32_t>> by_device;  // ops, by start
    for (uint32_t o = 0; o < ops.size(); ++o) by_device[ops[o].device_id].push_back(o);
    // Per thread, when it was inside a (top-level) CUDA API call.
    std::unordered_map<uint32_t, std::vector<Interval>> in_api;
    for (uint32_t i = 0; i < records_.api_calls.size(); ++i) {
      const ApiCall& c = records_.api_calls[i];
      if (index_.Outermost(i) == i) in_api[c.thread_id].push_back({c.start_ns, c.end_ns});
    }
    for (auto& [tid, list] : in_api) list = MergeIntervals(std::move(list));

    for (const auto& [device, list] : by_device) {
      std::vector<Interval> busy;
      for (uint32_t o : list) busy.push_back({ops[o].start_ns, ops[o].end_ns});
      busy = MergeIntervals(std::move(busy));
      if (busy.empty()) continue;
      // Gaps between busy periods, each with the first operation after it and, when the call
      // that issued it returned only after the GPU ran dry (the work was not yet submitted when
      // the queue emptied), the thread that issued it.
      struct Gap {
        Interval span;
        uint32_t next = 0;
        std::optional<uint32_t> launcher;
      };
      std::vector<Gap> gaps;
      size_t cursor = 0;
      for (const Interval& g : Gaps(busy)) {
        while (cursor < list.size() && ops[list[cursor]].start_ns < g.end_ns) ++cursor;
        Gap gap{g, cursor < list.size() ? list[cursor] : list.back(), std::nullopt};
        const int64_t call = index_.LaunchingCall(ops[gap.next].correlation_id);
        if (call >= 0) {
          const ApiCall& c = records_.api_calls[index_.Outermost(call)];
          if (c.end_ns > g.start_ns) gap.launcher = c.thread_id;
        }
        gaps.push_back(gap);
      }
      IdleGaps(
          device, list, gaps.size(), [&](size_t k) { return gaps[k].span; },
          [&](size_t k) { return gaps[k].next; });
      // Idle time in [from, to) with an empty queue while the issuing thread was inside CUDA
      // calls: the GPU waited for launches.
      LowUtilization(device, list, busy, [&](uint64_t from, uint64_t to) {
        uint64_t total = 0;
        for (const Gap& g : gaps) {
          if (!g.launcher || g.span.end_ns <= from || g.span.start_ns >= to) continue;
          total += CoveredLength(in_api[*g.launcher], std::max(g.span.start_ns, from),
                                 std::min(g.span.end_ns, to));
        }
        return total;
      });
    }
  }

  template <typename SpanOf, typename NextOf>
  void IdleGaps(uint32_t device, const std::vector<uint32_t>& list, size_t count, SpanOf span_of,
                NextOf next_of) {
    const auto& ops = index_.device_ops();
    for (size_t k = 0; k < count; ++k) {
      const Interval g = span_of(k);
      if (g.length() < options_.gap_threshold_ns) continue;
      const DeviceOp& next = ops[next_of(k)];
      // The operation that ended the busy period before the gap.
      const DeviceOp* prev = nullptr;
      for (uint32_t o : list) {
        if (ops[o].end_ns == g.start_ns) prev = &ops[o];
        if (ops[o].start_ns >= g.start_ns) break;
      }
      Finding f;
      f.rule = "gpu-idle-gaps";
      f.file = trace_.path;
      f.pid = trace_.header.pid;
      f.device_id = device;
      f.host_start_ns = Duration(trace_.origin_ns, g.start_ns);
      f.host_duration_ns = g.length();
      f.blocked_ns = g.length();
      f.host_activity = HostActivity(g);
      f.explanation =
          "GPU " + std::to_string(device) + " was idle for " + Dur(g.length()) + " from " +
          Dur(f.host_start_ns) + " (after " +
          (prev ? index_.OpName(*prev) + ", corr " + std::to_string(prev->correlation_id)
                : std::string("earlier work")) +
          "; before " + index_.OpName(next) + ", corr " + std::to_string(next.correlation_id) +
          "): " + f.host_activity;
      out_.push_back(std::move(f));
    }
  }

  // What the host did in CUDA during `g`: how long some thread was inside a CUDA call, and the
  // API with the most time in it.
  std::string HostActivity(const Interval& g) const {
    std::map<std::string, uint64_t> by_name;
    std::vector<Interval> inside;
    for (uint32_t i = 0; i < records_.api_calls.size(); ++i) {
      const ApiCall& c = records_.api_calls[i];
      if (index_.Outermost(i) != i) continue;
      const uint64_t overlap = OverlapLength(c.start_ns, c.end_ns, g.start_ns, g.end_ns);
      if (overlap == 0) continue;
      by_name[index_.ApiName(c)] += overlap;
      inside.push_back({std::max(c.start_ns, g.start_ns), std::min(c.end_ns, g.end_ns)});
    }
    if (by_name.empty()) return "the host made no CUDA API call meanwhile";
    auto top = std::max_element(by_name.begin(), by_name.end(),
                                [](const auto& a, const auto& b) { return a.second < b.second; });
    return "the host was inside CUDA API calls for " + Dur(UnionLength(std::move(inside))) +
           " of it (most in " + top->first + ", " + Dur(top->second) + ")";
  }

  template <typename LaunchBound>
  void LowUtilization(uint32_t device, const std::vector<uint32_t>& list,
                      const std::vector<Interval>& busy, LaunchBound launch_bound) {
    const auto& ops = index_.device_ops();
    // The device's active span, from its first to its last operation: idle time before the
    // first kernel (process and CUDA start-up) and after the last one (teardown) is left out.
    const uint64_t start = busy.front().start_ns;
    const uint64_t span = Duration(start, busy.back().end_ns);
    const uint32_t chunks = options_.util_chunks;
    if (chunks == 0 || span < chunks) return;
    for (uint32_t k = 0; k < chunks; ++k) {
      const uint64_t from = start + span * k / chunks;
      const uint64_t to = start + span * (k + 1) / chunks;
      const uint64_t length = to - from;
      const uint64_t covered = CoveredLength(busy, from, to);
      const double utilization = static_cast<double>(covered) / static_cast<double>(length);
      if (utilization >= options_.util_threshold) continue;
      const uint64_t idle = length - covered;
      if (idle < options_.min_wait_ns) continue;
      uint64_t kernels = 0, kernel_ns = 0;
      auto first = std::lower_bound(list.begin(), list.end(), from,
                                    [&](uint32_t o, uint64_t t) { return ops[o].start_ns < t; });
      for (auto it = first; it != list.end() && ops[*it].start_ns < to; ++it) {
        if (ops[*it].kind == DeviceOpKind::kKernel) {
          ++kernels;
          kernel_ns += ops[*it].duration();
        }
      }
      const uint64_t bound = std::min(idle, launch_bound(from, to));
      Finding f;
      f.rule = "gpu-low-utilization";
      f.file = trace_.path;
      f.pid = trace_.header.pid;
      f.device_id = device;
      f.host_start_ns = Duration(trace_.origin_ns, from);
      f.host_duration_ns = length;
      f.blocked_ns = idle;
      f.utilization = utilization;
      f.launch_bound_idle_ns = bound;
      f.kernels = kernels;
      f.explanation = "GPU " + std::to_string(device) + " was busy " +
                      FormatPercent(static_cast<double>(covered), static_cast<double>(length)) +
                      " of the " + Dur(length) + " from " + Dur(f.host_start_ns) + " (chunk " +
                      std::to_string(k + 1) + " of " + std::to_string(chunks) + "): " + Dur(idle) +
                      " idle";
      if (bound > 0) {
        f.explanation += ", of which " + Dur(bound) + " (" +
                         FormatPercent(static_cast<double>(bound), static_cast<double>(idle)) +
                         ") waiting for launches: nothing was queued while the host was "
                         "inside CUDA calls";
      }
      f.explanation += kernels == 0 ? "; no kernel ran"
                                    : "; " + std::to_string(kernels) + " kernel" +
                                          (kernels == 1 ? "" : "s") + " ran, mean " +
                                          Dur(kernel_ns / kernels);
      out_.push_back(std::move(f));
    }
  }

  const ProcessTrace& trace_;
  const TraceIndex& index_;
  const FindingsOptions& options_;
  const TraceRecords& records_;
  std::vector<Finding>& out_;
};

}  // namespace

void FindGpuFindings(const ProcessTrace& trace, const TraceIndex& index,
                     const FindingsOptions& options, std::vector<Finding>* out) {
  GpuRules(trace, index, options, out).Run();
}

}  // namespace libprof::viewer
