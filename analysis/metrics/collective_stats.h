// The collectives table of `profview collectives` (and of summary): per operation and
// communicator size, the calls, their bytes, their time on the device and the two bandwidths of
// NCCL's own benchmarks, as nccl-tests' PERFORMANCE.md defines them:
//   algbw = S / t, where S is the operation's size as nccl-tests counts it: the message for
//     AllReduce, Broadcast, Reduce, Send/Recv; the whole gathered or scattered buffer (n times
//     the per-rank message NCCL's payload gives) for AllGather, ReduceScatter, AlltoAll, Gather
//     and Scatter;
//   busbw = algbw x factor: AllReduce 2(n-1)/n; ReduceScatter, AllGather, AlltoAll (n-1)/n;
//     Broadcast, Reduce, Gather, Scatter, Send, Recv 1.
// A row's bandwidths are of its totals (sum of S over sum of t), so long calls weigh more.
//
// Layer: analysis/metrics/.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "analysis/model/collectives.h"

namespace libprof::analysis {

struct CollectiveRow {
  std::string op;
  uint32_t comm_size = 0;  // 0: unknown (the communicator's creation was not recorded)
  uint64_t calls = 0;
  uint64_t bytes = 0;       // sum of nccl-tests' S
  uint64_t time_ns = 0;     // sum of device time (host range time for calls without any)
  uint64_t host_only = 0;   // calls whose device work was not recorded
  double algbw_gbps = 0;    // GB/s = 1e9 bytes per second
  double busbw_gbps = 0;    // 0 when comm_size is unknown
};

// nccl-tests' S of one call (comm_size 0 counts as 1 rank).
uint64_t AlgorithmBytes(const CollectiveCall& call);
// nccl-tests' bus-bandwidth factor for `op` on `ranks` ranks; 0 when ranks is 0.
double BusBandwidthFactor(const std::string& op, uint32_t ranks);

// Rows over every process given (each rank's calls count), sorted by time, largest first.
std::vector<CollectiveRow> CollectiveTable(std::span<const ProcessCollectives> processes);

}  // namespace libprof::analysis
