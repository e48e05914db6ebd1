#include "analysis/rules/gpu_rules.h"

#include <algorithm>
#include <map>
#include <span>
#include <unordered_set>

#include "analysis/metrics/idle_breakdown.h"
#include "analysis/metrics/start_up.h"
#include "analysis/model/intervals.h"
#include "analysis/model/units.h"

namespace libprof::analysis {
namespace {

std::string Dur(uint64_t ns) { return FormatDuration(static_cast<double>(ns)); }

std::string Pct(uint64_t part, uint64_t whole) {
  return FormatPercent(static_cast<double>(part), static_cast<double>(whole));
}

uint64_t Duration(uint64_t start, uint64_t end) { return end > start ? end - start : 0; }

class GpuRules {
 public:
  GpuRules(const ProcessTrace& trace, const TraceIndex& index, const FindingsOptions& options,
           std::vector<Finding>* out)
      : trace_(trace), index_(index), options_(options), records_(trace.records), out_(*out) {}

  void Run() {
    const StartUp start_up = FindStartUp(index_);
    uint64_t start_up_idle = 0;
    // One device's timeline at a time, each step changing it in place: a device's busy and idle
    // pieces are as many as its operations (millions in a long trace).
    std::vector<DeviceIdle> devices = ClassifyIdle(index_);
    for (DeviceIdle& whole : devices) {
      // Idle time inside start-up is reported once, by the start-up finding.
      if (start_up.known && start_up.end_ns > whole.active.start_ns) {
        start_up_idle += SumIdle(whole.pieces, whole.active.start_ns,
                                 std::min(start_up.end_ns, whole.active.end_ns))
                             .total();
      }
      DeviceIdle steady = start_up.known
                              ? From(std::move(whole), index_.device_ops(), start_up.end_ns)
                              : std::move(whole);
      if (steady.active.length() == 0) continue;
      const uint64_t steady_idle =
          SumIdle(steady.pieces, steady.active.start_ns, steady.active.end_ns).total();
      // Module loading after start-up is start-up's too: its idle time is left out here.
      const DeviceIdle d = WithoutIdleIn(std::move(steady), start_up.later_loading);
      start_up_idle += steady_idle - SumIdle(d.pieces, d.active.start_ns, d.active.end_ns).total();
      IdleGaps(d);
      LowUtilization(d);
      Breakdown(d);
    }
    if (start_up.known) StartUpFinding(start_up, start_up_idle);
  }

 private:
  Finding Base(RuleId rule, const DeviceIdle& d, uint64_t start_ns, uint64_t length_ns) const {
    Finding f;
    f.rule = rule;
    f.file = trace_.path;
    f.pid = trace_.header.pid;
    f.device_id = d.device_id;
    f.host_start_ns = Duration(trace_.origin_ns, start_ns);
    f.host_duration_ns = length_ns;
    return f;
  }

  // The API with the most idle time of `cause` in [from, to), that time, and the time of that
  // cause spent inside any call.
  struct TopApi {
    std::string name;
    uint64_t ns = 0;
    uint64_t in_calls_ns = 0;
  };
  TopApi TopApiOf(const DeviceIdle& d, IdleCause cause, uint64_t from, uint64_t to) const {
    std::map<std::string, uint64_t> by_name;
    TopApi top;
    for (const IdlePiece& p : d.pieces) {
      if (p.cause != cause || p.call < 0 || p.span.end_ns <= from || p.span.start_ns >= to) {
        continue;
      }
      const uint64_t length = OverlapLength(p.span.start_ns, p.span.end_ns, from, to);
      by_name[index_.ApiName(records_.api_calls[p.call])] += length;
      top.in_calls_ns += length;
    }
    if (by_name.empty()) return top;
    const auto it =
        std::max_element(by_name.begin(), by_name.end(),
                         [](const auto& a, const auto& b) { return a.second < b.second; });
    top.name = it->first;
    top.ns = it->second;
    return top;
  }

