#include "analysis/reports/html_process_report.h"

#include <malloc.h>

#include <algorithm>
#include <atomic>
#include <future>
#include <map>
#include <memory>
#include <tuple>
#include <unordered_map>
#include <unordered_set>

#include "analysis/metrics/copy_bandwidth.h"
#include "analysis/metrics/memory.h"
#include "analysis/metrics/memory_timeline.h"
#include "analysis/metrics/start_up.h"
#include "analysis/metrics/summary.h"
#include "analysis/metrics/time_bins.h"
#include "analysis/metrics/unified_memory.h"
#include "analysis/metrics/utilization.h"
#include "analysis/model/device_ops.h"
#include "analysis/model/ordered_pipeline.h"
#include "analysis/model/stream_deps.h"
#include "analysis/model/trace_index.h"
#include "analysis/model/trace_loader.h"
#include "analysis/model/units.h"
#include "analysis/reports/findings_report.h"
#include "analysis/reports/html_charts.h"
#include "analysis/reports/html_page.h"
#include "analysis/reports/html_timeline.h"
#include "analysis/reports/html_writer.h"
#include "analysis/reports/summary_report.h"
#include "analysis/rules/findings_digest.h"
#include "analysis/rules/windowed_findings.h"

namespace libprof::analysis {
namespace {

// The plot area of every time chart, so that the timeline and the charts line up.
constexpr double kPlotX0 = 250;
constexpr double kPlotWidth = 1000;
// Slices of the utilisation chart: 4 pixels each.
constexpr size_t kUtilizationSlices = 250;
// Blocked-call arrows on the whole-trace timeline (the rest are in the findings table), and on
// each detail view.
constexpr size_t kOverviewMarks = 60;
constexpr size_t kDetailMarks = 40;

std::string Dur(uint64_t ns) { return FormatDuration(static_cast<double>(ns)); }

// The table of `rows` (sorted, most time first), cut to kSummaryTableRows (summary_report.h) with
// a note that says what was left out.
std::string SummaryTable(const std::vector<SummaryRow>& rows, uint64_t trace_ns, bool nvtx,
                         std::string_view css_class) {
  const RowsShown shown = FirstRows(rows, kSummaryTableRows);
  std::string table = HtmlTable(SummaryRowCells(shown.shown, trace_ns, nvtx), css_class);
  if (shown.others == 0) return table;
  return table +
         HtmlNote("The " + std::to_string(shown.shown.size()) + " rows with the most time of " +
                  std::to_string(rows.size()) + " are shown; the other " +
                  std::to_string(shown.others) + " took " + Dur(shown.others_ns) +
                  " in all. profview summary --rows 0 lists every row.");
}

std::string Stat(const std::string& value, const std::string& label, bool warn = false) {
  return "<div class=\"stat" + std::string(warn ? " warn" : "") + "\"><div class=\"value\">" +
         HtmlEscape(value) + "</div><div class=\"label\">" + HtmlEscape(label) + "</div></div>";
}

// Intervals that arrive by start (a window's device operations, window after window) merged as
// MergeIntervals merges them all at once, each handed to `emit` once it can grow no more.
class StreamingMerge {
 public:
  template <typename Emit>
  void Add(uint64_t start_ns, uint64_t end_ns, const Emit& emit) {
    if (end_ns <= start_ns) return;  // as MergeIntervals: empty intervals count for nothing
    if (open_ && start_ns <= current_.end_ns) {
      current_.end_ns = std::max(current_.end_ns, end_ns);
      return;
    }
    if (open_) emit(current_);
    current_ = {start_ns, end_ns};
    open_ = true;
  }
  template <typename Emit>
  void Finish(const Emit& emit) {
    if (open_) emit(current_);
    open_ = false;
  }

 private:
  bool open_ = false;
  Interval current_;
};

// What the page needs to know of correlation ids: the call that issued one (TraceIndex
// LaunchingCall) and its device work (OpsOf), looked up window by window for the ids wanted
// (every blocked call and the work it waited for: flat tables, a million ids in a big trace).
// A window holds the ids between its smallest and largest (later windows' are larger).
class CorrLookup {
 public:
  struct Call {
    bool found = false;
    uint32_t thread_id = 0;
    uint64_t start_ns = 0, end_ns = 0;
  };
  // The operation that ended last (the first of equals) of the id's work; its correlation id is
  // the id's. A million of these in a big trace: kept small.
  struct Ops {
    uint64_t end_ns = 0;
    uint32_t device_id = 0, stream_id = 0;
    uint32_t name = 0;  // into Name()
    bool kernel = false;
    bool found = false;
  };

  void WantCall(uint64_t corr) {
    if (corr != 0) call_ids_.push_back(corr);
  }
  void WantOps(uint64_t corr) {
    if (corr != 0) op_ids_.push_back(corr);
  }
  // Also the earliest start of the id's work (detail windows).
  void WantFirstStart(uint64_t corr) {
    if (corr != 0) first_start_.try_emplace(corr, UINT64_MAX);
  }
  // After the last Want.
  void Seal() {
    for (std::vector<uint64_t>* ids : {&call_ids_, &op_ids_}) {
      std::sort(ids->begin(), ids->end());
      ids->erase(std::unique(ids->begin(), ids->end()), ids->end());
      ids->shrink_to_fit();
    }
    calls_.assign(call_ids_.size(), {});
    ops_.assign(op_ids_.size(), {});
  }

  void Add(const TraceIndex& index) {
    const TraceRecords& r = index.records();
    const std::vector<DeviceOp>& ops = index.device_ops();
    uint64_t lo = UINT64_MAX, hi = 0;
    for (const ApiCall& c : r.api_calls) {
      lo = std::min(lo, c.correlation_id);
      hi = std::max(hi, c.correlation_id);
    }
    for (const DeviceOp& op : ops) {
      lo = std::min(lo, op.correlation_id);
      hi = std::max(hi, op.correlation_id);
    }
    if (lo > hi) return;
    const auto range = [&](const std::vector<uint64_t>& ids) {
      return std::pair(std::lower_bound(ids.begin(), ids.end(), lo) - ids.begin(),
                       std::upper_bound(ids.begin(), ids.end(), hi) - ids.begin());
    };
    const auto [call_lo, call_hi] = range(call_ids_);
    for (auto i = call_lo; i < call_hi; ++i) {
      Call& f = calls_[i];
      if (f.found) continue;
      if (const int64_t call = index.LaunchingCall(call_ids_[i]); call >= 0) {
        const ApiCall& c = r.api_calls[call];
        f = {.found = true,
             .thread_id = c.thread_id,
             .start_ns = c.start_ns,
             .end_ns = std::max(c.start_ns, c.end_ns)};
      }
    }
    const auto [op_lo, op_hi] = range(op_ids_);
    for (auto i = op_lo; i < op_hi; ++i) {
      Ops& f = ops_[i];
      for (uint32_t k : index.OpsOf(op_ids_[i])) {
        const DeviceOp& op = ops[k];
        if (!f.found || op.end_ns > f.end_ns) {
          const std::string& name = index.OpName(op);
          auto [id, added] = name_ids_.try_emplace(name, static_cast<uint32_t>(names_.size()));
          if (added) names_.push_back(name);
          f = {.end_ns = op.end_ns,
               .device_id = op.device_id,
               .stream_id = op.stream_id,
               .name = id->second,
               .kernel = op.kind == DeviceOpKind::kKernel,
               .found = true};
        }
      }
    }
    for (auto& [corr, first] : first_start_) {
      if (corr < lo || corr > hi) continue;
      for (uint32_t k : index.OpsOf(corr)) first = std::min(first, ops[k].start_ns);
    }
  }

