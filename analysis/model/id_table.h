// A map from correlation id to a 32-bit index (an API call, a work unit) without a heap node per
// entry: the analyses of a 10M-record trace hold millions of them.
//
// Layer: analysis/model/. Pure, header-only.
//
// CUPTI hands out correlation ids densely, so the ids index a table from the smallest one. When
// they are sparse (more than 4 table slots per id), a hash map is used instead.
#pragma once

#include <cstddef>
#include <cstdint>
#include <unordered_map>
#include <vector>

namespace libprof::analysis {

class IdTable {
 public:
  // `lo`..`hi`: the smallest and largest id that will be stored; `count`: how many ids.
  void Reset(uint64_t lo, uint64_t hi, size_t count) {
    dense_.clear();
    sparse_.clear();
    if (count > 0 && hi >= lo && hi - lo < 4 * count + 1024) {
      lo_ = lo;
      dense_.assign(hi - lo + 1, kNone);
    }
  }
  // Reset for the non-zero correlation ids of `items` (records with a `correlation_id`).
  template <typename Items>
  void ResetForIds(const Items& items) {
    uint64_t lo = UINT64_MAX, hi = 0;
    size_t count = 0;
    for (const auto& item : items) {
      if (item.correlation_id == 0) continue;
      lo = item.correlation_id < lo ? item.correlation_id : lo;
      hi = item.correlation_id > hi ? item.correlation_id : hi;
      ++count;
    }
    Reset(lo, hi, count);
  }
  // The index stored for `id`, or -1.
  int64_t Find(uint64_t id) const {
    if (!dense_.empty()) {
      if (id < lo_ || id - lo_ >= dense_.size()) return -1;
      return dense_[id - lo_] == kNone ? -1 : int64_t{dense_[id - lo_]};
    }
    auto it = sparse_.find(id);
    return it == sparse_.end() ? -1 : int64_t{it->second};
  }
  // Stores `index` for `id`, which must lie in Reset's range.
  void Set(uint64_t id, uint32_t index) {
    if (!dense_.empty()) {
      dense_[id - lo_] = index;
    } else {
      sparse_[id] = index;
    }
  }

 private:
  static constexpr uint32_t kNone = UINT32_MAX;
  uint64_t lo_ = 0;
  std::vector<uint32_t> dense_;
  std::unordered_map<uint64_t, uint32_t> sparse_;
};

}  // namespace libprof::analysis
