#include "libprof/backtrace/stack_table.h"

#include <algorithm>

namespace libprof {
namespace {

// Slots start at 4096 (32 KiB with the entries' 16 B each, for a few hundred stacks a typical
// program has) and double when half full, which keeps probes short.
constexpr size_t kInitialSlots = 4096;

}  // namespace

StackTable::StackTable(size_t max_stacks, size_t max_depth)
    : max_stacks_(max_stacks), max_depth_(max_depth) {
  slots_.assign(kInitialSlots, 0);
  entries_.reserve(std::min<size_t>(max_stacks, 1024));
}

uint64_t StackTable::Hash(const uintptr_t* pcs, size_t depth, const uint32_t* python,
                          size_t python_depth) {
  // FNV-1a over the addresses, the native depth and the Python frame ids, then a final avalanche
  // (splitmix64) so that the low bits used as the slot index depend on every one of them.
  uint64_t h = 0xcbf29ce484222325ULL;
  auto mix = [&h](uint64_t v) {
    h ^= v;
    h *= 0x100000001b3ULL;
  };
  for (size_t i = 0; i < depth; ++i) mix(pcs[i]);
  mix(depth);
  for (size_t i = 0; i < python_depth; ++i) mix(python[i]);
  h ^= h >> 30;
  h *= 0xbf58476d1ce4e5b9ULL;
  h ^= h >> 27;
  h *= 0x94d049bb133111ebULL;
  return h ^ (h >> 31);
}

bool StackTable::Equal(const Entry& entry, uint64_t hash, const uintptr_t* pcs, size_t depth,
                       const uint32_t* python, size_t python_depth) const {
  if (entry.hash != hash || entry.depth != depth || entry.python_depth != python_depth) return false;
  const auto native = frames_.begin() + entry.offset;
  return std::equal(pcs, pcs + depth, native) &&
         std::equal(python, python + python_depth, native + depth);
}

uint32_t StackTable::Intern(const uintptr_t* pcs, size_t depth, const uint32_t* python,
                            size_t python_depth) {
  depth = std::min(depth, max_depth_);
  python_depth = python == nullptr ? 0 : std::min(python_depth, max_depth_);
  if (depth + python_depth == 0) return 0;
  const uint64_t hash = Hash(pcs, depth, python, python_depth);
  std::lock_guard<std::mutex> lock(mutex_);
  size_t mask = slots_.size() - 1;
  size_t slot = hash & mask;
  while (slots_[slot] != 0) {
    const uint32_t index = slots_[slot] - 1;
    if (Equal(entries_[index], hash, pcs, depth, python, python_depth)) return index + 1;
    slot = (slot + 1) & mask;
  }
  // One slot always stays empty, so that the probe above ends even if Grow could not allocate.
  if (entries_.size() >= max_stacks_ || entries_.size() + 2 > slots_.size()) {
    refused_.fetch_add(1, std::memory_order_relaxed);
    return 0;
  }
  const size_t offset = frames_.size();
  try {
    frames_.insert(frames_.end(), pcs, pcs + depth);
    frames_.insert(frames_.end(), python, python + python_depth);
    entries_.push_back({hash, static_cast<uint32_t>(offset), static_cast<uint16_t>(depth),
                        static_cast<uint16_t>(python_depth)});
  } catch (...) {  // out of memory: this stack goes unrecorded, the program goes on
    frames_.resize(offset);
    refused_.fetch_add(1, std::memory_order_relaxed);
    return 0;
  }
  slots_[slot] = static_cast<uint32_t>(entries_.size());
  if (entries_.size() * 2 > slots_.size()) Grow();
  return static_cast<uint32_t>(entries_.size());
}

void StackTable::Grow() {
  std::vector<uint32_t> slots;
  try {
    slots.assign(slots_.size() * 2, 0);
  } catch (...) {
    return;  // probes get longer, nothing breaks until the table is completely full
  }
  const size_t mask = slots.size() - 1;
  for (size_t i = 0; i < entries_.size(); ++i) {
    size_t slot = entries_[i].hash & mask;
    while (slots[slot] != 0) slot = (slot + 1) & mask;
    slots[slot] = static_cast<uint32_t>(i + 1);
  }
  slots_.swap(slots);
}

std::vector<StackTable::Stack> StackTable::Snapshot(size_t from) const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<Stack> out;
  if (from >= entries_.size()) return out;
  out.reserve(entries_.size() - from);
  for (size_t i = from; i < entries_.size(); ++i) {
    const Entry& e = entries_[i];
    const auto native = frames_.begin() + e.offset;
    Stack& stack = out.emplace_back();
    stack.pcs.assign(native, native + e.depth);
    stack.python.assign(native + e.depth, native + e.depth + e.python_depth);
  }
  return out;
}

size_t StackTable::size() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return entries_.size();
}

}  // namespace libprof
