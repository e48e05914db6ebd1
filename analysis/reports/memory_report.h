// Formats `profview memory` reports (analysis/metrics/memory.h) as box tables, CSV or JSON.
//
// Layer: analysis/reports/. Pure string formatting of MemoryReport values.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "analysis/metrics/memory.h"
#include "analysis/metrics/memory_pools.h"
#include "analysis/metrics/memory_timeline.h"
#include "analysis/metrics/unified_memory.h"

namespace libprof::analysis {

// One block per process (headed by its pid and file when there are several): the per-API table,
// the device memory peaks and the churn groups.
std::string MemoryTable(const std::vector<MemoryReport>& reports, size_t max_width);
// Long format: section,pid,api,memory_kind,device_id,bytes,what,value.
std::string MemoryCsv(const std::vector<MemoryReport>& reports);
// {"processes": [{"pid", "file", "apis": [...], "devices": [...], "churn": [...]}]}; with the
// same processes' unified memory, timelines and pools, a process also gets "failed_allocations",
// "unified_memory" (unified_memory_report.h) and "memory_pools" (memory_pools_report.h) when it
// has some.
std::string MemoryJson(const std::vector<MemoryReport>& reports,
                       const std::vector<UnifiedMemoryReport>* unified = nullptr,
                       const std::vector<MemoryTimeline>* timelines = nullptr,
                       const std::vector<MemoryPoolReport>* pools = nullptr);

}  // namespace libprof::analysis
