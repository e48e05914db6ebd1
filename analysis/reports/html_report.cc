#include "analysis/reports/html_report.h"

#include <algorithm>

#include "analysis/metrics/summary.h"
#include "analysis/metrics/time_bins.h"
#include "analysis/model/units.h"
#include "analysis/reports/html_axes.h"
#include "analysis/reports/html_page.h"
#include "analysis/reports/html_process_report.h"
#include "analysis/reports/html_writer.h"

namespace libprof::analysis {
namespace {

constexpr double kPlotX0 = 250;
constexpr double kPlotWidth = 1000;
constexpr size_t kStripSlices = 250;
constexpr double kStripHeight = 16;

std::string Dur(uint64_t ns) { return FormatDuration(static_cast<double>(ns)); }

std::string ProcessName(const TraceHeader& h) {
  std::string title = "Process " + std::to_string(h.pid);
  if (!h.hostname.empty()) title += " on " + h.hostname;
  if (h.rank) title += ", rank " + std::to_string(*h.rank);
  return title;
}

std::string ProgramName(const std::vector<HtmlProcessPart>& parts) {
  for (const HtmlProcessPart& p : parts) {
    if (p.header.command_line.empty() || p.header.command_line.front().empty()) continue;
    const std::string& argv0 = p.header.command_line.front();
    const size_t slash = argv0.find_last_of('/');
    return slash == std::string::npos ? argv0 : argv0.substr(slash + 1);
  }
  return "trace";
}

// Per process, the GPU's busy share along the common timebase: one strip per rank, darker where
// busier, so that a late or idle rank stands out.
std::string RankStrips(const std::vector<HtmlProcessPart>& parts,
                       const std::vector<int64_t>& offsets, const TimeScale& scale) {
  const double bottom = 8 + kStripHeight * static_cast<double>(parts.size());
  const double width = scale.x0 + scale.width + 12;
  std::string svg = "<svg class=\"chart ranks\" viewBox=\"0 0 " + Coord(width) + " " +
                    Coord(bottom + 42) + "\" width=\"" + Coord(width) + "\" height=\"" +
                    Coord(bottom + 42) + "\">";
  svg += TimeAxisSvg(scale, bottom, true, 8);
  for (size_t p = 0; p < parts.size(); ++p) {
    const double y = 8 + kStripHeight * static_cast<double>(p);
    const HtmlProcessPart& part = parts[p];
    const TraceHeader& h = part.header;
    std::string label = h.rank ? "rank " + std::to_string(*h.rank) + " (pid " +
                                     std::to_string(h.pid) + ")"
                               : "pid " + std::to_string(h.pid);
    svg += "<g class=\"rank-strip\" data-pid=\"" + std::to_string(h.pid) + "\">";
    svg += "<text class=\"lane-label\" x=\"" + Coord(scale.x0 - 8) + "\" y=\"" + Coord(y + 12) +
           "\">" + HtmlEscape(label) + "</text>";
    svg += "<rect class=\"lane-bg" + std::string(p % 2 ? " odd" : "") + "\" x=\"" +
           Coord(scale.x0) + "\" y=\"" + Coord(y) + "\" width=\"" + Coord(scale.width) +
           "\" height=\"" + Coord(kStripHeight - 1) + "\"/>";
    TimeBins bins(scale.t0_ns, scale.t1_ns, kStripSlices);
    for (const Interval& i : part.device_busy) {
      bins.Add(static_cast<uint64_t>(static_cast<int64_t>(i.start_ns) + offsets[p]),
               static_cast<uint64_t>(static_cast<int64_t>(i.end_ns) + offsets[p]));
    }
    const double slice_px = scale.width / static_cast<double>(kStripSlices);
    for (size_t b = 0; b < bins.size(); ++b) {
      const double busy = std::min(1.0, bins.Fraction(b));
      if (busy <= 0) continue;
      svg += "<rect class=\"kernel\" x=\"" + Coord(scale.x0 + slice_px * b) + "\" y=\"" +
             Coord(y) + "\" width=\"" + Coord(slice_px + 0.2) + "\" height=\"" +
             Coord(kStripHeight - 1) + "\" fill-opacity=\"" + Fixed(0.15 + 0.85 * busy, 2) +
             "\"/>";
    }
    svg += "</g>";
  }
  return svg + "</svg>";
}

std::string Overview(const std::vector<HtmlProcessPart>& parts) {
  TableCells cells;
  cells.columns = {{"Rank", Align::kRight},      {"PID", Align::kRight},
                   {"Host", Align::kLeft},       {"Profiler ran for", Align::kRight},
                   {"CUDA APIs", Align::kRight}, {"GPU busy", Align::kRight},
                   {"Findings", Align::kRight},  {"API time lost", Align::kRight},
                   {"Dropped", Align::kRight},   {"Section", Align::kLeft}};
  for (size_t i = 0; i < parts.size(); ++i) {
    const HtmlProcessPart& p = parts[i];
    const double trace = static_cast<double>(p.trace_ns);
    cells.rows.push_back(
        {p.header.rank ? std::to_string(*p.header.rank) : "", std::to_string(p.header.pid),
         p.header.hostname, Dur(p.trace_ns),
         Dur(p.host_api_ns) + " (" + FormatPercent(static_cast<double>(p.host_api_ns), trace) + ")",
         Dur(p.gpu_busy_ns) + " (" + FormatPercent(static_cast<double>(p.gpu_busy_ns), trace) + ")",
         std::to_string(p.findings), Dur(p.host_lost_ns), std::to_string(p.dropped_records),
         ProcessName(p.header)});
  }
  std::string body = HtmlTable(cells, "ranks-table");
  // The strips on the common timebase of all processes (summary.h TimeOffsets).
  std::vector<const TraceHeader*> headers;
  for (const HtmlProcessPart& p : parts) headers.push_back(&p.header);
  const std::vector<int64_t> offsets = TimeOffsets(headers);
  int64_t lo = 0, hi = 0, origin = 0;
  for (size_t i = 0; i < parts.size(); ++i) {
    const int64_t s = static_cast<int64_t>(parts[i].start_ns) + offsets[i];
    const int64_t e = static_cast<int64_t>(parts[i].end_ns) + offsets[i];
    const int64_t o = static_cast<int64_t>(parts[i].origin_ns) + offsets[i];
    lo = i == 0 ? s : std::min(lo, s);
    hi = i == 0 ? e : std::max(hi, e);
    origin = i == 0 ? o : std::min(origin, o);
  }
  const TimeScale scale{.t0_ns = static_cast<uint64_t>(lo),
                        .t1_ns = static_cast<uint64_t>(std::max(hi, lo + 1)),
                        .origin_ns = static_cast<uint64_t>(origin),
                        .x0 = kPlotX0,
                        .width = kPlotWidth};
  body += "<h3>GPU busy per rank over time</h3><div class=\"figure\">" +
          RankStrips(parts, offsets, scale) + "</div>";
  body += HtmlNote(
      "Each strip is one process; the darker a slice, the larger the share of it during which any "
      "of its GPUs ran work. Time counts from the earliest recording start of all processes" +
      std::string(std::all_of(offsets.begin(), offsets.end(), [](int64_t o) { return o == 0; })
                      ? "."
                      : ", aligned on wall-clock time (the traces come from different hosts)."));
  return HtmlSection("overview", "Overview per rank", body);
}

}  // namespace

std::expected<HtmlReportStats, std::string> WriteHtmlReport(const std::vector<ProcessTrace>& traces,
                                                            const HtmlReportOptions& options,
                                                            std::ostream* out) {
  std::vector<HtmlProcessPart> parts;
  for (size_t i = 0; i < traces.size(); ++i) parts.push_back(RenderProcess(traces[i], i, options));
  return WriteHtmlReport(parts, out);
}

std::expected<HtmlReportStats, std::string> WriteHtmlReport(
    const std::vector<HtmlProcessPart>& parts, std::ostream* out) {
  HtmlReportStats stats{.processes = static_cast<uint32_t>(parts.size())};
  for (const HtmlProcessPart& p : parts) stats.findings += p.findings;
  std::string files;
  for (const HtmlProcessPart& p : parts) {
    if (files.find(p.path) == std::string::npos) files += (files.empty() ? "" : ", ") + p.path;
  }
  const std::string subtitle =
      std::to_string(parts.size()) + (parts.size() == 1 ? " process" : " processes") +
      " from " + files;
  *out << HtmlPageStart("profview report: " + ProgramName(parts), subtitle);
  if (parts.size() > 1) *out << Overview(parts);
  for (size_t i = 0; i < parts.size(); ++i) {
    // A page of several processes titles each one's part.
    *out << "<div class=\"process\" id=\"p" << i << "\">\n";
    if (parts.size() > 1) {
      *out << "<h2 class=\"process-title\">" << HtmlEscape(ProcessName(parts[i].header))
           << "</h2>\n";
    }
    *out << parts[i].html << "</div>\n";
  }
  *out << HtmlPageEnd(
      "Written by profview report. Times count from the recording start; durations, sizes and "
      "rates are printed as profview summary prints them (GB/s: 10^9 bytes per second).");
  out->flush();
  if (!*out) return std::unexpected("writing the report failed");
  return stats;
}

}  // namespace libprof::analysis
