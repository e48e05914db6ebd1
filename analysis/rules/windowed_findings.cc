#include "analysis/rules/windowed_findings.h"

#include <algorithm>
#include <atomic>
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
#include "analysis/rules/graph_rules.h"
#include "analysis/rules/memory_rules.h"
#include "analysis/rules/overlap_rules.h"
#include "analysis/rules/rank_rules.h"
#include "analysis/rules/unified_memory_rules.h"
#include "analysis/rules/window_facts.h"

namespace libprof::analysis {
namespace {

uint64_t Duration(uint64_t start, uint64_t end) { return end > start ? end - start : 0; }

// A cut is tried once this many records wait, a quarter of trace_windows.h's default: the
// findings hold a window's records several times over (the window, its TraceIndex and
// StreamModel, the chunks decoded ahead), so smaller windows lower their peak at the same speed
// (bench/README.md: 10M-record synthetic trace 2^18 -> 2^16: 150 -> 97 MB; with two decoding
// threads, 2^16 -> 2^15: 164-188 -> 122-132 MB); what the horizon holds stays either way. The
// HTML report's reads take these windows too (html_process_report.cc says what its peak wants).
constexpr size_t kFindingsWindowRecords = size_t{1} << 15;
// Threads decoding each read's chunks: with one, both reads waited for decoding once the
// windowed read's cutting got cheaper (device host, 10M synthetic trace: findings 1.81-1.88 s
// with one, 1.40-1.64 s with two and 2^15-record windows, at a lower peak; bench/README.md).
constexpr size_t kFindingsDecoders = 2;

// Where each pass stands in the registry (its findings' seq), or none for a pass this engine
// does not know.
struct PassPlaces {
  uint64_t host = 0, gpu = 0, memory = 0, graph = 0, overlap = 0;
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
    } else if (pass == FindGraphFindings) {
      p.graph = k;
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

// A window of the run read: analysed on a worker as far as it needs nothing of the windows
// after it, then taken in window order by the passes that carry state across cuts.
struct RunWindow {
  RunWindow(ProcessTrace&& w, const WindowSpan& s) : trace(std::move(w)), span(s) {}

  ProcessTrace trace;
  WindowSpan span;
  std::optional<TraceIndex> index;
  std::vector<StreamModel::EarlierEvent> earlier;  // the events of the windows before it
  std::vector<DeviceIdle> idle;                    // IdleTimeline::Add's
  std::vector<HostCall> earlier_calls;             // and the calls it kept until this window
  std::optional<StreamModel> model;
  std::optional<HostCallFindings> host;
  bool whole = true;  // `found` with their text
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
  plan.limits_.known_cuts = nullptr;  // (this read finds them)
  plan.limits_.cut_every_records =
      std::min(plan.limits_.cut_every_records, kFindingsWindowRecords);
  plan.limits_.decoders = std::max(plan.limits_.decoders, kFindingsDecoders);
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
    plan.last_kernel_end_ = std::max(plan.last_kernel_end_, w.last_kernel_end);
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
  // The second read (and any other with read_limits()) cuts where this one did, without
  // looking for the cuts again.
  plan.limits_.known_cuts =
      std::make_shared<const std::vector<std::vector<uint64_t>>>(std::move(read->cuts));
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

std::expected<void, std::string> WindowedFindings::AddTo(FindingsDigest* digest,
                                                         const Hooks& hooks) const {
  digest->BeginProcess();
  return Run([&](Finding&& f, uint64_t seq) { digest->Add(std::move(f), seq); },
             [&](const Finding& f, uint64_t seq) { return digest->WantsWhole(f, seq); }, hooks);
}

std::expected<void, std::string> WindowedFindings::Run(const FindingSink& sink,
                                                       const FindingFilter& wants_whole,
                                                       const Hooks& hooks) const {
  if (!exact_) return std::unexpected("findings in windows: " + why_);
  if (!kept()) return {};  // the filters leave the process out
  const PassPlaces places = Places();
  // The start-up finding's span and warm-up, to mark host findings as they are found
  // (StreamFindings marks them with the finding itself; only those count).
  std::optional<Finding> start_up_span;
  if (bounds_.known && bounds_.duration_ns() >= options_.min_wait_ns) {
    start_up_span.emplace();
    start_up_span->rule = RuleId::kStartUp;
    start_up_span->host_start_ns = Duration(whole_.origin_ns, bounds_.start_ns);
    start_up_span->host_duration_ns = bounds_.duration_ns();
    StartUpDetails details;  // (only the warm-up's length counts, as above)
    details.warm_up_ns = bounds_.warm_up_ns();
    if (bounds_.library_set_up_recurs()) {
      details.recurring_library_set_ups = bounds_.library_set_ups;
    }
    details.recurring_compilations = bounds_.recurring_compilations;
    start_up_span->details = details;
  }
  const Finding* marker = start_up_span ? &*start_up_span : nullptr;
  std::map<uint32_t, uint64_t> last_end;
  for (const auto& [device, span] : active_) last_end[device] = span.end_ns;
  // Each the workers', one window at a time in window order: `events` and `timeline` in their
  // turn's first chain, `gpu` in the third, the others in the second (PipelineTurn).
  CarriedEvents events;
  IdleTimeline timeline(last_end);
  GpuRulesAccumulator gpu(options_, bounds_, active_);
  StartUpTally tally;
  OverlapAccumulator overlap(bounds_);
  MemoryAnalysis memory;
  GraphRebuildAccumulator graphs;
  std::vector<NvtxEvent> open_nvtx;  // ranges of earlier windows still open at the last cut
  uint64_t next = places.host << kFindingsPassShift;
  std::vector<TraceRecords> spare;  // finished windows' lists, for the read to reuse their room
  // Of the host findings asked of `wants_whole` so far, how many it wanted: when most, the
  // workers write every text and the few not wanted lose it here (Textless); else only the
  // wanted ones are analysed again here for theirs (Whole). Either way each finding reaches
  // the sink as it would from one thread: the choice only moves work.
  uint64_t wanted_host = 0, asked_host = 0;
  std::atomic<bool> mostly_wanted{false};
  // A window's host findings to the sink, with their seqs (and whether the filter wants each
  // whole, known only with the seq), then the caller's look at it: in window order.
  const auto Hand = [&](RunWindow& w, const Window& window) {
    for (HostCallFindings::Found& found : w.found) {
      if (!wants_whole) {
        sink(std::move(found.finding), next++);
        continue;
      }
      // The filter sees the finding as it comes without text, whichever way it was found.
      std::optional<Finding> textless;
      if (w.whole) textless = HostCallFindings::Textless(found.finding);
      const bool wanted = wants_whole(textless ? *textless : found.finding, next);
      wanted_host += wanted;
      ++asked_host;
      if (wanted == w.whole) {
        sink(std::move(found.finding), next++);
      } else if (wanted) {
        sink(w.host->Whole(found), next++);
      } else {
        sink(std::move(*textless), next++);
      }
    }
    // Later windows' host findings come whole from the workers once most are wanted (the
    // HTML report wants every wait with its work; the digest a group's worst only).
    mostly_wanted.store(wanted_host * 2 > asked_host, std::memory_order_relaxed);
    if (hooks.analysed) hooks.analysed(window);
  };
  // On a worker: the window's index, its stream model (given the events of the windows before
  // it, a turn that each window takes in order) and its host findings; then, each in a chain of
  // its own in window order, the passes that carry state across cuts, the caller's hooks and
  // the host findings to the sink (Hand). Here (finish): the window's room back to the read.
  OrderedPipeline<std::unique_ptr<RunWindow>> pipeline(
      workers_,
      [&](std::unique_ptr<RunWindow>& w, PipelineTurn& turn) {
        w->index.emplace(w->trace);
        // In window order, on the workers: the events carried to the next window's stream
        // model, and the idle timeline's pass (it needs only the index), whose result the GPU
        // rules' sums take below (on the caller's thread the two were 0.78 of its 0.99 s of
        // in-order work at 10M records, and bounded the read).
        turn([&] {
          w->earlier = events.list();
          events.Add(*w->index);
          w->idle = timeline.Add(*w->index);
          w->earlier_calls = timeline.earlier_calls();  // (the next window's Add changes them)
        });
        w->model.emplace(*w->index,
                         StreamModel::Elsewhere{.events = w->earlier, .streams = streams_});
        w->host.emplace(RuleInput{w->trace, *w->index, *w->model, options_, last_kernel_end_},
                        marker);
        w->whole = !wants_whole || mostly_wanted.load(std::memory_order_relaxed);
        w->found = w->host->Find(w->whole);
        // The passes that carry state across cuts and need the stream model, in window order
        // in the second chain: on the caller's thread they bounded the read (the 10M synthetic
        // trace's run read: the caller finished windows 0.55 s of 1.1 s, the cutting thread
        // waited 0.19 s to hand windows on).
        turn([&] {
          tally.Add(*w->index, bounds_);
          overlap.Add(*w->index, *w->model);
          memory.Add(*w->index, *w->model);
          graphs.Add(*w->index);
        }, 1);
        // The GPU rules' sums, in the third chain: behind the idle timeline in the first, the
        // two bounded the read (the 10M synthetic trace's run read on 16 cores: 0.58-0.64 s
        // of that chain).
        turn([&] { gpu.Add(*w->index, std::move(w->idle), w->earlier_calls); }, 2);
        const Window window{
            .trace = w->trace, .span = w->span, .index = *w->index, .model = *w->model};
        if (hooks.in_order) turn([&] { hooks.in_order(window); }, 3);
        // The host findings to the sink with their seqs, then the caller's look at the window,
        // in the fifth chain: on the caller's thread they bounded the HTML report's read (its
        // sink and findings' look-up: 0.76-0.85 s of the 10M synthetic trace's run read).
        turn([&] { Hand(*w, window); }, 4);
      },
      [&](std::unique_ptr<RunWindow>& w) {
        w->host.reset();
        w->model.reset();
        w->index.reset();
        if (spare.size() < 2) spare.push_back(std::move(w->trace.records));
      });
  size_t windows = 0;
  auto read = ReadInWindows(path_, limits_, [&](ProcessTrace& w, const WindowSpan& span) {
    ++windows;
    if (hooks.read) hooks.read(w, span);
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
    auto window = std::make_unique<RunWindow>(std::move(w), span);
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
    } else if (k == places.graph) {
      graphs.Finish(whole_, options_, &found);
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