  // "X (p%) while the host was launching the next work, Y (q%) ..." for the non-zero causes.
  std::string CauseText(const DeviceIdle& d, const IdleTotals& t, uint64_t from,
                        uint64_t to) const {
    std::vector<std::string> parts;
    const uint64_t idle = t.total();
    if (t.launch_ns > 0) {
      parts.push_back(Dur(t.launch_ns) + " (" + Pct(t.launch_ns, idle) +
                      ") while the host was launching the next work");
    }
    if (t.sync_ns > 0) {
      const TopApi top = TopApiOf(d, IdleCause::kSync, from, to);
      parts.push_back(Dur(t.sync_ns) + " (" + Pct(t.sync_ns, idle) +
                      ") while the host was blocked in synchronising calls (most in " + top.name +
                      ", " + Dur(top.ns) + ")");
    }
    if (t.other_ns > 0) {
      const TopApi top = TopApiOf(d, IdleCause::kOther, from, to);
      std::string text = Dur(t.other_ns) + " (" + Pct(t.other_ns, idle) + ") otherwise";
      if (top.in_calls_ns > 0) {
        text += " (" + Dur(top.in_calls_ns) + " of it in calls that issue no work, most in " +
                top.name + ", " + Dur(top.ns) + "; the rest outside CUDA calls)";
      } else {
        text += " (outside CUDA calls)";
      }
      parts.push_back(text);
    }
    std::string text;
    for (size_t i = 0; i < parts.size(); ++i) {
      text += (i == 0 ? "" : i + 1 == parts.size() ? " and " : ", ") + parts[i];
    }
    return text;
  }

