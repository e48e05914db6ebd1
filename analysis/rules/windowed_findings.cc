#include "analysis/rules/windowed_findings.h"

#include <algorithm>
#include <cstdint>
#include <memory>
#include <optional>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "analysis/metrics/idle_breakdown.h"
#include "analysis/metrics/memory.h"
#include "analysis/model/collectives.h"
#include "analysis/model/ordered_pipeline.h"
#include "analysis/model/stream_deps.h"
#include "analysis/model/trace_index.h"
#include "analysis/rules/gpu_rules.h"
#include "analysis/rules/memory_rules.h"
#include "analysis/rules/overlap_rules.h"
#include "analysis/rules/rank_rules.h"
#include "analysis/rules/unified_memory_rules.h"

namespace libprof::analysis {
namespace {

uint64_t Duration(uint64_t start, uint64_t end) { return end > start ? end - start : 0; }

// A cut is tried once this many records wait, a quarter of trace_windows.h's default: the
// findings hold a window's records several times over (the window, its TraceIndex and
// StreamModel, the chunks decoded ahead), so smaller windows lower their peak at the same speed
// (bench/README.md: 10M-record synthetic trace 150 -> 97 MB, 1M 150 -> 93 MB); what the horizon
// holds stays either way.
constexpr size_t kFindingsWindowRecords = size_t{1} << 16;

// The events recorded in the windows so far that a later window may name: each event's latest
// recording (FindEvent by event id wants the last one before a call, and every earlier window's
// is before every later call), with the sync ids of those.
class CarriedEvents {
 public:
  const std::vector<StreamModel::EarlierEvent>& list() const { return list_; }
  bool HasSync(uint64_t sync_id) const { return syncs_.contains(sync_id); }
  void Add(const TraceIndex& window) {
    const TraceRecords& r = window.records();
    if (r.cuda_events.empty()) return;
    for (const CudaEvent& e : r.cuda_events) {
      const int64_t call = window.LaunchingCall(e.correlation_id);
      if (call < 0) continue;  // StreamModel ignores it too
      const StreamModel::EarlierEvent earlier{
          e.event_id, e.sync_id, {e.stream_id, r.api_calls[call].start_ns, e.correlation_id}};
      auto [it, added] = latest_.try_emplace(e.event_id, earlier);
      if (!added && it->second.record.issue_ns <= earlier.record.issue_ns) it->second = earlier;
    }
    list_.clear();
    syncs_.clear();
    for (const auto& [id, e] : latest_) {
      list_.push_back(e);
      if (e.sync_id != 0) syncs_.insert(e.sync_id);
    }
  }

 private:
  std::map<uint32_t, StreamModel::EarlierEvent> latest_;
  std::vector<StreamModel::EarlierEvent> list_;
  std::unordered_set<uint64_t> syncs_;
};

// Where each pass stands in the registry (its findings' seq), or none for a pass this engine
// does not know.
struct PassPlaces {
  uint64_t host = 0, gpu = 0, memory = 0, overlap = 0;
  std::vector<uint64_t> order;  // the non-host passes with findings here, in registry order
  bool known = true;
};
PassPlaces Places() {
  PassPlaces p;
  const std::vector<RulePass> passes = RulePasses();
  for (uint64_t k = 0; k < passes.size(); ++k) {
    const RulePass pass = passes[k];
    if (pass == static_cast<RulePass>(FindHostCallFindings)) {
      p.host = k;
    } else if (pass == FindGpuFindings) {
      p.gpu = k;
      p.order.push_back(k);
    } else if (pass == FindMemoryFindings) {
      p.memory = k;
      p.order.push_back(k);
    } else if (pass == FindOverlapFindings) {
      p.overlap = k;
      p.order.push_back(k);
    } else if (pass != FindUnifiedMemoryFindings && pass != NoProcessPass) {
      p.known = false;  // (unified memory: a plan with its counters is inexact)
    }
  }
  return p;
}

// Ids of the call stacks, frames and modules that windows' calls named before they were read.
struct MissingStacks {
  std::unordered_set<uint32_t> stacks, frames, modules;