  bool empty() const { return call_ids_.empty() && op_ids_.empty() && first_start_.empty(); }
  // Whether an id in [lo, hi] is wanted.
  bool WantsAny(uint64_t lo, uint64_t hi) const {
    const auto any = [&](const std::vector<uint64_t>& ids) {
      auto it = std::lower_bound(ids.begin(), ids.end(), lo);
      return it != ids.end() && *it <= hi;
    };
    return lo <= hi && (any(call_ids_) || any(op_ids_) ||
                        std::any_of(first_start_.begin(), first_start_.end(), [&](const auto& f) {
                          return f.first >= lo && f.first <= hi;
                        }));
  }
  // The facts of a wanted id; nullptr when it was not found.
  const Call* FindCall(uint64_t corr) const { return Find(call_ids_, calls_, corr); }
  const Ops* FindOps(uint64_t corr) const { return Find(op_ids_, ops_, corr); }
  uint64_t FirstStart(uint64_t corr) const { return first_start_.at(corr); }
  const std::string& Name(uint32_t id) const { return names_[id]; }

 private:
  template <typename Facts>
  static const Facts* Find(const std::vector<uint64_t>& ids, const std::vector<Facts>& facts,
                           uint64_t corr) {
    auto it = std::lower_bound(ids.begin(), ids.end(), corr);
    if (it == ids.end() || *it != corr) return nullptr;
    const Facts& f = facts[it - ids.begin()];
    return f.found ? &f : nullptr;
  }

  std::vector<uint64_t> call_ids_, op_ids_;  // sorted
  std::vector<Call> calls_;
  std::vector<Ops> ops_;
  std::map<uint64_t, uint64_t> first_start_;  // by id
  std::vector<std::string> names_;
  std::unordered_map<std::string, uint32_t> name_ids_;
};

// The findings of one process as the page uses them: grouped (FindingsDigest, as GroupFindings
// groups a list), counted, and the blocked calls the timeline marks. Filled as StreamFindings
// or the windowed findings hand them on, in any order; after each window's findings (the
// whole trace: one window), LookUp with that window's index finds what the page needs of them
// before its second pass: each blocked call's call, and for the work that a group's worst
// finding blames, its call and when it first ran (the detail views' windows).
// A host finding, and the work it blames (work that overlaps the call), lie in the window its
// call lies in: a cut holds no call and no device work from its issuing call to its end, and a
// correlation id lies in one window (trace_windows.h: a read where one crosses a cut is
// inexact). So each id is looked up in one window: the one whose findings named it.
class ReportFindings {
 public:
  ReportFindings() { digest_.BeginProcess(); }

  // What must come whole: a group's worst (the page prints it) and a blocked call (each piece
  // of work it waited for gets a mark; only a whole finding lists them all).
  FindingFilter Filter() const {
    return [this](const Finding& f, uint64_t seq) {
      return Marked(f) || digest_.WantsWhole(f, seq);
    };
  }
  void Add(Finding&& f, uint64_t seq) {
    ++count_;
    const RuleFamily family = Rule(f.rule).family;
    if (family == RuleFamily::kHostWait || family == RuleFamily::kHostCost) {
      host_lost_ns_ += f.blocked_ns;
    }
    if (Marked(f)) {
      auto [api, added] = api_ids_.try_emplace(f.api, static_cast<uint32_t>(apis_.size()));
      if (added) apis_.push_back(f.api);
      Blocked b{.order = {f.host_start_ns, f.correlation_id, seq},
                .thread_id = f.thread_id,
                .correlation_id = f.correlation_id,
                .api = api->second,
                .blocked_ns = f.blocked_ns,
                .blamed = {},
                .call = {}};
      for (const Blamed& x : f.blamed) b.blamed.push_back(x.correlation_id);
      blocked_.push_back(std::move(b));
    }
    // A group's worst from now on (a later one may take its place): its work is looked up.
    if (digest_.WantsWhole(f, seq)) {
      for (const Blamed& x : f.blamed) {
        if (x.correlation_id != 0) unlooked_work_.push_back(x.correlation_id);
      }
    }
    digest_.Add(std::move(f), seq);
  }

  // The work a group's worst finding blames, as the window of its finding has it.
  struct Work {
    CorrLookup::Call call;  // the call that issued it
    bool ran = false;       // device operations with its id were found
    uint64_t first_start_ns = UINT64_MAX;
  };
  // Looks up in `window` what the findings added since the last LookUp name.
  void LookUp(const TraceIndex& window) {
    if (looked_up_ == blocked_.size() && unlooked_work_.empty()) return;
    CorrLookup lookup;
    for (size_t i = looked_up_; i < blocked_.size(); ++i) {
      lookup.WantCall(blocked_[i].correlation_id);
    }
    for (uint64_t corr : unlooked_work_) {
      lookup.WantCall(corr);
      lookup.WantOps(corr);
      lookup.WantFirstStart(corr);
    }
    lookup.Seal();
    lookup.Add(window);
    for (size_t i = looked_up_; i < blocked_.size(); ++i) {
      if (const CorrLookup::Call* call = lookup.FindCall(blocked_[i].correlation_id)) {
        blocked_[i].call = *call;
      }
    }
    looked_up_ = blocked_.size();
    for (uint64_t corr : unlooked_work_) {
      Work w;
      if (const CorrLookup::Call* call = lookup.FindCall(corr)) w.call = *call;
      w.ran = lookup.FindOps(corr) != nullptr;
      w.first_start_ns = lookup.FirstStart(corr);
      work_.insert_or_assign(corr, w);
    }
    unlooked_work_.clear();
    // Work of findings that are no group's worst any more is dropped now and then (a loop
    // whose waits grow makes each the worst in turn).
    if (work_.size() > 2 * work_kept_ + 1024) {
      std::unordered_set<uint64_t> wanted;
      for (const FindingGroup& g : digest_.Groups()) {
        for (const Blamed& b : g.worst.blamed) wanted.insert(b.correlation_id);
      }
      std::erase_if(work_, [&](const auto& w) { return !wanted.contains(w.first); });
      work_kept_ = work_.size();
    }
  }
  // Whether every finding added was looked up (else one came after its window's LookUp).
  bool LookedUp() const { return looked_up_ == blocked_.size() && unlooked_work_.empty(); }
  // The work `corr` of a group's worst finding; nullptr when none ran with that id.
  const Work* FindWork(uint64_t corr) const {
    auto it = work_.find(corr);
    return it == work_.end() || !it->second.ran ? nullptr : &it->second;
  }

