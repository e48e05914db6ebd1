#include "analysis/check_config.h"

#include <filesystem>
#include <toml++/toml.h>

namespace libprof::analysis {
namespace {

// A value as the flags would give it: numbers printed plainly, strings as they are.
std::expected<std::string, std::string> ValueText(const toml::node& node, const std::string& key) {
  if (auto s = node.value<std::string>()) return *s;
  if (node.is_integer()) return std::to_string(*node.value<int64_t>());
  if (node.is_floating_point()) {
    std::string text = std::to_string(*node.value<double>());
    while (text.ends_with('0')) text.pop_back();
    if (text.ends_with('.')) text.pop_back();
    return text;
  }
  return std::unexpected("'" + key + "' must be a number or a string");
}

std::expected<void, std::string> Assertions(const toml::node& node, const std::string& section,
                                            std::vector<std::string>* out) {
  const toml::table* table = node.as_table();
  if (table == nullptr) return std::unexpected("[" + section + "] must be a table");
  for (const auto& [key, value] : *table) {
    const std::string name(key.str());
    auto text = ValueText(value, section + "." + name);
    if (!text) return std::unexpected(text.error());
    out->push_back(name + "=" + *text);
  }
  return {};
}

}  // namespace

std::expected<CheckConfig, std::string> ReadCheckConfig(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) {
    return std::unexpected(path + ": no such configuration file");
  }
  toml::table root;
  try {
    root = toml::parse_file(path);
  } catch (const toml::parse_error& e) {
    return std::unexpected(path + ":" + std::to_string(e.source().begin.line) + ":" +
                           std::to_string(e.source().begin.column) + ": " +
                           std::string(e.description()));
  }
  CheckConfig config;
  const std::filesystem::path folder = std::filesystem::path(path).parent_path();
  auto fail = [&](const std::string& problem) {
    return std::unexpected(path + ": " + problem);
  };
  for (const auto& [key, value] : root) {
    const std::string name(key.str());
    if (name == "max" || name == "min") {
      auto done = Assertions(value, name, name == "max" ? &config.max : &config.min);
      if (!done) return fail(done.error());
    } else if (name == "max-regression") {
      if (value.is_table()) {
        auto done = Assertions(value, name, &config.max_regression);
        if (!done) return fail(done.error());
      } else {
        auto text = ValueText(value, name);
        if (!text) return fail(text.error());
        config.max_regression.push_back(*text);
      }
    } else if (name == "baseline") {
      std::vector<const toml::node*> items;
      if (const toml::array* list = value.as_array()) {
        for (const toml::node& item : *list) items.push_back(&item);
      } else {
        items.push_back(&value);
      }
      for (const toml::node* item : items) {
        auto s = item->value<std::string>();
        if (!s) return fail("'baseline' must be a path or a list of paths");
        const std::filesystem::path p(*s);
        config.baseline.push_back(p.is_absolute() ? *s : (folder / p).string());
      }
    } else if (name == "nvtx") {
      auto s = value.value<std::string>();
      if (!s) return fail("'nvtx' must be a range name");
      config.nvtx = *s;
    } else if (name == "keep-warm-up" || name == "keep-one-time") {
      const toml::value<bool>* b = value.as_boolean();  // (value<bool>() would take 3 too)
      if (b == nullptr) return fail("'" + name + "' must be true or false");
      (name == "keep-warm-up" ? config.keep_warm_up : config.keep_one_time) = b->get();
    } else {
      return fail("unknown key '" + name +
                  "' (expected max, min, max-regression, baseline, nvtx, keep-warm-up, "
                  "keep-one-time)");
    }
  }
  return config;
}

}  // namespace libprof::analysis
