// libprof's side of the NVTX payload extension (nvToolsExtPayload.h): the extension module's
// handlers (schema and enum registration, payload ranges and marks) and the copy of an event's
// payloads out of the application's memory. Payloads are kept as bytes with their schema id;
// proto/nvtx_payload.h resolves schema layouts here and decodes payloads offline.
//
// Layer: libprof/nvtx/ (NVTX headers, no CUDA). Every handler is noexcept and catches everything.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "proto/trace_model.h"

struct nvtxExtModuleInfo_t;
struct nvtxPayloadData_v1;
struct nvtxPayloadSchemaAttr_v1;
struct nvtxPayloadEnumAttr_v1;

namespace libprof {

class NvtxRecorder;

// Payloads larger than this are kept as their schema id only (bounded work per event).
inline constexpr size_t kMaxPayloadBytes = 64 * 1024;

// Body of InitializeInjectionNvtxExtension: fills the payload module's function slots (other
// extension modules, counters and memory, are declined with 0). Never throws.
int InstallNvtxExtension(nvtxExtModuleInfo_t* module_info) noexcept;

// Copies `count` payloads given with an event of `domain`: the bytes of each (a size of
// SIZE_MAX takes the size its static schema declares, else keeps the schema id only).
std::vector<NvtxPayload> CopyPayloads(NvtxRecorder& recorder, uint32_t domain,
                                      const nvtxPayloadData_v1* data, size_t count);

// The conversions the handlers make, exposed for tests: a schema or enum as registered, with
// names interned into `recorder`, its layout resolved; returns the schema id (0 on bad input).
uint64_t RegisterSchema(NvtxRecorder& recorder, uint32_t domain,
                        const nvtxPayloadSchemaAttr_v1* attr);
uint64_t RegisterEnum(NvtxRecorder& recorder, uint32_t domain, const nvtxPayloadEnumAttr_v1* attr);

}  // namespace libprof