  struct Blocked {
    std::tuple<uint64_t, uint64_t, uint64_t> order;  // FindFindings' (time, correlation, seq)
    uint32_t thread_id = 0;
    uint64_t correlation_id = 0;
    uint32_t api = 0;  // into apis()
    uint64_t blocked_ns = 0;
    std::vector<uint64_t> blamed;  // correlation ids
    CorrLookup::Call call;         // by LookUp
  };
  // In the order of the timeline's marks: most time lost first, then FindFindings' order.
  std::vector<Blocked> TakeBlocked() {
    std::sort(blocked_.begin(), blocked_.end(), [](const Blocked& a, const Blocked& b) {
      return a.blocked_ns != b.blocked_ns ? a.blocked_ns > b.blocked_ns : a.order < b.order;
    });
    looked_up_ = 0;
    return std::move(blocked_);
  }
  const std::vector<std::string>& apis() const { return apis_; }

  const FindingsDigest& digest() const { return digest_; }
  uint64_t count() const { return count_; }
  uint64_t host_lost_ns() const { return host_lost_ns_; }

 private:
  static bool Marked(const Finding& f) {
    return Rule(f.rule).family == RuleFamily::kHostWait && f.correlation_id != 0;
  }

  FindingsDigest digest_;
  uint64_t count_ = 0, host_lost_ns_ = 0;
  std::vector<Blocked> blocked_;
  size_t looked_up_ = 0;  // blocked_[..looked_up_) have their call looked up
  std::vector<std::string> apis_;
  std::unordered_map<std::string, uint32_t> api_ids_;
  std::vector<uint64_t> unlooked_work_;  // blamed by worst findings added since the last LookUp
  std::unordered_map<uint64_t, Work> work_;
  size_t work_kept_ = 0;  // work_'s size after it was last pruned
};

// One process's page, its figures added window by window (the whole trace: one window) in two
// passes: the first fills the whole-trace timeline, utilisation, memory and bandwidth and looks
// up what the marks and detail windows need of the findings (each window's after its findings
// went to findings(): the windowed findings' second read carries the first pass); the second
// draws the views placed from it.
class ProcessPage {
 public:
  // `whole`: the process (its timed records are not read here).
  // `overview`: keep the merged device busy time for the per-rank overview. `all_marks`: look
  // up the work of every mark (a trace in memory), else only of the marks the views may draw;
  // in the second pass either way.
  ProcessPage(const ProcessTrace& whole, size_t number, const HtmlReportOptions& options,
              bool overview, bool all_marks)
      : overview_(overview),
        all_marks_(all_marks),
        whole_(whole),
        options_(options),
        prefix_("p" + std::to_string(number)),
        timeline_(options.raw, whole.header.pid) {
    scale_ = {.t0_ns = whole.start_ns(),
              .t1_ns = std::max(whole.end_ns(), whole.start_ns() + 1),
              .origin_ns = whole.origin_ns,
              .x0 = kPlotX0,
              .width = kPlotWidth};
    timeline_.AddView(scale_);
  }

  // Where the process's findings go (before the first pass, or window by window before it).
  // The one-time work's stretches (StartUp::one_time), shaded in the timelines.
  void SetOneTime(const std::vector<StartUp::OneTimeSpan>& spans) {
    one_time_.clear();
    for (const StartUp::OneTimeSpan& s : spans) {
      one_time_.push_back({s.span.start_ns, s.span.end_ns, OneTimeWorkNames(s.kinds)});
    }
  }

  ReportFindings& findings() { return findings_; }

  // The first pass, window by window, each after its findings: FirstPassOwn and LookUp.
  void FirstPass(const TraceIndex& window, const StreamModel* model) {
    FirstPassOwn(window, model);
    LookUp(window);
  }
  // What the first pass finds of the window's findings (after they were added).
  void LookUp(const TraceIndex& window) { findings_.LookUp(window); }
  // The rest of the first pass: it touches nothing LookUp, the findings and NoteLateNvtx touch,
  // so that windows may take it on another thread (one at a time, in window order) while those
  // run. `model`: the window's, needed only when it has memory records (MemoryAnalysis). The
  // window's NVTX list holds the ranges open in it (WindowedFindings::Window's: for
  // MemoryAnalysis).
  void FirstPassOwn(const TraceIndex& window, const StreamModel* model) {
    const TraceRecords& r = window.records();
    timeline_.Add(window, {0}, true);
    for (uint32_t s : PerThreadStreams(window)) per_thread_streams_.insert(s);
    const auto busy = [&](const Interval& i) {
      if (overview_) device_busy_.push_back(i);
    };
    for (const DeviceOp& op : window.device_ops()) {  // by start
      first_op_ns_ = std::min(first_op_ns_, op.start_ns);
      last_op_ns_ = std::max(last_op_ns_, op.end_ns);
      any_op_ = true;
      busy_merge_.Add(op.start_ns, op.end_ns, busy);
      Utilization& u = utilization_[op.device_id];
      if (!u.bins) u.bins = std::make_unique<TimeBins>(scale_.t0_ns, scale_.t1_ns, kUtilizationSlices);
      u.merge.Add(op.start_ns, op.end_ns, [&](const Interval& i) { u.Emit(i, scale_); });
      if (op.kind != DeviceOpKind::kMemcpy) continue;
      bandwidth_.Add(r.memcpys[op.record], op.duration());
    }
    memory_timeline_.Add(r);
    if (!r.memory_ops.empty()) memory_.Add(window, *model);
    migrations_ |= !r.unified_memory_counters.empty();
  }

