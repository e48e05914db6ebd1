// Which GPUs a process ran work on, when, and how busy it kept each: a few numbers per GPU that
// rules over several processes compare (shared_gpu_rules.h: ranks of one host that ran on the
// same GPU at once). A GPU is named by its UUID, the same in every process of a machine, while
// device ids are each process's own (CUDA_VISIBLE_DEVICES renumbers them).
//
// Layer: analysis/metrics/. Pure computation over device operations.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "analysis/metrics/streaming_union.h"
#include "analysis/model/device_ops.h"
#include "analysis/model/trace_loader.h"

namespace libprof::analysis {

struct ProcessGpuUse {
  std::string path{};
  uint32_t pid = 0;
  std::string hostname{};
  std::optional<uint32_t> rank{};  // TraceHeader::rank
  uint64_t origin_ns = 0;          // ProcessTrace::origin_ns (findings count from it)
  struct Gpu {
    uint32_t device_id = 0;  // this process's number for it
    std::string uuid{};      // "GPU-222b92b5-..." (FormatGpuUuid), never empty
    uint64_t first_ns = 0;   // the first operation's start, the last one's end (trace time)
    uint64_t last_ns = 0;
    uint64_t busy_ns = 0;  // union of its operations
    uint64_t ops = 0;
  };
  std::vector<Gpu> gpus{};  // by uuid
};

// Device operations, window by window in time order (no operation crosses a window's end, as
// trace_windows.h cuts them), or all of a process's at once in any order.
class GpuUseAccumulator {
 public:
  // `max_pending` as StreamingUnion's: the default settles the busy time's old pieces as windows
  // come in time order; 0 keeps every piece until Finish, for operations in any order (a whole
  // trace, already held in memory).
  explicit GpuUseAccumulator(size_t max_pending = kWindowPieces) : max_pending_(max_pending) {}
  void Add(const DeviceOp& op);
  // A window's operations (TraceIndex::device_ops()).
  void Add(std::span<const DeviceOp> ops) {
    for (const DeviceOp& op : ops) Add(op);
  }
  // The process's GPUs with a UUID recorded (`whole`'s definitions), with its identity.
  ProcessGpuUse Finish(const ProcessTrace& whole);

 private:
  static constexpr size_t kWindowPieces = 1024;
  struct Device {
    explicit Device(size_t max_pending) : busy(max_pending, 0) {}
    uint64_t first_ns = UINT64_MAX, last_ns = 0, ops = 0;
    StreamingUnion busy;
  };
  size_t max_pending_;
  std::map<uint32_t, Device> devices_;
};

// The same over a whole process.
ProcessGpuUse MeasureGpuUse(const ProcessTrace& trace);

}  // namespace libprof::analysis
