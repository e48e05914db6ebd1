#include "analysis/model/device_wait.h"

#include <algorithm>

namespace libprof::analysis {
namespace {

// The skew findings.cc allows between host and device timestamps (kSkewNs there).
constexpr uint64_t kSkewNs = 2'000;

}  // namespace

uint64_t DeviceWideWaitNs(const StreamModel& model, const ApiCall& call) {
  if (call.end_ns <= call.start_ns) return 0;
  uint64_t last = 0;
  for (const Dependency& d :
       model.PendingOnDevice(call.start_ns, call.correlation_id, call.start_ns)) {
    const uint64_t end = model.units()[d.unit].end_ns;
    if (end <= call.end_ns + kSkewNs) last = std::max(last, end);
  }
  const uint64_t until = std::min(last, call.end_ns);
  return until > call.start_ns ? until - call.start_ns : 0;
}

}  // namespace libprof::analysis
