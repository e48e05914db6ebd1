// What the two kinds of partial (summary_partial.h, rules/findings_partial.h) read and write
// alike: the first checks of reading one (JSON, the format it says it is, the version this
// profview reads; errors name the partial's file) and the filters it was made with.
//
// Layer: analysis/metrics/. Used by the two partial readers only.
#pragma once

#include <cstdint>
#include <expected>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "analysis/model/filters.h"

namespace libprof::analysis {

// `text` parsed, or why it is not a partial of `format` and `version`: `noun` names the kind
// ("a partial summary"), `command` the subcommand that writes it ("summary").
std::expected<nlohmann::json, std::string> ParsePartialHeader(std::string_view text,
                                                              const std::string& name,
                                                              std::string_view format,
                                                              uint32_t version,
                                                              const std::string& noun,
                                                              const std::string& command);

// A partial's "filters": {"pids", "tids", "nvtx", "from_ns", "to_ns"} (null when not given).
// ParseFilters throws nlohmann::json's exceptions on a missing or mistyped field, which the
// partial readers report as a damaged partial.
nlohmann::json FiltersJson(const FilterOptions& filters);
FilterOptions ParseFilters(const nlohmann::json& j);

}  // namespace libprof::analysis
