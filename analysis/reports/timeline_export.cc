#include "analysis/reports/timeline_export.h"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>
#include <unordered_map>

#include "analysis/metrics/memory_timeline.h"
#include "analysis/metrics/unified_memory.h"
#include "analysis/metrics/rank_skew.h"
#include "analysis/model/api_names.h"
#include "analysis/model/collectives.h"
#include "analysis/reports/chrome_trace_writer.h"
#include "analysis/model/kernel_names.h"
#include "analysis/model/stream_deps.h"
#include "analysis/metrics/summary.h"
#include "analysis/reports/timeline_args.h"
#include "analysis/reports/timeline_lanes.h"
#include "analysis/model/trace_index.h"
#include "analysis/model/units.h"

namespace libprof::analysis {
namespace {

// Track ids that cannot collide with OS thread ids (Linux's pid_max is at most 2^22), and
// process ids for processes whose pid another exported process already uses (traces of
// several hosts).
constexpr uint32_t kSyntheticTidBase = 1u << 30;
constexpr uint32_t kSyntheticPidBase = 1u << 22;

uint64_t EndOf(uint64_t start, uint64_t end) { return std::max(start, end); }

std::string Dur(uint64_t ns) { return FormatDuration(static_cast<double>(ns)); }

// Where a track sits in the process: host threads first (by tid), then GPU streams, then the
// tracks of GPU findings; `lane` > 0 for the extra tracks of partly overlapping slices.
enum class TrackGroup : uint8_t { kThread, kStream, kGpuFinding };
struct TrackKey {
  TrackGroup group = TrackGroup::kThread;
  uint32_t a = 0;  // thread id, or device id
  uint32_t b = 0;  // stream id, or rule number; 0 for threads
  uint32_t lane = 0;
  auto operator<=>(const TrackKey&) const = default;
};

struct HostItem {
  // Among slices with equal start and end, the range encloses the call; marks come last.
  enum Kind : uint8_t { kRange, kCall, kMark };
  uint32_t thread = 0;
  uint64_t start = 0;
  uint64_t end = 0;
  Kind kind = kCall;
  uint32_t record = 0;  // index into api_calls or nvtx_events
  uint32_t lane = 0;
};

bool ByTrackOrder(const HostItem& x, const HostItem& y) {
  return std::tie(x.thread, x.start, y.end, x.kind, x.record) <
         std::tie(y.thread, y.start, x.end, y.kind, y.record);
}

class ProcessExporter {
 public:
  ProcessExporter(const ProcessTrace& trace, uint32_t pid, int64_t shift_ns, uint64_t first_flow,
                  uint32_t sort_index, const ExportOptions& options, ChromeTraceWriter* writer)
      : trace_(trace),
        r_(trace.records),
        findings_(FindFindings(trace, options.findings)),
        index_(trace),
        call_sites_(trace, options.findings.call_sites),
        streams_(index_),
        pid_(pid),
        shift_ns_(shift_ns),
        next_flow_(first_flow),
        sort_index_(sort_index),
        options_(options),
        w_(*writer) {}

  // Writes every event of the process; returns the next unused flow id.
  uint64_t Run() {
    SelectCalls();
    AttachFindings();
    PlaceHostItems();
    PlaceDeviceOps();
    PlaceGpuFindings();
    AssignTrackIds();
    WriteMetadata();
    launch_flow_base_ = next_flow_;
    next_flow_ += index_.device_ops().size();
    for (const HostItem& item : host_items_) WriteHostItem(item);
    WriteStartEndRanges();
    for (uint32_t op : op_order_) WriteDeviceOp(op);
    for (const auto& [f, lane] : gpu_findings_) WriteGpuFinding(*f, lane);
    WriteMemoryCounters();
    WriteMigrationCounters();
    return next_flow_;
  }

 private:
  int64_t Ts(uint64_t t) const { return static_cast<int64_t>(t) + shift_ns_; }
  uint32_t Tid(const TrackKey& key) const { return tids_.at(key); }

  // The calls shown: as in `profview summary`, nested, noisy and internal calls only with --raw.
  void SelectCalls() {
    exported_.assign(r_.api_calls.size(), true);
    if (options_.raw) return;
    for (size_t i = 0; i < r_.api_calls.size(); ++i) {
      const ApiCall& c = r_.api_calls[i];
      exported_[i] = !(index_.IsNested(i) || IsNoiseCall(index_.ApiName(c), c, r_.contexts) ||
                       c.domain == ApiDomain::kInternalLaunch);
    }
  }

