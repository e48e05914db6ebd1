#include "analysis/reports/html_charts.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "analysis/model/units.h"
#include "analysis/reports/html_writer.h"

namespace libprof::analysis {
namespace {

constexpr double kChartTop = 22;  // room for the value axis caption
constexpr double kAxisHeight = 42;
// The series colours of several devices: the palette's order.
constexpr const char* kDeviceColors[] = {palette::kKernel, palette::kHtoD, palette::kDtoD,
                                         palette::kMemset, palette::kDtoH, palette::kFinding};

std::string SvgOpen(const std::string& css, double width, double height,
                    const std::string& attributes) {
  return "<svg class=\"chart " + css + "\" viewBox=\"0 0 " + Coord(width) + " " + Coord(height) +
         "\" width=\"" + Coord(width) + "\" height=\"" + Coord(height) + "\"" + attributes + ">";
}

struct ByteUnit {
  double bytes;
  const char* name;
};
ByteUnit ByteUnitFor(uint64_t bytes) {
  if (bytes >= (uint64_t{1} << 30)) return {1073741824.0, "GiB"};
  if (bytes >= (uint64_t{1} << 20)) return {1048576.0, "MiB"};
  if (bytes >= 1024) return {1024.0, "KiB"};
  return {1.0, "B"};
}

// A rate with the digits it needs: "1234 GB/s", "12.3 GB/s", "0.45 GB/s", "0.0028 GB/s".
std::string GbPerSText(double gbs) {
  if (gbs >= 100) return Fixed(gbs, 0) + " GB/s";
  if (gbs >= 10) return Fixed(gbs, 1) + " GB/s";
  if (gbs >= 0.1 || gbs <= 0) return Fixed(gbs, 2) + " GB/s";
  char buffer[32];
  std::snprintf(buffer, sizeof(buffer), "%.2g GB/s", gbs);
  return buffer;
}

}  // namespace

std::string UtilizationChartSvg(const DeviceUtilization& device, const TimeScale& scale,
                                const std::string& busy_text) {
  const double plot_h = 64;
  const double bottom = kChartTop + plot_h;
  const double height = bottom + kAxisHeight;
  const double width = scale.x0 + scale.width + 12;
  std::string svg = SvgOpen("utilization", width, height,
                            " data-device=\"" + std::to_string(device.device_id) + "\"");
  svg += ValueAxisSvg(scale.x0, kChartTop, bottom, scale.width, 0, 100, {0, 50, 100},
                      "GPU " + std::to_string(device.device_id) + " busy (%)");
  // A step line over the slices, closed to the bottom for the area under it.
  std::string line;
  const size_t n = device.busy.size();
  for (size_t i = 0; i < n; ++i) {
    const double x1 = scale.x0 + scale.width * static_cast<double>(i) / static_cast<double>(n);
    const double x2 = scale.x0 + scale.width * static_cast<double>(i + 1) / static_cast<double>(n);
    const double y = bottom - device.busy[i] * plot_h;
    line += (i == 0 ? "M" : "L") + Coord(x1) + " " + Coord(y) + "L" + Coord(x2) + " " + Coord(y);
  }
  const char* color = kDeviceColors[0];
  svg += "<path class=\"area\" fill=\"" + std::string(color) + "\" d=\"" + line + "L" +
         Coord(scale.x0 + scale.width) + " " + Coord(bottom) + "L" + Coord(scale.x0) + " " +
         Coord(bottom) + "z\"/>";
  svg += "<path class=\"series\" stroke=\"" + std::string(color) + "\" data-busy-ns=\"" +
         std::to_string(device.busy_ns) + "\" d=\"" + line + "\"><title>" +
         HtmlEscape(busy_text) + "; each step is " + FormatDuration(device.slice_ns) +
         "</title></path>";
  svg += TimeAxisSvg(scale, bottom, true);
  return svg + "</svg>";
}

namespace {

// The frame of a chart of byte counts over time (memory in use, bytes migrated): a plot of
// kPlotHeight under a value axis in the unit of the largest count.
struct BytesChart {
  static constexpr double kPlotHeight = 120;
  double bottom = kChartTop + kPlotHeight;
  ByteUnit unit;
  double top_value;
  std::string svg;  // the svg opened, with its value axis

