// Formats device memory in use over time and the failed allocations (analysis/metrics/
// memory_timeline.h): `profview memory --timeline` as a table of intervals, CSV or JSON, and the
// "Failed allocations" block that `profview memory` adds when an allocation ran out of memory.
//
// Layer: analysis/reports/. Pure string formatting.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "analysis/metrics/memory_timeline.h"
#include "analysis/reports/formats.h"  // JsonWriter

namespace libprof::analysis {

// At most this many table rows per device: a longer timeline is shown coarsened into as many
// equal spans, each with the largest value in use during it (JSON and CSV keep every step).
inline constexpr size_t kMaxTimelineRows = 40;

// Per process: a table per device (From, To, In use), then the failed allocations.
std::string MemoryTimelineTable(const std::vector<MemoryTimeline>& timelines, size_t max_width);
// pid,device_id,from_ns,to_ns,bytes (times from the trace start), then failed allocations as
// rows with device_id "failed:<api>".
std::string MemoryTimelineCsv(const std::vector<MemoryTimeline>& timelines);
// {"processes": [{"pid", "file", "devices": [{"device_id", "peak_bytes", "steps":
// [{"from_ns", "to_ns", "bytes"}]}], "failed_allocations": [...]}]}.
std::string MemoryTimelineJson(const std::vector<MemoryTimeline>& timelines);
// The "failed_allocations" array of one process (api, start_ns from the trace start,
// duration_ns, thread_id, return_value, call_site, in_use per device), for both JSON outputs.
void FailedAllocationsJson(const MemoryTimeline& timeline, JsonWriter& j);
// The "Failed allocations" table of one process; "" when none failed.
std::string FailedAllocationsTable(const MemoryTimeline& timeline, size_t max_width);

}  // namespace libprof::analysis
