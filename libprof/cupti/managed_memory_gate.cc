#include "libprof/cupti/managed_memory_gate.h"

#include <algorithm>
#include <array>

namespace libprof {
namespace {

constexpr std::array<CUpti_CallbackId, 16> kCbids = [] {
  std::array<CUpti_CallbackId, 16> ids = {
      CUPTI_DRIVER_TRACE_CBID_cuMemAllocManaged,
      CUPTI_DRIVER_TRACE_CBID_cuMemAdvise,
      CUPTI_DRIVER_TRACE_CBID_cuMemPrefetchAsync,
      CUPTI_DRIVER_TRACE_CBID_cuMemPrefetchAsync_ptsz,
      CUPTI_DRIVER_TRACE_CBID_cuMemPoolCreate,
      CUPTI_DRIVER_TRACE_CBID_cuLibraryGetManaged,
      CUPTI_DRIVER_TRACE_CBID_cuMemAdvise_v2,
      CUPTI_DRIVER_TRACE_CBID_cuMemPrefetchAsync_v2,
      CUPTI_DRIVER_TRACE_CBID_cuMemPrefetchAsync_v2_ptsz,
      CUPTI_DRIVER_TRACE_CBID_cuMemPrefetchBatchAsync,
      CUPTI_DRIVER_TRACE_CBID_cuMemPrefetchBatchAsync_ptsz,
      CUPTI_DRIVER_TRACE_CBID_cuMemDiscardAndPrefetchBatchAsync,
      CUPTI_DRIVER_TRACE_CBID_cuMemDiscardAndPrefetchBatchAsync_ptsz,
      CUPTI_DRIVER_TRACE_CBID_cuMemGetDefaultMemPool,
      CUPTI_DRIVER_TRACE_CBID_cuMemGetMemPool,
      CUPTI_DRIVER_TRACE_CBID_cuMemSetMemPool,
  };
  std::sort(ids.begin(), ids.end());
  return ids;
}();

}  // namespace

std::span<const CUpti_CallbackId> ManagedMemoryDriverCbids() { return kCbids; }

bool StartsManagedMemory(CUpti_CallbackId cbid, const void* function_params) {
  if (!std::binary_search(kCbids.begin(), kCbids.end(), cbid)) return false;
  // Pools: only a managed one. Without parameters, assume it is (a missed migration costs more
  // than an early start).
  switch (cbid) {
    case CUPTI_DRIVER_TRACE_CBID_cuMemPoolCreate: {
      const auto* p = static_cast<const cuMemPoolCreate_params*>(function_params);
      return p == nullptr || p->poolProps == nullptr ||
             p->poolProps->allocType == CU_MEM_ALLOCATION_TYPE_MANAGED;
    }
    case CUPTI_DRIVER_TRACE_CBID_cuMemGetDefaultMemPool: {
      const auto* p = static_cast<const cuMemGetDefaultMemPool_params*>(function_params);
      return p == nullptr || p->type == CU_MEM_ALLOCATION_TYPE_MANAGED;
    }
    case CUPTI_DRIVER_TRACE_CBID_cuMemGetMemPool: {
      const auto* p = static_cast<const cuMemGetMemPool_params*>(function_params);
      return p == nullptr || p->type == CU_MEM_ALLOCATION_TYPE_MANAGED;
    }
    case CUPTI_DRIVER_TRACE_CBID_cuMemSetMemPool: {
      const auto* p = static_cast<const cuMemSetMemPool_params*>(function_params);
      return p == nullptr || p->type == CU_MEM_ALLOCATION_TYPE_MANAGED;
    }
    default:
      return true;
  }
}

}  // namespace libprof
