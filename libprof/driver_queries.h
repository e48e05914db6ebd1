// Facts CUPTI's records do not carry, asked of the CUDA driver (and runtime) the process already
// loaded: versions, and a device's PCI bus id and memory interface.
//
// Layer: libprof/ (CUDA-free: the entry points are found with dlsym, libprof links neither
// libcuda nor libcudart). Called only from the writer thread, after cuInit has returned; CUPTI
// records these calls on that thread, and the recorder drops them as libprof's own.
#pragma once

#include <cstdint>

#include "libprof/capture_sources.h"
#include "proto/trace_model.h"

namespace libprof {

uint32_t CudaDriverVersion();   // cuDriverGetVersion, e.g. 13000; 0 when unknown
uint32_t CudaRuntimeVersion();  // cudaRuntimeGetVersion of a shared libcudart; 0 when none
// Fills pci_bus_id, memory_clock_khz and memory_bus_width_bits of the device with ordinal
// device->id, where the driver answers.
void FillDeviceDetails(DeviceInfo* device);

// The functions above, as the recorder's DetailsSource.
class DriverDetails final : public DetailsSource {
 public:
  void CompleteHeader(TraceHeader* header) override {
    header->cuda_driver_version = CudaDriverVersion();
  }
  uint32_t RuntimeVersion() override { return CudaRuntimeVersion(); }
  void CompleteDevice(DeviceInfo* device) override { FillDeviceDetails(device); }
};

}  // namespace libprof
