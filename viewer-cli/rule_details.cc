#include "viewer-cli/rule_details.h"

#include "viewer-cli/units.h"

namespace libprof::viewer {

std::string GpuDetailsBase::WaitingFor(std::optional<uint32_t> device_id) const {
  return "GPU " + std::to_string(device_id.value_or(0));
}

std::string AllocChurnDetails::WaitingFor(std::optional<uint32_t> /*device_id*/) const {
  return FormatBytes(bytes) + " × " + std::to_string(pairs);
}

std::string OverlapDetails::WaitingFor(std::optional<uint32_t> device_id) const {
  return "GPU " + std::to_string(device_id.value_or(0)) + ", " + serialised_by;
}

}  // namespace libprof::viewer
