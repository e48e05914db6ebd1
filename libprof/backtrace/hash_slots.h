// The open-addressing index of an interning table (StackTable, PythonFrameTable): slots hold an
// entry's id (its index + 1; 0 = empty), probed linearly from the entry's hash and doubled when
// half full. One slot always stays empty, so that a probe ends even when doubling could not
// allocate. The entries and their hashes stay the table's; the table's lock guards this too.
//
// Layer: libprof/backtrace/ (CUDA-free). Used inside API callbacks: never throws, allocates only
// to double.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace libprof {

// splitmix64's finaliser: the low bits used as a slot depend on every bit of `h`.
constexpr uint64_t Avalanche(uint64_t h) {
  h ^= h >> 30;
  h *= 0xbf58476d1ce4e5b9ULL;
  h ^= h >> 27;
  h *= 0x94d049bb133111ebULL;
  return h ^ (h >> 31);
}

class HashSlots {
 public:
  // `initial`: a power of two.
  explicit HashSlots(size_t initial) : slots_(initial, 0) {}

  // The id of the entry that `is(index)` accepts among those probed from `hash`; 0 when none,
  // with *slot where a new entry would go.
  template <typename Is>
  uint32_t Find(uint64_t hash, Is&& is, size_t* slot) const {
    const size_t mask = slots_.size() - 1;
    size_t at = hash & mask;
    while (slots_[at] != 0) {
      if (is(slots_[at] - 1)) return slots_[at];
      at = (at + 1) & mask;
    }
    *slot = at;
    return 0;
  }

  // Whether an entry can be added to `entries` while one slot stays empty.
  bool HasRoomBeside(size_t entries) const { return entries + 2 <= slots_.size(); }

  // Puts entry `id` (the table's `id`-th entry, just added) at `slot` from Find, then doubles the
  // slots when half full, placing each entry again by `hash_of(index)`. A doubling that cannot
  // allocate is skipped: probes get longer, nothing breaks until the table is full.
  template <typename HashOf>
  void Insert(size_t slot, uint32_t id, HashOf&& hash_of) {
    slots_[slot] = id;
    if (size_t{id} * 2 <= slots_.size()) return;
    std::vector<uint32_t> doubled;
    try {
      doubled.assign(slots_.size() * 2, 0);
    } catch (...) {
      return;
    }
    const size_t mask = doubled.size() - 1;
    for (uint32_t i = 0; i < id; ++i) {
      size_t at = hash_of(i) & mask;
      while (doubled[at] != 0) at = (at + 1) & mask;
      doubled[at] = i + 1;
    }
    slots_.swap(doubled);
  }

 private:
  std::vector<uint32_t> slots_;
};

}  // namespace libprof
