// Which fields of CUPTI's activity records are safe to read, from the version of the libcupti
// that is actually running (it may be older than the headers we compile against).
//
// Layer: libprof/cupti/. Pure: no CUPTI call, no CUPTI header, so tests can build any layout.
// Records only append fields from one struct version to the next, so reading a newer record
// through an older struct is safe and the reverse reads past the record (cupti-facts.md 2.2).
// Each flag below names the struct version that introduced the field and the source of the date.
#pragma once

#include <cstdint>

namespace libprof {

struct RecordLayout {
  uint32_t cupti_version = 0;  // as cuptiGetVersion returned it
  // The CUDA release the running CUPTI belongs to; 0.0 when the version is not recognised.
  uint32_t cuda_major = 0;
  uint32_t cuda_minor = 0;
  // CUDA 12.0+: Kernel9 (clusters), Memcpy5, Memset4, Memory3, Context/Stream/API: everything the
  // decoder reads unconditionally is present. Older CUPTIs are not decoded at all.
  bool supported = false;
  // Kernel10.isDeviceLaunched: CUDA 13.0 (CUDA.jl keys Kernel10 on 13.0).
  bool kernel_is_device_launched = false;
  // Memcpy6.isDeviceLaunched/copyCount: CUDA 12.8 ("Structure deprecated in CUDA 12.8: Refer to
  // CUpti_ActivityMemcpy6", cupti_activity_deprecated.h; CUDA.jl agrees).
  bool memcpy_copy_count = false;
  // Synchronization2.cudaEventSyncId/returnValue and CudaEvent2.deviceId/deviceTimestamp/
  // cudaEventSyncId: CUDA 12.8 (same deprecation notes in cupti_activity_deprecated.h).
  bool sync_event_sync_id = false;
  bool cuda_event_v2 = false;
  // Overhead3.overheadData, which the client must free(): CUDA 12.4 (CUPTI release notes).
  bool overhead_data = false;
  // Device5.name must be free()d by the client: said by the CUDA 13.0 header only; Device4 (older)
  // says nothing, so before 13.0 the name is left alone (a few bytes leak, never a bad free).
  bool device_name_owned = false;
};

// Decodes cuptiGetVersion's value. Before CUDA 13 it is a small index (v19 = CUDA 12.0 ...
// v28 = 12.9 Update 1, cupti_version.h); from 13.0 on it reads major*10000 + minor*100 + patch.
RecordLayout LayoutForCuptiVersion(uint32_t cupti_version);

// The layout of the CUPTI headers this library was compiled with (CUPTI_API_VERSION): what the
// tests use to build records.
RecordLayout CompiledRecordLayout();

}  // namespace libprof
