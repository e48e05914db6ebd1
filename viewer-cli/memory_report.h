// Formats `profview memory` reports (viewer-cli/memory.h) as box tables, CSV or JSON.
//
// Layer: viewer-cli/ analysis library. Pure string formatting of MemoryReport values.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "viewer-cli/memory.h"

namespace libprof::viewer {

// One block per process (headed by its pid and file when there are several): the per-API table,
// the device memory peaks and the churn groups.
std::string MemoryTable(const std::vector<MemoryReport>& reports, size_t max_width);
// Long format: section,pid,api,memory_kind,device_id,bytes,what,value.
std::string MemoryCsv(const std::vector<MemoryReport>& reports);
// {"processes": [{"pid", "file", "apis": [...], "devices": [...], "churn": [...]}]}.
std::string MemoryJson(const std::vector<MemoryReport>& reports);

}  // namespace libprof::viewer