  void AttachFindings() {
    for (const Finding& f : findings_) {
      if (f.device_id) {
        gpu_findings_.push_back({&f, TrackKey{}});
        continue;
      }
      if (f.api.empty() || f.correlation_id == 0) continue;
      const int64_t call = index_.LaunchingCall(f.correlation_id);
      if (call < 0 || r_.api_calls[call].thread_id != f.thread_id) continue;
      call_findings_[static_cast<uint32_t>(call)].push_back(&f);
    }
  }

  void PlaceHostItems() {
    for (uint32_t i = 0; i < r_.api_calls.size(); ++i) {
      if (!exported_[i]) continue;
      const ApiCall& c = r_.api_calls[i];
      host_items_.push_back(
          {c.thread_id, c.start_ns, EndOf(c.start_ns, c.end_ns), HostItem::kCall, i});
    }
    for (uint32_t i = 0; i < r_.nvtx_events.size(); ++i) {
      const NvtxEvent& e = r_.nvtx_events[i];
      if (e.kind == NvtxKind::kStartEnd) {
        start_end_ranges_.push_back(i);
        continue;
      }
      const HostItem::Kind kind = e.kind == NvtxKind::kMark ? HostItem::kMark : HostItem::kRange;
      const uint64_t end = kind == HostItem::kMark ? e.start_ns : EndOf(e.start_ns, e.end_ns);
      host_items_.push_back({e.thread_id, e.start_ns, end, kind, i});
    }
    std::sort(host_items_.begin(), host_items_.end(), ByTrackOrder);
    std::map<uint32_t, LaneAssigner> lanes;
    for (HostItem& item : host_items_) {
      if (item.kind != HostItem::kMark) item.lane = lanes[item.thread].Place(item.start, item.end);
      tids_[{TrackGroup::kThread, item.thread, 0, item.lane}] = 0;
    }
    // Threads that only start or end a start/end range still get a named track.
    for (uint32_t i : start_end_ranges_) {
      const NvtxEvent& e = r_.nvtx_events[i];
      tids_[{TrackGroup::kThread, e.thread_id, 0, 0}] = 0;
      if (e.end_thread_id != 0) tids_[{TrackGroup::kThread, e.end_thread_id, 0, 0}] = 0;
    }
  }

  void PlaceDeviceOps() {
    const std::vector<DeviceOp>& ops = index_.device_ops();
    op_order_.resize(ops.size());
    for (uint32_t i = 0; i < ops.size(); ++i) op_order_[i] = i;
    std::sort(op_order_.begin(), op_order_.end(), [&](uint32_t x, uint32_t y) {
      const DeviceOp& a = ops[x];
      const DeviceOp& b = ops[y];
      return std::tie(a.device_id, a.stream_id, a.start_ns, b.end_ns, x) <
             std::tie(b.device_id, b.stream_id, b.start_ns, a.end_ns, y);
    });
    std::map<std::pair<uint32_t, uint32_t>, LaneAssigner> lanes;
    op_track_.resize(ops.size());
    for (uint32_t i : op_order_) {
      const DeviceOp& op = ops[i];
      const uint32_t lane =
          lanes[{op.device_id, op.stream_id}].Place(op.start_ns, EndOf(op.start_ns, op.end_ns));
      op_track_[i] = {TrackGroup::kStream, op.device_id, op.stream_id, lane};
      tids_[op_track_[i]] = 0;
    }
  }

  void PlaceGpuFindings() {
    std::sort(gpu_findings_.begin(), gpu_findings_.end(), [](const auto& x, const auto& y) {
      return std::tuple(*x.first->device_id, RuleName(x.first->rule), x.first->host_start_ns) <
             std::tuple(*y.first->device_id, RuleName(y.first->rule), y.first->host_start_ns);
    });
    std::map<std::pair<uint32_t, RuleId>, LaneAssigner> lanes;
    for (auto& [f, key] : gpu_findings_) {
      const uint64_t start = trace_.origin_ns + f->host_start_ns;
      const uint32_t lane =
          lanes[{*f->device_id, f->rule}].Place(start, start + f->host_duration_ns);
      key = {TrackGroup::kGpuFinding, *f->device_id, RuleNumber(f->rule), lane};
      tids_[key] = 0;
    }
  }

