// What a callback notes at a call's entry, kept by correlation id until the call's API record is
// decoded on the writer thread (call stacks, host functions' streams). An id whose record never
// comes (a call made while not recording) would stay for ever: past a bound, the older half goes.
//
// Layer: libprof/. Header-only, pure.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

namespace libprof {

// Erases the older half of `by_id`'s entries (correlation ids grow with time: the newer ones may
// belong to calls still running) once it holds more than `bound`.
template <typename Map>
void ForgetOlderHalf(Map* by_id, size_t bound) {
  if (by_id->size() <= bound) return;
  std::vector<uint64_t> ids;
  ids.reserve(by_id->size());
  for (const auto& entry : *by_id) ids.push_back(entry.first);
  auto middle = ids.begin() + static_cast<std::ptrdiff_t>(ids.size() / 2);
  std::nth_element(ids.begin(), middle, ids.end());
  for (auto it = ids.begin(); it != middle; ++it) by_id->erase(*it);
}

}  // namespace libprof