  void IdleGaps(const DeviceIdle& d) {
    const auto& ops = index_.device_ops();
    // The pieces cover exactly the gaps, in order: each gap's are the next ones (a cursor, not a
    // search per gap over millions of pieces).
    size_t piece = 0;
    for (size_t k = 0; k < d.gaps.size(); ++k) {
      const Interval g = d.gaps[k];
      while (piece < d.pieces.size() && d.pieces[piece].span.end_ns <= g.start_ns) ++piece;
      size_t end = piece;
      while (end < d.pieces.size() && d.pieces[end].span.start_ns < g.end_ns) ++end;
      const IdleTotals causes = SumIdle(std::span(d.pieces).subspan(piece, end - piece),
                                        g.start_ns, g.end_ns);
      if (causes.total() < options_.gap_threshold_ns) continue;
      const DeviceOp& next = ops[d.next_op[k]];
      // The operation that ended the busy period before the gap.
      const DeviceOp* prev = nullptr;
      for (uint32_t o : d.ops) {
        if (ops[o].end_ns == g.start_ns) prev = &ops[o];
        if (ops[o].start_ns >= g.start_ns) break;
      }
      Finding f = Base(RuleId::kGpuIdleGaps, d, g.start_ns, g.length());
      f.blocked_ns = causes.total();
      IdleGapDetails details;
      details.host_activity = HostActivity(g);
      details.idle = causes;
      f.explanation =
          "GPU " + std::to_string(d.device_id) + " was idle for " + Dur(g.length()) + " from " +
          Dur(f.host_start_ns) + " (after " +
          (prev ? index_.OpName(*prev) + ", corr " + std::to_string(prev->correlation_id)
                : std::string("earlier work")) +
          "; before " + index_.OpName(next) + ", corr " + std::to_string(next.correlation_id) +
          "): " + details.host_activity + "; of the gap, " +
          CauseText(d, causes, g.start_ns, g.end_ns);
      f.details = std::move(details);
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

  // One chunk of the steady-state span under the utilization threshold.
  struct Chunk {
    uint32_t index = 0;
    uint64_t from = 0, to = 0, covered = 0, idle = 0, kernels = 0, kernel_ns = 0;
  };

  void LowUtilization(const DeviceIdle& d) {
    const auto& ops = index_.device_ops();
    // The device's steady-state span, from the end of start-up (or its first operation) to its
    // last operation: start-up has its own finding, and idle time after the last operation
    // (teardown) is left out.
    const uint64_t start = d.active.start_ns;
    const uint64_t span = d.active.length();
    const uint32_t chunks = options_.util_chunks;
    if (chunks == 0 || span < chunks) return;
    std::vector<Chunk> low;
    for (uint32_t k = 0; k < chunks; ++k) {
      Chunk c;
      c.index = k;
      c.from = start + span * k / chunks;
      c.to = start + span * (k + 1) / chunks;
      // Busy and idle time; module loading after start-up is neither (WithoutIdleIn).
      c.covered = CoveredLength(d.busy, c.from, c.to);
      c.idle = SumIdle(d.pieces, c.from, c.to).total();
      if (c.idle < options_.min_wait_ns) continue;
      const double utilization =
          static_cast<double>(c.covered) / static_cast<double>(c.covered + c.idle);
      if (utilization >= options_.util_threshold) continue;
      auto first = std::lower_bound(d.ops.begin(), d.ops.end(), c.from,
                                    [&](uint32_t o, uint64_t t) { return ops[o].start_ns < t; });
      for (auto it = first; it != d.ops.end() && ops[*it].start_ns < c.to; ++it) {
        if (ops[*it].kind == DeviceOpKind::kKernel) {
          ++c.kernels;
          c.kernel_ns += ops[*it].duration();
        }
      }
      low.push_back(c);
    }
    // Adjacent chunks in which no kernel ran are one finding: one stretch without kernels.
    for (size_t i = 0; i < low.size();) {
      size_t j = i + 1;
      if (low[i].kernels == 0) {
        while (j < low.size() && low[j].kernels == 0 && low[j].index == low[j - 1].index + 1) ++j;
      }
      Chunk run = low[i];
      run.to = low[j - 1].to;
      for (size_t k = i + 1; k < j; ++k) {
        run.covered += low[k].covered;
        run.idle += low[k].idle;
      }
      LowUtilizationFinding(d, run, j - i, chunks);
      i = j;
    }
  }

  void LowUtilizationFinding(const DeviceIdle& d, const Chunk& c, size_t count, uint32_t chunks) {
    const uint64_t length = c.to - c.from;
    const uint64_t idle = c.idle;
    const uint64_t counted = c.covered + idle;  // the chunk less module loading after start-up
    const IdleTotals causes = SumIdle(d.pieces, c.from, c.to);
    Finding f = Base(RuleId::kGpuLowUtilization, d, c.from, length);
    f.blocked_ns = idle;
    LowUtilizationDetails details;
    details.utilization = static_cast<double>(c.covered) / static_cast<double>(counted);
    details.launch_bound_idle_ns = causes.launch_ns;
    details.idle = causes;
    details.kernels = c.kernels;
    details.chunks = count;
    f.details = details;
    const std::string which =
        count == 1 ? "chunk " + std::to_string(c.index + 1)
                   : "chunks " + std::to_string(c.index + 1) + "-" + std::to_string(c.index + count);
    const std::string gpu = "GPU " + std::to_string(d.device_id);
    if (c.kernels == 0 && count > 1) {
      f.explanation = gpu + " ran no kernel for " + Dur(length) + " from " +
                      Dur(f.host_start_ns) + " (" + which + " of " + std::to_string(chunks) +
                      "), busy " + Pct(c.covered, counted) + ": " + Dur(idle) + " idle, " +
                      CauseText(d, causes, c.from, c.to);
    } else {
      f.explanation = gpu + " was busy " + Pct(c.covered, counted) + " of the " + Dur(length) +
                      " from " + Dur(f.host_start_ns) + " (" + which + " of " +
                      std::to_string(chunks) + "): " + Dur(idle) + " idle, " +
                      CauseText(d, causes, c.from, c.to);
      f.explanation += c.kernels == 0 ? "; no kernel ran"
                                      : "; " + std::to_string(c.kernels) + " kernel" +
                                            (c.kernels == 1 ? "" : "s") + " ran, mean " +
                                            Dur(c.kernel_ns / c.kernels);
    }
    if (counted < length) {
      f.explanation += " (" + Dur(length - counted) + " of module loading left out, as start-up)";
    }
    out_.push_back(std::move(f));
  }

  // start-up, once per process: what it spent its time on and the idle time it holds.
  void StartUpFinding(const StartUp& s, uint64_t gpu_idle_ns) {
    const uint64_t length = s.duration_ns();
    if (length < options_.min_wait_ns) return;
    Finding f;
    f.rule = RuleId::kStartUp;
    f.file = trace_.path;
    f.pid = trace_.header.pid;
    f.host_start_ns = Duration(trace_.origin_ns, s.start_ns);
    f.host_duration_ns = length;
    f.blocked_ns = length;
    StartUpDetails details;
    const uint64_t first = Duration(trace_.origin_ns, s.first_op_ns);
    if (s.first_op_is_kernel) details.first_kernel_ns = first;
    details.module_load_ns = s.module_load.ns;
    details.module_loads = s.module_load.calls;
    details.context_ns = s.context.ns;
    details.allocation_ns = s.allocation.ns;
    details.allocations = s.allocation.calls;
    details.gpu_idle_ns = gpu_idle_ns;
    details.later_module_load_ns = s.later_load.ns;
    details.later_module_loads = s.later_load.calls;
    f.details = details;
    std::vector<std::string> parts;
    auto work = [&](const StartUp::Work& w, const char* what) {
      if (w.calls == 0) return;
      parts.push_back(std::string(what) + " " + Dur(w.ns) + " (" + std::to_string(w.calls) +
                      (w.calls == 1 ? " call" : " calls") +
                      (w.calls > 1 ? ", most in " + w.top_api + ", " + Dur(w.top_api_ns)
                                   : ", " + w.top_api) +
                      ")");
    };
    work(s.context, "context creation");
    work(s.module_load, "module loading");
    work(s.allocation, "allocations");
    const std::string what = s.first_op_is_kernel ? "kernel" : "device operation";
    f.explanation = "Start-up took " + Dur(length) + ", from the recording start ";
    f.explanation += s.end_ns > s.first_op_ns
                         ? "past the first " + what + " (at " + Dur(first) +
                               ") to the end of module loading"
                         : "to the first " + what;
    if (!parts.empty()) {
      f.explanation += ": ";
      for (size_t i = 0; i < parts.size(); ++i) {
        f.explanation += (i == 0 ? "" : i + 1 == parts.size() ? " and " : ", ") + parts[i];
      }
    }
    if (s.later_load.calls > 0) {
      f.explanation += "; module loading after it, " + Dur(s.later_load.ns) + " (" +
                       std::to_string(s.later_load.calls) +
                       (s.later_load.calls == 1 ? " call, " : " calls, most in ") +
                       s.later_load.top_api + "), counts as start-up too";
    }
    if (gpu_idle_ns > 0) {
      f.explanation += "; the GPU rules count from its end, leaving out its " +
                       Dur(gpu_idle_ns) + " of idle GPU time";
    }
    out_.push_back(std::move(f));
  }

  // gpu-idle-breakdown: the whole steady-state span, when idle for at least --idle-share of it.
  void Breakdown(const DeviceIdle& d) {
    const IdleTotals causes = SumIdle(d.pieces, d.active.start_ns, d.active.end_ns);
    const uint64_t idle = causes.total();
    // The span less module loading after start-up (WithoutIdleIn): busy plus idle time.
    const uint64_t span = CoveredLength(d.busy, d.active.start_ns, d.active.end_ns) + idle;
    if (span == 0 || idle < options_.min_wait_ns ||
        static_cast<double>(idle) < options_.idle_share * static_cast<double>(span)) {
      return;
    }
    // Kernels of the device and the calls that launched them.
    const auto& ops = index_.device_ops();
    uint64_t kernels = 0, kernel_ns = 0, launch_ns = 0;
    std::unordered_set<uint32_t> launchers;
    for (uint32_t o : d.ops) {
      if (ops[o].kind != DeviceOpKind::kKernel) continue;
      ++kernels;
      kernel_ns += ops[o].duration();
      const int64_t call = index_.LaunchingCall(ops[o].correlation_id);
      if (call < 0) continue;
      const uint32_t outer = index_.Outermost(static_cast<size_t>(call));
      if (launchers.insert(outer).second) {
        const ApiCall& c = records_.api_calls[outer];
        launch_ns += Duration(c.start_ns, c.end_ns);
      }
    }
    Finding f = Base(RuleId::kGpuIdleBreakdown, d, d.active.start_ns, d.active.length());
    f.blocked_ns = idle;
    IdleBreakdownDetails details;
    details.utilization = static_cast<double>(span - idle) / static_cast<double>(span);
    details.idle = causes;
    details.kernels = kernels;
    const uint64_t mean_kernel = kernels == 0 ? 0 : kernel_ns / kernels;
    const uint64_t mean_launch = launchers.empty() ? 0 : launch_ns / launchers.size();
    if (kernels > 0) details.mean_kernel_ns = mean_kernel;
    if (!launchers.empty()) {
      details.launches = launchers.size();
      details.mean_launch_ns = mean_launch;
    }
    f.details = details;
    const std::string gpu = "GPU " + std::to_string(d.device_id);
    f.explanation = gpu + " was idle " + Pct(idle, span) + " of its steady state (" + Dur(idle) +
                    " of " + Dur(span) + " from " + Dur(f.host_start_ns) +
                    "): " + CauseText(d, causes, d.active.start_ns, d.active.end_ns) + ". ";
    if (2 * causes.launch_ns >= idle && kernels > 0 && mean_kernel < mean_launch) {
      f.explanation += "Launch-bound: " + gpu + " was idle " + Pct(idle, span) +
                       " of the time because kernels averaged " + Dur(mean_kernel) +
                       " while launches cost " + Dur(mean_launch) + " (" +
                       std::to_string(launchers.size()) +
                       " launch calls): the host cannot issue work as fast as the GPU "
                       "finishes it; capture the launch sequence in a CUDA graph (one "
                       "cudaGraphLaunch replaces many launches) or fuse the kernels";
    } else if (2 * causes.launch_ns >= idle) {
      f.explanation += "Most idle time was spent waiting for launches although kernels (mean " +
                       Dur(mean_kernel) + ") outlast their launch calls (mean " + Dur(mean_launch) +
                       "): the host issued work late; look at what it does between launches";
    } else if (2 * causes.sync_ns >= idle) {
      const TopApi top = TopApiOf(d, IdleCause::kSync, d.active.start_ns, d.active.end_ns);
      f.explanation += "Most idle time had the host blocked in synchronising calls (most in " +
                       top.name +
                       "): each one drains the GPU's queue before more work is "
                       "issued; drop the ones not needed (cudaMallocAsync/cudaFreeAsync or a "
                       "caching allocator instead of cudaMalloc/cudaFree, pinned memory for "
                       "async copies, events instead of device-wide synchronisation)";
    } else if (2 * causes.other_ns >= idle) {
      const TopApi top = TopApiOf(d, IdleCause::kOther, d.active.start_ns, d.active.end_ns);
      f.explanation +=
          2 * top.in_calls_ns >= causes.other_ns
              ? "Most idle time had the host in CUDA calls that issue no work (most in " +
                    top.name + ", " + Dur(top.ns) + "): see whether they can move out of the loop"
              : "Most idle time had the host outside CUDA calls (host computation, I/O, "
                "interpreter overhead): the GPU waited for the program, not for CUDA; profile "
                "the host code between launches";
    } else {
      f.explanation += "No single cause holds half of it";
    }
    out_.push_back(std::move(f));
  }

  const ProcessTrace& trace_;
  const TraceIndex& index_;
  const FindingsOptions& options_;
  const TraceRecords& records_;
  std::vector<Finding>& out_;
};

}  // namespace

void FindGpuFindings(const RuleInput& input, std::vector<Finding>* out) {
  GpuRules(input.trace, input.index, input.options, out).Run();
}

}  // namespace libprof::analysis
