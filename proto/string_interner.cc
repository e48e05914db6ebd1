// StringInterner: the per-file string table shared by the writer and the NVTX handlers.
#include "proto/trace_writer.h"

namespace libprof {

StringInterner::StringInterner() { Intern(""); }

uint32_t StringInterner::Intern(std::string_view value) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (auto it = ids_.find(value); it != ids_.end()) return it->second;
  const uint32_t id = static_cast<uint32_t>(by_id_.size());
  // Reserve first: if anything throws, the map and the id list must still agree.
  by_id_.reserve(by_id_.size() + 1);
  // Keys of an unordered_map never move, so by_id_ can point at them.
  auto [it, inserted] = ids_.emplace(std::string(value), id);
  by_id_.push_back(&it->first);
  return id;
}

uint32_t StringInterner::size() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return static_cast<uint32_t>(by_id_.size());
}

void StringInterner::CollectFrom(uint32_t first,
                                 std::vector<std::pair<uint32_t, std::string>>* out) const {
  std::lock_guard<std::mutex> lock(mutex_);
  for (size_t id = first; id < by_id_.size(); ++id) {
    out->emplace_back(static_cast<uint32_t>(id), *by_id_[id]);
  }
}

}  // namespace libprof
