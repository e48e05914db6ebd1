// The GPU projection of NVTX ranges while launches stream in: each range's row gets the device
// time of the work whose launching call started inside the range, on a thread of the range.
//
// Layer: analysis/metrics/. Pure.
//
// The ranges are known before any launch (the NVTX-only first pass over the file): NVTX records
// are written when a range ends, long after the calls inside it, so they cannot be joined as they
// come. Launches of one thread arrive in nearly increasing start order (settled by correlation id,
// which CUPTI hands out in call order), so each thread sweeps its ranges sorted by start with a
// short list of the ranges open at the sweep's position. A launch older than the sweep is kept
// aside and swept again in Finish, so any order gives the exact result.
#pragma once

#include <cstddef>
#include <cstdint>
#include <unordered_map>
#include <utility>
#include <vector>

namespace libprof::analysis {

class NvtxProjection {
 public:
  // A range [start_ns, end_ns] (both ends inclusive, as the launch times are compared) of row
  // `row` on `thread_id`. All ranges come before the first AddLaunch.
  void AddRange(uint32_t thread_id, uint64_t start_ns, uint64_t end_ns, uint32_t row);
  bool HasRanges(uint32_t thread_id) const { return threads_.contains(thread_id); }

  // Work of `device_ns` launched by a call that started at `start_ns` on `thread_id`.
  void AddLaunch(uint32_t thread_id, uint64_t start_ns, uint64_t device_ns);
  void Finish();

  // Device time per row (index: the `row` of AddRange); valid after Finish.
  const std::vector<uint64_t>& gpu_ns() const { return gpu_ns_; }

 private:
  struct Range {
    uint64_t start_ns;
    uint64_t end_ns;
    uint32_t row;
  };
  struct Thread {
    std::vector<Range> ranges;   // sorted by start once the first launch comes
    size_t next = 0;             // first range not yet opened by the sweep
    std::vector<uint32_t> open;  // ranges with start <= position <= end (lazily pruned)
    uint64_t position = 0;
    std::vector<std::pair<uint64_t, uint64_t>> late;  // (start, device_ns) behind the sweep
  };
  void Sweep(Thread* t, uint64_t start_ns, uint64_t device_ns);

  std::unordered_map<uint32_t, Thread> threads_;
  std::vector<uint64_t> gpu_ns_;
  bool sorted_ = false;
};

}  // namespace libprof::analysis
