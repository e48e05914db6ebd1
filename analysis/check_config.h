// `profview check --config FILE`: the assertions of a check kept in the user's repository, in
// TOML, turned into the same texts the flags take (rules/run_checks.h):
//
//   nvtx = "train_step"            # the iteration range (optional)
//   baseline = "baseline/"         # a trace file or directory, relative to this file
//   max-regression = "5%"          # of the default figure; or a table of METRIC = "PCT"
//   [max]
//   pageable-async-memcpy = 0
//   implicit-sync = "3/step"
//   "kernel:nrm2_kernel:mean" = "1.2ms"
//   [min]
//   gpu-busy = "60%"
//
// Why TOML (toml++, Debian's libtomlplusplus-dev): a file people write by hand and review in a
// repository wants comments and no quoting of every key, which JSON lacks; TOML is what
// pyproject.toml and Cargo.toml made familiar, and toml++ reports errors with line and column.
//
// Layer: analysis/ (commands). Reads one file.
#pragma once

#include <expected>
#include <string>
#include <vector>

namespace libprof::analysis {

struct CheckConfig {
  std::vector<std::string> max, min, max_regression;  // "METRIC=VALUE" ("PCT" alone: default)
  std::vector<std::string> baseline;                  // paths resolved against the file's folder
  std::string nvtx;
  bool keep_warm_up = false;
  bool keep_one_time = false;
};

// Reads `path`. Errors name the file and, for a syntax error, the line and column; unknown keys
// and values of the wrong type are errors too (a typo must not pass a CI check silently).
std::expected<CheckConfig, std::string> ReadCheckConfig(const std::string& path);

}  // namespace libprof::analysis
