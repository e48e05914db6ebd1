#include "libprof/nvtx/nvtx_string_table.h"

#include <mutex>

namespace libprof {

NvtxStringTable::NvtxStringTable() { Intern(""); }

uint32_t NvtxStringTable::Intern(std::string_view text) {
  std::lock_guard<SpinLock> lock(lock_);
  if (auto it = ids_.find(text); it != ids_.end()) return it->second;
  const auto id = static_cast<uint32_t>(by_id_.size());
  by_id_.reserve(by_id_.size() + 1);  // first, so that a bad_alloc leaves both containers in step
  auto [it, inserted] = ids_.emplace(std::string(text), id);
  by_id_.push_back(&it->first);
  size_.store(id + 1, std::memory_order_release);
  return id;
}

void NvtxStringTable::CopyFrom(uint32_t first, std::vector<std::string>* out) const {
  std::lock_guard<SpinLock> lock(lock_);
  for (size_t id = first; id < by_id_.size(); ++id) out->push_back(*by_id_[id]);
}

}  // namespace libprof