  uint32_t RuleNumber(RuleId rule) {
    auto [it, inserted] = rule_numbers_.try_emplace(rule, rule_numbers_.size());
    if (inserted) numbered_rules_.push_back(rule);
    return it->second;
  }

  void AssignTrackIds() {
    uint32_t next = kSyntheticTidBase;
    for (auto& [key, tid] : tids_) {
      tid = key.group == TrackGroup::kThread && key.lane == 0 ? key.a : next++;
    }
  }

  std::string TrackName(const TrackKey& key) const {
    std::string name;
    switch (key.group) {
      case TrackGroup::kThread:
        name = key.a == trace_.header.pid ? "main thread" : "thread " + std::to_string(key.a);
        break;
      case TrackGroup::kStream:
        name = "GPU " + std::to_string(key.a) + " stream " + std::to_string(key.b) + " (" +
               ToString(streams_.ClassOf(key.b)) + ")";
        break;
      case TrackGroup::kGpuFinding:
        name = "GPU " + std::to_string(key.a) +
               " findings: " + std::string(RuleName(numbered_rules_[key.b]));
        break;
    }
    if (key.lane > 0) name += " (overlapping " + std::to_string(key.lane) + ")";
    return name;
  }

  void WriteMetadata() {
    const TraceHeader& h = trace_.header;
    std::string name = "process";
    if (!h.command_line.empty() && !h.command_line.front().empty()) {
      const std::string& argv0 = h.command_line.front();
      name = argv0.substr(
          argv0.find_last_of('/') == std::string::npos ? 0 : argv0.find_last_of('/') + 1);
    }
    if (h.rank) name = "rank " + std::to_string(*h.rank) + ": " + name;
    if (pid_ != h.pid) name += " (pid " + std::to_string(h.pid) + ")";
    EventArgs name_args;
    name_args.Add("name", name);
    w_.Write(ChromeEvent::Metadata("process_name", pid_, 0, &name_args));

    std::string labels = "pid " + std::to_string(h.pid);
    if (!h.hostname.empty()) labels += ", host " + h.hostname;
    for (const DeviceInfo& d : h.devices) {
      labels += ", GPU " + std::to_string(d.id) + " " + d.name;
    }
    std::string command;
    for (const std::string& arg : h.command_line) command += (command.empty() ? "" : " ") + arg;
    if (!command.empty()) labels += ", command: " + command;
    labels += ", trace: " + trace_.path;
    EventArgs label_args;
    label_args.Add("labels", labels);
    w_.Write(ChromeEvent::Metadata("process_labels", pid_, 0, &label_args));
    EventArgs sort_args;
    sort_args.Add("sort_index", sort_index_);
    w_.Write(ChromeEvent::Metadata("process_sort_index", pid_, 0, &sort_args));

    uint32_t sort = 0;
    for (const auto& [key, tid] : tids_) {
      EventArgs thread_args;
      thread_args.Add("name", TrackName(key));
      w_.Write(ChromeEvent::Metadata("thread_name", pid_, tid, &thread_args));
      EventArgs order;
      order.Add("sort_index", sort++);
      w_.Write(ChromeEvent::Metadata("thread_sort_index", pid_, tid, &order));
    }
  }

  void WriteHostItem(const HostItem& item) {
    const uint32_t tid = Tid({TrackGroup::kThread, item.thread, 0, item.lane});
    switch (item.kind) {
      case HostItem::kCall:
        WriteCall(item.record, tid);
        break;
      case HostItem::kRange: {
        const NvtxEvent& e = r_.nvtx_events[item.record];
        const EventArgs args = NvtxRangeArgs(index_, e);
        w_.Write(ChromeEvent::Complete(trace_.Str(e.message_id), "nvtx", pid_, tid, Ts(item.start),
                                       static_cast<int64_t>(item.end - item.start))
                     .WithArgs(&args));
        break;
      }
      case HostItem::kMark: {
        const NvtxEvent& e = r_.nvtx_events[item.record];
        const EventArgs args = NvtxRangeArgs(index_, e);
        w_.Write(ChromeEvent::Instant(trace_.Str(e.message_id), "nvtx", pid_, tid, Ts(item.start))
                     .WithArgs(&args));
        break;
      }
    }
  }

