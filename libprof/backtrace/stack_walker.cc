#include "libprof/backtrace/stack_walker.h"

#include <dlfcn.h>
#include <link.h>
#include <unwind.h>

#include <cstring>

namespace libprof {
namespace {

struct WalkState {
  const SkipRanges* skip;
  uintptr_t* pcs;
  size_t max_depth;
  size_t depth = 0;
  size_t skipped = 0;
  bool leading = true;  // still in the frames to skip
};

_Unwind_Reason_Code OnFrame(_Unwind_Context* context, void* arg) {
  auto* state = static_cast<WalkState*>(arg);
  const uintptr_t pc = _Unwind_GetIP(context);
  if (pc == 0) return _URC_END_OF_STACK;
  if (state->leading && state->skip->Contains(pc)) {
    return ++state->skipped > kMaxSkipped ? _URC_END_OF_STACK : _URC_NO_REASON;
  }
  state->leading = false;
  state->pcs[state->depth++] = pc;
  return state->depth >= state->max_depth ? _URC_END_OF_STACK : _URC_NO_REASON;
}

struct RangeSearch {
  const char* name_part;           // match modules by path, or
  const void* own_address;         // the module that holds this address
  std::vector<AddressRange>* out;
};

int CollectRanges(dl_phdr_info* info, size_t, void* arg) {
  auto* search = static_cast<RangeSearch*>(arg);
  bool match = false;
  if (search->name_part != nullptr) {
    match = info->dlpi_name != nullptr && std::strstr(info->dlpi_name, search->name_part);
  } else {
    const auto own = reinterpret_cast<uintptr_t>(search->own_address);
    for (int i = 0; i < info->dlpi_phnum && !match; ++i) {
      const ElfW(Phdr)& p = info->dlpi_phdr[i];
      const uintptr_t start = info->dlpi_addr + p.p_vaddr;
      match = p.p_type == PT_LOAD && own >= start && own < start + p.p_memsz;
    }
  }
  if (!match) return 0;
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& p = info->dlpi_phdr[i];
    if (p.p_type != PT_LOAD || (p.p_flags & PF_X) == 0) continue;
    const uintptr_t start = info->dlpi_addr + p.p_vaddr;
    search->out->push_back({start, start + p.p_memsz});
  }
  return 0;
}

}  // namespace

bool SkipRanges::Contains(uintptr_t pc) const {
  for (size_t i = 0; i < count; ++i) {
    if (ranges[i].Contains(pc)) return true;
  }
  return false;
}

void SkipRanges::Add(AddressRange range) {
  if (count < kMax && range.end > range.start) ranges[count++] = range;
}

std::vector<AddressRange> ModuleCodeRanges(const std::string& name_part) {
  std::vector<AddressRange> out;
  RangeSearch search{name_part.c_str(), nullptr, &out};
  dl_iterate_phdr(&CollectRanges, &search);
  return out;
}

std::vector<AddressRange> OwnCodeRanges() {
  std::vector<AddressRange> out;
  RangeSearch search{nullptr, reinterpret_cast<const void*>(&OwnCodeRanges), &out};
  dl_iterate_phdr(&CollectRanges, &search);
  return out;
}

size_t WalkStack(const SkipRanges& skip, uintptr_t* pcs, size_t max_depth) {
  if (max_depth == 0) return 0;
  WalkState state{&skip, pcs, max_depth};
  _Unwind_Backtrace(&OnFrame, &state);
  return state.depth;
}

}  // namespace libprof