  void Check(const TraceRecords& r) {
    std::unordered_set<uint32_t> named;
    for (const ApiCall& c : r.api_calls) {
      if (c.stack_id != 0) named.insert(c.stack_id);
    }
    if (named.empty()) return;
    std::unordered_map<uint32_t, const CallStack*> stack_of;
    for (const CallStack& s : r.call_stacks) stack_of[s.id] = &s;
    std::unordered_map<uint32_t, uint32_t> module_of;  // frame -> module
    for (const StackFrame& f : r.stack_frames) module_of[f.id] = f.module_id;
    std::unordered_set<uint32_t> have_modules;
    for (const StackModule& m : r.stack_modules) have_modules.insert(m.id);
    for (uint32_t id : named) {
      auto s = stack_of.find(id);
      if (s == stack_of.end()) {
        stacks.insert(id);
        continue;
      }
      for (uint32_t frame : s->second->frame_ids) {
        auto m = module_of.find(frame);
        if (m == module_of.end()) {
          frames.insert(frame);
        } else if (!have_modules.contains(m->second)) {
          modules.insert(m->second);
        }
      }
    }
  }
  void Add(const MissingStacks& later) {
    stacks.insert(later.stacks.begin(), later.stacks.end());
    frames.insert(later.frames.begin(), later.frames.end());
    modules.insert(later.modules.begin(), later.modules.end());
  }
  // Whether the whole trace holds something a window missed.
  bool ReadLater(const TraceRecords& whole) const {
    for (const CallStack& s : whole.call_stacks) {
      if (stacks.contains(s.id)) return true;
    }
    for (const StackFrame& f : whole.stack_frames) {
      if (frames.contains(f.id)) return true;
    }
    for (const StackModule& m : whole.stack_modules) {
      if (modules.contains(m.id)) return true;
    }
    return false;
  }
};

// What the plan read learns of one window on its own (on a worker thread), for the checks
// that then take the windows in order (WindowedFindings::Read).
struct PlanWindow {
  PlanWindow(ProcessTrace&& w, const WindowSpan& s) : trace(std::move(w)), span(s) {}

  ProcessTrace trace;
  WindowSpan span;
  std::string why_inexact;  // unified memory counters, NCCL ranges
  std::vector<NvtxEvent> late_nvtx;  // ranges that start before the cut they came after
  std::optional<TraceIndex> index;
  bool per_thread_streams = false;
  // Each stream with work, in the order of its first operation: its class as this window sees
  // it, and the context StreamModel would take from its first operation that names one (0:
  // none does here).
  struct Stream {
    uint32_t id;
    StreamClass klass;
    uint32_t context;
  };
  std::vector<Stream> streams;
  std::unordered_map<uint32_t, Interval> busy;  // device -> first start, last end
  std::unordered_set<uint64_t> recorded;         // sync ids this window resolves itself
  std::vector<uint64_t> named;  // sync ids its event synchronisations name and it does not record
  MissingStacks missing;
  std::unordered_set<uint32_t> calling_threads;  // threads with a call here
  std::vector<uint32_t> unpaired_threads;        // ThreadsWhosePageablePairLeavesWindow
  StartUpScan scan;

  void Learn() {
    const TraceRecords& r = trace.records;
    if (!r.unified_memory_counters.empty()) {
      why_inexact = "unified memory counters";
      return;
    }
    if (HasNcclRanges(trace)) {
      why_inexact = "NCCL ranges (collectives need the whole process)";
      return;
    }
    for (const NvtxEvent& e : r.nvtx_events) {
      if (e.kind != NvtxKind::kMark && e.start_ns < span.from_ns) late_nvtx.push_back(e);
    }
    index.emplace(trace);
    if (!PerThreadStreams(*index).empty()) {
      per_thread_streams = true;
      return;
    }
    // One pass over the operations (millions), with lookups per stream and device (a few) and
    // no heap work per operation: each stream's class as this window sees it (it depends on the
    // stream only), each stream's context as StreamModel takes it (its first unit's, a unit's
    // being its first operation's: OpsOf's first) until known, each device's busy span.
    const StreamClassifier classifier(r);
    std::unordered_map<uint32_t, size_t> place;  // stream -> its place in `streams`
    uint32_t last_stream = 0;
    size_t at = SIZE_MAX;  // last_stream's place
    const auto& ops = index->device_ops();
    for (const DeviceOp& op : ops) {
      if (at == SIZE_MAX || op.stream_id != last_stream) {
        last_stream = op.stream_id;
        auto [it, first] = place.try_emplace(op.stream_id, streams.size());
        if (first) streams.push_back({op.stream_id, classifier.Classify(op.stream_id, false), 0});
        at = it->second;
      }
      uint32_t& context = streams[at].context;
      if (context == 0) {
        context = op.correlation_id == 0 ? op.context_id
                                         : ops[index->OpsOf(op.correlation_id).front()].context_id;
      }
      if (op.end_ns > op.start_ns) {  // (MergeIntervals' pieces: empty ones add no busy time)
        auto [it, added] = busy.try_emplace(op.device_id, Interval{op.start_ns, op.end_ns});
        it->second.start_ns = std::min(it->second.start_ns, op.start_ns);
        it->second.end_ns = std::max(it->second.end_ns, op.end_ns);
      }
    }
    for (const CudaEvent& e : r.cuda_events) {
      // A recording without its call (--from/--to may leave the call out) is unknown to
      // StreamModel here as in the whole trace: its call would share its window.
      if (e.sync_id == 0 || index->LaunchingCall(e.correlation_id) < 0) continue;
      recorded.insert(e.sync_id);
    }
    for (const Synchronization& s : r.synchronizations) {
      if (s.type != SyncType::kEventSynchronize && s.type != SyncType::kStreamWaitEvent) continue;
      if (s.event_sync_id != 0 && !recorded.contains(s.event_sync_id)) {
        named.push_back(s.event_sync_id);
      }
    }
    missing.Check(r);
    for (const ApiCall& c : r.api_calls) calling_threads.insert(c.thread_id);
    unpaired_threads = ThreadsWhosePageablePairLeavesWindow(*index);
    scan.Add(*index);
  }
};

// A window of the run read: analysed on a worker as far as it needs nothing of the windows
// after it, then taken in window order by the passes that carry state across cuts.
struct RunWindow {
  explicit RunWindow(ProcessTrace&& w) : trace(std::move(w)) {}

