#include "libprof/cupti/record_layout.h"

#include <cupti_version.h>

#include <iterator>

namespace libprof {
namespace {

struct CudaRelease {
  uint32_t major;
  uint32_t minor;
};

// Index v19..v28 of cupti_version.h; v25 (12.7) is missing there and taken from CUDA.jl's table.
// v28 is 12.9 Update 1.
constexpr uint32_t kFirstIndex = 19;
constexpr CudaRelease kReleaseOfIndex[] = {{12, 0}, {12, 2}, {12, 3}, {12, 4}, {12, 5},
                                           {12, 6}, {12, 7}, {12, 8}, {12, 9}, {12, 9}};

// Before 12.0 the exact release does not matter (unsupported); an unknown index reads 0.0.
CudaRelease ReleaseOfIndex(uint32_t index) {
  if (index < kFirstIndex) return {11, 0};
  if (index - kFirstIndex < std::size(kReleaseOfIndex)) return kReleaseOfIndex[index - kFirstIndex];
  return {0, 0};
}

}  // namespace

RecordLayout LayoutForCuptiVersion(uint32_t cupti_version) {
  RecordLayout layout;
  layout.cupti_version = cupti_version;
  CudaRelease release{0, 0};
  if (cupti_version >= 130000) {
    release = {cupti_version / 10000, cupti_version / 100 % 100};
  } else if (cupti_version > 0 && cupti_version < 1000) {
    release = ReleaseOfIndex(cupti_version);
  }
  layout.cuda_major = release.major;
  layout.cuda_minor = release.minor;
  auto at_least = [&](uint32_t major, uint32_t minor) {
    return release.major > major || (release.major == major && release.minor >= minor);
  };
  layout.supported = at_least(12, 0);
  layout.kernel_is_device_launched = at_least(13, 0);
  layout.memcpy_copy_count = at_least(12, 8);
  layout.sync_event_sync_id = at_least(12, 8);
  layout.cuda_event_v2 = at_least(12, 8);
  layout.overhead_data = at_least(12, 4);
  layout.device_name_owned = at_least(13, 0);
  return layout;
}

RecordLayout CompiledRecordLayout() { return LayoutForCuptiVersion(CUPTI_API_VERSION); }

}  // namespace libprof
