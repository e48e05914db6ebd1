#include "libprof/nvtx/nvtx_payload_handlers.h"

#include <algorithm>
#include <cstring>
#include <span>
#include <string>

#include "libprof/nvtx/nvtx_api.h"
#include <nvtx3/nvToolsExtPayload.h>

#include "libprof/nvtx/nvtx_guard.h"
#include "libprof/nvtx/nvtx_recorder.h"
#include "proto/nvtx_payload.h"

namespace libprof {
namespace np = nvtx_payload;

// proto/nvtx_payload.h carries NVTX's values without its headers: they must agree.
static_assert(np::kTypeInt == NVTX_PAYLOAD_ENTRY_TYPE_INT);
static_assert(np::kTypeSize == NVTX_PAYLOAD_ENTRY_TYPE_SIZE);
static_assert(np::kTypeAddress == NVTX_PAYLOAD_ENTRY_TYPE_ADDRESS);
static_assert(np::kTypeChar32 == NVTX_PAYLOAD_ENTRY_TYPE_CHAR32);
static_assert(np::kTypeInfoCount == NVTX_PAYLOAD_ENTRY_TYPE_INFO_ARRAY_SIZE);
static_assert(np::kTypeByte == NVTX_PAYLOAD_ENTRY_TYPE_BYTE);
static_assert(np::kTypeBf16 == NVTX_PAYLOAD_ENTRY_TYPE_BF16);
static_assert(np::kTypeCstring == NVTX_PAYLOAD_ENTRY_TYPE_CSTRING);
static_assert(np::kTypeCstringUtf32 == NVTX_PAYLOAD_ENTRY_TYPE_CSTRING_UTF32);
static_assert(np::kTypeRegisteredString == NVTX_PAYLOAD_ENTRY_TYPE_NVTX_REGISTERED_STRING_HANDLE);
static_assert(np::kTypeUnionSelector == NVTX_PAYLOAD_ENTRY_TYPE_UNION_SELECTOR);
static_assert(np::kSchemaRaw == NVTX_TYPE_PAYLOAD_SCHEMA_RAW);
static_assert(np::kSchemaReferenced == NVTX_TYPE_PAYLOAD_SCHEMA_REFERENCED);
static_assert(np::kSchemaIdStaticStart == NVTX_PAYLOAD_SCHEMA_ID_STATIC_START);
static_assert(np::kSchemaIdDynamicStart == NVTX_PAYLOAD_SCHEMA_ID_DYNAMIC_START);
static_assert(np::kFlagPointer == NVTX_PAYLOAD_ENTRY_FLAG_POINTER);
static_assert(np::kFlagArrayFixedSize == NVTX_PAYLOAD_ENTRY_FLAG_ARRAY_FIXED_SIZE);
static_assert(np::kFlagArrayLengthIndex == NVTX_PAYLOAD_ENTRY_FLAG_ARRAY_LENGTH_INDEX);
static_assert(np::kSchemaTypeStatic == NVTX_PAYLOAD_SCHEMA_TYPE_STATIC);
static_assert(np::kSchemaTypeDynamic == NVTX_PAYLOAD_SCHEMA_TYPE_DYNAMIC);
static_assert(sizeof(np::TypeInfo) == sizeof(nvtxPayloadEntryTypeInfo_t));

namespace {

// The application's type sizes (its NVTX passes them with the module), else LP64's.
std::array<np::TypeInfo, np::kTypeInfoCount> g_type_info = np::Lp64TypeInfo();

uint32_t DomainOf(NvtxRecorder& recorder, nvtxDomainHandle_t handle) {
  return recorder.CheckedDomain(reinterpret_cast<uintptr_t>(handle));
}

uint32_t Intern(NvtxRecorder& recorder, const char* text) {
  return text == nullptr ? 0 : recorder.InternMessage(text);
}

// ---- The payload module's handlers. Ranges and marks with payloads carry no message of their
// own (the schema's entries may: NVTX_PAYLOAD_ENTRY_FLAG_EVENT_MESSAGE, decoded offline).

uint64_t SchemaRegister(nvtxDomainHandle_t domain, const nvtxPayloadSchemaAttr_t* attr) noexcept {
  return Guarded(uint64_t{0}, [&] {
    NvtxRecorder& r = NvtxRecorder::Get();
    return RegisterSchema(r, DomainOf(r, domain), attr);
  });
}

uint64_t EnumRegister(nvtxDomainHandle_t domain, const nvtxPayloadEnumAttr_t* attr) noexcept {
  return Guarded(uint64_t{0}, [&] {
    NvtxRecorder& r = NvtxRecorder::Get();
    return RegisterEnum(r, DomainOf(r, domain), attr);
  });
}

NvtxAttributes WithPayloads(NvtxRecorder& r, uint32_t domain, const nvtxPayloadData_t* data,
                            size_t count) {
  NvtxAttributes attributes;
  if (r.enabled()) attributes.payloads = CopyPayloads(r, domain, data, count);
  return attributes;
}

void MarkPayload(nvtxDomainHandle_t domain, const nvtxPayloadData_t* data, size_t count) noexcept {
  Guarded(0, [&] {
    NvtxRecorder& r = NvtxRecorder::Get();
    const uint32_t id = DomainOf(r, domain);
    if (r.enabled()) r.Mark(id, WithPayloads(r, id, data, count));
    return 0;
  });
}

int RangePushPayload(nvtxDomainHandle_t domain, const nvtxPayloadData_t* data,
                     size_t count) noexcept {
  return Guarded(-1, [&] {
    NvtxRecorder& r = NvtxRecorder::Get();
    const uint32_t id = DomainOf(r, domain);
    return r.Push(id, WithPayloads(r, id, data, count));
  });
}

int RangePopPayload(nvtxDomainHandle_t domain, const nvtxPayloadData_t* data,
                    size_t count) noexcept {
  return Guarded(-1, [&] {
    NvtxRecorder& r = NvtxRecorder::Get();
    const uint32_t id = DomainOf(r, domain);
    return r.Pop(id, WithPayloads(r, id, data, count).payloads);
  });
}

nvtxRangeId_t RangeStartPayload(nvtxDomainHandle_t domain, const nvtxPayloadData_t* data,
                                size_t count) noexcept {
  return Guarded(nvtxRangeId_t{0}, [&] {
    NvtxRecorder& r = NvtxRecorder::Get();
    const uint32_t id = DomainOf(r, domain);
    return r.StartRange(id, WithPayloads(r, id, data, count));
  });
}

void RangeEndPayload(nvtxDomainHandle_t domain, nvtxRangeId_t range, const nvtxPayloadData_t* data,
                     size_t count) noexcept {
  Guarded(0, [&] {
    NvtxRecorder& r = NvtxRecorder::Get();
    r.EndRange(range, WithPayloads(r, DomainOf(r, domain), data, count).payloads);
    return 0;
  });
}

// Every domain is recorded: instrumentation that asks may skip building payloads otherwise.
uint8_t DomainIsEnabled(nvtxDomainHandle_t) noexcept { return 1; }

struct Slot {
  size_t callback_id;
  intptr_t function;
};

template <typename FunctionType>
Slot MakeSlot(size_t id, FunctionType function) {
  return Slot{id, reinterpret_cast<intptr_t>(function)};
}

}  // namespace

uint64_t RegisterSchema(NvtxRecorder& recorder, uint32_t domain,
                        const nvtxPayloadSchemaAttr_t* attr) {
  if (attr == nullptr) return 0;
  const uint64_t mask = attr->fieldMask;
  auto has = [mask](uint64_t field) { return (mask & field) != 0; };
  NvtxPayloadSchema schema{.domain_id = domain};
  if (has(NVTX_PAYLOAD_SCHEMA_ATTR_FIELD_NAME)) schema.name_id = Intern(recorder, attr->name);
  if (has(NVTX_PAYLOAD_SCHEMA_ATTR_FIELD_TYPE)) {
    schema.schema_type = static_cast<uint32_t>(attr->type);
  }
  if (has(NVTX_PAYLOAD_SCHEMA_ATTR_FIELD_FLAGS)) schema.flags = attr->flags;
  if (has(NVTX_PAYLOAD_SCHEMA_ATTR_FIELD_STATIC_SIZE)) {
    schema.static_size_bytes = attr->payloadStaticSize;
  }
  if (has(NVTX_PAYLOAD_SCHEMA_ATTR_FIELD_SCHEMA_ID)) schema.schema_id = attr->schemaId;
  if (has(NVTX_PAYLOAD_SCHEMA_ATTR_FIELD_ENTRIES) && has(NVTX_PAYLOAD_SCHEMA_ATTR_FIELD_NUM_ENTRIES) &&
      attr->entries != nullptr) {
    // A schema of thousands of entries is not a C struct: bounded, like payloads.
    const size_t count = std::min<size_t>(attr->numEntries, 4096);
    schema.entries.reserve(count);
    for (size_t i = 0; i < count; ++i) {
      const nvtxPayloadSchemaEntry_t& e = attr->entries[i];
      schema.entries.push_back({.flags = e.flags,
                                .type = e.type,
                                .name_id = Intern(recorder, e.name),
                                .array_length = e.arrayOrUnionDetail,
                                .offset_bytes = e.offset});
    }
  }
  return recorder.RegisterSchema(std::move(schema), g_type_info);
}

uint64_t RegisterEnum(NvtxRecorder& recorder, uint32_t domain, const nvtxPayloadEnumAttr_t* attr) {
  if (attr == nullptr) return 0;
  const uint64_t mask = attr->fieldMask;
  auto has = [mask](uint64_t field) { return (mask & field) != 0; };
  NvtxPayloadSchema schema{.domain_id = domain, .is_enum = true};
  if (has(NVTX_PAYLOAD_ENUM_ATTR_FIELD_NAME)) schema.name_id = Intern(recorder, attr->name);
  if (has(NVTX_PAYLOAD_ENUM_ATTR_FIELD_SIZE)) schema.static_size_bytes = attr->sizeOfEnum;
  if (has(NVTX_PAYLOAD_ENUM_ATTR_FIELD_SCHEMA_ID)) schema.schema_id = attr->schemaId;
  if (has(NVTX_PAYLOAD_ENUM_ATTR_FIELD_ENTRIES) && has(NVTX_PAYLOAD_ENUM_ATTR_FIELD_NUM_ENTRIES) &&
      attr->entries != nullptr) {
    const size_t count = std::min<size_t>(attr->numEntries, 4096);
    for (size_t i = 0; i < count; ++i) {
      const nvtxPayloadEnum_t& e = attr->entries[i];
      schema.enum_values.push_back({.name_id = Intern(recorder, e.name),
                                    .value = e.value,
                                    .is_flag = e.isFlag != 0});
    }
  }
  if (schema.static_size_bytes == 0) schema.static_size_bytes = sizeof(int);  // a C enum
  return recorder.RegisterSchema(std::move(schema), g_type_info);
}

std::vector<NvtxPayload> CopyPayloads(NvtxRecorder& recorder, uint32_t domain,
                                      const nvtxPayloadData_t* data, size_t count) {
  std::vector<NvtxPayload> out;
  if (data == nullptr) return out;
  count = std::min<size_t>(count, 16);  // NCCL passes 1; more is unusual, more than 16 absurd
  out.reserve(count);
  for (size_t i = 0; i < count; ++i) {
    NvtxPayload& payload = out.emplace_back();
    payload.schema_id = data[i].schemaId;
    size_t size = data[i].size;
    if (size == SIZE_MAX) size = recorder.SchemaStaticSize(domain, data[i].schemaId);
    if (data[i].payload != nullptr && size > 0 && size <= kMaxPayloadBytes) {
      payload.data.assign(static_cast<const char*>(data[i].payload), size);
    }
  }
  return out;
}

int InstallNvtxExtension(nvtxExtModuleInfo_t* module_info) noexcept {
  try {
    if (module_info == nullptr || module_info->moduleId != NVTX_EXT_PAYLOAD_MODULEID ||
        module_info->segmentsCount < 1 || module_info->segments == nullptr) {
      return 0;
    }
    // The type sizes of the application's platform: entry 0 gives the array's length.
    if (const auto* info = static_cast<const nvtxPayloadEntryTypeInfo_t*>(module_info->extInfo)) {
      const size_t length = std::min<size_t>(info[0].size, np::kTypeInfoCount);
      if (info[0].align == sizeof(nvtxPayloadEntryTypeInfo_t)) {
        for (size_t i = 1; i < length; ++i) g_type_info[i] = {info[i].size, info[i].align};
      }
    }
    NvtxRecorder::Get();
    static const Slot kSlots[] = {
        MakeSlot(NVTX3EXT_CBID_nvtxPayloadSchemaRegister, &SchemaRegister),
        MakeSlot(NVTX3EXT_CBID_nvtxPayloadEnumRegister, &EnumRegister),
        MakeSlot(NVTX3EXT_CBID_nvtxMarkPayload, &MarkPayload),
        MakeSlot(NVTX3EXT_CBID_nvtxRangePushPayload, &RangePushPayload),
        MakeSlot(NVTX3EXT_CBID_nvtxRangePopPayload, &RangePopPayload),
        MakeSlot(NVTX3EXT_CBID_nvtxRangeStartPayload, &RangeStartPayload),
        MakeSlot(NVTX3EXT_CBID_nvtxRangeEndPayload, &RangeEndPayload),
        MakeSlot(NVTX3EXT_CBID_nvtxDomainIsEnabled, &DomainIsEnabled),
    };
    nvtxExtModuleSegment_t& segment = module_info->segments[0];
    if (segment.functionSlots == nullptr) return 0;
    for (const Slot& slot : kSlots) {
      if (slot.callback_id < segment.slotCount) segment.functionSlots[slot.callback_id] = slot.function;
    }
    return 1;
  } catch (...) {
    return 0;
  }
}

}  // namespace libprof