  void WriteCall(uint32_t i, uint32_t tid) {
    const ApiCall& c = r_.api_calls[i];
    const std::string& name = index_.ApiName(c);
    EventArgs args = ApiCallArgs(index_, call_sites_, i);
    const auto found = call_findings_.find(i);
    const std::vector<const Finding*>* findings =
        found == call_findings_.end() ? nullptr : &found->second;
    if (findings != nullptr) AddFindingArgs(*findings, &args);
    const int64_t dur = static_cast<int64_t>(EndOf(c.start_ns, c.end_ns) - c.start_ns);
    std::string category = c.domain == ApiDomain::kDriver           ? "cuda_driver"
                           : c.domain == ApiDomain::kInternalLaunch ? "cuda_internal"
                                                                    : "cuda_runtime";
    if (findings != nullptr) category += ",finding";
    w_.Write(ChromeEvent::Complete(name, category, pid_, tid, Ts(c.start_ns), dur)
                 .WithColor(findings != nullptr ? "terrible" : "")
                 .WithArgs(&args));
    // Flows to the device work this call issued (only from the outermost call of a correlation
    // id, the one the device work's flow end is matched with).
    if (index_.LaunchingCall(c.correlation_id) == static_cast<int64_t>(i)) {
      for (uint32_t op : index_.OpsOf(c.correlation_id)) {
        w_.Write(ChromeEvent::FlowStart("launch", "launch", pid_, tid, Ts(c.start_ns),
                                        launch_flow_base_ + op));
      }
    }
    if (findings == nullptr) return;
    for (const Finding* f : *findings) WriteFindingMarks(*f, c, tid);
  }

  // An instant on the call's track saying what the finding is; for waits, a flow from each
  // blamed operation to the call, written after that operation's slice (see WriteDeviceOp).
  void WriteFindingMarks(const Finding& f, const ApiCall& c, uint32_t tid) {
    const bool wait = Rule(f.rule).family == RuleFamily::kHostWait;
    std::string title;
    if (wait) {
      title = f.api + " blocked " + Dur(f.blocked_ns);
      if (!f.blamed.empty()) title += " waiting for " + AbbreviateName(f.blamed.front().name, kProseNameChars);
    } else {
      title = f.api + ": " + std::string(RuleName(f.rule)) + " (" + Dur(f.blocked_ns) + ")";
    }
    EventArgs args;
    args.Add("rule", RuleName(f.rule))
        .Add("blocked_ns", f.blocked_ns)
        .Add("explanation", f.explanation);
    w_.Write(ChromeEvent::Instant(title, "finding", pid_, tid, Ts(c.start_ns)).WithArgs(&args));
    if (!wait) return;
    const std::vector<DeviceOp>& ops = index_.device_ops();
    const uint64_t call_end = EndOf(c.start_ns, c.end_ns);
    for (const Blamed& b : f.blamed) {
      const auto blamed_ops = index_.OpsOf(b.correlation_id);
      if (b.correlation_id == 0 || blamed_ops.empty()) continue;
      // The operation of the blamed work that finished last: the one the call waited for.
      const uint32_t op =
          *std::max_element(blamed_ops.begin(), blamed_ops.end(),
                            [&](uint32_t x, uint32_t y) { return ops[x].end_ns < ops[y].end_ns; });
      // The arrow ends where the work ended, inside the call (strictly before its end, so that
      // it binds to the call's slice).
      const uint64_t last_inside = call_end > c.start_ns ? call_end - 1 : c.start_ns;
      waits_by_op_[op].push_back(
          {next_flow_++, tid, std::clamp(ops[op].end_ns, c.start_ns, last_inside)});
    }
  }

  // Start/end ranges may overlap freely and end on another thread: async events of the process.
  void WriteStartEndRanges() {
    for (uint32_t i : start_end_ranges_) {
      const NvtxEvent& e = r_.nvtx_events[i];
      const EventArgs args = NvtxRangeArgs(index_, e);
      const uint64_t id = next_flow_++;
      const std::string& name = trace_.Str(e.message_id);
      w_.Write(ChromeEvent::AsyncBegin(name, "nvtx", pid_, e.thread_id, Ts(e.start_ns), id)
                   .WithArgs(&args));
      w_.Write(ChromeEvent::AsyncEnd(name, "nvtx", pid_,
                                     e.end_thread_id != 0 ? e.end_thread_id : e.thread_id,
                                     Ts(EndOf(e.start_ns, e.end_ns)), id));
    }
  }

