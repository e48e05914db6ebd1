#include "libprof/cupti/kernel_names.h"

#include <cxxabi.h>

#include <cstdlib>
#include <cstring>

namespace libprof {

std::string DemangleKernelName(const char* name) {
  if (name == nullptr) return "";
  // Only "_Z..." names are mangled; __cxa_demangle would also "demangle" a plain C name such as
  // "f" into a type name ("float"), which is wrong for extern "C" kernels.
  if (std::strncmp(name, "_Z", 2) != 0) return name;
  int status = 0;
  char* demangled = abi::__cxa_demangle(name, nullptr, nullptr, &status);
  std::string result = status == 0 && demangled != nullptr ? demangled : name;
  std::free(demangled);
  return result;
}

KernelNameIds KernelNameCache::Get(const char* name) {
  if (name == nullptr) return {};
  auto by_pointer = by_pointer_.find(name);
  if (by_pointer != by_pointer_.end() && by_pointer->second.mangled == name) {
    return by_pointer->second.ids;
  }
  if (by_content_.size() >= kMaxEntries || by_pointer_.size() >= kMaxEntries) {
    by_content_.clear();
    by_pointer_.clear();
    by_pointer = by_pointer_.end();
  }
  std::string mangled(name);
  KernelNameIds ids;
  if (auto known = by_content_.find(mangled); known != by_content_.end()) {
    ids = known->second;
  } else {
    ids.name_id = strings_.Intern(mangled);
    std::string demangled = DemangleKernelName(name);
    ids.demangled_id = demangled == mangled ? ids.name_id : strings_.Intern(demangled);
    by_content_.emplace(mangled, ids);
  }
  if (by_pointer != by_pointer_.end()) {
    by_pointer->second = Entry{std::move(mangled), ids};
  } else {
    by_pointer_.emplace(name, Entry{std::move(mangled), ids});
  }
  return ids;
}

}  // namespace libprof
