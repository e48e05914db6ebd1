// The charts of the HTML report under the timeline, on the same time scale so that they line up
// with it: GPU utilisation over time per device, device memory in use over time, unified-memory
// migrations over time, and copy bandwidth by kind against what the link allows (where the trace
// says). Every axis names its unit.
//
// DOM (read back by tests/report/): <svg class="chart utilization" data-device> per device with
// <path class="series" data-busy-ns>; <svg class="chart memory"> with <path class="series"
// data-device data-peak-bytes> per device; <svg class="chart migrations"> with <path
// class="series" data-direction data-bytes> per direction; <svg class="chart bandwidth"> with <g class="copy-kind"
// data-kind data-gb-per-s data-best-gb-per-s [data-limit-gb-per-s]> per row.
//
// Layer: analysis/reports/. Pure string output from metrics' structs.
#pragma once

#include <string>
#include <vector>

#include "analysis/metrics/copy_bandwidth.h"
#include "analysis/metrics/memory_timeline.h"
#include "analysis/metrics/unified_memory.h"
#include "analysis/metrics/utilization.h"
#include "analysis/reports/html_axes.h"

namespace libprof::analysis {

// One chart of busy share (0-100 %) over time for one device; `busy_text` is shown beside it
// ("GPU 0: busy 20.51 ms, 6.77%").
std::string UtilizationChartSvg(const DeviceUtilization& device, const TimeScale& scale,
                                const std::string& busy_text);

// Device memory in use over time, one step line per device; the unit of the axis (KiB, MiB,
// GiB) is picked from the largest peak.
std::string MemoryChartSvg(const std::vector<DeviceMemorySeries>& devices, const TimeScale& scale);

// Unified memory migrated over time, summed from the trace start: one step line per direction
// (host → device, device → host, device → device); the axis unit from the largest total.
std::string MigrationChartSvg(const std::vector<UvmMigrationSeries>& directions,
                              const TimeScale& scale);

// One bar per copy kind: achieved bandwidth, a tick at the best single copy, a dashed line at
// the limit where known. `x0` and `width`: the plot area, as the timeline's.
std::string BandwidthChartSvg(const std::vector<CopyBandwidth>& rows, double x0, double width);

// "HtoD pageable → device": the copy kind and memory kinds, as the summary's copies table.
std::string CopyKindLabel(const CopyBandwidth& row);

}  // namespace libprof::analysis
