#include "analysis/rules/rule_details.h"

#include "analysis/model/units.h"

namespace libprof::analysis {

std::string GpuDetailsBase::WaitingFor(std::optional<uint32_t> device_id) const {
  return "GPU " + std::to_string(device_id.value_or(0));
}

std::string AllocChurnDetails::WaitingFor(std::optional<uint32_t> /*device_id*/) const {
  return FormatBytes(bytes) + " × " + std::to_string(pairs);
}

std::string GraphRebuildDetails::WaitingFor(std::optional<uint32_t> /*device_id*/) const {
  return std::to_string(instantiations) + " graphs, " + std::to_string(graph_launches) +
         " launches";
}

std::string StartUpDetails::WaitingFor(std::optional<uint32_t> /*device_id*/) const {
  if (module_load_ns == 0) return "first kernel";
  return "module loading " + FormatDuration(static_cast<double>(module_load_ns));
}

std::string OverlapDetails::WaitingFor(std::optional<uint32_t> device_id) const {
  return "GPU " + std::to_string(device_id.value_or(0)) + ", " + serialised_by;
}

std::string TwoWayCopiesDetails::WaitingFor(std::optional<uint32_t> device_id) const {
  return "GPU " + std::to_string(device_id.value_or(0)) + ", copies both ways";
}

std::string UnifiedMemoryDetails::WaitingFor(std::optional<uint32_t> device_id) const {
  if (!kernel.empty()) return "GPU " + std::to_string(device_id.value_or(0)) + " page faults";
  if (!event.empty()) return event;
  return "CPU page faults";
}

std::string LateRankDetails::WaitingFor(std::optional<uint32_t> /*device_id*/) const {
  return "rank " + std::to_string(rank) + " (#" + std::to_string(seq) + ")";
}

std::string SharedGpuDetails::WaitingFor(std::optional<uint32_t> device_id) const {
  return "GPU " + std::to_string(device_id.value_or(0)) + ", " + std::to_string(processes) +
         " processes";
}

}  // namespace libprof::analysis
