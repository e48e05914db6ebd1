// Kernel names as interned string ids, mangled and demangled, computed once per kernel.
//
// Layer: libprof/cupti/, CUDA-free. CUPTI hands the same `name` pointer to every record of one
// kernel ("shared across all activity records representing the same kernel",
// cupti_activity.h), so the pointer is the fast key; the content is compared too, because a
// pointer can be reused for another name after a module unloads. Demangling (abi::__cxa_demangle
// allocates) therefore runs once per distinct kernel, not once per launch.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>

#include "proto/trace_writer.h"

namespace libprof {

struct KernelNameIds {
  uint32_t name_id = 0;       // as CUPTI reports it (mangled)
  uint32_t demangled_id = 0;  // == name_id when the name is not a mangled C++ name
};

// Demangles an Itanium C++ ABI name; returns `name` unchanged when it is not one.
std::string DemangleKernelName(const char* name);

// One thread only (the writer thread that decodes).
class KernelNameCache {
 public:
  explicit KernelNameCache(StringInterner& strings) : strings_(strings) {}

  // Ids for `name`; both 0 for a null name.
  KernelNameIds Get(const char* name);

 private:
  // Bounds memory when a program JIT-compiles endless distinct kernels: past this many names the
  // cache starts over (ids stay valid: the interner keeps them).
  static constexpr size_t kMaxEntries = 1 << 16;
  struct Entry {
    std::string mangled;
    KernelNameIds ids;
  };

  StringInterner& strings_;
  std::unordered_map<const char*, Entry> by_pointer_;
  std::unordered_map<std::string, KernelNameIds> by_content_;
};

}  // namespace libprof