  void WriteDeviceOp(uint32_t i) {
    const DeviceOp& op = index_.device_ops()[i];
    const uint32_t tid = Tid(op_track_[i]);
    const EventArgs args = DeviceOpArgs(index_, op);
    const std::string& full = index_.OpName(op);
    const std::string name = op.kind == DeviceOpKind::kKernel ? AbbreviateName(full, kProseNameChars) : full;
    w_.Write(ChromeEvent::Complete(name, ToString(op.kind), pid_, tid, Ts(op.start_ns),
                                   static_cast<int64_t>(op.duration()))
                 .WithArgs(&args));
    const int64_t call = index_.LaunchingCall(op.correlation_id);
    if (call >= 0 && exported_[call]) {
      w_.Write(ChromeEvent::FlowEnd("launch", "launch", pid_, tid, Ts(op.start_ns),
                                    launch_flow_base_ + i));
    }
    WriteWaitFlows(i, tid);
  }

  void WriteWaitFlows(uint32_t op, uint32_t op_tid) {
    const auto found = waits_by_op_.find(op);
    if (found == waits_by_op_.end()) return;
    const int64_t start = Ts(index_.device_ops()[op].start_ns);
    for (const WaitFlow& wait : found->second) {
      w_.Write(ChromeEvent::FlowStart("wait", "wait", pid_, op_tid, start, wait.id));
      w_.Write(ChromeEvent::FlowEnd("wait", "wait", pid_, wait.call_tid, Ts(wait.at_ns), wait.id));
    }
  }

  void WriteGpuFinding(const Finding& f, const TrackKey& key) {
    EventArgs args;
    args.Add("rule", RuleName(f.rule)).Add("explanation", f.explanation);
    DetailFields(f.details, [&](std::string_view key, const auto& value, FieldUse use) {
      if (use == FieldUse::kTimeline) args.Add(key, value);
    });
    const std::optional<double> utilization = DetailsUtilization(f.details);
    const std::string name = utilization ? FormatPercent(*utilization, 1.0) + " busy"
                                         : Dur(f.host_duration_ns) + " idle";
    w_.Write(ChromeEvent::Complete(name, "finding", pid_, Tid(key),
                                   Ts(trace_.origin_ns + f.host_start_ns),
                                   static_cast<int64_t>(f.host_duration_ns))
                 .WithColor("terrible")
                 .WithArgs(&args));
  }

  // Device memory in use over time (memory_timeline.h): one counter track per device, a value at
  // each change (Perfetto draws it as a step line).
  void WriteMemoryCounters() {
    const MemoryTimeline timeline = BuildMemoryTimeline(trace_, index_);
    for (const DeviceMemorySeries& d : timeline.devices) {
      const std::string name = "GPU " + std::to_string(d.device_id) + " memory in use";
      for (const MemoryStep& step : d.steps) {
        EventArgs values;
        values.Add("bytes", step.bytes);
        w_.Write(ChromeEvent::Counter(name, pid_, Ts(step.time_ns), &values));
      }
    }
  }

  // Unified memory migrated since the start, one counter track per direction (the HTML report's
  // chart, unified_memory.h): a migration's bytes count at its end.
  void WriteMigrationCounters() {
    for (const UvmMigrationSeries& series : UvmMigrationsOverTime(r_)) {
      const std::string name =
          "unified memory migrated " + UvmDirection(series.src_device_id, series.dst_device_id);
      for (const UvmMigrationSeries::Step& step : series.steps) {
        EventArgs values;
        values.Add("bytes", step.bytes);
        w_.Write(ChromeEvent::Counter(name, pid_, Ts(step.time_ns), &values));
      }
    }
  }

  const ProcessTrace& trace_;
  const TraceRecords& r_;
  // Before index_: the analysis builds its own index, which is then gone before ours is built.
  const std::vector<Finding> findings_;
  const TraceIndex index_;
  const CallSites call_sites_;
  const StreamModel streams_;
  const uint32_t pid_;
  const int64_t shift_ns_;
  uint64_t next_flow_;
  uint64_t launch_flow_base_ = 0;
  const uint32_t sort_index_;
  const ExportOptions& options_;
  ChromeTraceWriter& w_;