  // After the first pass (and every finding): places the views that depend on it (the span
  // where the GPU ran work, the detail views); returns the views the second pass fills.
  const std::vector<size_t>& EndFirstPass() {
    blocked_ = findings_.TakeBlocked();
    groups_ = findings_.digest().Groups();
    busy_merge_.Finish([&](const Interval& i) {
      if (overview_) device_busy_.push_back(i);
    });
    for (auto& [device, u] : utilization_) u.merge.Finish([&](const Interval& i) { u.Emit(i, scale_); });
    // Programs often spend most of a short trace starting up: then the span where the GPU ran
    // work gets its own picture, at a scale where its slices can be told apart.
    if (any_op_) {
      const uint64_t first = first_op_ns_, last = last_op_ns_;
      const uint64_t margin = (last - first) / 20 + 1;
      TimeScale active = scale_;
      active.t0_ns = std::max(scale_.t0_ns, first > margin ? first - margin : 0);
      active.t1_ns = std::min(scale_.t1_ns, last + margin);
      if (active.t1_ns > active.t0_ns &&
          (active.t1_ns - active.t0_ns) * 2 < scale_.t1_ns - scale_.t0_ns) {
        active_ = active;
        active_view_ = timeline_.AddView(active);
        second_views_.push_back(active_view_);
      }
    }
    // The groups that get a detail view: the first ones (among those listed) whose window is a
    // close-up (at most 40% of the closest picture above it), not that picture again (a finding
    // about the whole active span, or a pattern over many calls, is already the whole-trace
    // picture).
    for (size_t i = 0; i < groups_.size() && i < options_.top_findings &&
                       detailed_.size() < options_.detail_views;
         ++i) {
      const auto window = DetailWindow(groups_[i].worst);
      const TimeScale& widest = active_ ? *active_ : scale_;  // the closest picture drawn
      if (window && (window->second - window->first) * 5 <= (widest.t1_ns - widest.t0_ns) * 2) {
        TimeScale scale = scale_;
        scale.t0_ns = window->first;
        scale.t1_ns = std::max(window->second, window->first + 1);
        detailed_.push_back({i, timeline_.AddView(scale)});
        detail_scales_[detailed_.back().view] = scale;
        second_views_.push_back(detailed_.back().view);
      }
    }
    if (all_marks_) {
      for (const ReportFindings::Blocked& b : blocked_) {
        for (uint64_t corr : b.blamed) marks_lookup_.WantOps(corr);
      }
      marks_lookup_.Seal();
    } else {
      SelectMarks();
    }
    return second_views_;
  }

  // After the second pass: whether the marks looked up are all any view draws (else a piece of
  // work a blocked call waited for was not found, and the marks after those looked up would be
  // needed: the trace must be drawn whole).
  bool MarksComplete() const {
    for (const MarkWalk& w : mark_walks_) {
      if (w.exhausted) continue;
      size_t found = 0;
      for (size_t i : w.taken) {
        for (uint64_t corr : blocked_[i].blamed) found += marks_lookup_.FindOps(corr) != nullptr;
      }
      if (found < w.needed) return false;
    }
    return true;
  }

  // The second pass, window by window: every view's NVTX rows; with `index` (a window the
  // views or the marks need: SecondPassSees), the views placed after the first and the marks'
  // work.
  void SecondPass(const ProcessTrace& window, const WindowSpan& span, const TraceIndex* index) {
    timeline_.AddNvtx(window, 0, span.from_ns, span.to_ns);
    if (index == nullptr) return;
    timeline_.Add(*index, second_views_, false);
    marks_lookup_.Add(*index);
  }
  // In the first pass: an NVTX range that arrived after a cut it starts before.
  void NoteLateNvtx(const ProcessTrace& window, const NvtxEvent& range) {
    timeline_.NoteLateNvtx(window, range);
  }
  // Whether a window whose API calls and device work all lie in [from_ns, to_ns], with
  // correlation ids in [lo_corr, hi_corr], has anything the second pass draws or looks up.
  bool SecondPassSees(uint64_t from_ns, uint64_t to_ns, uint64_t lo_corr, uint64_t hi_corr) const {
    if (marks_lookup_.WantsAny(lo_corr, hi_corr)) return true;
    return std::any_of(second_views_.begin(), second_views_.end(), [&](size_t v) {
      const TimeScale& s = v == active_view_ && active_ ? *active_ : detail_scales_.at(v);
      return from_ns < s.t1_ns && to_ns >= s.t0_ns;
    });
  }

  // `summary`: the process's.
  HtmlProcessPart Render(Summary summary) {
    summary_ = std::move(summary);
    // The streams' classes as StreamModel gives them over the whole trace.
    const StreamClassifier classifier(whole_.records);
    timeline_done_ = timeline_.Finish(
        [&](uint32_t stream) {
          return classifier.Classify(stream, per_thread_streams_.contains(stream));
        },
        Marks());
    HtmlProcessPart part;
    part.header = whole_.header;
    part.path = whole_.path;
    part.start_ns = whole_.start_ns();
    part.end_ns = whole_.end_ns();
    part.origin_ns = whole_.origin_ns;
    part.trace_ns = summary_.trace_ns;
    part.host_api_ns = summary_.host_api_ns;
    part.gpu_busy_ns = summary_.gpu_busy_ns;
    part.dropped_records = summary_.dropped_records;
    part.findings = findings_.count();
    part.host_lost_ns = findings_.host_lost_ns();
    part.device_busy = std::move(device_busy_);
    std::string html;
    html += Headline();
    html += Findings();
    html += Timeline();
    html += Details();
    html += UtilizationSection();
    html += Memory();
    html += Bandwidth();
    html += SummaryTables();
    part.html = std::move(html);
    return part;
  }

  // Whether the figures could be added up window by window (the unified-memory chart needs the
  // whole trace's counters).
  bool windowable() const { return !migrations_; }

 private:
  struct Utilization {
    StreamingMerge merge;
    std::unique_ptr<TimeBins> bins;
    uint64_t busy_ns = 0;
    void Emit(const Interval& i, const TimeScale& scale) {
      bins->Add(i.start_ns, i.end_ns);
      busy_ns += OverlapLength(i.start_ns, i.end_ns, scale.t0_ns, scale.t1_ns);
    }
  };
  struct Detailed {
    size_t group;  // into groups_
    size_t view;   // the timeline's
  };

  std::string Id(const char* what) const { return prefix_ + "-" + what; }

