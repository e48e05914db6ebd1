#include "libprof/driver_queries.h"

#include <dlfcn.h>

namespace libprof {
namespace {

// CU_DEVICE_ATTRIBUTE_* values from cuda.h (stable ABI).
constexpr int kAttributeMemoryClockRateKhz = 36;
constexpr int kAttributeGlobalMemoryBusWidth = 37;

void* FindSymbol(const char* const* libraries, const char* symbol) {
  void* fn = dlsym(RTLD_DEFAULT, symbol);
  for (const char* const* lib = libraries; fn == nullptr && *lib != nullptr; ++lib) {
    if (void* handle = dlopen(*lib, RTLD_NOLOAD | RTLD_LAZY)) fn = dlsym(handle, symbol);
  }
  return fn;
}

void* DriverSymbol(const char* symbol) {
  static const char* const kLibs[] = {"libcuda.so.1", nullptr};
  return FindSymbol(kLibs, symbol);
}

uint32_t QueryVersion(void* fn) {
  using VersionFn = int (*)(int*);
  int version = 0;
  if (fn == nullptr || reinterpret_cast<VersionFn>(fn)(&version) != 0) return 0;
  return static_cast<uint32_t>(version);
}

}  // namespace

uint32_t CudaDriverVersion() { return QueryVersion(DriverSymbol("cuDriverGetVersion")); }

uint32_t CudaRuntimeVersion() {
  static const char* const kLibs[] = {"libcudart.so.13", "libcudart.so.12", nullptr};
  return QueryVersion(FindSymbol(kLibs, "cudaRuntimeGetVersion"));
}

void FillDeviceDetails(DeviceInfo* device) {
  using DeviceGetFn = int (*)(int*, int);
  using PciBusIdFn = int (*)(char*, int, int);
  using AttributeFn = int (*)(int*, int, int);
  auto device_get = reinterpret_cast<DeviceGetFn>(DriverSymbol("cuDeviceGet"));
  auto pci_bus_id = reinterpret_cast<PciBusIdFn>(DriverSymbol("cuDeviceGetPCIBusId"));
  auto attribute = reinterpret_cast<AttributeFn>(DriverSymbol("cuDeviceGetAttribute"));
  int handle = 0;
  if (device_get == nullptr || device_get(&handle, static_cast<int>(device->id)) != 0) return;
  char bus_id[64] = {};
  if (pci_bus_id != nullptr && pci_bus_id(bus_id, sizeof bus_id - 1, handle) == 0) {
    device->pci_bus_id = bus_id;
  }
  int value = 0;
  if (attribute != nullptr && attribute(&value, kAttributeMemoryClockRateKhz, handle) == 0) {
    device->memory_clock_khz = static_cast<uint64_t>(value);
  }
  if (attribute != nullptr && attribute(&value, kAttributeGlobalMemoryBusWidth, handle) == 0) {
    device->memory_bus_width_bits = static_cast<uint32_t>(value);
  }
}

}  // namespace libprof
