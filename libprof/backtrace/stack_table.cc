#include "libprof/backtrace/stack_table.h"

#include <algorithm>

namespace libprof {
namespace {

// Slots start at 4096 (32 KiB with the entries' 16 B each, for a few hundred stacks a typical
// program has) and double when half full, which keeps probes short.
constexpr size_t kInitialSlots = 4096;

}  // namespace

StackTable::StackTable(size_t max_stacks, size_t max_depth)
    : max_stacks_(max_stacks), max_depth_(max_depth), slots_(kInitialSlots) {
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
  return Avalanche(h);
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
  size_t slot = 0;
  const uint32_t found = slots_.Find(
      hash,
      [&](uint32_t index) { return Equal(entries_[index], hash, pcs, depth, python, python_depth); },
      &slot);
  if (found != 0) return found;
  if (entries_.size() >= max_stacks_ || !slots_.HasRoomBeside(entries_.size())) {
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
  const uint32_t id = static_cast<uint32_t>(entries_.size());
  slots_.Insert(slot, id, [this](uint32_t index) { return entries_[index].hash; });
  return id;
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