  // The blocked calls whose marks a view may draw, in the marks' order: per view, those whose
  // call lies in it on a thread with a lane, until their pieces of work outnumber the view's
  // marks (each piece found is a mark); and for the marks' count, until it passes
  // kOverviewMarks. Their work is looked up in the second pass.
  void SelectMarks() {
    selected_.assign(blocked_.size(), false);
    struct Want {
      const TimeScale* scale;  // null: any call (the count)
      size_t needed;
    };
    std::vector<Want> wants = {{nullptr, kOverviewMarks + 1}, {&scale_, kOverviewMarks}};
    if (active_) wants.push_back({&*active_, kOverviewMarks});
    for (const auto& [view, scale] : detail_scales_) wants.push_back({&scale, kDetailMarks});
    for (const Want& want : wants) {
      MarkWalk walk{.needed = want.needed, .exhausted = true, .taken = {}};
      size_t pieces = 0;
      for (size_t i = 0; i < blocked_.size(); ++i) {
        const ReportFindings::Blocked& b = blocked_[i];
        const CorrLookup::Call* call = b.call.found ? &b.call : nullptr;
        if (call == nullptr || call->thread_id != b.thread_id) continue;
        if (want.scale != nullptr &&
            (!timeline_.HasThreadLane(b.thread_id) || call->end_ns <= want.scale->t0_ns ||
             call->start_ns >= want.scale->t1_ns)) {
          continue;
        }
        if (pieces >= want.needed) {
          walk.exhausted = false;
          break;
        }
        walk.taken.push_back(i);
        selected_[i] = true;
        for (uint64_t corr : b.blamed) pieces += corr != 0;
      }
      mark_walks_.push_back(std::move(walk));
    }
    for (size_t i = 0; i < blocked_.size(); ++i) {
      if (!selected_[i]) continue;
      for (uint64_t corr : blocked_[i].blamed) marks_lookup_.WantOps(corr);
    }
    marks_lookup_.Seal();
  }

  // The marks, as the timeline lists them: per blocked call whose call is known on its thread,
  // one per piece of work it waited for, most time lost first (ties in FindFindings' order).
  HtmlTimeline::Marks Marks() const {
    HtmlTimeline::Marks marks;
    const CorrLookup& ops = marks_lookup_;
    const auto each = [this, &ops](const std::function<bool(const HtmlTimeline::Mark&)>& visit) {
      HtmlTimeline::Mark m;
      for (size_t i = 0; i < blocked_.size(); ++i) {
        if (!all_marks_ && !selected_[i]) continue;
        const ReportFindings::Blocked& b = blocked_[i];
        const CorrLookup::Call* call = b.call.found ? &b.call : nullptr;
        if (call == nullptr || call->thread_id != b.thread_id) continue;
        for (uint64_t corr : b.blamed) {
          const CorrLookup::Ops* work = ops.FindOps(corr);
          if (work == nullptr) continue;
          m.thread_id = call->thread_id;
          m.correlation_id = b.correlation_id;
          m.api = findings_.apis()[b.api];
          m.call_start_ns = call->start_ns;
          m.call_end_ns = call->end_ns;
          m.blocked_ns = b.blocked_ns;
          m.op = {.end_ns = work->end_ns,
                  .device_id = work->device_id,
                  .stream_id = work->stream_id,
                  .correlation_id = corr,
                  .kernel = work->kernel,
                  .name = ops.Name(work->name)};
          if (!visit(m)) return;
        }
      }
    };
    each([&](const HtmlTimeline::Mark&) { return ++marks.count, true; });
    marks.for_each = each;
    return marks;
  }

  std::string Headline() const {
    const Summary& s = summary_;
    const double trace = static_cast<double>(s.trace_ns);
    std::string body = "<div class=\"headline\">";
    body += Stat(Dur(s.trace_ns), "profiler ran for, capturing " + std::to_string(s.events) +
                                      " events");
    body += Stat(Dur(s.host_api_ns) + " (" +
                     FormatPercent(static_cast<double>(s.host_api_ns), trace) + ")",
                 "calling CUDA APIs took");
    body += Stat(Dur(s.gpu_busy_ns) + " (" +
                     FormatPercent(static_cast<double>(s.gpu_busy_ns), trace) + ")",
                 "GPU was busy");
    body += Stat(std::to_string(s.dropped_records), "records dropped during capture",
                 s.dropped_records > 0);
    body += "</div>";
    const TraceHeader& h = whole_.header;
    std::string about = "pid " + std::to_string(h.pid);
    if (!h.hostname.empty()) about += " on " + h.hostname;
    if (h.rank) about += ", rank " + std::to_string(*h.rank);
    for (const DeviceInfo& d : h.devices) about += "; GPU " + std::to_string(d.id) + " " + d.name;
    std::string command;
    for (const std::string& arg : h.command_line) command += (command.empty() ? "" : " ") + arg;
    if (!command.empty()) about += "; command: " + command;
    about += "; trace: " + whole_.path;
    if (s.dropped_records > 0) {
      about += ". " + std::to_string(s.dropped_records) +
               " records were dropped during capture: totals are lower bounds.";
    }
    if (s.repaired_ends > 0) about += ". " + RepairedEndsSentence(s.repaired_ends);
    if (HasNoEnd(whole_.records, whole_.truncated)) about += ". The " + NoEndSentence(h) + ".";
    body += HtmlNote(about);
    return HtmlSection(Id("headline"), "Headline", body);
  }

  bool IsDetailed(size_t group) const {
    return std::any_of(detailed_.begin(), detailed_.end(),
                       [&](const Detailed& d) { return d.group == group; });
  }

  std::string Findings() const {
    FindingsReportContext context{.thresholds = options_.findings, .trace_ns = whole_.window_ns()};
    std::string body;
    if (findings_.count() == 0) {
      body = HtmlNote("No findings: no API call waited " + Dur(options_.findings.min_wait_ns) +
                      " or more for device work or synchronous copies, no GPU idle gap reached " +
                      Dur(options_.findings.gap_threshold_ns) +
                      " and no chunk of the trace was under the utilization threshold.");
      return HtmlSection(Id("findings"), "Top findings", body);
    }
    std::vector<FindingGroup> top(groups_.begin(),
                                  groups_.begin() + std::min(groups_.size(), options_.top_findings));
    body += "<p>" + HtmlEscape(FindingsHeadline(findings_.digest(), context)) + "</p>";
    body += HtmlTable(FindingGroupCells(top), "findings-table");
    body += "<ol class=\"findings\">";
    for (size_t i = 0; i < top.size(); ++i) {
      const Finding& f = top[i].worst;
      body += "<li id=\"" + Id("finding-") + std::to_string(i + 1) + "\"><span class=\"rule\">" +
              HtmlEscape(RuleName(f.rule)) + "</span>: " + HtmlEscape(f.explanation);
      if (top[i].count > 1) body += " (the longest of " + std::to_string(top[i].count) + ")";
      body += ".";
      if (IsDetailed(i)) {
        body += " <a href=\"#" + Id("detail-") + std::to_string(i + 1) + "\">timeline around it</a>";
      }
      if (!f.nvtx.empty()) {
        std::string path;
        for (const std::string& n : f.nvtx) path += (path.empty() ? "" : " › ") + n;
        body += "<span class=\"nvtx-path\">in NVTX " + HtmlEscape(path) + "</span>";
      }
      if (!f.call_site.empty()) {
        body += "<span class=\"site\">called from " + HtmlEscape(f.call_site) + "</span>";
      }
      body += "</li>";
    }
    body += "</ol>";
    if (groups_.size() > top.size()) {
      body += HtmlNote(std::to_string(groups_.size() - top.size()) +
                       " more groups: profview findings lists them all.");
    }
    return HtmlSection(Id("findings"), "Top findings", body);
  }

