// Axes of the HTML report's SVG charts: a time scale shared by the timeline and the charts under
// it (so that they line up), tick values at 1-2-5 steps, and the axis drawings with their units
// ("time since the recording start (ms)", "GPU busy (%)", "device memory in use (MiB)").
//
// Layer: analysis/reports/. Pure string functions.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace libprof::analysis {

// Maps absolute times [t0_ns, t1_ns) onto [x0, x0 + width) pixels; tick labels count from
// origin_ns (the recording start).
struct TimeScale {
  uint64_t t0_ns = 0;
  uint64_t t1_ns = 1;
  uint64_t origin_ns = 0;
  double x0 = 0;
  double width = 1;
  double X(uint64_t t_ns) const;
  double PixelsPerNs() const;
};

// Tick values covering [lo, hi] at steps of 1, 2 or 5 x 10^k, about `target` of them.
std::vector<double> NiceTicks(double lo, double hi, int target);

// Tick labels of `ticks` with as many decimals as their step needs ("0", "2.5", "0.25").
std::vector<std::string> TickLabels(const std::vector<double>& ticks);

// The time axis along y = `y` (the plot's bottom): tick marks, labels in one unit picked from
// the span (ns, µs, ms or s), and, when `caption`, "time since the recording start (ms)"
// under them. `grid_top` > 0 also draws faint vertical grid lines up to that y.
std::string TimeAxisSvg(const TimeScale& scale, double y, bool caption, double grid_top = -1);

// A vertical value axis at x = `x` for values [lo, hi] mapped onto [bottom, top] (pixels,
// bottom > top), with horizontal grid lines across `grid_width` and the caption (which names
// the unit) above it: leave 20 pixels over `top`.
std::string ValueAxisSvg(double x, double top, double bottom, double grid_width, double lo,
                         double hi, const std::vector<double>& ticks, const std::string& caption);

}  // namespace libprof::analysis
