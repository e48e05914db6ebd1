#include "analysis/reports/html_axes.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "analysis/model/units.h"
#include "analysis/reports/html_writer.h"

namespace libprof::analysis {

double TimeScale::PixelsPerNs() const {
  return width / static_cast<double>(std::max<uint64_t>(t1_ns > t0_ns ? t1_ns - t0_ns : 1, 1));
}

double TimeScale::X(uint64_t t_ns) const {
  const double dt = static_cast<double>(t_ns) - static_cast<double>(t0_ns);
  return x0 + dt * PixelsPerNs();
}

std::vector<double> NiceTicks(double lo, double hi, int target) {
  if (!(hi > lo)) hi = lo + 1;
  const double raw = (hi - lo) / std::max(target, 1);
  const double magnitude = std::pow(10.0, std::floor(std::log10(raw)));
  double step = magnitude;
  for (double m : {1.0, 2.0, 5.0, 10.0}) {
    step = m * magnitude;
    if (step >= raw) break;
  }
  std::vector<double> ticks;
  for (double v = std::ceil(lo / step - 1e-9) * step; v <= hi + step * 1e-9; v += step) {
    ticks.push_back(std::abs(v) < step * 1e-9 ? 0.0 : v);
  }
  return ticks;
}

std::vector<std::string> TickLabels(const std::vector<double>& ticks) {
  int decimals = 0;
  if (ticks.size() >= 2) {
    const double step = ticks[1] - ticks[0];
    decimals = std::clamp(static_cast<int>(-std::floor(std::log10(step) + 1e-9)), 0, 9);
  }
  std::vector<std::string> labels;
  for (double t : ticks) {
    char buffer[48];
    std::snprintf(buffer, sizeof(buffer), "%.*f", decimals, t);
    labels.push_back(buffer);
  }
  return labels;
}

std::string TimeAxisSvg(const TimeScale& scale, double y, bool caption, double grid_top) {
  const double from = static_cast<double>(scale.t0_ns) - static_cast<double>(scale.origin_ns);
  const double to = static_cast<double>(scale.t1_ns) - static_cast<double>(scale.origin_ns);
  // The unit of the far end, so that a zoomed window late in the trace reads "101.2 ms" rather
  // than "101200 µs".
  const TimeUnit unit = UnitFor(std::max(std::abs(to), 1.0));
  const double per_unit = 1.0 / InUnit(1.0, unit);  // ns per unit
  const std::vector<double> ticks =
      NiceTicks(from / per_unit, to / per_unit, static_cast<int>(scale.width / 90));
  const std::vector<std::string> labels = TickLabels(ticks);
  std::string svg = "<g class=\"axis time-axis\" data-unit=\"" + std::string(UnitName(unit)) + "\">";
  svg += "<line x1=\"" + Coord(scale.x0) + "\" y1=\"" + Coord(y) + "\" x2=\"" +
         Coord(scale.x0 + scale.width) + "\" y2=\"" + Coord(y) + "\" class=\"axis-line\"/>";
  for (size_t i = 0; i < ticks.size(); ++i) {
    const double x = scale.x0 + (ticks[i] * per_unit - from) * scale.PixelsPerNs();
    if (x < scale.x0 - 0.5 || x > scale.x0 + scale.width + 0.5) continue;
    if (grid_top >= 0) {
      svg += "<line x1=\"" + Coord(x) + "\" y1=\"" + Coord(grid_top) + "\" x2=\"" + Coord(x) +
             "\" y2=\"" + Coord(y) + "\" class=\"grid\"/>";
    }
    svg += "<line x1=\"" + Coord(x) + "\" y1=\"" + Coord(y) + "\" x2=\"" + Coord(x) +
           "\" y2=\"" + Coord(y + 4) + "\" class=\"axis-line\"/>";
    svg += "<text x=\"" + Coord(x) + "\" y=\"" + Coord(y + 15) + "\" class=\"tick\">" +
           labels[i] + "</text>";
  }
  if (caption) {
    svg += "<text x=\"" + Coord(scale.x0 + scale.width / 2) + "\" y=\"" + Coord(y + 31) +
           "\" class=\"caption\">time since the recording start (" + UnitName(unit) + ")</text>";
  }
  return svg + "</g>";
}

std::string ValueAxisSvg(double x, double top, double bottom, double grid_width, double lo,
                         double hi, const std::vector<double>& ticks, const std::string& caption) {
  const std::vector<std::string> labels = TickLabels(ticks);
  const double span = hi > lo ? hi - lo : 1;
  std::string svg = "<g class=\"axis value-axis\">";
  svg += "<line x1=\"" + Coord(x) + "\" y1=\"" + Coord(top) + "\" x2=\"" + Coord(x) + "\" y2=\"" +
         Coord(bottom) + "\" class=\"axis-line\"/>";
  for (size_t i = 0; i < ticks.size(); ++i) {
    const double y = bottom - (ticks[i] - lo) / span * (bottom - top);
    if (y < top - 0.5 || y > bottom + 0.5) continue;
    svg += "<line x1=\"" + Coord(x) + "\" y1=\"" + Coord(y) + "\" x2=\"" + Coord(x + grid_width) +
           "\" y2=\"" + Coord(y) + "\" class=\"grid\"/>";
    svg += "<text x=\"" + Coord(x - 5) + "\" y=\"" + Coord(y + 4) + "\" class=\"tick end\">" +
           labels[i] + "</text>";
  }
  // The caption above the axis, horizontal: readable, and never longer than the plot is high.
  svg += "<text x=\"" + Coord(x - 40) + "\" y=\"" + Coord(top - 8) + "\" class=\"caption start\">" +
         HtmlEscape(caption) + "</text>";
  return svg + "</g>";
}

}  // namespace libprof::analysis
