// Copy bandwidth by kind, against what the hardware allows where the trace says: per copy kind
// and memory kinds, the achieved bandwidth (bytes over summed copy time, as `profview summary`'s
// copies table), the best single copy and, for device-to-device copies, the device memory's
// theoretical limit from the trace header. The host link (PCIe, NVLink-C2C) and peer links are
// not recorded in the trace, so their limit is unknown here.
//
// Layer: analysis/metrics/. Built on TraceIndex's device operations; no formatting.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "analysis/metrics/summary.h"
#include "analysis/model/trace_index.h"

namespace libprof::analysis {

// A row of the summary's copies table (CopyRow), with the fastest copy and the link's limit.
struct CopyBandwidth : CopyRow {
  double best_gb_per_s = 0;  // the fastest single copy (decimal GB/s)
  // The most a copy of this kind could reach, and where that figure comes from; empty when the
  // trace does not say (host and peer links).
  std::optional<double> limit_gb_per_s;
  std::string limit_source;
};

// The rows built copy by copy (the report adds its windows' copies one at a time).
class CopyBandwidthAccumulator {
 public:
  void Add(const Memcpy& copy, uint64_t duration_ns);
  // Rows sorted by total time, longest first, with the limits `devices` allow.
  std::vector<CopyBandwidth> Rows(const std::vector<DeviceInfo>& devices) const;

 private:
  std::map<std::tuple<CopyKind, MemoryKind, MemoryKind>, CopyBandwidth> rows_;
};

// Rows sorted by total time, longest first (the order of the summary's copies table).
std::vector<CopyBandwidth> CopyBandwidthByKind(const TraceIndex& index);

// The theoretical bandwidth of a device's memory in GB/s: memory clock x 2 (double data rate) x
// bus width / 8, from DeviceInfo; empty when the header lacks either figure.
std::optional<double> DeviceMemoryGbPerS(const DeviceInfo& device);

}  // namespace libprof::analysis
