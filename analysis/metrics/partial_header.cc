#include "analysis/metrics/partial_header.h"

namespace libprof::analysis {

std::expected<nlohmann::json, std::string> ParsePartialHeader(std::string_view text,
                                                              const std::string& name,
                                                              std::string_view format,
                                                              uint32_t version,
                                                              const std::string& noun,
                                                              const std::string& command) {
  using json = nlohmann::json;
  json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  // "a partial summary" -> "not a partial summary".
  const std::string not_one = "not " + noun;
  if (j.is_discarded()) return std::unexpected(name + ": " + not_one + " (not JSON)");
  if (!j.is_object() || !j.contains("format") || j["format"] != format) {
    return std::unexpected(name + ": " + not_one + " (profview " + command +
                           " --partial writes them)");
  }
  if (!j.contains("version") || j["version"] != version) {
    return std::unexpected(name + ": " + noun + " of format version " +
                           (j.contains("version") ? j["version"].dump() : "(none)") +
                           "; this profview reads version " + std::to_string(version) +
                           " (make it again with this profview)");
  }
  return j;
}

nlohmann::json FiltersJson(const FilterOptions& f) {
  return nlohmann::json{{"pids", f.pids},
                        {"tids", f.tids},
                        {"nvtx", f.nvtx},
                        {"from_ns", f.from_ns ? nlohmann::json(*f.from_ns) : nullptr},
                        {"to_ns", f.to_ns ? nlohmann::json(*f.to_ns) : nullptr}};
}

FilterOptions ParseFilters(const nlohmann::json& j) {
  FilterOptions f;
  f.pids = j.at("pids").get<std::vector<uint32_t>>();
  f.tids = j.at("tids").get<std::vector<uint32_t>>();
  f.nvtx = j.at("nvtx").get<std::vector<std::string>>();
  if (!j.at("from_ns").is_null()) f.from_ns = j.at("from_ns").get<uint64_t>();
  if (!j.at("to_ns").is_null()) f.to_ns = j.at("to_ns").get<uint64_t>();
  return f;
}

}  // namespace libprof::analysis
