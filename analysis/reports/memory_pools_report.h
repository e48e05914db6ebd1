// Formats the memory-pool section of `profview memory` (analysis/metrics/memory_pools.h): a box
// table, CSV rows in memory's long format, and a JSON object inside memory's process object. A
// process without pooled allocations prints nothing here.
//
// Layer: analysis/reports/. Pure string formatting.
#pragma once

#include <cstddef>
#include <string>

#include "analysis/metrics/memory_pools.h"
#include "analysis/reports/formats.h"

namespace libprof::analysis {

// "Memory pools" with pooled against direct allocations, one row per pool (threshold and sizes
// empty where the trace lacks them: imported pools, older traces); "" without pools.
std::string MemoryPoolsTable(const MemoryPoolReport& report, size_t max_width);
// CSV rows (no header): section "pool", api = the pool's address, memory_kind = its type,
// device_id, bytes = release threshold; and section "allocation_source" (pooled / direct).
std::string MemoryPoolsCsvRows(const MemoryPoolReport& report);
// Writes "memory_pools": {...} into the open process object of `j` (only with pools).
void MemoryPoolsJson(const MemoryPoolReport& report, JsonWriter& j);

}  // namespace libprof::analysis
