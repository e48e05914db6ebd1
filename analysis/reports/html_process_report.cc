#include "analysis/reports/html_process_report.h"

#include <algorithm>

#include "analysis/metrics/copy_bandwidth.h"
#include "analysis/metrics/memory.h"
#include "analysis/metrics/memory_timeline.h"
#include "analysis/metrics/summary.h"
#include "analysis/metrics/unified_memory.h"
#include "analysis/metrics/utilization.h"
#include "analysis/model/stream_deps.h"
#include "analysis/model/trace_index.h"
#include "analysis/model/units.h"
#include "analysis/reports/findings_report.h"
#include "analysis/reports/html_charts.h"
#include "analysis/reports/html_page.h"
#include "analysis/reports/html_timeline.h"
#include "analysis/reports/html_writer.h"
#include "analysis/reports/summary_report.h"

namespace libprof::analysis {
namespace {

// The plot area of every time chart, so that the timeline and the charts line up.
constexpr double kPlotX0 = 250;
constexpr double kPlotWidth = 1000;
// Slices of the utilisation chart: 4 pixels each.
constexpr size_t kUtilizationSlices = 250;
// Blocked-call arrows on the whole-trace timeline (the rest are in the findings table).
constexpr size_t kOverviewMarks = 60;

std::string Dur(uint64_t ns) { return FormatDuration(static_cast<double>(ns)); }

std::string Stat(const std::string& value, const std::string& label, bool warn = false) {
  return "<div class=\"stat" + std::string(warn ? " warn" : "") + "\"><div class=\"value\">" +
         HtmlEscape(value) + "</div><div class=\"label\">" + HtmlEscape(label) + "</div></div>";
}

class ProcessRenderer {
 public:
  ProcessRenderer(const ProcessTrace& trace, size_t number, const HtmlReportOptions& options)
      : trace_(trace),
        options_(options),
        prefix_("p" + std::to_string(number)),
        summary_(Summarize(trace, SummaryOptions{.raw = options.raw})),
        index_(trace),
        streams_(index_),
        findings_(FindFindings(trace, index_, streams_, options.findings)),
        timeline_(index_, streams_, findings_, options.raw) {
    scale_ = {.t0_ns = trace.start_ns(),
              .t1_ns = std::max(trace.end_ns(), trace.start_ns() + 1),
              .origin_ns = trace.origin_ns,
              .x0 = kPlotX0,
              .width = kPlotWidth};
    // Programs often spend most of a short trace starting up: then the span where the GPU ran
    // work gets its own picture, at a scale where its slices can be told apart.
    const std::vector<DeviceOp>& ops = index_.device_ops();
    if (!ops.empty()) {
      uint64_t first = ops.front().start_ns, last = 0;
      for (const DeviceOp& op : ops) last = std::max(last, op.end_ns);
      const uint64_t margin = (last - first) / 20 + 1;
      TimeScale active = scale_;
      active.t0_ns = std::max(scale_.t0_ns, first > margin ? first - margin : 0);
      active.t1_ns = std::min(scale_.t1_ns, last + margin);
      if (active.t1_ns > active.t0_ns &&
          (active.t1_ns - active.t0_ns) * 2 < scale_.t1_ns - scale_.t0_ns) {
        active_ = active;
      }
    }
  }

  HtmlProcessPart Render(const std::string& title) {
    HtmlProcessPart part;
    part.pid = trace_.header.pid;
    part.hostname = trace_.header.hostname;
    part.rank = trace_.header.rank;
    part.trace_ns = summary_.trace_ns;
    part.host_api_ns = summary_.host_api_ns;
    part.gpu_busy_ns = summary_.gpu_busy_ns;
    part.dropped_records = summary_.dropped_records;
    part.findings = findings_.size();
    std::vector<Interval> busy;
    for (const DeviceOp& op : index_.device_ops()) busy.push_back({op.start_ns, op.end_ns});
    part.device_busy = MergeIntervals(std::move(busy));
    for (const Finding& f : findings_) {
      const RuleFamily family = Rule(f.rule).family;
      if (family == RuleFamily::kHostWait || family == RuleFamily::kHostCost) {
        part.host_lost_ns += f.blocked_ns;
      }
    }
    std::string html;
    if (!title.empty()) html += "<h2 class=\"process-title\">" + HtmlEscape(title) + "</h2>\n";
    // One after the other: Findings() groups the findings that Details() then draws.
    html += Headline();
    html += Findings();
    html += Timeline();
    html += Details();
    html += Utilization();
    html += Memory();
    html += Bandwidth();
    html += SummaryTables();
    part.html = "<div class=\"process\" id=\"" + prefix_ + "\">\n" + html + "</div>\n";
    return part;
  }

