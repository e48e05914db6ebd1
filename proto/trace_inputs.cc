// Expands the trace inputs given on a command line (files and directories of per-process files).
#include "proto/trace_inputs.h"

#include <algorithm>
#include <filesystem>
#include <system_error>

namespace libprof {

namespace fs = std::filesystem;

std::expected<std::vector<std::string>, std::string> ExpandTraceInputs(
    const std::vector<std::string>& inputs) {
  std::vector<std::string> files;
  for (const std::string& input : inputs) {
    std::error_code ec;
    if (!fs::is_directory(input, ec)) {
      files.push_back(input);
      continue;
    }
    std::vector<std::string> found;
    for (fs::directory_iterator it(input, ec), end; !ec && it != end; it.increment(ec)) {
      const std::string name = it->path().filename().string();
      if (name.starts_with(".") || !name.ends_with(".pb")) continue;
      if (std::error_code type_ec; it->is_regular_file(type_ec))
        found.push_back(it->path().string());
    }
    if (ec) return std::unexpected(input + ": cannot list the directory (" + ec.message() + ")");
    if (found.empty()) return std::unexpected(input + ": no .pb trace files in this directory");
    std::sort(found.begin(), found.end());
    files.insert(files.end(), found.begin(), found.end());
  }
  return files;
}

}  // namespace libprof
