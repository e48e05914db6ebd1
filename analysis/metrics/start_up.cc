#include "analysis/metrics/start_up.h"

#include <algorithm>
#include <array>
#include <map>
#include <optional>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "analysis/model/api_names.h"
#include "analysis/model/call_sites.h"
#include "analysis/model/intervals.h"

namespace libprof::analysis {
namespace {

// Where start-up ends: from `first_op_ns`, start-up moves on to the end of a piece of start-up
// work (merged, sorted intervals) when such work fills kStartUpWorkShare of the time from the
// current end to the piece's end; else it stays. Measured from the current end, not from the
// first kernel, so that a long first load cannot pull in a short one long after.
uint64_t EndOfStartUp(const std::vector<Interval>& work, uint64_t first_op_ns) {
  uint64_t end = first_op_ns, covered = 0;
  for (const Interval& piece : work) {
    if (piece.end_ns <= end) continue;
    covered += piece.end_ns - std::max(piece.start_ns, end);
    if (static_cast<double>(covered) >=
        kStartUpWorkShare * static_cast<double>(piece.end_ns - end)) {
      end = piece.end_ns;
      covered = 0;
    }
  }
  return end;
}

// The calls of `window` that created a context (ContextInfo's created_ns, set by libprof's
// CONTEXT_CREATED callback on the creating thread), each with the creation's time: the outermost
// recorded call on that thread around it, unless a call around it is context set-up already
// (cuCtxCreate, cudaInitDevice: counted as such). CUDA's runtime creates its primary context
// lazily, inside the program's first call that needs one: a cudaMalloc that took 198 ms of a
// cuBLAS program's start-up on an H200 was nearly all context creation.
std::map<size_t, uint64_t> ContextsCreatedIn(const TraceIndex& window,
                                             const std::vector<StartUpWork>& kinds) {
  std::map<size_t, uint64_t> created;
  const std::vector<ApiCall>& calls = window.records().api_calls;
  for (const ContextInfo& context : window.records().contexts) {
    if (context.created_ns == 0) continue;
    std::optional<size_t> creating;
    bool counted = false;
    for (size_t i = 0; i < calls.size(); ++i) {
      if (!CreatedInside(calls[i], context)) continue;
      counted = counted || kinds[i] == StartUpWork::kContext;
      creating = window.Outermost(i);
    }
    if (creating && !counted) created.try_emplace(*creating, context.created_ns);
  }
  return created;
}

// CUpti_ActivityOverheadKind values (cupti_activity.h) of CUDA loading device code lazily, as
// Overhead::overhead_kind holds them: the runtime loading a module, the driver a function.
constexpr uint32_t kRuntimeTriggeredModuleLoading = 4u << 16;
constexpr uint32_t kLazyFunctionLoading = 5u << 16;

bool IsLazyLoading(const Overhead& o) {
  return o.overhead_kind == kRuntimeTriggeredModuleLoading ||
         o.overhead_kind == kLazyFunctionLoading;
}

// What each call of a window did of start-up's work: by its name (api_names.h StartUpWork), or
// module loading when CUDA loaded code lazily inside it. CUDA's lazy loading runs inside the
// first launch of each kernel (or a cudaFuncSetAttribute) with no call of its own, and CUPTI
// marks it with an overhead record on that thread. The record covers part of the call only (a
// first cudaLaunchKernel of PyTorch's reduce_kernel took 8.07 ms on an H200, its record 99 us),
// so the whole top-level call around it counts. Loading in no recorded call counts by the
// record's own time (`unclaimed`: 47.6 ms once in a torch.compile run).
struct CallsWork {
  std::vector<StartUpWork> kinds;  // per call of the window's api_calls
  std::vector<bool> lazy;          // module loading because code was loaded lazily inside it
  std::vector<Interval> unclaimed;
};

CallsWork StartUpWorkOfCalls(const TraceIndex& window) {
  const std::vector<ApiCall>& calls = window.records().api_calls;
  CallsWork work;
  work.kinds.resize(calls.size());
  work.lazy.resize(calls.size());
  for (size_t i = 0; i < calls.size(); ++i) work.kinds[i] = window.Traits(calls[i]).start_up;
  for (const Overhead& o : window.records().overheads) {
    if (!IsLazyLoading(o) || o.end_ns <= o.start_ns) continue;
    const TraceIndex::ThreadCalls* thread = window.TopLevelCalls(o.thread_id);
    std::optional<uint32_t> around;
    if (thread != nullptr) {
      // The last top-level call starting at or before the record: the only one that may hold it.
      const auto after = std::upper_bound(
          thread->calls.begin(), thread->calls.end(), o.start_ns,
          [&](uint64_t t, uint32_t c) { return t < calls[c].start_ns; });
      if (after != thread->calls.begin() && calls[*(after - 1)].end_ns >= o.end_ns) {
        around = *(after - 1);
      }
    }
    if (!around) {
      work.unclaimed.push_back({o.start_ns, o.end_ns});
    } else if (work.kinds[*around] != StartUpWork::kModuleLoad) {
      work.kinds[*around] = StartUpWork::kModuleLoad;
      work.lazy[*around] = true;
    }
  }
  return work;
}

// How call `i` appears in start-up's "most in" (the API with the most of a kind of work).
std::string WorkApiName(const TraceIndex& window, const CallsWork& work, size_t i) {
  const std::string& name = window.ApiName(window.records().api_calls[i]);
  return work.lazy[i] ? name + " loading code lazily" : name;
}

// Lazy loading in no recorded call, as start-up's "most in" names it.
constexpr const char* kUnclaimedLoading = "CUDA's lazy loading outside recorded calls";

// Merges `span` into *spans (sorted by start, disjoint).
void AddSpan(const Interval& span, std::vector<Interval>* spans) {
  if (!spans->empty() && span.start_ns <= spans->back().end_ns) {
    spans->back().end_ns = std::max(spans->back().end_ns, span.end_ns);
  } else {
    spans->push_back(span);
  }
}

}  // namespace

StartUp FindStartUp(const TraceIndex& index) {
  StartUpScan scan;
  scan.Add(index);
  StartUp s = scan.Bounds(index.trace().origin_ns);
  StartUpTally tally;
  tally.Add(index, s);
  tally.Finish(&s);
  return s;
}

void StartUpScan::Add(const TraceIndex& window) {
  const std::vector<DeviceOp>& ops = window.device_ops();
  if (!any_op_ && !ops.empty()) {
    any_op_ = true;
    first_op_ns_ = ops.front().start_ns;  // sorted by start
  }
  // The window's busy time, merged over devices: ops come sorted by start.
  std::vector<Interval> busy;
  for (const DeviceOp& op : ops) {
    if (!any_kernel_ && op.kind == DeviceOpKind::kKernel) {
      any_kernel_ = true;
      first_kernel_ns_ = op.start_ns;
      busy_before_first_kernel_ns_ = busy_ns_ + CoveredLength(busy, 0, op.start_ns);
    }
    if (op.end_ns <= op.start_ns) continue;
    if (!busy.empty() && op.start_ns <= busy.back().end_ns) {
      busy.back().end_ns = std::max(busy.back().end_ns, op.end_ns);
    } else {
      busy.push_back({op.start_ns, op.end_ns});
    }
    last_op_end_ns_ = std::max(last_op_end_ns_, op.end_ns);
  }
  const std::vector<ApiCall>& calls = window.records().api_calls;
  const size_t first_new = defining_.size();  // this window's pieces (none crosses a cut)
  const CallsWork work = StartUpWorkOfCalls(window);
  std::vector<Piece> defining;
  for (const Interval& loading : work.unclaimed) defining.push_back({loading, 0, false});
  // A context created inside another call (the runtime's primary context, inside the first
  // call that needs one, and again after cudaDeviceReset): up to the creation.
  for (const auto& [i, created_ns] : ContextsCreatedIn(window, work.kinds)) {
    if (created_ns > calls[i].start_ns) defining.push_back({{calls[i].start_ns, created_ns}, 0});
  }
  for (size_t i = 0; i < calls.size(); ++i) {
    const ApiCall& c = calls[i];
    const StartUpWork kind = work.kinds[i];
    if ((kind == StartUpWork::kModuleLoad || kind == StartUpWork::kContext) &&
        c.end_ns > c.start_ns) {
      defining.push_back(
          {{c.start_ns, c.end_ns},
           0,
           !work.lazy[i],
           kind == StartUpWork::kModuleLoad && window.ApiName(c).starts_with("cuModuleLoad")});
    }
  }
  std::sort(defining.begin(), defining.end(), [](const Piece& a, const Piece& b) {
    return a.span.start_ns < b.span.start_ns;
  });
  for (const Piece& piece : defining) {
    if (defining_.size() > first_new && piece.span.start_ns <= defining_.back().span.end_ns) {
      Piece& last = defining_.back();  // (Bounds merges the windows' pieces)
      last.span.end_ns = std::max(last.span.end_ns, piece.span.end_ns);
      last.named = last.named || piece.named;
      last.module = last.module || piece.module;
    } else {
      defining_.push_back(piece);
    }
  }
  // The short idle gaps between the busy stretches, the one from the window before included.
  std::vector<Interval> short_gaps;
  for (const Interval& b : busy) {
    if (any_busy_ && b.start_ns > last_busy_end_ns_ &&
        b.start_ns - last_busy_end_ns_ < kWarmUpLongGapNs) {
      short_gaps.push_back({last_busy_end_ns_, b.start_ns});
    }
    if (!any_busy_) first_busy_ns_ = b.start_ns;
    any_busy_ = true;
    last_busy_end_ns_ = std::max(last_busy_end_ns_, b.end_ns);
  }
  for (size_t i = first_new; i < defining_.size(); ++i) {
    Piece& piece = defining_[i];
    piece.busy_before_end_ns = busy_ns_ + CoveredLength(busy, 0, piece.span.end_ns);
    piece.short_idle_before_end_ns = short_idle_ns_;
    for (const Interval& g : short_gaps) {
      if (g.end_ns <= piece.span.end_ns) piece.short_idle_before_end_ns += g.length();
    }
  }
  for (const Interval& b : busy) busy_ns_ += b.length();
  for (const Interval& g : short_gaps) short_idle_ns_ += g.length();

  // One-time work: the calls with a stack in time order, in runs (StackRun).
  std::vector<const ApiCall*> stacked;
  std::unordered_set<uint32_t> stack_ids;
  for (const ApiCall& c : calls) {
    if (c.stack_id == 0) continue;
    stacked.push_back(&c);
    stack_ids.insert(c.stack_id);
  }
  if (stacked.empty()) return;
  std::stable_sort(stacked.begin(), stacked.end(), [](const ApiCall* a, const ApiCall* b) {
    return a->start_ns < b->start_ns;
  });
  const std::unordered_map<uint32_t, OneTimeWork> kinds =
      OneTimeWorkOfStacks(window.trace(), stack_ids);
  for (const ApiCall* c : stacked) {
    const auto kind = kinds.find(c->stack_id);
    AddRun({{c->start_ns, c->end_ns},
            kind == kinds.end() ? 0 : OneTimeWorkBit(kind->second)});
  }
}

void StartUpScan::AddRun(const StackRun& run) {
  if (stack_runs_.empty() || (stack_runs_.back().kinds == 0) != (run.kinds == 0)) {
    stack_runs_.push_back(run);
    return;
  }
  StackRun& last = stack_runs_.back();
  last.span.start_ns = std::min(last.span.start_ns, run.span.start_ns);
  last.span.end_ns = std::max(last.span.end_ns, run.span.end_ns);
  last.kinds |= run.kinds;
}

void StartUpScan::Add(const StartUpScan& later) {
  if (!any_op_ && later.any_op_) {
    any_op_ = true;
    first_op_ns_ = later.first_op_ns_;
  }
  if (!any_kernel_ && later.any_kernel_) {
    any_kernel_ = true;
    first_kernel_ns_ = later.first_kernel_ns_;
    busy_before_first_kernel_ns_ = busy_ns_ + later.busy_before_first_kernel_ns_;
  }
  // The gap between this scan's last busy stretch and the later one's first, when short.
  uint64_t junction = 0;
  if (any_busy_ && later.any_busy_ && later.first_busy_ns_ > last_busy_end_ns_ &&
      later.first_busy_ns_ - last_busy_end_ns_ < kWarmUpLongGapNs) {
    junction = later.first_busy_ns_ - last_busy_end_ns_;
  }
  for (Piece piece : later.defining_) {
    piece.busy_before_end_ns += busy_ns_;
    piece.short_idle_before_end_ns +=
        short_idle_ns_ + (piece.span.end_ns >= later.first_busy_ns_ ? junction : 0);
    defining_.push_back(piece);
  }
  busy_ns_ += later.busy_ns_;
  short_idle_ns_ += junction + later.short_idle_ns_;
  if (later.any_busy_) {
    if (!any_busy_) first_busy_ns_ = later.first_busy_ns_;
    any_busy_ = true;
    last_busy_end_ns_ = std::max(last_busy_end_ns_, later.last_busy_end_ns_);
  }
  last_op_end_ns_ = std::max(last_op_end_ns_, later.last_op_end_ns_);
  for (const StackRun& run : later.stack_runs_) AddRun(run);
}

StartUp StartUpScan::Bounds(uint64_t origin_ns) const {
  StartUp s;
  if (!any_op_) return s;
  const uint32_t library = OneTimeWorkBit(OneTimeWork::kLibrarySetUp);
  for (const StackRun& run : stack_runs_) s.library_set_ups += (run.kinds & library) != 0;
  RecurringCompilations(&s);
  const uint32_t one_time_kinds =
      (s.library_set_up_recurs() ? ~library : ~uint32_t{0}) & ~s.recurring_compile_kinds;
  for (const StackRun& run : stack_runs_) {
    if (s.library_set_up_recurs() && (run.kinds & library) != 0) {
      AddSpan(run.span, &s.recurring_set_ups);
    }
  }
  // The runs come in start order (each starts at its first call, the calls in time order); a
  // one-time run may still reach past the next (a long call), so they are merged.
  for (const StackRun& run : stack_runs_) {
    const uint32_t kinds = run.kinds & one_time_kinds;
    if (kinds == 0) continue;
    if (!s.one_time.empty() && run.span.start_ns <= s.one_time.back().span.end_ns) {
      StartUp::OneTimeSpan& last = s.one_time.back();
      last.span.end_ns = std::max(last.span.end_ns, run.span.end_ns);
      last.kinds |= kinds;
    } else {
      s.one_time.push_back({run.span, kinds});
    }
  }
  s.known = true;
  s.first_op_ns = any_kernel_ ? first_kernel_ns_ : first_op_ns_;
  s.first_op_is_kernel = any_kernel_;
  s.start_ns = std::min(origin_ns, s.first_op_ns);
  // Windows' pieces may touch at a cut: merged again, as one list of the whole trace would be
  // (the busy time before a merged piece's end is its last part's: it only grows).
  std::vector<Piece> pieces;
  for (const Piece& piece : defining_) {
    if (!pieces.empty() && piece.span.start_ns <= pieces.back().span.end_ns) {
      Piece& last = pieces.back();
      last.span.end_ns = std::max(last.span.end_ns, piece.span.end_ns);
      last.busy_before_end_ns = std::max(last.busy_before_end_ns, piece.busy_before_end_ns);
      last.short_idle_before_end_ns =
          std::max(last.short_idle_before_end_ns, piece.short_idle_before_end_ns);
      last.named = last.named || piece.named;
      last.module = last.module || piece.module;
    } else {
      pieces.push_back(piece);
    }
  }
  std::vector<Interval> defining;
  for (const Piece& piece : pieces) defining.push_back(piece.span);
  s.end_ns = std::max(EndOfStartUp(defining, s.first_op_ns), s.start_ns);
  WarmUp(pieces, &s);
  RecurringLoads(pieces, &s);
  for (const Interval& piece : defining) {
    if (piece.end_ns <= s.end_ns) continue;
    s.later_loading.push_back({std::max(piece.start_ns, s.end_ns), piece.end_ns});
    s.later_load.ns += s.later_loading.back().length();
  }
  return s;
}

void StartUpScan::RecurringCompilations(StartUp* s) const {
  if (!any_kernel_ || last_op_end_ns_ <= first_kernel_ns_) return;
  const uint32_t compiling = ~OneTimeWorkBit(OneTimeWork::kLibrarySetUp);
  const uint64_t run = last_op_end_ns_ - first_kernel_ns_;
  uint64_t runs = 0;
  uint32_t kinds = 0;
  std::array<uint64_t, 4> by_quarter{};  // of the run
  for (const StackRun& r : stack_runs_) {
    if ((r.kinds & compiling) == 0 || r.span.start_ns < first_kernel_ns_) continue;
    ++runs;
    kinds |= r.kinds & compiling;
    ++by_quarter[4 * std::min(r.span.start_ns - first_kernel_ns_, run - 1) / run];
  }
  const bool spread = std::all_of(by_quarter.begin(), by_quarter.end(),
                                  [&](uint64_t n) { return n > 0 && 2 * n <= runs; });
  if (runs < StartUp::kRecurringCompilations || !spread) return;
  s->recurring_compilations = runs;
  s->recurring_compile_kinds = kinds;
  for (const StackRun& r : stack_runs_) {
    if ((r.kinds & kinds) != 0) AddSpan(r.span, &s->recurring_compiles);
  }
}

void StartUpScan::RecurringLoads(const std::vector<Piece>& pieces, StartUp* s) const {
  if (!any_kernel_ || last_op_end_ns_ <= first_kernel_ns_) return;
  const uint64_t run = last_op_end_ns_ - first_kernel_ns_;
  uint64_t busy = busy_before_first_kernel_ns_, loads = 0;
  std::array<uint64_t, 4> by_quarter{};  // of the run
  for (const Piece& piece : pieces) {
    if (!piece.module || piece.span.start_ns < first_kernel_ns_) continue;
    if (piece.busy_before_end_ns > busy) {
      ++loads;
      const uint64_t at = std::min(piece.span.start_ns - first_kernel_ns_, run - 1);
      ++by_quarter[4 * at / run];
    }
    busy = piece.busy_before_end_ns;
  }
  const bool spread = std::all_of(by_quarter.begin(), by_quarter.end(),
                                  [&](uint64_t n) { return n > 0 && 2 * n <= loads; });
  if (loads >= StartUp::kRecurringModuleLoads && spread) s->recurring_module_loads = loads;
}

// The warm-up (start_up.h): the latest piece ending after start-up's end with a nearly idle GPU
// before it and a far busier one after it.
void StartUpScan::WarmUp(const std::vector<Piece>& pieces, StartUp* s) const {
  uint64_t busy_at_end = 0;  // the GPU's busy time up to s->end_ns
  uint64_t short_idle_at_end = 0;  // and its idle time in short gaps (none before the first op)
  if (s->end_ns == s->first_op_ns) {
    busy_at_end = any_kernel_ ? busy_before_first_kernel_ns_ : 0;
  } else {
    for (const Piece& piece : pieces) {
      if (piece.span.end_ns != s->end_ns) continue;
      busy_at_end = piece.busy_before_end_ns;
      short_idle_at_end = piece.short_idle_before_end_ns;
    }
  }
  for (auto it = pieces.rbegin(); it != pieces.rend(); ++it) {
    const uint64_t end = it->span.end_ns;
    if (end <= s->end_ns) break;
    if (end >= last_op_end_ns_ || !it->named) continue;
    const double before = static_cast<double>(it->busy_before_end_ns - busy_at_end) /
                          static_cast<double>(end - s->end_ns);
    const double after = static_cast<double>(busy_ns_ - it->busy_before_end_ns) /
                         static_cast<double>(last_op_end_ns_ - end);
    if (before >= kWarmUpBusyShare || after < kWarmUpMinBusyAfter ||
        after < kWarmUpContrast * before) {
      continue;
    }
    // Idle mostly in short gaps: a loop ran there, not a compiler.
    const uint64_t stretch = end - s->end_ns;
    const uint64_t busy = it->busy_before_end_ns - busy_at_end;
    const uint64_t idle = stretch > busy ? stretch - busy : 0;
    if (2 * (it->short_idle_before_end_ns - short_idle_at_end) > idle) continue;
    s->warm_up = true;
    s->warm_up_from_ns = s->end_ns;
    s->warm_up_busy_ns = it->busy_before_end_ns - busy_at_end;
    s->busy_after_ppm = static_cast<uint64_t>(after * 1e6 + 0.5);
    s->end_ns = end;
    return;
  }
}

void StartUpTally::Add(const TraceIndex& window, const StartUp& s) {
  if (!s.known) return;
  const std::vector<ApiCall>& calls = window.records().api_calls;
  const CallsWork work = StartUpWorkOfCalls(window);
  const std::vector<StartUpWork>& kinds = work.kinds;
  for (const Interval& loading : work.unclaimed) {
    if (loading.end_ns > s.end_ns) {
      ++later_calls_;
      later_by_api_[kUnclaimedLoading].push_back(
          {std::max(loading.start_ns, s.end_ns), loading.end_ns});
    }
    const Interval inside{std::max(loading.start_ns, s.start_ns),
                          std::min(loading.end_ns, s.end_ns)};
    if (inside.start_ns >= inside.end_ns) continue;
    Tally& t = tallies_[StartUpWork::kModuleLoad];
    t.pieces.push_back(inside);
    ++t.calls;
    t.by_api[kUnclaimedLoading].push_back(inside);
  }
  for (size_t i = 0; i < calls.size(); ++i) {
    const ApiCall& c = calls[i];
    if ((kinds[i] != StartUpWork::kModuleLoad && kinds[i] != StartUpWork::kContext) ||
        c.end_ns <= s.end_ns) {
      continue;
    }
    const size_t outer = window.Outermost(i);
    if (outer != i && kinds[outer] != StartUpWork::kNone) continue;
    ++later_calls_;
    later_by_api_[WorkApiName(window, work, i)].push_back(
        {std::max(c.start_ns, s.end_ns), c.end_ns});
  }
  // What start-up spent its time on. A call that created a context (ContextsCreatedIn) spent
  // its time up to the creation on context creation, whatever the call; after start-up (a
  // context created again after cudaDeviceReset), that is later work like a late module load.
  const std::map<size_t, uint64_t> created = ContextsCreatedIn(window, kinds);
  for (size_t i = 0; i < calls.size(); ++i) {
    const ApiCall& c = calls[i];
    uint64_t own_start = c.start_ns;
    if (auto it = created.find(i); it != created.end()) {
      own_start = it->second;
      if (it->second > s.end_ns && it->second > c.start_ns) {
        ++later_calls_;
        later_contexts_ = true;
        later_by_api_[window.ApiName(c) + " creating the context"].push_back(
            {std::max(c.start_ns, s.end_ns), it->second});
      }
      const Interval creating{std::max(c.start_ns, s.start_ns), std::min(it->second, s.end_ns)};
      if (creating.start_ns < creating.end_ns) {
        Tally& t = tallies_[StartUpWork::kContext];
        t.pieces.push_back(creating);
        ++t.calls;
        t.by_api[window.ApiName(c) + " creating the context"].push_back(creating);
      }
    }
    if (kinds[i] == StartUpWork::kNone) continue;
    if (own_start >= s.end_ns || c.end_ns <= s.start_ns || own_start >= c.end_ns) continue;
    const Interval inside{std::max(own_start, s.start_ns), std::min(c.end_ns, s.end_ns)};
    Tally& t = tallies_[kinds[i]];
    t.pieces.push_back(inside);
    const size_t outer = window.Outermost(i);
    if (outer != i && kinds[outer] == kinds[i]) continue;  // counted with the enclosing call
    ++t.calls;
    t.by_api[WorkApiName(window, work, i)].push_back(inside);
  }
}

void StartUpTally::Finish(StartUp* s) const {
  if (!s->known) return;
  s->later_load.calls = later_calls_;
  s->later_context = later_contexts_;
  for (const auto& [api, pieces] : later_by_api_) {
    const uint64_t ns = UnionLength(pieces);
    if (ns > s->later_load.top_api_ns) {
      s->later_load.top_api = api;
      s->later_load.top_api_ns = ns;
    }
  }
  for (const auto& [kind, t] : tallies_) {
    StartUp::Work& w = kind == StartUpWork::kModuleLoad ? s->module_load
                       : kind == StartUpWork::kContext  ? s->context
                                                        : s->allocation;
    w.ns = UnionLength(t.pieces);
    w.calls = t.calls;
    for (const auto& [api, pieces] : t.by_api) {
      const uint64_t ns = UnionLength(pieces);
      if (ns > w.top_api_ns) {
        w.top_api = api;
        w.top_api_ns = ns;
      }
    }
  }
}

}  // namespace libprof::analysis