  // The window of a detail view around a finding: the call and the work it waited for (from
  // the call that issued that work), or the device interval of a GPU finding; with margins.
  std::optional<std::pair<uint64_t, uint64_t>> DetailWindow(const Finding& f) const {
    uint64_t lo = whole_.origin_ns + f.host_start_ns;
    uint64_t hi = lo + f.host_duration_ns;
    if (f.host_duration_ns == 0 && f.correlation_id == 0) return std::nullopt;
    for (const Blamed& b : f.blamed) {
      const ReportFindings::Work* work = findings_.FindWork(b.correlation_id);
      if (work == nullptr) continue;
      lo = std::min(lo, work->first_start_ns);
      if (work->call.found) lo = std::min(lo, work->call.start_ns);
    }
    const uint64_t span = std::max<uint64_t>(hi - lo, 20'000);
    const uint64_t margin = span / 6;
    lo = lo > margin ? lo - margin : 0;
    hi += margin;
    if (hi - lo < 20'000) hi = lo + 20'000;
    return std::pair(std::max(lo, whole_.start_ns()), std::min(hi, scale_.t1_ns));
  }

  // Where the start-up finding ends (trace time), 0 without one.
  uint64_t StartUpEnd() const {
    for (const FindingGroup& g : groups_) {
      const Finding& f = g.worst;
      if (f.rule == RuleId::kStartUp) return whole_.origin_ns + f.host_start_ns + f.host_duration_ns;
    }
    return 0;
  }

  std::string Timeline() const {
    const uint64_t start_up_end = StartUpEnd();
    std::string body = HtmlTimeline::Legend();
    body += "<div class=\"figure\">" + timeline_done_.Svg(0, {.id = Id("timeline-svg"),
                                                              .max_marks = kOverviewMarks,
                                                              .highlight_start_ns = 0,
                                                              .highlight_end_ns = 0,
                                                              .highlight_label = "",
                                                              .start_up_end_ns = start_up_end,
                                                              .one_time = one_time_}) +
            "</div>";
    body += HtmlNote(
        "One lane per host thread (its NVTX ranges above its CUDA calls; the calls profview "
        "summary counts) and per GPU stream; threads that make no CUDA call, with NVTX ranges "
        "only, come after the streams. Lanes with many slices are drawn per pixel: the bar's "
        "height is the share of that pixel's time the lane was busy, its colour the kind of work "
        "that took most of it. Blocked calls (findings that waited for device work) are outlined "
        "in vermillion, with an arrow to the end of the work they waited for" +
        std::string(timeline_done_.marks() > kOverviewMarks
                        ? " (the " + std::to_string(kOverviewMarks) + " that lost most time)"
                        : "") +
        ". Hover over a slice for its name, duration and start." +
        std::string(start_up_end != 0 ? " Start-up (the start-up finding: paid once, left out "
                                         "of the GPU rules) is shaded grey."
                                       : "") +
        std::string(one_time_.empty() ? ""
                                      : " One-time work after it (an autotuner or a compiler, "
                                        "told from call stacks: paid once, its idle gaps left "
                                        "out of the GPU rules) is shaded purple."));
    if (active_) {
      body += "<h3>Where the GPU ran work: " + Dur(active_->t0_ns - whole_.origin_ns) + " to " +
              Dur(active_->t1_ns - whole_.origin_ns) + "</h3>";
      body += "<div class=\"figure\">" +
              timeline_done_.Svg(active_view_, {.id = Id("active-svg"),
                                                .max_marks = kOverviewMarks,
                                                .highlight_start_ns = 0,
                                                .highlight_end_ns = 0,
                                                .highlight_label = "",
                                                .start_up_end_ns = start_up_end,
                                                .one_time = one_time_}) +
              "</div>";
    }
    return HtmlSection(Id("timeline"), "Timeline", body);
  }

  std::string Details() const {
    std::string body;
    for (const Detailed& d : detailed_) {
      const size_t i = d.group;
      const Finding& f = groups_[i].worst;
      std::string heading = "[" + std::to_string(i + 1) + "] " + std::string(RuleName(f.rule));
      if (!f.api.empty()) heading += ": " + f.api;
      heading += " at " + Dur(f.host_start_ns) + ", " + Dur(f.blocked_ns) + " lost";
      body += "<h3 id=\"" + Id("detail-") + std::to_string(i + 1) + "\">" + HtmlEscape(heading) +
              "</h3>";
      const uint64_t start = whole_.origin_ns + f.host_start_ns;
      const HtmlTimeline::View view{
          .id = Id("detail-svg-") + std::to_string(i + 1),
          .max_marks = kDetailMarks,
          .highlight_start_ns = start,
          .highlight_end_ns = start + f.host_duration_ns,
          .highlight_label = f.api.empty() ? std::string(RuleName(f.rule)) : f.api,
          .start_up_end_ns = 0,  // (a detail view: the finding's own stretch, no bands)
          .one_time = {}};
      body += "<div class=\"figure\">" + timeline_done_.Svg(d.view, view) + "</div>";
    }
    if (detailed_.empty()) body = HtmlNote("No finding to show in detail.");
    return HtmlSection(Id("details"), "Around the top findings", body);
  }

  std::string UtilizationSection() const {
    std::string body;
    if (utilization_.empty()) {
      body = HtmlNote("No device work was recorded.");
    } else {
      for (const auto& [device, u] : utilization_) {
        DeviceUtilization d;
        d.device_id = device;
        d.slice_ns = u.bins->bin_ns();
        d.busy_ns = u.busy_ns;
        for (size_t i = 0; i < u.bins->size(); ++i) {
          d.busy.push_back(std::min(1.0, u.bins->Fraction(i)));
        }
        const std::string text =
            "GPU " + std::to_string(d.device_id) + " was busy " + Dur(d.busy_ns) + " (" +
            FormatPercent(static_cast<double>(d.busy_ns), static_cast<double>(whole_.window_ns())) +
            " of the trace)";
        body += "<div class=\"figure\">" + UtilizationChartSvg(d, scale_, text) + "</div>";
        body += HtmlNote(text + "; the share of each " + FormatDuration(d.slice_ns) +
                         " slice during which a kernel, copy, memset or graph ran.");
      }
    }
    return HtmlSection(Id("utilization"), "GPU utilisation over time", body);
  }

  std::string Memory() {
    std::string body;
    const std::vector<DeviceMemorySeries> series = memory_timeline_.Finish(ProcessTrace{}).devices;
    if (series.empty()) {
      body = HtmlNote("No device memory allocation was recorded.");
    } else {
      body += "<div class=\"figure\">" + MemoryChartSvg(series, scale_) + "</div>";
      const MemoryReport memory = memory_.Finish(whole_);
      for (const DeviceMemoryPeak& d : memory.devices) {
        if (d.peak_bytes == 0) continue;
        std::string line = "GPU " + std::to_string(d.device_id) + ": peak " +
                           FormatBytes(d.peak_bytes) + " at " + Dur(d.peak_time_ns) + " by " +
                           d.api + " (correlation " + std::to_string(d.correlation_id) +
                           ", thread " + std::to_string(d.thread_id) + "), " +
                           FormatBytes(d.end_bytes) + " in use at the end";
        if (!d.nvtx.empty()) {
          std::string path;
          for (const std::string& n : d.nvtx) path += (path.empty() ? "" : " › ") + n;
          line += ", in NVTX " + path;
        }
        body += HtmlNote(line + ".");
      }
      body += HtmlNote(
          "Device memory in use: device-kind allocations minus the frees matched to them by "
          "address, as profview memory counts it (see profview memory --help).");
    }
    // Only from a whole trace (windowable() is false with unified-memory counters).
    const std::vector<UvmMigrationSeries> migrations = UvmMigrationsOverTime(whole_.records);
    if (!migrations.empty()) {
      body += "<div class=\"figure\">" + MigrationChartSvg(migrations, scale_) + "</div>";
      body += HtmlNote(
          "Unified memory migrated since the trace start, per direction (the Migrations of "
          "profview memory's unified-memory section): each step is a migration's end. A lower "
          "bound: the driver drops the events CUPTI does not take in time, uncounted.");
    }
    return HtmlSection(Id("memory"), "Device memory in use over time", body);
  }

  std::string Bandwidth() const {
    std::string body;
    const std::vector<CopyBandwidth> rows = bandwidth_.Rows(whole_.header.devices);
    if (rows.empty()) {
      body = HtmlNote("No memory copy was recorded.");
    } else {
      body += "<div class=\"figure\">" + BandwidthChartSvg(rows, kPlotX0, kPlotWidth) + "</div>";
      body += HtmlNote(
          "Bars: bytes over summed copy time per kind (the Bandwidth of profview summary's copies "
          "table); black tick: the fastest single copy; dashed vermillion line: what the hardware "
          "allows, where the trace says (device-to-device copies: half the device memory's "
          "theoretical bandwidth from the trace header). The host link (PCIe, NVLink-C2C) and "
          "peer links are not recorded in the trace, so host and peer copies have no limit "
          "drawn.");
    }
    return HtmlSection(Id("bandwidth"), "Copy bandwidth by kind", body);
  }

  std::string SummaryTables() const {
    const Summary& s = summary_;
    const double trace = static_cast<double>(s.trace_ns);
    std::string body;
    if (s.host.empty()) {
      body += HtmlNote("No host-side activity was recorded.");
    } else {
      body += "<h3>Host-side activity: calling CUDA APIs took " + Dur(s.host_api_ns) + " (" +
              FormatPercent(static_cast<double>(s.host_api_ns), trace) + " of the trace)</h3>";
      body += SummaryTable(s.host, s.trace_ns, false, "host-table");
    }
    if (s.hidden_calls > 0) {
      body += HtmlNote(std::to_string(s.hidden_calls) + " calls to noisy or internal APIs (" +
                       Dur(s.hidden_ns) + ") are hidden; profview summary --raw shows them.");
    }
    if (s.device.empty()) {
      body += HtmlNote("No device-side activity was recorded.");
    } else {
      body += "<h3>Device-side activity: GPU was busy for " + Dur(s.gpu_busy_ns) + " (" +
              FormatPercent(static_cast<double>(s.gpu_busy_ns), trace) + " of the trace)</h3>";
      body += SummaryTable(s.device, s.trace_ns, false, "device-table");
    }
    if (!s.copies.empty()) {
      body += "<h3>" + HtmlEscape(CopiesHeadline(s.copies)) + "</h3>";
      body += HtmlTable(CopyRowCells(s.copies), "copies-table");
    }
    if (!s.nvtx.empty()) {
      body += "<h3>NVTX ranges (GPU time: device time of the work launched inside the range)</h3>";
      body += SummaryTable(s.nvtx, s.trace_ns, true, "nvtx-table");
    }
    return HtmlSection(Id("summary"), "Summary tables", body);
  }

  const bool overview_;
  const bool all_marks_;
  const ProcessTrace& whole_;
  const HtmlReportOptions& options_;
  const std::string prefix_;
  Summary summary_;  // by Render
  ReportFindings findings_;
  std::vector<ReportFindings::Blocked> blocked_;  // in FindFindings' order
  std::vector<FindingGroup> groups_;
  // Without all_marks: the blocked calls whose marks a view may draw (SelectMarks), and each
  // view's walk to check that it had enough; the work of the marks looked up in the second pass.
  struct MarkWalk {
    size_t needed = 0;
    bool exhausted = true;  // every blocked call the view could draw was taken
    std::vector<size_t> taken;
  };
  std::vector<bool> selected_;
  CorrLookup marks_lookup_;
  std::vector<MarkWalk> mark_walks_;
  HtmlTimelineBuilder timeline_;
  HtmlTimeline timeline_done_;  // by Render
  TimeScale scale_;
  std::optional<TimeScale> active_;  // the span where the GPU ran work, when it is short
  size_t active_view_ = 0;
  std::vector<Detailed> detailed_;  // the groups with a detail view
  std::vector<size_t> second_views_;
  std::map<size_t, TimeScale> detail_scales_;  // by view
  // First-pass figures.
  std::unordered_set<uint32_t> per_thread_streams_;
  bool any_op_ = false;
  uint64_t first_op_ns_ = UINT64_MAX, last_op_ns_ = 0;
  StreamingMerge busy_merge_;
  std::vector<Interval> device_busy_;
  std::map<uint32_t, Utilization> utilization_;  // by device
  CopyBandwidthAccumulator bandwidth_;
  MemoryTimelineBuilder memory_timeline_;
  MemoryAnalysis memory_;
  bool migrations_ = false;
  std::vector<HtmlTimeline::View::Band> one_time_;
};

}  // namespace

HtmlProcessPart RenderProcess(const ProcessTrace& trace, size_t number,
                              const HtmlReportOptions& options) {
  const TraceIndex index(trace);
  const StreamModel streams(index);
  ProcessPage page(trace, number, options, true, true);
  page.SetOneTime(FindStartUp(index).one_time);
  ReportFindings& findings = page.findings();
  StreamFindings(
      trace, index, streams, options.findings,
      [&](Finding&& f, uint64_t seq) { findings.Add(std::move(f), seq); }, findings.Filter());
  page.FirstPass(index, &streams);
  page.EndFirstPass();
  page.SecondPass(trace, WindowSpan{}, &index);
  return page.Render(Summarize(trace, SummaryOptions{.raw = options.raw, .by_caller = false, .call_sites = {}, .findings = false}));
}

std::expected<std::optional<HtmlProcessPart>, std::string> RenderProcessInWindows(
    const std::string& path, size_t number, const HtmlReportOptions& options, bool overview,
    const WindowLimits& limits) {
  // Every read in the report's windows: the findings' two and the page's second (with
  // plan->read_limits()), so that a late NVTX range the first pass notes arrives in the window
  // the second pass expects it in. Their size is the windowed findings' (2^15 records at most),
  // which the report's peak wants too: a window's records are held several times over and
  // workers + 1 windows are in flight, while the findings' digest, the blocked calls and the
  // summary streamed beside the reads are held too (10M, Release, two workers: 2^16 182 MB,
  // 2^15 153-160 MB, 2^14 160 MB and a tenth more CPU; bench/README.md).
  auto plan = WindowedFindings::Plan(path, options.findings, limits);
  if (!plan) return std::unexpected(plan.error());
  if (!plan->exact()) return std::nullopt;
  const ProcessTrace& whole = plan->whole();
  ProcessPage page(whole, number, options, overview, false);
  page.SetOneTime(plan->bounds().one_time);
  ReportFindings& findings = page.findings();
  // The summary streamed from the file (SummarizeFiles, as `profview summary` gives it) on a
  // thread of its own while the page reads the windows. Fed the windows on this side (its NVTX
  // ranges in the findings' second read, its records in the page's own read), the summariser
  // took the page's read 1.4 s of the 10M synthetic trace's ~1.4 s on the 16-core device host
  // (bench/README.md): its stages run one record after another.
  const SummaryOptions summary_options{
      .raw = options.raw, .by_caller = false, .call_sites = {}, .findings = false};
  auto summary_reading = std::async(std::launch::async, [&] {
    std::vector<std::string> ignored;  // the windowed read's warnings are given below
    return SummarizeFiles({path}, {}, summary_options, &ignored);
  });
  // The page's first pass rides on the findings' second read: each window as it is read (its
  // NVTX ranges as the file has them, each once), then once its findings are in (indexed, with
  // its stream model, its NVTX list holding the ranges open in it: MemoryAnalysis's).
  std::atomic<bool> exact{true};  // (the hooks below run on several threads)
  WindowedFindings::Hooks hooks;
  hooks.read = [&](const ProcessTrace& w, const WindowSpan& span) {
    if (!exact) return;
    const TraceRecords& r = w.records;
    if (!r.unified_memory_counters.empty()) {
      exact = false;  // the migrations chart needs the whole trace's counters
      return;
    }
    // A range arriving after a cut it starts before: the timeline draws it in the window it
    // starts in, in the second pass.
    for (const NvtxEvent& e : r.nvtx_events) {
      if (e.kind != NvtxKind::kMark && e.start_ns < span.from_ns) page.NoteLateNvtx(w, e);
    }
  };
  hooks.in_order = [&](const WindowedFindings::Window& w) {
    if (exact) page.FirstPassOwn(w.index, &w.model);
  };
  hooks.analysed = [&](const WindowedFindings::Window& w) {
    if (exact) page.LookUp(w.index);
  };
  auto ran = plan->Run([&](Finding&& f, uint64_t seq) { findings.Add(std::move(f), seq); },
                       findings.Filter(), hooks);
  if (!ran) return std::unexpected(ran.error());
  if (!exact || !findings.LookedUp()) return std::nullopt;
  // The findings' workers freed their windows into arenas of their own (ordered_pipeline.h):
  // give that memory back before the page's second read allocates its own on this thread.
  malloc_trim(0);
  page.EndFirstPass();
  WindowLimits windows = plan->read_limits();
  windows.call_stacks = false;  // (the same cuts)
  // Each read's windows indexed on worker threads (ordered_pipeline.h), then added up in window
  // order by the page's second pass, in the workers' turn.
  struct Window {
    ProcessTrace trace;
    WindowSpan span;
    bool indexed = true;  // whether a view or a mark needs its index
    std::unique_ptr<TraceIndex> index;
  };
  const auto take = [&](ProcessTrace& w, const WindowSpan& span) {
    return std::make_unique<Window>(
        Window{.trace = std::move(w), .span = span, .indexed = true, .index = nullptr});
  };
  const auto give_back = [&](std::unique_ptr<Window>& w) { w.reset(); };
  const auto add_up = [&](std::unique_ptr<Window>& w, PipelineTurn& turn) {
    if (w->indexed) w->index = std::make_unique<TraceIndex>(w->trace);
    turn([&] { page.SecondPass(w->trace, w->span, w->index.get()); });
  };
  std::expected<WindowedRead, std::string> again;
  {
    OrderedPipeline<std::unique_ptr<Window>> pipeline(AnalysisWorkers(), add_up, give_back);
    again = ReadInWindows(path, windows, [&](ProcessTrace& w, const WindowSpan& span) {
      // Windows outside every view, without a correlation id to look up, are not indexed.
      uint64_t from = UINT64_MAX, to = 0, lo = UINT64_MAX, hi = 0;
      for (const ApiCall& c : w.records.api_calls) {
        from = std::min(from, c.start_ns);
        to = std::max(to, std::max(c.start_ns, c.end_ns));
        lo = std::min(lo, c.correlation_id);
        hi = std::max(hi, c.correlation_id);
      }
      ForEachDeviceOp(w.records, [&](const DeviceOp& op, const auto&) {
        from = std::min(from, op.start_ns);
        to = std::max(to, std::max(op.start_ns, op.end_ns));
        lo = std::min(lo, op.correlation_id);
        hi = std::max(hi, op.correlation_id);
      });
      const bool indexed = from <= to && page.SecondPassSees(from, to, lo, hi);
      std::unique_ptr<Window> window = take(w, span);
      window->indexed = indexed;
      pipeline.Submit(std::move(window));
    });
    if (again) pipeline.Drain();
  }
  if (!again) return std::unexpected(again.error());
  if (!again->exact || again->windows != plan->windows() || !page.MarksComplete()) {
    return std::nullopt;
  }
  auto summary = summary_reading.get();
  if (!summary) return std::unexpected(summary.error());
  if (summary->parts.size() != 1) return std::nullopt;
  HtmlProcessPart part = page.Render(std::move(summary->parts.front()));
  part.warnings = plan->warnings();
  return part;
}

}  // namespace libprof::analysis