  ProcessTrace trace;
  std::optional<TraceIndex> index;
  std::vector<StreamModel::EarlierEvent> earlier;  // the events of the windows before it
  std::optional<StreamModel> model;
  std::optional<HostCallFindings> host;
  std::vector<HostCallFindings::Found> found;  // the host rules', in their order
};

}  // namespace

std::expected<WindowedFindings, std::string> WindowedFindings::Plan(
    const std::string& path, const FindingsOptions& options, const WindowLimits& limits) {
  return Read(WindowedFindings(path, options, limits));
}

std::expected<WindowedFindings, std::string> WindowedFindings::Plan(
    const std::string& path, const FindingsOptions& options, const FilterOptions& filters,
    const WindowLimits& limits) {
  WindowedFindings plan(path, options, limits);
  if (!filters.active()) return Read(std::move(plan));
  plan.filter_.emplace(filters);
  if (!plan.filter_->usable()) {
    plan.Inexact("filters that select no time");
    return plan;
  }
  // At most twice: the second read knows the recording and every selected range.
  for (;;) {
    auto read = Read(plan);
    if (!read || !read->exact_) return read;
    std::string why;
    switch (read->filter_->Settle(read->whole_, &why)) {
      case WindowFilter::Outcome::kExact:
        read->whole_.windows = read->filter_->Windows(read->whole_);
        return read;
      case WindowFilter::Outcome::kInexact:
        read->Inexact(why);
        return read;
      case WindowFilter::Outcome::kReadAgain:
        plan.filter_ = std::move(read->filter_);
        break;
    }
  }
}

std::expected<WindowedFindings, std::string> WindowedFindings::Read(WindowedFindings plan) {
  plan.limits_.call_stacks = true;
  plan.limits_.hold_pageable_pairs = true;
  plan.limits_.cut_every_records =
      std::min(plan.limits_.cut_every_records, kFindingsWindowRecords);
  if (!Places().known) plan.Inexact("a rule pass that does not run in windows");
  StartUpScan scan;
  std::map<uint32_t, StreamClass> classes;  // as the first window with work on a stream saw it
  CarriedEvents events;
  std::unordered_set<uint64_t> sync_ids, unresolved;  // every known recording's; named, not carried
  MissingStacks missing;
  std::unordered_set<uint32_t> unpaired_threads;  // a pageable copy's pairing left their window
  std::map<uint32_t, uint32_t> stream_context;
  // Each window learnt on a worker (PlanWindow), then taken in window order here: the checks
  // and what they carry see the windows in order, as one loop over them would.
  auto take = [&](const PlanWindow& w) {
    if (!plan.exact_) return;
    if (!w.why_inexact.empty()) return plan.Inexact(w.why_inexact);
    plan.late_nvtx_.insert(plan.late_nvtx_.end(), w.late_nvtx.begin(), w.late_nvtx.end());
    if (w.per_thread_streams) return plan.Inexact("per-thread default streams");
    for (const PlanWindow::Stream& s : w.streams) {
      auto [it, added] = classes.try_emplace(s.id, s.klass);
      if (!added && it->second != s.klass) return plan.Inexact("a stream's class changed");
      uint32_t& context = stream_context.try_emplace(s.id, 0).first->second;
      if (context == 0) context = s.context;
    }
    sync_ids.insert(w.recorded.begin(), w.recorded.end());
    for (uint64_t id : w.named) {
      if (!events.HasSync(id)) unresolved.insert(id);
    }
    events.Add(*w.index);
    missing.Add(w.missing);
    // A pageable copy whose pairing ran off an earlier window: the whole trace would pair it
    // in a later one only if its thread calls again (with filters, the call after it may be
    // windows later, or never: none after --to).
    for (uint32_t thread : w.calling_threads) {
      if (unpaired_threads.contains(thread)) {
        return plan.Inexact("a pageable copy's next launch may lie in a later window");
      }
    }
    unpaired_threads.insert(w.unpaired_threads.begin(), w.unpaired_threads.end());
    scan.Add(w.scan);
    for (const auto& [device, span] : w.busy) {
      auto [it, added] = plan.active_.try_emplace(device, span);
      it->second.start_ns = std::min(it->second.start_ns, span.start_ns);
      it->second.end_ns = std::max(it->second.end_ns, span.end_ns);
    }
  };
  std::vector<TraceRecords> spare;  // taken windows' lists, for the read to reuse their room
  OrderedPipeline<std::unique_ptr<PlanWindow>> pipeline(
      plan.workers_, [](std::unique_ptr<PlanWindow>& w, PipelineTurn&) { w->Learn(); },
      [&](std::unique_ptr<PlanWindow>& w) {
        take(*w);
        w->index.reset();
        if (spare.size() < 2) spare.push_back(std::move(w->trace.records));
      });
  auto read = ReadInWindows(plan.path_, plan.limits_, [&](ProcessTrace& w, const WindowSpan& span) {
    if (!plan.exact_) return;  // (as of the windows taken so far: the later ones are not taken)
    if (plan.filter_ && !plan.filter_->Learn(&w, span)) return;
    auto window = std::make_unique<PlanWindow>(std::move(w), span);
    if (!spare.empty()) {  // (the read empties them)
      w.records = std::move(spare.back());
      spare.pop_back();
    }
    pipeline.Submit(std::move(window));
  });
  if (read) pipeline.Drain();
  if (!read) return std::unexpected(read.error());
  plan.windows_ = read->windows;
  if (!read->exact) plan.Inexact(read->why_inexact);
  plan.whole_ = std::move(read->whole);
  plan.warnings_ = std::move(read->warnings);
  if (!plan.exact_) return plan;
  for (uint64_t id : unresolved) {
    if (sync_ids.contains(id)) {
      plan.Inexact("an event synchronisation names a recording an earlier window no longer holds");
      break;
    }
  }
  const StreamClassifier classifier(plan.whole_.records);
  for (const auto& [stream, c] : classes) {
    if (classifier.Classify(stream, false) != c) plan.Inexact("a stream's class changed");
  }
  if (missing.ReadLater(plan.whole_.records)) {
    plan.Inexact("a call stack was read after the window that names it");
  }
  plan.bounds_ = scan.Bounds(plan.whole_.origin_ns);
  plan.streams_.assign(stream_context.begin(), stream_context.end());
  return plan;
}

std::expected<void, std::string> WindowedFindings::AddTo(FindingsDigest* digest) const {
  digest->BeginProcess();
  return Run([&](Finding&& f, uint64_t seq) { digest->Add(std::move(f), seq); },
             [&](const Finding& f, uint64_t seq) { return digest->WantsWhole(f, seq); });
}

std::expected<void, std::string> WindowedFindings::Run(const FindingSink& sink,
                                                       const FindingFilter& wants_whole) const {
  if (!exact_) return std::unexpected("findings in windows: " + why_);
  if (!kept()) return {};  // the filters leave the process out
  const PassPlaces places = Places();
  // The start-up finding's span, to mark host findings as they are found (StreamFindings
  // marks them with the finding itself; only its span counts).
  std::optional<Finding> start_up_span;
  if (bounds_.known && bounds_.duration_ns() >= options_.min_wait_ns) {
    start_up_span.emplace();
    start_up_span->rule = RuleId::kStartUp;
    start_up_span->host_start_ns = Duration(whole_.origin_ns, bounds_.start_ns);
    start_up_span->host_duration_ns = bounds_.duration_ns();
  }
  const Finding* marker = start_up_span ? &*start_up_span : nullptr;
  std::map<uint32_t, uint64_t> last_end;
  for (const auto& [device, span] : active_) last_end[device] = span.end_ns;
  IdleTimeline timeline(last_end);
  GpuRulesAccumulator gpu(options_, bounds_, active_);
  StartUpTally tally;
  OverlapAccumulator overlap;
  MemoryAnalysis memory;
  CarriedEvents events;  // the workers', one at a time in window order (their turn)
  std::vector<NvtxEvent> open_nvtx;  // ranges of earlier windows still open at the last cut
  uint64_t next = places.host << kFindingsPassShift;
  std::vector<TraceRecords> spare;  // finished windows' lists, for the read to reuse their room
  // On a worker: the window's index, its stream model (given the events of the windows before
  // it, a turn that each window takes in order) and its host findings, whole when no filter
  // asks. Then here, in window order: the host findings' seqs (and text for those the filter
  // wants, known only with the seq), and the passes that carry state across cuts.
  OrderedPipeline<std::unique_ptr<RunWindow>> pipeline(
      workers_,
      [&](std::unique_ptr<RunWindow>& w, PipelineTurn& turn) {
        w->index.emplace(w->trace);
        turn([&] {
          w->earlier = events.list();
          events.Add(*w->index);
        });
        w->model.emplace(*w->index,
                         StreamModel::Elsewhere{.events = w->earlier, .streams = streams_});
        w->host.emplace(RuleInput{w->trace, *w->index, *w->model, options_}, marker);
        w->found = w->host->Find(/*whole=*/!wants_whole);
      },
      [&](std::unique_ptr<RunWindow>& w) {
        for (HostCallFindings::Found& found : w->found) {
          if (wants_whole && wants_whole(found.finding, next)) {
            sink(w->host->Whole(found), next++);
          } else {
            sink(std::move(found.finding), next++);
          }
        }
        const TraceIndex& index = *w->index;
        gpu.Add(index, timeline.Add(index), timeline);
        tally.Add(index, bounds_);
        overlap.Add(index, *w->model);
        memory.Add(index, *w->model);
        w->host.reset();
        w->model.reset();
        w->index.reset();
        if (spare.size() < 2) spare.push_back(std::move(w->trace.records));
      });
  size_t windows = 0;
  auto read = ReadInWindows(path_, limits_, [&](ProcessTrace& w, const WindowSpan& span) {
    ++windows;
    if (filter_) filter_->Apply(&w);
    w.origin_ns = whole_.origin_ns;
    // The window's ranges: those of earlier windows still open, its own but the late ones, and
    // the late ones it overlaps (as the first read found them). Still open at the next cut:
    // the first two kinds' (late ones go by the first read's list).
    std::vector<NvtxEvent> own = std::move(w.records.nvtx_events);
    std::vector<NvtxEvent>& ranges = w.records.nvtx_events;
    ranges = std::move(open_nvtx);
    for (NvtxEvent& e : own) {
      if (e.kind == NvtxKind::kMark || e.start_ns >= span.from_ns) ranges.push_back(std::move(e));
    }
    own.clear();
    open_nvtx.clear();
    for (const NvtxEvent& e : ranges) {
      if (e.kind != NvtxKind::kMark && e.end_ns >= span.to_ns) open_nvtx.push_back(e);
    }
    for (const NvtxEvent& e : late_nvtx_) {
      if (e.start_ns < span.to_ns && e.end_ns >= span.from_ns) ranges.push_back(e);
    }
    auto window = std::make_unique<RunWindow>(std::move(w));
    if (!spare.empty()) {  // (the read empties them)
      w.records = std::move(spare.back());
      spare.pop_back();
    }
    pipeline.Submit(std::move(window));
  });
  if (read) pipeline.Drain();
  if (!read) return std::unexpected(read.error());
  if (!read->exact || windows != windows_) {
    return std::unexpected(path_ + ": the trace read differently the second time");
  }
  StartUp start_up = bounds_;
  tally.Finish(&start_up);
  std::vector<std::pair<uint64_t, Finding>> others;
  for (uint64_t k : places.order) {
    std::vector<Finding> found;
    if (k == places.gpu) {
      gpu.Finish(whole_, start_up, &found);
    } else if (k == places.memory) {
      ChurnFindings(whole_, memory.Finish(whole_), options_, &found);
    } else if (k == places.overlap) {
      overlap.Finish(whole_, options_, &found);
    }
    for (uint64_t j = 0; j < found.size(); ++j) {
      others.push_back({(k << kFindingsPassShift) + j, std::move(found[j])});
    }
  }
  const Finding* start_up_finding = nullptr;
  for (const auto& [seq, f] : others) {
    if (f.rule == RuleId::kStartUp) start_up_finding = &f;
  }
  for (auto& [seq, f] : others) MarkStartUp(start_up_finding, &f);
  for (auto& [seq, f] : others) sink(std::move(f), seq);
  return {};
}

}  // namespace libprof::analysis
