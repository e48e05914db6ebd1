#include "libprof/cupti/cupti_api.h"

#include <dlfcn.h>
#include <link.h>

#include <memory>
#include <mutex>
#include <string_view>

// The build defines it from the CUDA toolkit it found; this is only the fallback of last resort.
#ifndef LIBPROF_DEFAULT_CUPTI_PATH
#define LIBPROF_DEFAULT_CUPTI_PATH "libcupti.so.13"
#endif

namespace libprof {
namespace {

// Stands in for cuptiActivityEnableRuntimeApi/DriverApi before CUPTI 12.5.
CUptiResult CUPTIAPI PerApiFilterUnsupported(CUpti_CallbackId, uint8_t) {
  return CUPTI_ERROR_NOT_SUPPORTED;
}

template <typename Fn>
bool Resolve(void* handle, const char* name, Fn* slot) {
  void* symbol = dlsym(handle, name);
  *slot = reinterpret_cast<Fn>(symbol);
  return symbol != nullptr;
}

// The path the dynamic linker loaded `handle` from; `fallback` if it cannot tell.
std::string LoadedPath(void* handle, std::string_view fallback) {
  link_map* map = nullptr;
  if (dlinfo(handle, RTLD_DI_LINKMAP, &map) == 0 && map != nullptr && map->l_name != nullptr &&
      map->l_name[0] != '\0') {
    return map->l_name;
  }
  return std::string(fallback);
}

std::string DlError() {
  const char* text = dlerror();
  return text ? text : "unknown dlopen error";
}

// Binds `handle` and checks its version. False with *why when it is not a usable CUPTI.
bool Adopt(void* handle, std::string_view name, CuptiApi* api, std::string* why) {
  if (!BindCuptiApi(handle, api, why)) return false;
  api->path = LoadedPath(handle, name);
  if (api->cuptiGetVersion(&api->version) != CUPTI_SUCCESS) {
    *why = "cuptiGetVersion failed";
    return false;
  }
  api->layout = LayoutForCuptiVersion(api->version);
  if (!api->layout.supported) {
    *why = "CUPTI API version " + std::to_string(api->version) +
           " is older than CUDA 12.0, the oldest whose records libprof decodes";
    return false;
  }
  return true;
}

}  // namespace

bool BindCuptiApi(void* handle, CuptiApi* api, std::string* error) {
  std::string missing;
  auto need = [&](const char* name, auto* slot) {
    if (!Resolve(handle, name, slot)) missing += missing.empty() ? name : std::string(", ") + name;
  };
#define LIBPROF_REQUIRE(fn) need(#fn, &api->fn)
#define LIBPROF_OPTIONAL(fn) Resolve(handle, #fn, &api->fn)
  LIBPROF_REQUIRE(cuptiGetVersion);
  LIBPROF_REQUIRE(cuptiGetResultString);
  LIBPROF_REQUIRE(cuptiGetTimestamp);
  LIBPROF_REQUIRE(cuptiSubscribe);
  LIBPROF_REQUIRE(cuptiUnsubscribe);
  LIBPROF_REQUIRE(cuptiEnableCallback);
  LIBPROF_REQUIRE(cuptiEnableDomain);
  LIBPROF_REQUIRE(cuptiGetCallbackName);
  LIBPROF_REQUIRE(cuptiActivityEnable);
  LIBPROF_REQUIRE(cuptiActivityDisable);
  LIBPROF_REQUIRE(cuptiActivityRegisterCallbacks);
  LIBPROF_REQUIRE(cuptiActivityGetNextRecord);
  LIBPROF_REQUIRE(cuptiActivityFlushAll);
  LIBPROF_REQUIRE(cuptiActivityGetNumDroppedRecords);
  LIBPROF_REQUIRE(cuptiActivitySetAttribute);
  LIBPROF_REQUIRE(cuptiSetThreadIdType);
  LIBPROF_REQUIRE(cuptiFinalize);
  LIBPROF_OPTIONAL(cuptiSubscribe_v2);
  LIBPROF_OPTIONAL(cuptiActivityRegisterTimestampCallback);
  LIBPROF_OPTIONAL(cuptiActivityGetAttribute);
  LIBPROF_OPTIONAL(cuptiActivityFlushPeriod);
  LIBPROF_OPTIONAL(cuptiActivityEnableAllSyncRecords);
  LIBPROF_OPTIONAL(cuptiActivityEnableAllocationSource);
  LIBPROF_OPTIONAL(cuptiActivityEnableCudaEventDeviceTimestamps);
  LIBPROF_OPTIONAL(cuptiGetDeviceId);
  LIBPROF_OPTIONAL(cuptiGetContextId);
  LIBPROF_OPTIONAL(cuptiGetStreamIdEx);
  LIBPROF_OPTIONAL(cuptiActivityConfigureUnifiedMemoryCounter);
  api->has_per_api_filter = LIBPROF_OPTIONAL(cuptiActivityEnableRuntimeApi) &&
                            LIBPROF_OPTIONAL(cuptiActivityEnableDriverApi);
#undef LIBPROF_REQUIRE
#undef LIBPROF_OPTIONAL
  if (!api->has_per_api_filter) {
    api->cuptiActivityEnableRuntimeApi = &PerApiFilterUnsupported;
    api->cuptiActivityEnableDriverApi = &PerApiFilterUnsupported;
  }
  if (!missing.empty()) {
    *error = "missing " + missing;
    return false;
  }
  return true;
}

const CuptiApi* LoadCuptiApi(const std::string& cupti_path, std::string* error) {
  // Never destroyed: atexit handlers and CUPTI's own threads may still use it at exit.
  static std::mutex mutex;
  static CuptiApi* loaded = nullptr;
  std::string ignored;
  if (error == nullptr) error = &ignored;
  try {
    std::lock_guard<std::mutex> lock(mutex);
    if (loaded != nullptr) return loaded;
    std::string tried;
    auto note = [&](std::string_view name, const std::string& why) {
      tried += tried.empty() ? "" : "; ";
      tried += std::string(name) + ": " + why;
    };
    auto api = std::make_unique<CuptiApi>();
    // A CUPTI already in the process is the only one we may use: a second copy would not see
    // the first one's subscriber and activity state.
    for (const char* soname : {"libcupti.so.13", "libcupti.so.12"}) {
      void* handle = dlopen(soname, RTLD_NOLOAD | RTLD_LAZY);
      if (handle == nullptr) {
        note(soname, "not loaded yet");
        continue;
      }
      std::string why;
      if (Adopt(handle, soname, api.get(), &why)) return loaded = api.release();
      *error = "the process's own " + std::string(soname) + " is unusable: " + why;
      return nullptr;
    }
    std::string candidates[] = {cupti_path, LIBPROF_DEFAULT_CUPTI_PATH, "libcupti.so.13"};
    for (const std::string& candidate : candidates) {
      if (candidate.empty()) continue;
      // Never dlclose'd, even when unusable: running a CUPTI's destructors at an arbitrary
      // point is riskier than keeping a few unused pages mapped.
      void* handle = dlopen(candidate.c_str(), RTLD_LAZY | RTLD_LOCAL);
      if (handle == nullptr) {
        note(candidate, DlError());
        continue;
      }
      std::string why;
      if (Adopt(handle, candidate, api.get(), &why)) return loaded = api.release();
      note(candidate, why);
      *api = CuptiApi{};
    }
    *error = "no usable libcupti (" + tried + ")";
  } catch (...) {
    *error = "out of memory while loading libcupti";
  }
  return nullptr;
}

}  // namespace libprof
