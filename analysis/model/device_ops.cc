#include "analysis/model/device_ops.h"

namespace libprof::analysis {

const char* ToString(DeviceOpKind kind) {
  switch (kind) {
    case DeviceOpKind::kKernel:
      return "kernel";
    case DeviceOpKind::kMemcpy:
      return "memcpy";
    case DeviceOpKind::kMemset:
      return "memset";
    case DeviceOpKind::kGraph:
      return "graph";
  }
  return "unknown";
}

size_t DeviceOpCount(const TraceRecords& records) {
  size_t count = 0;
  ForEachList(records, [&]<typename T>(const std::vector<T>& list) {
    if constexpr (kIsDeviceOp<T>) count += list.size();
  });
  return count;
}

}  // namespace libprof::analysis
