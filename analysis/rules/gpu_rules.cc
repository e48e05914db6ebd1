#include "analysis/rules/gpu_rules.h"

#include <algorithm>
#include <map>
#include <optional>
#include <span>

#include "analysis/model/device_ops.h"
#include "analysis/model/intervals.h"
#include "analysis/model/kernel_names.h"
#include "analysis/model/units.h"
#include "analysis/rules/framework_hints.h"

namespace libprof::analysis {
namespace {

// What a recurring autotuner's or compiler's work (StartUp::recurring_compilations) asks of the
// program; follows a clause.
constexpr const char* kRecompileAdvice =
    ": a function compiled anew again and again, as jax.jit does for every new input shape or "
    "static argument value (torch.compile too, up to its recompile limit); give it a few fixed "
    "shapes (pad or bucket the inputs) and arguments that rarely change, so that it compiles "
    "once";

std::string Dur(uint64_t ns) { return FormatDuration(static_cast<double>(ns)); }

std::string Pct(uint64_t part, uint64_t whole) {
  return FormatPercent(static_cast<double>(part), static_cast<double>(whole));
}

uint64_t Duration(uint64_t start, uint64_t end) { return end > start ? end - start : 0; }

Finding Base(const ProcessTrace& trace, RuleId rule, uint32_t device_id, uint64_t start_ns,
             uint64_t length_ns) {
  Finding f;
  f.rule = rule;
  f.file = trace.path;
  f.pid = trace.header.pid;
  f.device_id = device_id;
  f.host_start_ns = Duration(trace.origin_ns, start_ns);
  f.host_duration_ns = length_ns;
  return f;
}

// The pieces' idle time of `cause` inside [from, to) by the API of the call they were in.
// How many of `calls` ran while a call of another thread ran: a sweep by start, keeping the
// latest end and the latest end of any other thread than its.
uint64_t LaunchesOverlappingOtherThreads(std::vector<const ApiCall*> calls) {
  std::sort(calls.begin(), calls.end(),
            [](const ApiCall* a, const ApiCall* b) { return a->start_ns < b->start_ns; });
  uint64_t overlapped = 0;
  uint64_t latest_end = 0, other_end = 0;  // other_end: the latest end of a thread not latest's
  uint32_t latest_thread = 0;
  bool any = false;
  for (const ApiCall* c : calls) {
    const bool overlaps = any && ((latest_thread != c->thread_id && latest_end > c->start_ns) ||
                                  other_end > c->start_ns);
    overlapped += overlaps;
    if (!any || c->end_ns >= latest_end) {
      if (any && latest_thread != c->thread_id) other_end = latest_end;
      latest_end = c->end_ns;
      latest_thread = c->thread_id;
    } else if (c->thread_id != latest_thread) {
      other_end = std::max(other_end, c->end_ns);
    }
    any = true;
  }
  return overlapped;
}

void AddByApi(std::span<const IdlePiece> pieces, IdleCause cause, uint64_t from, uint64_t to,
              IdleByApi* out) {
  for (const IdlePiece& p : pieces) {
    if (p.cause != cause || p.api_name < 0 || p.span.end_ns <= from || p.span.start_ns >= to) {
      continue;
    }
    out->Add(p, OverlapLength(p.span.start_ns, p.span.end_ns, from, to));
  }
}

// Whether `api` allocates or frees memory (cudaMalloc, cudaHostAlloc, cudaFree, cudaFreeHost,
// their driver calls).
bool AllocatesOrFrees(std::string_view api) {
  return TraitsOf(api).start_up == StartUpWork::kAllocation || api.starts_with("cudaFree") ||
         api.starts_with("cuMemFree");
}

// The API with the most idle time of a cause (by name: ids of one name add up, and the first
// name in order wins a tie), that time, and the time of that cause spent inside any call.
struct TopApi {
  std::string name;
  uint64_t ns = 0;
  uint64_t in_calls_ns = 0;
};
TopApi TopOf(const ProcessTrace& trace, const IdleByApi& idle) {
  TopApi top;
  top.in_calls_ns = idle.in_calls_ns;
  std::map<std::string, uint64_t> by_name;
  for (const auto& [id, ns] : idle.by_name_id) by_name[trace.Str(id)] += ns;
  if (by_name.empty()) return top;
  const auto it =
      std::max_element(by_name.begin(), by_name.end(),
                       [](const auto& a, const auto& b) { return a.second < b.second; });
  top.name = it->first;
  top.ns = it->second;
  return top;
}

// The idle time of each cause by API, as CauseText names them.
struct IdleApis {
  const IdleByApi& sync;
  const IdleByApi& other;
  const IdleByApi& host_functions;
  const IdleByApi& memory_waits;
};

// "X (p%) while the host was launching the next work, Y (q%) ..." for the non-zero causes.
std::string CauseText(const ProcessTrace& trace, const IdleTotals& t, const IdleApis& apis) {
  const IdleByApi& sync = apis.sync;
  const IdleByApi& other = apis.other;
  std::vector<std::string> parts;
  const uint64_t idle = t.total();
  if (t.launch_ns > 0) {
    parts.push_back(Dur(t.launch_ns) + " (" + Pct(t.launch_ns, idle) +
                    ") while the host was launching the next work");
  }
  if (t.sync_ns > 0) {
    const TopApi top = TopOf(trace, sync);
    parts.push_back(Dur(t.sync_ns) + " (" + Pct(t.sync_ns, idle) +
                    ") while the host was blocked in synchronising calls (most in " + top.name +
                    ", " + Dur(top.ns) + ")");
  }
  if (t.other_ns > 0) {
    const TopApi top = TopOf(trace, other);
    std::string text = Dur(t.other_ns) + " (" + Pct(t.other_ns, idle) + ") otherwise";
    if (top.in_calls_ns > 0) {
      text += " (" + Dur(top.in_calls_ns) + " of it in calls that issue no work, most in " +
              top.name + ", " + Dur(top.ns) + "; the rest outside CUDA calls)";
    } else {
      text += " (outside CUDA calls)";
    }
    parts.push_back(text);
  }
  if (t.host_function_ns > 0) {
    const TopApi top = TopOf(trace, apis.host_functions);
    parts.push_back(Dur(t.host_function_ns) + " (" + Pct(t.host_function_ns, idle) +
                    ") while work waited in its stream for a host function (most enqueued by " +
                    top.name + ", " + Dur(top.ns) + ")");
  }
  if (t.memory_wait_ns > 0) {
    const TopApi top = TopOf(trace, apis.memory_waits);
    parts.push_back(Dur(t.memory_wait_ns) + " (" + Pct(t.memory_wait_ns, idle) +
                    ") while work waited in its stream for a memory value to be written (most "
                    "behind " +
                    top.name + ", " + Dur(top.ns) + ")");
  }
  if (t.other_device_ns > 0) {
    parts.push_back(Dur(t.other_device_ns) + " (" + Pct(t.other_device_ns, idle) +
                    ") while work waited in its stream for another GPU's work (an event "
                    "recorded there)");
  }
  if (t.in_graph_ns > 0) {
    parts.push_back(Dur(t.in_graph_ns) + " (" + Pct(t.in_graph_ns, idle) +
                    ") inside CUDA graphs, between their nodes");
  }
  std::string text;
  for (size_t i = 0; i < parts.size(); ++i) {
    text += (i == 0 ? "" : i + 1 == parts.size() ? " and " : ", ") + parts[i];
  }
  return text;
}

// What the host did in CUDA during `g`: how long some thread was inside a CUDA call, and the
// API with the most time in it. The window's top-level calls and the earlier windows' kept ones.
std::string HostActivity(const TraceIndex& index, const std::vector<HostCall>& earlier,
                         const Interval& g) {
  const ProcessTrace& trace = index.trace();
  std::map<std::string, uint64_t> by_name;
  std::vector<Interval> inside;
  auto add = [&](uint64_t start, uint64_t end, uint32_t name_id) {
    const uint64_t overlap = OverlapLength(start, end, g.start_ns, g.end_ns);
    if (overlap == 0) return;
    by_name[trace.Str(name_id)] += overlap;
    inside.push_back({std::max(start, g.start_ns), std::min(end, g.end_ns)});
  };
  for (const HostCall& c : earlier) add(c.start_ns, c.end_ns, c.name_id);
  const auto& calls = trace.records.api_calls;
  for (uint32_t i = 0; i < calls.size(); ++i) {
    if (index.Outermost(i) == i) add(calls[i].start_ns, calls[i].end_ns, calls[i].name_id);
  }
  if (by_name.empty()) return "the host made no CUDA API call meanwhile";
  auto top = std::max_element(by_name.begin(), by_name.end(),
                              [](const auto& a, const auto& b) { return a.second < b.second; });
  return "the host was inside CUDA API calls for " + Dur(UnionLength(std::move(inside))) +
         " of it (most in " + top->first + ", " + Dur(top->second) + ")";
}

// The gaps (sorted, disjoint) that overlap one-time work (`spans`: sorted, disjoint), each with
// the kinds of the spans it overlaps.
struct OneTimeGaps {
  std::vector<Interval> gaps;
  std::vector<uint32_t> kinds;
};
OneTimeGaps GapsOverlapping(const std::vector<Interval>& gaps,
                            const std::vector<StartUp::OneTimeSpan>& spans) {
  OneTimeGaps out;
  auto first = spans.begin();
  for (const Interval& g : gaps) {
    while (first != spans.end() && first->span.end_ns <= g.start_ns) ++first;
    uint32_t kinds = 0;
    for (auto s = first; s != spans.end() && s->span.start_ns < g.end_ns; ++s) kinds |= s->kinds;
    if (kinds == 0) continue;
    out.gaps.push_back(g);
    out.kinds.push_back(kinds);
  }
  return out;
}

// The parts of `pieces` (sorted, disjoint) inside the gaps of `holes`, each with its gap's kinds:
// what WithoutIdleIn(pieces, holes.gaps) leaves out.
struct OneTimePiece {
  Interval span;
  uint32_t kinds = 0;
};
std::vector<OneTimePiece> PiecesIn(const std::vector<IdlePiece>& pieces, const OneTimeGaps& holes) {
  std::vector<OneTimePiece> out;
  size_t first = 0;
  for (const IdlePiece& p : pieces) {
    while (first < holes.gaps.size() && holes.gaps[first].end_ns <= p.span.start_ns) ++first;
    for (size_t h = first; h < holes.gaps.size() && holes.gaps[h].start_ns < p.span.end_ns; ++h) {
      const Interval& g = holes.gaps[h];
      out.push_back({{std::max(p.span.start_ns, g.start_ns), std::min(p.span.end_ns, g.end_ns)},
                     holes.kinds[h]});
    }
  }
  return out;
}

// " (4.2 ms of module loading left out, as start-up)", " (1.2 s idle during XLA's autotuning
// left out, paid once)" or both, for what a span's figures leave out; "" for nothing.
std::string LeftOutText(uint64_t loading_ns, uint64_t one_time_ns, uint32_t one_time_kinds) {
  std::vector<std::string> parts;
  if (loading_ns > 0) parts.push_back(Dur(loading_ns) + " of module loading");
  if (one_time_ns > 0) {
    parts.push_back(Dur(one_time_ns) + " idle during " + OneTimeWorkNames(one_time_kinds));
  }
  if (parts.empty()) return "";
  if (parts.size() == 1 && loading_ns > 0) return " (" + parts[0] + " left out, as start-up)";
  return " (" + (parts.size() == 1 ? parts[0] : parts[0] + " and " + parts[1]) +
         " left out, paid once)";
}

}  // namespace

void IdleByApi::Merge(const IdleByApi& other) {
  for (const auto& [id, ns] : other.by_name_id) by_name_id[id] += ns;
  in_calls_ns += other.in_calls_ns;
}

GpuRulesAccumulator::GpuRulesAccumulator(const FindingsOptions& options, const StartUp& bounds,
                                         const std::map<uint32_t, Interval>& active)
    : options_(options), bounds_(bounds) {
  for (const auto& [id, span] : active) {
    Device& d = devices_[id];
    d.active = span;
    // Idle time inside start-up is reported once, by the start-up finding (From's rule).
    d.cut = bounds.known && bounds.end_ns > span.start_ns;
    d.from_ns = d.cut ? bounds.end_ns : 0;
    d.steady = d.cut ? Interval{std::min(bounds.end_ns, span.end_ns), span.end_ns} : span;
    const uint32_t chunks = options.util_chunks;
    if (chunks > 0 && d.steady.length() >= chunks) {
      d.chunks.resize(chunks);
      // Computed once: the sums per chunk place millions of intervals.
      for (uint64_t k = 0; k <= chunks; ++k) {
        d.chunk_from.push_back(d.steady.start_ns + d.steady.length() * k / chunks);
      }
    }
  }
}

void GpuRulesAccumulator::Add(const TraceIndex& window, std::vector<DeviceIdle> devices,
                              const std::vector<HostCall>& earlier_calls) {
  for (DeviceIdle& d : devices) {
    auto it = devices_.find(d.device_id);
    if (it == devices_.end()) continue;  // no busy time in the whole trace: ClassifyIdle skips it
    AddDevice(window, std::move(d), earlier_calls, &it->second);
  }
}

void GpuRulesAccumulator::AddDevice(const TraceIndex& window, DeviceIdle d,
                                    const std::vector<HostCall>& earlier_calls, Device* device) {
  const ProcessTrace& trace = window.trace();
  const auto& ops = window.device_ops();
  Device& dev = *device;
  dev.active_busy_ns += CoveredLength(d.busy, dev.active.start_ns, dev.active.end_ns);
  if (bounds_.known && bounds_.end_ns > dev.active.start_ns) {
    start_up_idle_ +=
        SumIdle(d.pieces, dev.active.start_ns, std::min(bounds_.end_ns, dev.active.end_ns))
            .total();
  }
  if (dev.cut) CutBefore(&d, ops, dev.from_ns);
  if (dev.steady.length() == 0) return;
  const uint64_t s0 = dev.steady.start_ns, s1 = dev.steady.end_ns;
  const uint64_t steady_idle = SumIdle(d.pieces, s0, s1).total();
  // Module loading after start-up is start-up's too: its idle time is left out here.
  d = WithoutIdleIn(std::move(d), bounds_.later_loading);
  start_up_idle_ += steady_idle - SumIdle(d.pieces, s0, s1).total();
  // So are the idle gaps that overlap one-time work (an autotuner, a compiler; start_up.h):
  // counted apart, per utilization chunk too.
  const OneTimeGaps one_time_gaps = GapsOverlapping(d.gaps, bounds_.one_time);
  std::vector<OneTimePiece> one_time_pieces;
  if (!one_time_gaps.gaps.empty()) {
    one_time_pieces = PiecesIn(d.pieces, one_time_gaps);
    d = WithoutIdleIn(std::move(d), one_time_gaps.gaps);
  }
  // The gaps in which the program made library plans or handles, or compiled, again and again
  // (counted).
  const auto idle_in = [&](const std::vector<Interval>& spans) {
    std::vector<StartUp::OneTimeSpan> listed;
    for (const Interval& span : spans) listed.push_back({span, 1});
    uint64_t ns = 0;
    for (const Interval& g : GapsOverlapping(d.gaps, listed).gaps) {
      ns += SumIdle(d.pieces, std::max(g.start_ns, s0), std::min(g.end_ns, s1)).total();
    }
    return ns;
  };
  if (!bounds_.recurring_set_ups.empty()) {
    dev.whole.set_up_idle_ns += idle_in(bounds_.recurring_set_ups);
  }
  if (!bounds_.recurring_compiles.empty()) {
    dev.whole.compile_idle_ns += idle_in(bounds_.recurring_compiles);
  }

  // gpu-idle-gaps. The pieces cover exactly the gaps, in order: each gap's are the next ones
  // (a cursor, not a search per gap over millions of pieces).
  size_t piece = 0;
  for (size_t k = 0; k < d.gaps.size(); ++k) {
    const Interval g = d.gaps[k];
    while (piece < d.pieces.size() && d.pieces[piece].span.end_ns <= g.start_ns) ++piece;
    size_t end = piece;
    while (end < d.pieces.size() && d.pieces[end].span.start_ns < g.end_ns) ++end;
    const std::span<const IdlePiece> in_gap = std::span(d.pieces).subspan(piece, end - piece);
    const IdleTotals causes = SumIdle(in_gap, g.start_ns, g.end_ns);
    if (causes.total() < options_.gap_threshold_ns) continue;
    const DeviceOp& next = ops[d.next_op[k]];
    // The operation that ended the busy period before the gap, maybe in an earlier window.
    std::optional<std::string> prev;
    if (d.earlier.known && d.earlier.end_ns == g.start_ns &&
        (!dev.cut || d.earlier.start_ns >= dev.from_ns)) {
      prev = AbbreviateName(d.earlier.name, kProseNameChars) + ", corr " +
             std::to_string(d.earlier.correlation_id);
    }
    for (uint32_t o : d.ops) {
      if (ops[o].end_ns == g.start_ns) {
        prev = AbbreviateName(window.OpName(ops[o]), kProseNameChars) + ", corr " +
               std::to_string(ops[o].correlation_id);
      }
      if (ops[o].start_ns >= g.start_ns) break;
    }
    Finding f = Base(trace, RuleId::kGpuIdleGaps, d.device_id, g.start_ns, g.length());
    f.blocked_ns = causes.total();
    IdleGapDetails details;
    details.host_activity = HostActivity(window, earlier_calls, g);
    details.idle = causes;
    IdleByApi sync, other, host_functions, memory_waits;
    AddByApi(in_gap, IdleCause::kSync, g.start_ns, g.end_ns, &sync);
    AddByApi(in_gap, IdleCause::kOther, g.start_ns, g.end_ns, &other);
    AddByApi(in_gap, IdleCause::kHostFunction, g.start_ns, g.end_ns, &host_functions);
    AddByApi(in_gap, IdleCause::kMemoryWait, g.start_ns, g.end_ns, &memory_waits);
    f.explanation = "GPU " + std::to_string(d.device_id) + " was idle for " + Dur(g.length()) +
                    " from " + Dur(f.host_start_ns) + " (after " + prev.value_or("earlier work") +
                    "; before " + AbbreviateName(window.OpName(next), kProseNameChars) + ", corr " +
                    std::to_string(next.correlation_id) + "): " + details.host_activity +
                    "; of the gap, " +
                    CauseText(trace, causes, {sync, other, host_functions, memory_waits});
    f.details = std::move(details);
    dev.gaps.push_back(std::move(f));
  }

  // Sums per utilization chunk: busy and idle time (module loading after start-up is neither),
  // and the kernels that started in it.
  if (!dev.chunks.empty()) {
    const uint64_t n = dev.chunks.size();
    auto from_of = [&](uint64_t k) { return dev.chunk_from[k]; };
    // The chunks [from, to) overlaps, for intervals in time order: a cursor moves forward.
    uint64_t cursor = 0;
    auto each_chunk = [&](uint64_t from, uint64_t to, auto&& add) {
      while (cursor + 1 < n && from_of(cursor + 1) <= from) ++cursor;
      for (uint64_t k = cursor; k < n && from_of(k) < to; ++k) {
        const uint64_t length = OverlapLength(from, to, from_of(k), from_of(k + 1));
        if (length > 0) add(dev.chunks[k], length);
      }
    };
    for (const Interval& b : d.busy) {
      each_chunk(b.start_ns, b.end_ns, [](Sums& c, uint64_t length) { c.covered += length; });
    }
    cursor = 0;
    for (const IdlePiece& p : d.pieces) {
      each_chunk(p.span.start_ns, p.span.end_ns, [&](Sums& c, uint64_t length) {
        c.idle.Add(p.cause, length);
        if (p.api_name < 0) return;
        if (p.cause == IdleCause::kSync) c.sync.Add(p, length);
        if (p.cause == IdleCause::kOther) c.other.Add(p, length);
        if (p.cause == IdleCause::kHostFunction) c.host_functions.Add(p, length);
        if (p.cause == IdleCause::kMemoryWait) c.memory_waits.Add(p, length);
      });
    }
    cursor = 0;
    for (const OneTimePiece& p : one_time_pieces) {
      each_chunk(p.span.start_ns, p.span.end_ns, [&](Sums& c, uint64_t length) {
        c.one_time_idle_ns += length;
        c.one_time_kinds |= p.kinds;
      });
    }
    cursor = 0;
    for (uint32_t o : d.ops) {
      if (ops[o].kind != DeviceOpKind::kKernel) continue;
      const uint64_t t = ops[o].start_ns;
      if (t < s0 || t >= s1) continue;
      while (cursor + 1 < n && from_of(cursor + 1) <= t) ++cursor;
      ++dev.chunks[cursor].kernels;
      dev.chunks[cursor].kernel_ns += ops[o].duration();
    }
  }

  // The whole steady state (gpu-idle-breakdown): idle and busy time, kernels, and the calls
  // that launched them (each a call of this window only).
  dev.whole.idle.Add(SumIdle(d.pieces, s0, s1));
  dev.whole.covered += CoveredLength(d.busy, s0, s1);
  for (const OneTimePiece& p : one_time_pieces) {
    const uint64_t length = OverlapLength(p.span.start_ns, p.span.end_ns, s0, s1);
    if (length == 0) continue;
    dev.whole.one_time_idle_ns += length;
    dev.whole.one_time_kinds |= p.kinds;
    one_time_idle_ += length;
    one_time_kinds_ |= p.kinds;
  }
  AddByApi(d.pieces, IdleCause::kSync, s0, s1, &dev.whole.sync);
  AddByApi(d.pieces, IdleCause::kOther, s0, s1, &dev.whole.other);
  AddByApi(d.pieces, IdleCause::kHostFunction, s0, s1, &dev.whole.host_functions);
  AddByApi(d.pieces, IdleCause::kMemoryWait, s0, s1, &dev.whole.memory_waits);
  AddByApi(d.pieces, IdleCause::kLaunch, s0, s1, &dev.whole.launches);
  // Each launching call counted once: a bit per call of the window (a hash set of the calls
  // was most of this function's time).
  std::vector<bool> launchers(window.records().api_calls.size());
  std::vector<const ApiCall*> launch_calls;
  for (uint32_t o : d.ops) {
    if (ops[o].kind == DeviceOpKind::kMemcpy) {
      ++dev.whole.copies;
      dev.whole.copy_bytes += ops[o].bytes;
      dev.whole.copy_ns += ops[o].duration();
    }
    if (ops[o].kind != DeviceOpKind::kKernel) continue;
    ++dev.whole.kernels;
    dev.whole.kernel_ns += ops[o].duration();
    const bool in_graph = ops[o].graph_id != 0;
    if (in_graph) ++dev.graph_kernels;
    if (in_graph && ops[o].correlation_id == 0) ++dev.device_launched_graph_kernels;
    const int64_t call = window.LaunchingCall(ops[o].correlation_id);
    if (call < 0) continue;
    const uint32_t outer = window.Outermost(static_cast<size_t>(call));
    const ApiCall& c = window.records().api_calls[outer];
    // Only calls and their parts in the steady state: the first kernel's launch call began in
    // start-up, often loading its module lazily (.carry/s17/cdp.cu on the H200: 10.97 ms of the
    // 100 launches' 11.83 ms, which made "launches cost 118.35 µs" of 6.4 µs calls).
    if (!launchers[outer] && c.end_ns > s0) {
      launchers[outer] = true;
      ++dev.launches;
      launch_calls.push_back(&c);
      dev.launch_ns += Duration(std::max(c.start_ns, s0), c.end_ns);
      if (in_graph) ++dev.graph_launches;
    }
  }
  dev.overlapped_launches += LaunchesOverlappingOtherThreads(std::move(launch_calls));
}

void GpuRulesAccumulator::Finish(const ProcessTrace& whole, const StartUp& start_up,
                                 std::vector<Finding>* out) {
  for (auto& [id, d] : devices_) {
    if (d.steady.length() == 0) continue;
    for (Finding& f : d.gaps) out->push_back(std::move(f));
    LowUtilization(whole, id, d, out);
    Breakdown(whole, id, d, out);
  }
  if (start_up.known) StartUpFinding(whole, start_up, out);
}

void GpuRulesAccumulator::LowUtilization(const ProcessTrace& whole, uint32_t id, const Device& d,
                                         std::vector<Finding>* out) const {
  // The device's steady-state span, from the end of start-up (or its first operation) to its
  // last operation: start-up has its own finding, and idle time after the last operation
  // (teardown) is left out.
  if (d.chunks.empty()) return;
  const uint64_t start = d.steady.start_ns;
  const uint64_t span = d.steady.length();
  const uint32_t chunks = static_cast<uint32_t>(d.chunks.size());
  struct Low {
    uint32_t index = 0;
    uint64_t from = 0, to = 0;
  };
  std::vector<Low> low;
  for (uint32_t k = 0; k < chunks; ++k) {
    const Sums& c = d.chunks[k];
    const uint64_t idle = c.idle.total();
    if (idle < options_.min_wait_ns) continue;
    const double utilization =
        static_cast<double>(c.covered) / static_cast<double>(c.covered + idle);
    if (utilization >= options_.util_threshold) continue;
    low.push_back({k, start + span * k / chunks, start + span * (k + 1) / chunks});
  }
  // Adjacent chunks in which no kernel ran are one finding: one stretch without kernels.
  for (size_t i = 0; i < low.size();) {
    size_t j = i + 1;
    if (d.chunks[low[i].index].kernels == 0) {
      while (j < low.size() && d.chunks[low[j].index].kernels == 0 &&
             low[j].index == low[j - 1].index + 1) {
        ++j;
      }
    }
    const Sums& first = d.chunks[low[i].index];
    Sums run;
    for (size_t k = i; k < j; ++k) {
      const Sums& c = d.chunks[low[k].index];
      run.covered += c.covered;
      run.one_time_idle_ns += c.one_time_idle_ns;
      run.one_time_kinds |= c.one_time_kinds;
      run.idle.Add(c.idle);
      run.sync.Merge(c.sync);
      run.other.Merge(c.other);
      run.host_functions.Merge(c.host_functions);
      run.memory_waits.Merge(c.memory_waits);
    }
    const uint64_t from = low[i].from, to = low[j - 1].to;
    const size_t count = j - i;
    const uint64_t length = to - from;
    const uint64_t idle = run.idle.total();
    // The chunks less module loading after start-up and less one-time work's idle gaps.
    const uint64_t counted = run.covered + idle;
    Finding f = Base(whole, RuleId::kGpuLowUtilization, id, from, length);
    f.blocked_ns = idle;
    LowUtilizationDetails details;
    details.utilization = static_cast<double>(run.covered) / static_cast<double>(counted);
    details.launch_bound_idle_ns = run.idle.launch_ns;
    details.idle = run.idle;
    details.kernels = first.kernels;
    details.chunks = count;
    f.details = details;
    const uint32_t index = low[i].index;
    const std::string which =
        count == 1 ? "chunk " + std::to_string(index + 1)
                   : "chunks " + std::to_string(index + 1) + "-" + std::to_string(index + count);
    const std::string gpu = "GPU " + std::to_string(id);
    const std::string causes =
        CauseText(whole, run.idle, {run.sync, run.other, run.host_functions, run.memory_waits});
    if (first.kernels == 0 && count > 1) {
      f.explanation = gpu + " ran no kernel for " + Dur(length) + " from " +
                      Dur(f.host_start_ns) + " (" + which + " of " + std::to_string(chunks) +
                      "), busy " + Pct(run.covered, counted) + ": " + Dur(idle) + " idle, " +
                      causes;
    } else {
      f.explanation = gpu + " was busy " + Pct(run.covered, counted) + " of the " + Dur(length) +
                      " from " + Dur(f.host_start_ns) + " (" + which + " of " +
                      std::to_string(chunks) + "): " + Dur(idle) + " idle, " + causes;
      f.explanation += first.kernels == 0 ? "; no kernel ran"
                                          : "; " + std::to_string(first.kernels) + " kernel" +
                                                (first.kernels == 1 ? "" : "s") + " ran, mean " +
                                                Dur(first.kernel_ns / first.kernels);
    }
    if (counted < length) {
      const uint64_t left_out = length - counted;
      const uint64_t one_time = std::min(run.one_time_idle_ns, left_out);
      f.explanation += LeftOutText(left_out - one_time, one_time, run.one_time_kinds);
    }
    out->push_back(std::move(f));
    i = j;
  }
}

// start-up, once per process: what it spent its time on and the idle time it holds.
void GpuRulesAccumulator::StartUpFinding(const ProcessTrace& whole, const StartUp& s,
                                         std::vector<Finding>* out) const {
  const uint64_t gpu_idle_ns = start_up_idle_;
  const uint64_t length = s.duration_ns();
  if (length < options_.min_wait_ns) return;
  Finding f;
  f.rule = RuleId::kStartUp;
  f.file = whole.path;
  f.pid = whole.header.pid;
  f.host_start_ns = Duration(whole.origin_ns, s.start_ns);
  f.host_duration_ns = length;
  f.blocked_ns = length;
  StartUpDetails details;
  const uint64_t first = Duration(whole.origin_ns, s.first_op_ns);
  if (s.first_op_is_kernel) details.first_kernel_ns = first;
  details.module_load_ns = s.module_load.ns;
  details.module_loads = s.module_load.calls;
  details.context_ns = s.context.ns;
  details.allocation_ns = s.allocation.ns;
  details.allocations = s.allocation.calls;
  details.gpu_idle_ns = gpu_idle_ns;
  details.one_time_gpu_idle_ns = one_time_idle_;
  for (const auto& [id, d] : devices_) {
    if (d.active_busy_ns <= details.active_gpu_busy_ns) continue;
    details.active_gpu_busy_ns = d.active_busy_ns;
    details.active_ns = d.active.length();
  }
  for (const auto& [id, d] : devices_) {
    if (d.steady.length() == 0 || d.whole.covered <= details.steady_gpu_busy_ns) continue;
    details.steady_gpu_busy_ns = d.whole.covered;
    details.steady_ns = d.whole.covered + d.whole.idle.total();
  }
  details.later_module_load_ns = s.later_load.ns;
  details.later_module_loads = s.later_load.calls;
  if (s.library_set_up_recurs()) details.recurring_library_set_ups = s.library_set_ups;
  details.recurring_module_loads = s.recurring_module_loads;
  details.recurring_compilations = s.recurring_compilations;
  if (s.warm_up) {
    details.warm_up_ns = s.warm_up_ns();
    details.warm_up_gpu_busy_ns = s.warm_up_busy_ns;
    details.gpu_busy_after = static_cast<double>(s.busy_after_ppm) / 1e6;
  }
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
  if (s.end_ns > s.first_op_ns) {  // (always so after a warm-up)
    f.explanation += "past the first " + what + " (at " + Dur(first) + ") ";
    f.explanation += s.warm_up ? "through a warm-up to the end of the last module load before "
                                 "the GPU got busy (at " +
                                     Dur(Duration(whole.origin_ns, s.end_ns)) + ")"
                               : "to the end of module loading";
  } else {
    f.explanation += "to the first " + what;
  }
  if (!parts.empty()) {
    f.explanation += ": ";
    for (size_t i = 0; i < parts.size(); ++i) {
      f.explanation += (i == 0 ? "" : i + 1 == parts.size() ? " and " : ", ") + parts[i];
    }
  }
  if (s.warm_up) {
    f.explanation += "; in the warm-up's " + Dur(details.warm_up_ns) + " the GPU was busy " +
                     Pct(s.warm_up_busy_ns, details.warm_up_ns) + " of the time, against " +
                     FormatPercent(static_cast<double>(s.busy_after_ppm), 1e6) +
                     " after it: the program's first steps, which load the code it runs (and, with "
                     "a just-in-time compiler such as torch.compile, JAX/XLA, CuPy or NVRTC, "
                     "compile it on the host first)";
  }
  if (s.later_load.calls > 0) {
    f.explanation += std::string(s.later_context ? "; module loading and context creation"
                                                 : "; module loading") +
                     " after it, " + Dur(s.later_load.ns) + " (" +
                     std::to_string(s.later_load.calls) +
                     (s.later_load.calls == 1 ? " call, " : " calls, most in ") +
                     s.later_load.top_api + "), counts as start-up too";
  }
  if (gpu_idle_ns > 0) {
    f.explanation += "; the GPU rules count from its end, leaving out its " + Dur(gpu_idle_ns) +
                     " of idle GPU time";
  }
  if (one_time_idle_ > 0) {
    f.explanation += "; " + OneTimeWorkNames(one_time_kinds_) +
                     " after it, paid once too, held the GPU idle " + Dur(one_time_idle_) +
                     ", also left out";
  }
  if (s.library_set_up_recurs()) {
    f.explanation += "; a CUDA library's set-up recurred " + std::to_string(s.library_set_ups) +
                     " times through the run (cuFFT plans, or cuBLAS, cuDNN, cuSPARSE or "
                     "cuSOLVER handles, made again and again), so it is not left out as paid "
                     "once: its waits and idle time count with the rest; make each plan or "
                     "handle once and reuse it";
  }
  if (s.recurring_compilations > 0) {
    f.explanation += "; " + OneTimeWorkNames(s.recurring_compile_kinds) + " ran " +
                     std::to_string(s.recurring_compilations) +
                     " times after it, all through the run, so it is not left out as paid once: "
                     "its waits and idle time count with the rest" +
                     kRecompileAdvice;
  }
  if (s.recurring_module_loads > 0) {
    f.explanation += "; code was loaded " + std::to_string(s.recurring_module_loads) +
                     " times between the program's kernels, all through the run (modules "
                     "compiled or loaded again and again: a CuPy RawKernel or NVRTC program "
                     "built per call, cuModuleLoadData in a loop, a JIT compiling anew): compile "
                     "and load each module once and keep it";
  }
  out->push_back(std::move(f));
}

// gpu-idle-breakdown: the whole steady-state span, when idle for at least --idle-share of it.
// Kernels at most this long on average, in a host-bound PyTorch process, are eager mode's small
// operations (an H200 ran a batch-1 fp16 MLP's at 3-10 µs: .carry/s17c/torch_infer_bs1.py).
constexpr uint64_t kShortKernelNs = 20'000;

// The host-bound verdict's framework advice, starting "; ", or "": nn.DataParallel's, else
// PyTorch eager mode's when its kernels are short.
std::string HostBoundHint(const ProcessTrace& whole, uint64_t mean_kernel_ns) {
  if (RecordedInDataParallel(whole)) return DataParallelHint();
  if (mean_kernel_ns > kShortKernelNs || !RecordedInPyTorch(whole)) return "";
  if (RecordedWithTorchCompile(whole)) {
    // Compiled already (.carry/s17e/compile_train.py): what it leaves to eager mode is the rest.
    return "; this PyTorch process runs torch.compile already, so the host time left is in what "
           "it does not compile (the optimizer step, Python between steps, graph breaks): "
           "mode=\"reduce-overhead\" replays the compiled code as CUDA graphs, and compiling "
           "the optimizer step (or the fused=True of Adam and AdamW) covers more of each step";
  }
  return "; in PyTorch, eager mode spends Python and dispatcher time on every operation, longer "
         "than kernels this short (mean " +
         Dur(mean_kernel_ns) +
         "): torch.compile fuses operations into fewer kernels, and CUDA graphs "
         "(torch.compile(mode=\"reduce-overhead\"), torch.cuda.graph) replay a whole step in "
         "one launch";
}

std::optional<std::string> GpuRulesAccumulator::SmallCopiesVerdict(const ProcessTrace& whole,
                                                                   const Device& d,
                                                                   const IdleTotals& causes,
                                                                   uint64_t idle) {
  const Sums& s = d.whole;
  if (2 * causes.launch_ns < idle || s.copies == 0) return std::nullopt;
  const TopApi top = TopOf(whole, s.launches);
  // Most of the launch idle in copy calls, of copies small enough on average that per-copy
  // costs, not bandwidth, set their time (device_ops.h; the H200 moved 4 KiB pinned copies at
  // 2.77 GB/s, .carry/s17b/small_copies.cu).
  if (top.name.find("Memcpy") == std::string::npos || 2 * top.ns < causes.launch_ns ||
      s.copy_bytes / s.copies > kSmallCopyBytes) {
    return std::nullopt;
  }
  return "Most idle time had the host issuing copies (most in " + top.name + ", " + Dur(top.ns) +
         "): the device ran " + std::to_string(s.copies) + " copies of " +
         FormatBytes(s.copy_bytes / s.copies) + " on average at " +
         FormatBandwidth(s.copy_bytes, s.copy_ns) +
         ", each costing the host more time to issue than the GPU took to move it; fewer, "
         "larger copies would keep it busy: pack the small pieces into one contiguous (pinned) "
         "buffer and copy that at once, or issue them in one call (cudaMemcpyBatchAsync, "
         "CUDA 12.8 and later)";
}

void GpuRulesAccumulator::Breakdown(const ProcessTrace& whole, uint32_t id, const Device& d,
                                    std::vector<Finding>* out) const {
  const IdleTotals& causes = d.whole.idle;
  const uint64_t idle = causes.total();
  // The span less module loading after start-up (WithoutIdleIn): busy plus idle time.
  const uint64_t span = d.whole.covered + idle;
  if (span == 0 || idle < options_.min_wait_ns ||
      static_cast<double>(idle) < options_.idle_share * static_cast<double>(span)) {
    return;
  }
  const uint64_t kernels = d.whole.kernels;
  Finding f = Base(whole, RuleId::kGpuIdleBreakdown, id, d.steady.start_ns, d.steady.length());
  f.blocked_ns = idle;
  IdleBreakdownDetails details;
  details.utilization = static_cast<double>(span - idle) / static_cast<double>(span);
  details.idle = causes;
  details.kernels = kernels;
  const uint64_t mean_kernel = kernels == 0 ? 0 : d.whole.kernel_ns / kernels;
  const uint64_t mean_launch = d.launches == 0 ? 0 : d.launch_ns / d.launches;
  if (kernels > 0) details.mean_kernel_ns = mean_kernel;
  if (d.launches > 0) {
    details.launches = d.launches;
    details.mean_launch_ns = mean_launch;
  }
  if (d.whole.one_time_idle_ns > 0) details.one_time_idle_ns = d.whole.one_time_idle_ns;
  f.details = details;
  const std::string gpu = "GPU " + std::to_string(id);
  f.explanation =
      gpu + " was idle " + Pct(idle, span) + " of its steady state (" + Dur(idle) + " of " +
      Dur(span) + " from " + Dur(f.host_start_ns) +
      (d.whole.one_time_idle_ns > 0
           ? ", leaving out " + Dur(d.whole.one_time_idle_ns) + " idle during " +
                 OneTimeWorkNames(d.whole.one_time_kinds) + ", paid once"
           : "") +
      "): " +
      CauseText(whole, causes,
                {d.whole.sync, d.whole.other, d.whole.host_functions, d.whole.memory_waits}) +
      ". ";
  if (2 * d.whole.set_up_idle_ns >= idle) {
    // Whatever the host did in those gaps, it was making plans or handles again and again.
    f.explanation += "Most idle time (" + Dur(d.whole.set_up_idle_ns) + ", " +
                     Pct(d.whole.set_up_idle_ns, idle) +
                     ") was in gaps in which the program made a CUDA library's plan or handle "
                     "again (cuFFT plans, or cuBLAS, cuDNN, cuSPARSE or cuSOLVER handles, " +
                     std::to_string(bounds_.library_set_ups) +
                     " set-ups): make each once, outside the loop, and reuse it";
  } else if (2 * d.whole.compile_idle_ns >= idle) {
    // Whatever else the host did in those gaps, it was compiling again and again.
    f.explanation += "Most idle time (" + Dur(d.whole.compile_idle_ns) + ", " +
                     Pct(d.whole.compile_idle_ns, idle) + ") was in gaps in which " +
                     OneTimeWorkNames(bounds_.recurring_compile_kinds) + " ran again (" +
                     std::to_string(bounds_.recurring_compilations) + " runs all through the run)" +
                     kRecompileAdvice;
  } else if (const auto copies = SmallCopiesVerdict(whole, d, causes, idle)) {
    f.explanation += *copies;
  } else if (2 * causes.launch_ns >= idle && kernels > 0 && d.launches > 0 &&
             2 * d.graph_launches >= d.launches) {
    // The usual cure for launch-bound work, CUDA graphs, is in place already.
    const uint64_t per_graph = d.graph_kernels / std::max<uint64_t>(d.graph_launches, 1);
    const uint64_t per_graph_ns = mean_kernel * per_graph;
    f.explanation += "Launch-bound although the work is in CUDA graphs: " +
                     std::to_string(d.graph_launches) + " of the " +
                     std::to_string(d.launches) + " launch calls launched graphs, of " +
                     std::to_string(per_graph) + (per_graph == 1 ? " kernel" : " kernels") +
                     " on average (" + Dur(mean_kernel) + " each, about " + Dur(per_graph_ns) +
                     " of GPU work per graph), while a launch call took " + Dur(mean_launch);
    f.explanation +=
        per_graph_ns < mean_launch
            ? ": each graph runs for less time than launching it takes; capture more of the "
              "loop in each graph (several iterations per graph), give its kernels more work, "
              "or fuse them"
            : ": the host issued the graphs late; look at what it does between launches";
  } else if (2 * causes.launch_ns >= idle && kernels > 0 && mean_kernel < mean_launch) {
    f.explanation += "Launch-bound: " + gpu + " was idle " + Pct(idle, span) +
                     " of the time because kernels averaged " + Dur(mean_kernel) +
                     " while launches cost " + Dur(mean_launch) + " (" +
                     std::to_string(d.launches) +
                     " launch calls): the host cannot issue work as fast as the GPU "
                     "finishes it; capture the launch sequence in a CUDA graph (one "
                     "cudaGraphLaunch replaces many launches) or fuse the kernels";
    if (4 * d.overlapped_launches >= d.launches) {
      // .carry/s17/mt_launch.cu on the H200: 8 threads launching tiny kernels into their own
      // streams, 14.49 µs a launch call (a median of 9.0 µs when another thread's launch
      // overlapped, 4.5 µs otherwise).
      f.explanation += "; " + Pct(d.overlapped_launches, d.launches) +
                       " of the launch calls ran while another thread launched: more launching "
                       "threads do not launch faster, as launches into one GPU contend in the "
                       "driver and each call takes longer";
    }
  } else if (2 * causes.launch_ns >= idle) {
    f.explanation += "Most idle time was spent waiting for launches although kernels (mean " +
                     Dur(mean_kernel) + ") outlast their launch calls (mean " + Dur(mean_launch) +
                     "): the host issued work late; look at what it does between launches";
  } else if (2 * causes.sync_ns >= idle) {
    const TopApi top = TopOf(whole, d.whole.sync);
    f.explanation +=
        "Most idle time had the host blocked in synchronising calls (most in " + top.name;
    // Calls that allocate or free are no advice to drop: the memory is needed; reusing it is.
    f.explanation += AllocatesOrFrees(top.name)
                         ? "), which allocate or free memory: allocate once and reuse it (a "
                           "caching allocator or a pool; the alloc-churn finding prices that "
                           "where one size repeats)"
                         : "): each one drains the GPU's queue before more work is "
                           "issued; drop the ones not needed (cudaMallocAsync/cudaFreeAsync or a "
                           "caching allocator instead of cudaMalloc/cudaFree, pinned memory for "
                           "async copies, events instead of device-wide synchronisation)";
  } else if (2 * causes.in_graph_ns >= idle &&
             2 * d.device_launched_graph_kernels >= d.graph_kernels) {
    f.explanation +=
        "Most idle time was inside CUDA graphs, between their nodes: " +
        std::to_string(d.device_launched_graph_kernels) + " of the graphs' " +
        std::to_string(d.graph_kernels) +
        " kernels were launched by the device, as the body of a conditional node (IF/WHILE), "
        "which starts anew for each iteration and leaves the GPU idle between them; unroll the "
        "loop (several iterations in each body, the condition checked in it) or give each "
        "iteration more work";
  } else if (2 * causes.in_graph_ns >= idle) {
    f.explanation +=
        "Most idle time was inside CUDA graphs, between their nodes, after the graphs were "
        "launched: a graph's host nodes (cudaGraphAddHostNode) run on CUDA's callback thread "
        "while the rest of the graph waits, and event-wait nodes wait for work outside it; "
        "keep host nodes short or move their work out of the graph";
  } else if (2 * causes.other_device_ns >= idle) {
    f.explanation +=
        "Most idle time had work waiting for another GPU (cudaStreamWaitEvent on events "
        "recorded on its streams): the GPUs take turns, each idle while the other works, as "
        "in a pipeline split across GPUs; overlap the stages (split each step into "
        "micro-batches, so that one GPU works on the next while the other finishes this one) "
        "or balance them";
  } else if (2 * causes.memory_wait_ns >= idle) {
    const TopApi top = TopOf(whole, d.whole.memory_waits);
    f.explanation +=
        "Most idle time had work waiting in its stream for a memory value (most behind " +
        top.name +
        "): the stream holds until the host or other work writes the value, and the GPU idles "
        "meanwhile; write it sooner (as soon as what it signals is ready), or queue work that "
        "does not depend on it on another stream";
  } else if (2 * causes.host_function_ns >= idle) {
    const TopApi top = TopOf(whole, d.whole.host_functions);
    f.explanation +=
        "Most idle time had work waiting in its stream for host functions (most enqueued by " +
        top.name +
        "): work queued after a host function waits until it has run on CUDA's callback "
        "thread, and the GPU idles meanwhile; keep host functions short, or record an event "
        "and do the work on a host thread that waits for it, off the stream";
  } else if (2 * causes.other_ns >= idle) {
    const TopApi top = TopOf(whole, d.whole.other);
    f.explanation +=
        2 * top.in_calls_ns >= causes.other_ns
            ? "Most idle time had the host in CUDA calls that issue no work (most in " + top.name +
                  ", " + Dur(top.ns) + "): see whether they can move out of the loop"
            : "Most idle time had the host outside CUDA calls (host computation, I/O, "
              "interpreter overhead): the GPU waited for the program, not for CUDA; profile "
              "the host code between launches" +
                  HostBoundHint(whole, mean_kernel);
  } else if (2 * (causes.launch_ns + causes.other_ns) >= idle) {
    f.explanation += HostPaceVerdict(whole, d, causes, idle, mean_kernel);
  } else {
    f.explanation += "No single cause holds half of it";
  }
  out->push_back(std::move(f));
}

// The verdict when launching and the host's own time (outside CUDA calls) together hold half of
// the idle time, neither alone: one cure for both. A cuBLAS loop of 3.2 µs sgemms, each followed
// by cudaStreamSynchronize (.carry/s19/cublas_small_gemms.cu on the H200: 14.22 ms launching,
// 10.42 ms outside calls, 4.96 ms in the syncs; without the syncs 15 ms faster), and an eager
// PyTorch loop split 49/51 had no advice at all.
std::string GpuRulesAccumulator::HostPaceVerdict(const ProcessTrace& whole, const Device& d,
                                                 const IdleTotals& causes, uint64_t idle,
                                                 uint64_t mean_kernel) {
  std::string text = "Most idle time (" + Pct(causes.launch_ns + causes.other_ns, idle) +
                     ") had the host launching the next work or outside CUDA calls: the host "
                     "set the pace";
  if (d.whole.kernels > 0) text += ", with kernels averaging " + Dur(mean_kernel);
  text += d.launches > 0 && 2 * d.graph_launches >= d.launches
              ? "; the work is in CUDA graphs already: fewer, larger kernels (fusion) or more of "
                "each step in each graph cut both"
              : "; fewer, larger kernels (fusion) or CUDA graphs (a captured sequence replays "
                "with one launch and no host code between its kernels) cut both";
  // A synchronising call drains the queue: the launches after it start on an idle GPU, so its
  // cost shows as launch time too.
  if (10 * causes.sync_ns >= idle) {
    const std::string top = TopOf(whole, d.whole.sync).name;
    text +=
        "; synchronising calls (" + Pct(causes.sync_ns, idle) + ", most in " + top +
        ") drain the GPU's queue, so the launches after each start on an idle GPU: " +
        (AllocatesOrFrees(top) ? "allocate once and reuse the memory" : "drop the ones not needed");
  }
  return text + HostBoundHint(whole, mean_kernel);
}

void FindGpuFindings(const RuleInput& input, std::vector<Finding>* out) {
  // One window: the whole trace.
  StartUpScan scan;
  scan.Add(input.index);
  const StartUp bounds = scan.Bounds(input.trace.origin_ns);
  IdleTimeline timeline;
  std::vector<DeviceIdle> devices = timeline.Add(input.index);
  std::map<uint32_t, Interval> active;
  for (const DeviceIdle& d : devices) {
    if (!d.busy.empty()) active[d.device_id] = d.active;
  }
  GpuRulesAccumulator gpu(input.options, bounds, active);
  gpu.Add(input.index, std::move(devices), timeline.earlier_calls());
  StartUp start_up = bounds;
  StartUpTally tally;
  tally.Add(input.index, bounds);
  tally.Finish(&start_up);
  gpu.Finish(input.trace, start_up, out);
}

}  // namespace libprof::analysis
