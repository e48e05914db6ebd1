// The collective operations of one process, read from NCCL's NVTX annotations: each range of the
// "NCCL" domain named after a collective (ncclAllReduce, ncclAllGather, ...) with the fields of
// its payload (communicator, message size, reduction, root or peer), tied to the device work
// launched inside it (the correlation ids of the API calls its thread made during the range) and
// numbered per communicator, so that the same instance can be found on every rank. The size of a
// communicator and this process's rank in it come from the communicator's own range
// (ncclCommInitRank*, ncclCommSplit...). Nothing here depends on kernel names.
//
// Layer: analysis/model/. CUDA-free; reads a ProcessTrace through its TraceIndex.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "analysis/model/trace_index.h"
#include "analysis/model/trace_loader.h"

namespace libprof::analysis {

struct CollectiveCall {
  std::string op{};        // "AllReduce", "Send", ... (the NCCL function without "nccl")
  uint64_t comm = 0;     // NCCL's communicator id (commHash: the same on every rank); 0 unknown
  uint32_t comm_size = 0;  // ranks in the communicator; 0 when its creation was not recorded
  int32_t comm_rank = -1;  // this process's rank in it; -1 unknown
  uint64_t seq = 0;        // 0, 1, 2... per communicator, in the order this thread called them
  uint64_t bytes = 0;      // NCCL's "Message size [bytes]" (per rank; see collective_stats.h)
  std::string reduction{};   // "Sum", ... ("" when none)
  int64_t root = -1;       // root (Broadcast, Reduce, Gather, Scatter) or peer (Send, Recv)
  uint64_t host_start_ns = 0;  // the NVTX range: the call on the host
  uint64_t host_end_ns = 0;
  // The device work launched inside the range: first start, last end (the host range when none
  // was recorded: has_device_work false).
  uint64_t start_ns = 0;
  uint64_t end_ns = 0;
  bool has_device_work = false;
  uint32_t device_ops = 0;
  uint32_t device_id = 0;
  uint32_t thread_id = 0;
  uint64_t duration() const { return end_ns > start_ns ? end_ns - start_ns : 0; }
};

struct ProcessCollectives {
  std::string path{};
  uint32_t pid = 0;
  std::string hostname{};
  std::optional<uint32_t> rank{};  // TraceHeader::rank
  uint64_t origin_ns = 0;        // ProcessTrace::origin_ns (findings count from it)
  std::vector<CollectiveCall> calls{};  // by host start
  std::vector<std::string> warnings{};  // payloads kept raw (one line per schema)
};

// True for the operations whose payload names a communicator and that NCCL numbers per
// communicator (every collective and point-to-point call).
bool IsCollectiveOp(const std::string& op);

ProcessCollectives ExtractCollectives(const TraceIndex& index);

// Whether `trace` has NVTX ranges of NCCL's domain (cheap: the domain table only).
bool HasNcclRanges(const ProcessTrace& trace);

}  // namespace libprof::analysis