 private:
  std::string Id(const char* what) const { return prefix_ + "-" + what; }

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
    const TraceHeader& h = trace_.header;
    std::string about = "pid " + std::to_string(h.pid);
    if (!h.hostname.empty()) about += " on " + h.hostname;
    if (h.rank) about += ", rank " + std::to_string(*h.rank);
    for (const DeviceInfo& d : h.devices) about += "; GPU " + std::to_string(d.id) + " " + d.name;
    std::string command;
    for (const std::string& arg : h.command_line) command += (command.empty() ? "" : " ") + arg;
    if (!command.empty()) about += "; command: " + command;
    about += "; trace: " + trace_.path;
    if (s.dropped_records > 0) {
      about += ". " + std::to_string(s.dropped_records) +
               " records were dropped during capture: totals are lower bounds.";
    }
    body += HtmlNote(about);
    return HtmlSection(Id("headline"), "Headline", body);
  }

  std::string Findings() {
    FindingsReportContext context{.thresholds = options_.findings, .trace_ns = trace_.window_ns()};
    std::string body;
    if (findings_.empty()) {
      body = HtmlNote("No findings: no API call waited " + Dur(options_.findings.min_wait_ns) +
                      " or more for device work or synchronous copies, no GPU idle gap reached " +
                      Dur(options_.findings.gap_threshold_ns) +
                      " and no chunk of the trace was under the utilization threshold.");
      return HtmlSection(Id("findings"), "Top findings", body);
    }
    groups_ = GroupFindings(findings_);
    // The groups that get a detail view: the first ones (among those listed) whose window is a
    // close-up (at most 40% of the closest picture above it), not that picture again (a finding about the whole active span, or a
    // pattern over many calls, is already the whole-trace picture).
    for (size_t i = 0; i < groups_.size() && i < options_.top_findings &&
                       detailed_.size() < options_.detail_views;
         ++i) {
      const auto window = DetailWindow(groups_[i].worst);
      const TimeScale& widest = active_ ? *active_ : scale_;  // the closest picture drawn
      if (window && (window->second - window->first) * 5 <= (widest.t1_ns - widest.t0_ns) * 2) {
        detailed_.push_back(i);
      }
    }
    std::vector<FindingGroup> top(groups_.begin(),
                                  groups_.begin() + std::min(groups_.size(), options_.top_findings));
    body += "<p>" + HtmlEscape(FindingsHeadline(findings_, context)) + "</p>";
    body += HtmlTable(FindingGroupCells(top), "findings-table");
    body += "<ol class=\"findings\">";
    for (size_t i = 0; i < top.size(); ++i) {
      const Finding& f = top[i].worst;
      body += "<li id=\"" + Id("finding-") + std::to_string(i + 1) + "\"><span class=\"rule\">" +
              HtmlEscape(RuleName(f.rule)) + "</span>: " + HtmlEscape(f.explanation);
      if (top[i].count > 1) body += " (the longest of " + std::to_string(top[i].count) + ")";
      body += ".";
      if (std::find(detailed_.begin(), detailed_.end(), i) != detailed_.end()) {
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
    uint64_t lo = trace_.origin_ns + f.host_start_ns;
    uint64_t hi = lo + f.host_duration_ns;
    if (f.host_duration_ns == 0 && f.correlation_id == 0) return std::nullopt;
    for (const Blamed& b : f.blamed) {
      for (uint32_t op : index_.OpsOf(b.correlation_id)) {
        lo = std::min(lo, index_.device_ops()[op].start_ns);
        const int64_t call = index_.LaunchingCall(b.correlation_id);
        if (call >= 0) lo = std::min(lo, index_.records().api_calls[call].start_ns);
      }
    }
    const uint64_t span = std::max<uint64_t>(hi - lo, 20'000);
    const uint64_t margin = span / 6;
    lo = lo > margin ? lo - margin : 0;
    hi += margin;
    if (hi - lo < 20'000) hi = lo + 20'000;
    return std::pair(std::max(lo, trace_.start_ns()), std::min(hi, scale_.t1_ns));
  }

  std::string Timeline() const {
    std::string body = HtmlTimeline::Legend();
    body += "<div class=\"figure\">" + timeline_.Svg(scale_, {.id = Id("timeline-svg"),
                                    .max_marks = kOverviewMarks,
                                    .highlight_start_ns = 0,
                                    .highlight_end_ns = 0,
                                    .highlight_label = ""}) +
            "</div>";
    body += HtmlNote(
        "One lane per host thread (its NVTX ranges above its CUDA calls; the calls profview "
        "summary counts) and per GPU stream. Lanes with many slices are drawn per pixel: the bar's "
        "height is the share of that pixel's time the lane was busy, its colour the kind of work "
        "that took most of it. Blocked calls (findings that waited for device work) are outlined "
        "in vermillion, with an arrow to the end of the work they waited for" +
        std::string(timeline_.marks() > kOverviewMarks
                        ? " (the " + std::to_string(kOverviewMarks) + " that lost most time)"
                        : "") +
        ". Hover over a slice for its name, duration and start.");
    if (active_) {
      body += "<h3>Where the GPU ran work: " + Dur(active_->t0_ns - trace_.origin_ns) + " to " +
              Dur(active_->t1_ns - trace_.origin_ns) + "</h3>";
      body += "<div class=\"figure\">" +
              timeline_.Svg(*active_, {.id = Id("active-svg"),
                                       .max_marks = kOverviewMarks,
                                       .highlight_start_ns = 0,
                                       .highlight_end_ns = 0,
                                       .highlight_label = ""}) +
              "</div>";
    }
    return HtmlSection(Id("timeline"), "Timeline", body);
  }

  std::string Details() const {
    std::string body;
    size_t shown = 0;
    for (size_t i : detailed_) {
      const Finding& f = groups_[i].worst;
      const auto window = DetailWindow(f);
      TimeScale scale = scale_;
      scale.t0_ns = window->first;
      scale.t1_ns = std::max(window->second, window->first + 1);
      std::string heading = "[" + std::to_string(i + 1) + "] " + std::string(RuleName(f.rule));
      if (!f.api.empty()) heading += ": " + f.api;
      heading += " at " + Dur(f.host_start_ns) + ", " + Dur(f.blocked_ns) + " lost";
      body += "<h3 id=\"" + Id("detail-") + std::to_string(i + 1) + "\">" + HtmlEscape(heading) +
              "</h3>";
      const uint64_t start = trace_.origin_ns + f.host_start_ns;
      const HtmlTimeline::View view{
          .id = Id("detail-svg-") + std::to_string(i + 1),
          .max_marks = 40,
          .highlight_start_ns = start,
          .highlight_end_ns = start + f.host_duration_ns,
          .highlight_label = f.api.empty() ? std::string(RuleName(f.rule)) : f.api};
      body += "<div class=\"figure\">" + timeline_.Svg(scale, view) + "</div>";
      ++shown;
    }
    if (shown == 0) body = HtmlNote("No finding to show in detail.");
    return HtmlSection(Id("details"), "Around the top findings", body);
  }

  std::string Utilization() const {
    std::string body;
    const std::vector<DeviceUtilization> devices =
        UtilizationOverTime(index_, scale_.t0_ns, scale_.t1_ns, kUtilizationSlices);
    if (devices.empty()) {
      body = HtmlNote("No device work was recorded.");
    } else {
      for (const DeviceUtilization& d : devices) {
        const std::string text =
            "GPU " + std::to_string(d.device_id) + " was busy " + Dur(d.busy_ns) + " (" +
            FormatPercent(static_cast<double>(d.busy_ns), static_cast<double>(trace_.window_ns())) +
            " of the trace)";
        body += "<div class=\"figure\">" + UtilizationChartSvg(d, scale_, text) + "</div>";
        body += HtmlNote(text + "; the share of each " + FormatDuration(d.slice_ns) +
                         " slice during which a kernel, copy, memset or graph ran.");
      }
    }
    return HtmlSection(Id("utilization"), "GPU utilisation over time", body);
  }

  std::string Memory() const {
    std::string body;
    const std::vector<DeviceMemorySeries> series = DeviceMemoryOverTime(trace_.records);
    if (series.empty()) {
      body = HtmlNote("No device memory allocation was recorded.");
    } else {
      body += "<div class=\"figure\">" + MemoryChartSvg(series, scale_) + "</div>";
      const MemoryReport memory = AnalyzeMemory(trace_, index_, streams_);
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
    const std::vector<UvmMigrationSeries> migrations =
        UvmMigrationsOverTime(trace_.records);
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
    const std::vector<CopyBandwidth> rows = CopyBandwidthByKind(index_);
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
      body += HtmlTable(SummaryRowCells(s.host, s.trace_ns, false), "host-table");
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
      body += HtmlTable(SummaryRowCells(s.device, s.trace_ns, false), "device-table");
    }
    if (!s.copies.empty()) {
      body += "<h3>" + HtmlEscape(CopiesHeadline(s.copies)) + "</h3>";
      body += HtmlTable(CopyRowCells(s.copies), "copies-table");
    }
    if (!s.nvtx.empty()) {
      body += "<h3>NVTX ranges (GPU time: device time of the work launched inside the range)</h3>";
      body += HtmlTable(SummaryRowCells(s.nvtx, s.trace_ns, true), "nvtx-table");
    }
    return HtmlSection(Id("summary"), "Summary tables", body);
  }

  const ProcessTrace& trace_;
  const HtmlReportOptions& options_;
  const std::string prefix_;
  const Summary summary_;
  const TraceIndex index_;
  const StreamModel streams_;
  const std::vector<Finding> findings_;  // over index_ and streams_, built once for all
  const HtmlTimeline timeline_;
  TimeScale scale_;
  std::optional<TimeScale> active_;  // the span where the GPU ran work, when it is short
  std::vector<FindingGroup> groups_;  // set by Findings()
  std::vector<size_t> detailed_;      // the groups with a detail view, set by Findings()
};

}  // namespace

HtmlProcessPart RenderProcess(const ProcessTrace& trace, size_t number, const std::string& title,
                              const HtmlReportOptions& options) {
  ProcessRenderer renderer(trace, number, options);
  return renderer.Render(title);
}

}  // namespace libprof::analysis