  std::vector<bool> exported_;  // per API call
  std::unordered_map<uint32_t, std::vector<const Finding*>> call_findings_;
  std::vector<std::pair<const Finding*, TrackKey>> gpu_findings_;
  std::map<RuleId, uint32_t> rule_numbers_;  // in the order of first use
  std::vector<RuleId> numbered_rules_;
  std::vector<HostItem> host_items_;
  std::vector<uint32_t> start_end_ranges_;
  std::vector<uint32_t> op_order_;  // device ops by track, then start
  std::vector<TrackKey> op_track_;  // per device op
  struct WaitFlow {
    uint64_t id;
    uint32_t call_tid;
    uint64_t at_ns;  // where the arrow ends, inside the waiting call
  };
  std::unordered_map<uint32_t, std::vector<WaitFlow>> waits_by_op_;  // by blamed device op
  std::map<TrackKey, uint32_t> tids_;  // every track of the process, in display order
};

// The ranks of a job (traces with NCCL collectives, two or more): their clocks put on the
// reference rank's by the collectives' common ends (rank_skew.h), which is closer than the
// wall clock of different hosts (hundreds of µs apart). `offsets` are TimeOffsets'; a rank's
// becomes the reference's minus its own offset from it. Returns the alignment's residual, or -1
// when nothing was aligned.
int64_t AlignRanks(const std::vector<ProcessTrace>& traces, std::vector<int64_t>* offsets) {
  std::vector<size_t> ranks;
  for (size_t i = 0; i < traces.size(); ++i) {
    if (HasNcclRanges(traces[i])) ranks.push_back(i);
  }
  if (ranks.size() < 2) return -1;
  std::vector<ProcessCollectives> collectives;
  for (size_t i : ranks) collectives.push_back(ExtractCollectives(TraceIndex(traces[i])));
  const RankSkewReport skew = AnalyzeRankSkew(collectives, 0);
  size_t reference = ranks.size();
  for (const RankClock& c : skew.clocks) {
    if (c.aligned && c.offset_ns == 0 && c.instances > 0 && reference == ranks.size()) {
      reference = c.process;
    }
  }
  if (reference == ranks.size()) return -1;
  const int64_t base = (*offsets)[ranks[reference]];
  bool any = false;
  for (const RankClock& c : skew.clocks) {
    if (!c.aligned || c.instances == 0) continue;
    (*offsets)[ranks[c.process]] = base - c.offset_ns;
    any |= c.process != reference;
  }
  return any ? static_cast<int64_t>(skew.max_residual_ns) : -1;
}

}  // namespace

std::expected<ExportStats, std::string> ExportTimeline(const std::vector<ProcessTrace>& traces,
                                                       const ExportOptions& options,
                                                       std::ostream* out) {
  std::vector<int64_t> offsets = TimeOffsets(traces);
  const int64_t rank_residual = AlignRanks(traces, &offsets);
  // The common origin: the earliest recording start on the common timebase.
  int64_t origin = 0;
  for (size_t i = 0; i < traces.size(); ++i) {
    const int64_t start = static_cast<int64_t>(traces[i].origin_ns) + offsets[i];
    if (i == 0 || start < origin) origin = start;
  }
  const bool same_clock =
      std::all_of(offsets.begin(), offsets.end(), [](int64_t o) { return o == 0; });
  EventArgs other;
  other.Add("generator", "profview export")
      .Add("time_origin", same_clock ? "earliest recording start (CLOCK_MONOTONIC)"
                                     : "earliest recording start (wall clock, Unix time)")
      .Add("time_origin_ns", origin)
      .Add("processes", static_cast<uint64_t>(traces.size()));
  if (rank_residual >= 0) {
    other.Add("rank_clocks", "aligned on the ends of matched NCCL collectives")
        .Add("rank_alignment_residual_ns", static_cast<uint64_t>(rank_residual));
  }
  ChromeTraceWriter writer(out, other);
  std::set<uint32_t> used_pids;
  uint32_t next_synthetic_pid = kSyntheticPidBase;
  uint64_t next_flow = 1;
  for (size_t i = 0; i < traces.size(); ++i) {
    uint32_t pid = traces[i].header.pid;
    if (!used_pids.insert(pid).second) {
      while (used_pids.count(next_synthetic_pid) != 0) ++next_synthetic_pid;
      pid = next_synthetic_pid++;
      used_pids.insert(pid);
    }
    ProcessExporter exporter(traces[i], pid, offsets[i] - origin, next_flow,
                             static_cast<uint32_t>(i), options, &writer);
    next_flow = exporter.Run();
    if (!*out) break;
  }
  if (!writer.Finish()) return std::unexpected("writing the timeline failed");
  return ExportStats{.events = writer.events(), .processes = static_cast<uint32_t>(traces.size())};
}

}  // namespace libprof::analysis
