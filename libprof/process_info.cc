#include "libprof/process_info.h"

#include <dlfcn.h>
#include <limits.h>
#include <unistd.h>

#include <charconv>
#include <cstring>
#include <fstream>
#include <iterator>

namespace libprof {

std::string Hostname() {
  char name[HOST_NAME_MAX + 1] = {};
  if (gethostname(name, sizeof name - 1) != 0) return "unknown";
  return name;
}

std::optional<Rank> RankFromEnvironment(const std::function<const char*(const char*)>& getenv_fn) {
  for (const char* name : {"LIBPROF_RANK", "RANK", "OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK",
                           "SLURM_PROCID", "MV2_COMM_WORLD_RANK"}) {
    const char* value = getenv_fn(name);
    if (value == nullptr) continue;
    const char* end = value + std::strlen(value);
    uint32_t rank = 0;
    auto [stop, error] = std::from_chars(value, end, rank);
    // Empty, signed, out of range or trailing text: not a rank, try the next launcher's.
    if (error != std::errc() || stop != end) continue;
    return Rank{rank, name};
  }
  return std::nullopt;
}

std::vector<std::string> CommandLine() {
  std::ifstream file("/proc/self/cmdline", std::ios::binary);
  std::string all((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  std::vector<std::string> args;
  size_t start = 0;
  while (start < all.size()) {
    size_t end = all.find('\0', start);
    if (end == std::string::npos) end = all.size();
    args.push_back(all.substr(start, end - start));
    start = end + 1;
  }
  return args;
}

std::string OwnLibraryPath() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&OwnLibraryPath), &info) == 0 || info.dli_fname == nullptr) {
    return "";
  }
  char resolved[PATH_MAX];
  if (realpath(info.dli_fname, resolved) != nullptr) return resolved;
  return info.dli_fname;
}

}  // namespace libprof
