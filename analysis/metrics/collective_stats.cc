#include "analysis/metrics/collective_stats.h"

#include <algorithm>
#include <map>
#include <tuple>

namespace libprof::analysis {
namespace {

bool WholeBuffer(const std::string& op) {
  return op == "AllGather" || op == "ReduceScatter" || op == "AlltoAll" || op == "Gather" ||
         op == "Scatter";
}

}  // namespace

uint64_t AlgorithmBytes(const CollectiveCall& call) {
  const uint64_t ranks = std::max<uint32_t>(call.comm_size, 1);
  return WholeBuffer(call.op) ? call.bytes * ranks : call.bytes;
}

double BusBandwidthFactor(const std::string& op, uint32_t ranks) {
  if (ranks == 0) return 0;
  const double n = ranks;
  if (op == "AllReduce") return 2 * (n - 1) / n;
  if (op == "ReduceScatter" || op == "AllGather" || op == "AlltoAll") return (n - 1) / n;
  return 1;
}

std::vector<CollectiveRow> CollectiveTable(std::span<const ProcessCollectives> processes) {
  std::map<std::pair<std::string, uint32_t>, CollectiveRow> rows;
  for (const ProcessCollectives& p : processes) {
    for (const CollectiveCall& call : p.calls) {
      CollectiveRow& row = rows[{call.op, call.comm_size}];
      row.op = call.op;
      row.comm_size = call.comm_size;
      ++row.calls;
      row.bytes += AlgorithmBytes(call);
      row.time_ns += call.duration();
      if (!call.has_device_work) ++row.host_only;
    }
  }
  std::vector<CollectiveRow> out;
  for (auto& [key, row] : rows) {
    if (row.time_ns > 0) {
      row.algbw_gbps = static_cast<double>(row.bytes) / static_cast<double>(row.time_ns);
      row.busbw_gbps = row.algbw_gbps * BusBandwidthFactor(row.op, row.comm_size);
    }
    out.push_back(std::move(row));
  }
  std::stable_sort(out.begin(), out.end(), [](const CollectiveRow& a, const CollectiveRow& b) {
    return std::tie(b.time_ns, a.op) < std::tie(a.time_ns, b.op);
  });
  return out;
}

}  // namespace libprof::analysis
