// Formats `profview streams` reports (analysis/metrics/streams.h) as box tables, CSV or JSON.
//
// Layer: analysis/reports/. Pure string formatting of StreamsReport values.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "analysis/metrics/streams.h"

namespace libprof::analysis {

// One block per process (headed by its pid and file when there are several): the per-stream
// table of each device, then the device's overlap table.
std::string StreamsTable(const std::vector<StreamsReport>& reports, size_t max_width);
// Long format: section,pid,device_id,stream_id,stream_type,what,count,time_ns.
std::string StreamsCsv(const std::vector<StreamsReport>& reports);
// {"processes": [{"pid", "file", "trace_ns", "streams": [...], "devices": [...]}]}.
std::string StreamsJson(const std::vector<StreamsReport>& reports);

}  // namespace libprof::analysis
