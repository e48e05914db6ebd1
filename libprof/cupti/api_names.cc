#include "libprof/cupti/api_names.h"

#include <string>

namespace libprof {
namespace {

// Length of a trailing "_v<digits>" suffix of `name`, or 0.
size_t VersionSuffixLength(std::string_view name) {
  size_t digits = 0;
  while (digits < name.size() && name[name.size() - 1 - digits] >= '0' &&
         name[name.size() - 1 - digits] <= '9') {
    ++digits;
  }
  if (digits == 0 || name.size() < digits + 2) return 0;
  std::string_view marker = name.substr(name.size() - digits - 2, 2);
  return marker == "_v" ? digits + 2 : 0;
}

}  // namespace

std::string_view CleanApiName(std::string_view name) {
  std::string_view clean = name;
  while (true) {
    size_t strip = VersionSuffixLength(clean);
    if (strip == 0 && (clean.ends_with("_ptsz") || clean.ends_with("_ptds"))) strip = 5;
    if (strip == 0 || strip >= clean.size()) break;
    clean.remove_suffix(strip);
  }
  return clean;
}

uint32_t ApiNameCache::NameId(ApiDomain domain, uint32_t callback_id) {
  std::vector<uint32_t>& ids = ids_[static_cast<uint8_t>(domain) & 3];
  if (callback_id >= kMaxCachedId) return Lookup(domain, callback_id);
  if (callback_id >= ids.size()) ids.resize(callback_id + 1, 0);
  if (ids[callback_id] == 0) ids[callback_id] = Lookup(domain, callback_id);
  return ids[callback_id];
}

uint32_t ApiNameCache::Lookup(ApiDomain domain, uint32_t callback_id) {
  const char* raw = lookup_ ? lookup_(domain, callback_id) : nullptr;
  std::string_view clean = raw ? CleanApiName(raw) : std::string_view();
  if (!clean.empty()) return strings_.Intern(clean);
  return strings_.Intern(std::string(ToString(domain)) + " API " + std::to_string(callback_id));
}

}  // namespace libprof