  BytesChart(const char* css, const TimeScale& scale, uint64_t largest_bytes,
             const std::string& caption)
      : unit(ByteUnitFor(largest_bytes)),
        top_value(std::max(1.0, static_cast<double>(largest_bytes) / unit.bytes * 1.1)),
        svg(SvgOpen(css, scale.x0 + scale.width + 12, bottom + kAxisHeight, "")) {
    svg += ValueAxisSvg(scale.x0, kChartTop, bottom, scale.width, 0, top_value,
                        NiceTicks(0, top_value, 4), caption + " (" + unit.name + ")");
  }
  double Y(uint64_t bytes) const {
    return bottom - static_cast<double>(bytes) / unit.bytes / top_value * kPlotHeight;
  }
  // A step line through `steps` (time order, each with time_ns and bytes): flat until each step,
  // then straight up or down; steps closer than a pixel are drawn as one column. *last_bytes: the
  // level of the last step drawn.
  template <typename Steps>
  std::string StepLine(const Steps& steps, const TimeScale& scale, uint64_t* last_bytes) const {
    const double x_end = scale.x0 + scale.width;
    std::string path = "M" + Coord(scale.x0) + " " + Coord(Y(0));
    double last_x = scale.x0;
    *last_bytes = 0;
    for (const auto& step : steps) {
      if (step.time_ns >= scale.t1_ns) break;
      const double x = std::clamp(scale.X(step.time_ns), scale.x0, x_end);
      if (x - last_x >= 0.5) path += "H" + Coord(x);
      path += "V" + Coord(Y(step.bytes));
      last_x = std::max(last_x, x);
      *last_bytes = step.bytes;
    }
    return path + "H" + Coord(x_end);
  }
  std::string Close(const TimeScale& scale) const {
    return svg + TimeAxisSvg(scale, bottom, true) + "</svg>";
  }
};

}  // namespace

std::string MemoryChartSvg(const std::vector<DeviceMemorySeries>& devices,
                           const TimeScale& scale) {
  uint64_t peak = 0;
  for (const DeviceMemorySeries& d : devices) peak = std::max(peak, d.peak_bytes);
  BytesChart chart("memory", scale, peak, "device memory in use");
  const double x_end = scale.x0 + scale.width;
  for (size_t d = 0; d < devices.size(); ++d) {
    const DeviceMemorySeries& s = devices[d];
    uint64_t level = 0;
    const std::string path = chart.StepLine(s.steps, scale, &level);
    const char* color = kDeviceColors[d % std::size(kDeviceColors)];
    chart.svg += "<path class=\"series\" stroke=\"" + std::string(color) + "\" data-device=\"" +
                 std::to_string(s.device_id) + "\" data-peak-bytes=\"" +
                 std::to_string(s.peak_bytes) + "\" d=\"" + path + "\"><title>GPU " +
                 std::to_string(s.device_id) + ": peak " + FormatBytes(s.peak_bytes) + ", " +
                 FormatBytes(level) + " at the end</title></path>";
    chart.svg += "<text x=\"" + Coord(x_end - 4) + "\" y=\"" + Coord(kChartTop + 12 + 14 * d) +
                 "\" class=\"value-label\" text-anchor=\"end\" fill=\"" + color + "\">GPU " +
                 std::to_string(s.device_id) + " peak " + FormatBytes(s.peak_bytes) + "</text>";
  }
  return chart.Close(scale);
}

std::string MigrationChartSvg(const std::vector<UvmMigrationSeries>& directions,
                              const TimeScale& scale) {
  uint64_t most = 0;
  for (const UvmMigrationSeries& s : directions) most = std::max(most, s.total_bytes);
  BytesChart chart("migrations", scale, most, "unified memory migrated since the start");
  for (size_t d = 0; d < directions.size(); ++d) {
    const UvmMigrationSeries& s = directions[d];
    const std::string direction = UvmDirection(s.src_device_id, s.dst_device_id);
    uint64_t level = 0;
    const std::string path = chart.StepLine(s.steps, scale, &level);
    const char* color = kDeviceColors[(d + 1) % std::size(kDeviceColors)];
    chart.svg += "<path class=\"series\" stroke=\"" + std::string(color) +
                 "\" data-direction=\"" + HtmlEscape(direction) + "\" data-bytes=\"" +
                 std::to_string(s.total_bytes) + "\" d=\"" + path + "\"><title>" +
                 HtmlEscape(direction) + ": " + FormatBytes(s.total_bytes) +
                 " migrated</title></path>";
    chart.svg += "<text x=\"" + Coord(scale.x0 + 6) + "\" y=\"" +
                 Coord(kChartTop + 12 + 14 * d) + "\" class=\"value-label\" fill=\"" + color +
                 "\">" + HtmlEscape(direction) + " " + FormatBytes(s.total_bytes) + "</text>";
  }
  return chart.Close(scale);
}

std::string CopyKindLabel(const CopyBandwidth& row) {
  return std::string(ToString(row.copy_kind)) + " " + ToString(row.src_kind) + " → " +
         ToString(row.dst_kind);
}

std::string BandwidthChartSvg(const std::vector<CopyBandwidth>& rows, double x0, double width) {
  const double row_h = 24;
  const double bottom = kChartTop + row_h * static_cast<double>(rows.size());
  const double height = bottom + kAxisHeight;
  // Room on the right for the figures beside the bars.
  const double plot_w = width - 300;
  double top = 1e-9;
  for (const CopyBandwidth& r : rows) {
    top = std::max({top, r.best_gb_per_s, r.limit_gb_per_s.value_or(0.0)});
  }
  std::vector<double> ticks = NiceTicks(0, top * 1.05, 6);
  // The axis ends on a tick at or past the longest bar.
  if (ticks.size() >= 2 && ticks.back() < top * 1.05) ticks.push_back(2 * ticks.back() - ticks[ticks.size() - 2]);
  top = ticks.back();
  const auto x_of = [&](double gbs) { return x0 + gbs / top * plot_w; };
  std::string svg = SvgOpen("bandwidth", x0 + width + 12, height, "");
  for (size_t i = 0; i < ticks.size(); ++i) {
    const double x = x_of(ticks[i]);
    svg += "<line x1=\"" + Coord(x) + "\" y1=\"" + Coord(kChartTop) + "\" x2=\"" + Coord(x) +
           "\" y2=\"" + Coord(bottom) + "\" class=\"grid\"/>";
    svg += "<text x=\"" + Coord(x) + "\" y=\"" + Coord(bottom + 15) + "\" class=\"tick\">" +
           TickLabels(ticks)[i] + "</text>";
  }
  svg += "<line x1=\"" + Coord(x0) + "\" y1=\"" + Coord(bottom) + "\" x2=\"" + Coord(x0 + plot_w) +
         "\" y2=\"" + Coord(bottom) + "\" class=\"axis-line\"/>";
  svg += "<text x=\"" + Coord(x0 + plot_w / 2) + "\" y=\"" + Coord(bottom + 31) +
         "\" class=\"caption\">bandwidth (GB/s, decimal: 10⁹ bytes per second)</text>";
  for (size_t i = 0; i < rows.size(); ++i) {
    const CopyBandwidth& r = rows[i];
    const double y = kChartTop + row_h * static_cast<double>(i);
    const double achieved = GigabytesPerSecond(r.bytes, r.total_ns);
    std::string attributes = " data-kind=\"" + HtmlEscape(CopyKindLabel(r)) +
                             "\" data-gb-per-s=\"" + Fixed(achieved, 3) + "\"" +
                             " data-best-gb-per-s=\"" + Fixed(r.best_gb_per_s, 3) + "\"";
    if (r.limit_gb_per_s) {
      attributes += " data-limit-gb-per-s=\"" + Fixed(*r.limit_gb_per_s, 3) + "\"";
    }
    svg += "<g class=\"copy-kind\"" + attributes + ">";
    svg += "<text x=\"" + Coord(x0 - 8) + "\" y=\"" + Coord(y + row_h / 2 + 4) +
           "\" class=\"lane-label\">" + HtmlEscape(CopyKindLabel(r)) + "</text>";
    const std::string css = r.copy_kind == CopyKind::kHtoD   ? "htod"
                            : r.copy_kind == CopyKind::kDtoH ? "dtoh"
                            : r.copy_kind == CopyKind::kDtoD ? "dtod"
                                                             : "copy";
    svg += "<rect class=\"" + css + "\" x=\"" + Coord(x0) + "\" y=\"" + Coord(y + 4) +
           "\" width=\"" + Coord(std::max(1.0, x_of(achieved) - x0)) + "\" height=\"" +
           Coord(row_h - 8) + "\"><title>" + HtmlEscape(CopyKindLabel(r)) + ": " +
           std::to_string(r.count) + " copies, " + FormatBytes(r.bytes) + " in " +
           FormatDuration(static_cast<double>(r.total_ns)) + "</title></rect>";
    svg += "<line class=\"best\" x1=\"" + Coord(x_of(r.best_gb_per_s)) + "\" y1=\"" +
           Coord(y + 2) + "\" x2=\"" + Coord(x_of(r.best_gb_per_s)) + "\" y2=\"" +
           Coord(y + row_h - 2) + "\"><title>the fastest single copy</title></line>";
    if (r.limit_gb_per_s) {
      svg += "<line class=\"limit\" x1=\"" + Coord(x_of(*r.limit_gb_per_s)) + "\" y1=\"" +
             Coord(y + 1) + "\" x2=\"" + Coord(x_of(*r.limit_gb_per_s)) + "\" y2=\"" +
             Coord(y + row_h - 1) + "\"><title>limit: " + HtmlEscape(r.limit_source) +
             "</title></line>";
    }
    std::string figures = FormatBandwidth(r.bytes, r.total_ns);
    if (figures.empty()) figures = "no copy time";
    figures += " overall, best copy " + GbPerSText(r.best_gb_per_s);
    if (r.limit_gb_per_s) figures += ", limit " + GbPerSText(*r.limit_gb_per_s);
    svg += "<text x=\"" + Coord(x0 + plot_w + 10) + "\" y=\"" + Coord(y + row_h / 2 + 4) +
           "\" class=\"value-label\">" + HtmlEscape(figures) + "</text></g>";
  }
  return svg + "</svg>";
}

}  // namespace libprof::analysis
