// Readable names of CUDA runtime and driver API calls, from CUPTI callback ids.
//
// Layer: libprof/cupti/, CUDA-free. CUPTI names callbacks after its cbid enums, which carry the
// version the entry point appeared in and the per-thread-stream variant
// ("cudaMemcpyAsync_ptsz_v7000", "cuMemcpyHtoD_v2"); users know the call as "cudaMemcpyAsync".
// The exact variant stays in ApiCall.callback_id.
#pragma once

#include <cstdint>
#include <functional>
#include <string_view>
#include <vector>

#include "proto/trace_model.h"
#include "proto/trace_writer.h"

namespace libprof {

// Strips trailing "_v<digits>", "_ptsz" and "_ptds" suffixes, in any order and number:
// "cudaStreamGetCaptureInfo_v2_ptsz_v11030" -> "cudaStreamGetCaptureInfo". Never returns empty
// for a non-empty name (a name that is only a suffix comes back unchanged).
std::string_view CleanApiName(std::string_view name);

// Where callback names come from: cuptiGetCallbackName in production, a table in tests. Returns
// nullptr for an id it does not know.
using ApiNameLookup = std::function<const char*(ApiDomain domain, uint32_t callback_id)>;

// Interned clean names per (domain, callback id), looked up once each. One thread only.
class ApiNameCache {
 public:
  ApiNameCache(ApiNameLookup lookup, StringInterner& strings)
      : lookup_(std::move(lookup)), strings_(strings) {}

  // The interned clean name; for an unknown id, e.g. "driver API 1234". Never 0.
  uint32_t NameId(ApiDomain domain, uint32_t callback_id);

 private:
  // Callback ids are dense and below ~1000 in CUDA 13.0; past this bound, ids are not cached.
  static constexpr uint32_t kMaxCachedId = 1 << 16;
  uint32_t Lookup(ApiDomain domain, uint32_t callback_id);

  ApiNameLookup lookup_;
  StringInterner& strings_;
  std::vector<uint32_t> ids_[4];  // by ApiDomain value, then callback id; 0 = not looked up yet
};

}  // namespace libprof
