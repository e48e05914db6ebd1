// The first checks of reading a partial (summary_partial.h, rules/findings_partial.h): JSON, the
// format it says it is, the version this profview reads. Errors name the partial's file.
//
// Layer: analysis/metrics/. Used by the two partial readers only.
#pragma once

#include <cstdint>
#include <expected>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

namespace libprof::analysis {

// `text` parsed, or why it is not a partial of `format` and `version`: `noun` names the kind
// ("a partial summary"), `command` the subcommand that writes it ("summary").
std::expected<nlohmann::json, std::string> ParsePartialHeader(std::string_view text,
                                                              const std::string& name,
                                                              std::string_view format,
                                                              uint32_t version,
                                                              const std::string& noun,
                                                              const std::string& command);

}  // namespace libprof::analysis
