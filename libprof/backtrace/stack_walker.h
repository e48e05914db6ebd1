// Walks the native call stack of the calling thread with the unwinder of the static libgcc
// (`_Unwind_Backtrace`, which follows .eh_frame unwind tables; frame pointers are not reliable in
// CUDA's libraries, which omit them).
//
// Layer: libprof/backtrace/ (CUDA-free). Runs on the application's threads inside CUPTI's API
// callback: no allocation, no lock of ours, no exception. libgcc locates each frame's unwind
// table through glibc's _dl_find_object (glibc 2.35+), which takes no lock either.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace libprof {

// A half-open range of code addresses, [start, end).
struct AddressRange {
  uintptr_t start = 0;
  uintptr_t end = 0;
  bool Contains(uintptr_t pc) const { return pc >= start && pc < end; }
};

// The frames to drop from the top of every stack: the profiler's own and the CUDA driver's and
// CUPTI's callback machinery that sits between the API entry point and our callback.
struct SkipRanges {
  static constexpr size_t kMax = 16;
  AddressRange ranges[kMax];
  size_t count = 0;
  bool Contains(uintptr_t pc) const;
  void Add(AddressRange range);
};

// Executable segments of the loaded modules whose path contains `name_part` ("libcupti.so").
std::vector<AddressRange> ModuleCodeRanges(const std::string& name_part);
// Executable segments of the module that holds this code (libprof.so, or a test binary).
std::vector<AddressRange> OwnCodeRanges();

// Writes the return addresses of the caller's stack into pcs[0..max_depth), innermost first,
// after dropping the leading frames inside `skip` (at most kMaxSkipped of them); returns how many
// were written. Frames inside `skip` further out are kept.
size_t WalkStack(const SkipRanges& skip, uintptr_t* pcs, size_t max_depth);

// Frames WalkStack drops at most before giving up on reaching the application (CUPTI and the
// driver took 6-12 frames in the stacks we looked at; a walk stuck in them is not useful).
inline constexpr size_t kMaxSkipped = 64;

}  // namespace libprof
