// Formats the unified-memory section of `profview memory` (analysis/metrics/unified_memory.h):
// box tables, CSV rows in memory's long format, and a JSON object inside memory's process object.
// A process without unified-memory records prints nothing here, so traces without managed memory
// read exactly as before.
//
// Layer: analysis/reports/. Pure string formatting.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "analysis/metrics/unified_memory.h"
#include "analysis/reports/formats.h"

namespace libprof::analysis {

// True when the report has anything to show (records of known or unknown kinds).
bool HasUnifiedMemory(const UnifiedMemoryReport& report);
// The tables: migrations by direction, GPU page-fault groups per kernel, CPU page faults per
// allocation, thrashing/throttling/remote maps; "" when HasUnifiedMemory is false.
std::string UnifiedMemoryTable(const UnifiedMemoryReport& report, size_t max_width);
// CSV rows (no header) in memory's columns: section,pid,api,memory_kind,device_id,bytes,what,value
// with sections uvm_migration, uvm_gpu_faults, uvm_cpu_faults, uvm_contention.
std::string UnifiedMemoryCsvRows(const UnifiedMemoryReport& report);
// Writes "unified_memory": {...} into the open process object of `j` (when HasUnifiedMemory).
void UnifiedMemoryJson(const UnifiedMemoryReport& report, JsonWriter& j);

}  // namespace libprof::analysis
