// The CUPTI entry points libprof uses, resolved at run time with dlopen/dlsym.
//
// Layer: libprof/cupti/ (the only directory that includes CUPTI headers). libprof.so has no
// DT_NEEDED on libcupti: a process that already loaded one (PyTorch's wheel, a CUDA 12 app's
// libcupti.so.12) must keep exactly that one, since CUPTI state is per library instance
// (cupti-facts.md 6, 7). Members carry CUPTI's own names and types, so call sites read like
// CUPTI's documentation; tests and fakes can fill a CuptiApi by hand.
#pragma once

#include <cupti.h>

#include <string>

#include "libprof/cupti/record_layout.h"

namespace libprof {

struct CuptiApi {
  // Required: LoadCuptiApi fails when one is missing.
  decltype(&::cuptiGetVersion) cuptiGetVersion = nullptr;
  decltype(&::cuptiGetResultString) cuptiGetResultString = nullptr;
  decltype(&::cuptiGetTimestamp) cuptiGetTimestamp = nullptr;
  decltype(&::cuptiSubscribe) cuptiSubscribe = nullptr;
  decltype(&::cuptiUnsubscribe) cuptiUnsubscribe = nullptr;
  decltype(&::cuptiEnableCallback) cuptiEnableCallback = nullptr;
  decltype(&::cuptiEnableDomain) cuptiEnableDomain = nullptr;
  decltype(&::cuptiGetCallbackName) cuptiGetCallbackName = nullptr;
  decltype(&::cuptiActivityEnable) cuptiActivityEnable = nullptr;
  decltype(&::cuptiActivityDisable) cuptiActivityDisable = nullptr;
  decltype(&::cuptiActivityRegisterCallbacks) cuptiActivityRegisterCallbacks = nullptr;
  decltype(&::cuptiActivityGetNextRecord) cuptiActivityGetNextRecord = nullptr;
  decltype(&::cuptiActivityFlushAll) cuptiActivityFlushAll = nullptr;
  decltype(&::cuptiActivityGetNumDroppedRecords) cuptiActivityGetNumDroppedRecords = nullptr;
  decltype(&::cuptiActivitySetAttribute) cuptiActivitySetAttribute = nullptr;
  decltype(&::cuptiSetThreadIdType) cuptiSetThreadIdType = nullptr;
  decltype(&::cuptiFinalize) cuptiFinalize = nullptr;

  // Never null, but only real from CUPTI 12.5 (Kineto gates them on 12.5): on an older CUPTI a
  // stand-in returns CUPTI_ERROR_NOT_SUPPORTED and every call stays recorded.
  decltype(&::cuptiActivityEnableRuntimeApi) cuptiActivityEnableRuntimeApi = nullptr;
  decltype(&::cuptiActivityEnableDriverApi) cuptiActivityEnableDriverApi = nullptr;
  bool has_per_api_filter = false;  // the two above are CUPTI's own

  // Optional: nullptr when this CUPTI does not export them.
  decltype(&::cuptiSubscribe_v2) cuptiSubscribe_v2 = nullptr;  // CUDA 13.0
  decltype(&::cuptiActivityRegisterTimestampCallback) cuptiActivityRegisterTimestampCallback =
      nullptr;
  decltype(&::cuptiActivityGetAttribute) cuptiActivityGetAttribute = nullptr;
  decltype(&::cuptiActivityFlushPeriod) cuptiActivityFlushPeriod = nullptr;
  decltype(&::cuptiActivityEnableAllSyncRecords) cuptiActivityEnableAllSyncRecords = nullptr;
  decltype(&::cuptiActivityEnableAllocationSource) cuptiActivityEnableAllocationSource = nullptr;
  decltype(&::cuptiActivityEnableCudaEventDeviceTimestamps)
      cuptiActivityEnableCudaEventDeviceTimestamps = nullptr;
  decltype(&::cuptiGetDeviceId) cuptiGetDeviceId = nullptr;
  decltype(&::cuptiGetContextId) cuptiGetContextId = nullptr;
  decltype(&::cuptiGetStreamIdEx) cuptiGetStreamIdEx = nullptr;
  decltype(&::cuptiActivityConfigureUnifiedMemoryCounter)
      cuptiActivityConfigureUnifiedMemoryCounter = nullptr;

  std::string path;      // the file the functions come from, as the dynamic linker names it
  uint32_t version = 0;  // cuptiGetVersion of that file
  RecordLayout layout;   // what its records may be read for (LayoutForCuptiVersion(version))
};

// Loads libcupti once per process and returns its table; later calls return the same table (and
// ignore `cupti_path`). Tried in order: a libcupti.so.13, then .so.12, already in the process
// (RTLD_NOLOAD), then `cupti_path` (LIBPROF_CUPTI_PATH) when not empty, then the toolkit copy
// named at build time (LIBPROF_DEFAULT_CUPTI_PATH), then "libcupti.so.13" on the search path.
// Returns nullptr with *error saying what was tried and why it failed (missing file, missing
// required symbol, CUPTI older than CUDA 12.0). Makes no CUDA call; never throws.
const CuptiApi* LoadCuptiApi(const std::string& cupti_path, std::string* error);

// Fills *api from an open dlopen handle: the table behind LoadCuptiApi, exposed for tests.
// False with *error naming every missing required symbol.
bool BindCuptiApi(void* handle, CuptiApi* api, std::string* error);

}  // namespace libprof
