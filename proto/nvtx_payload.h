// The NVTX payload extension (nvToolsExtPayload.h) without its headers: the values of its schema
// and entry types, the layout of a registered schema (entry offsets and sizes, resolved at
// capture with the application's own type sizes) and the decoding of a payload's bytes by its
// schema (offline, in the analysis). Both halves use it: libprof.so resolves layouts when a
// schema is registered, profview decodes payloads.
//
// Decoding never trusts the bytes: an unknown schema, a payload whose size disagrees with its
// schema, or an entry that lies outside the payload leaves the payload undecoded (kept raw, with
// its schema id and a one-line reason), never a crash.
//
// Layer: proto/ (CUDA-free, NVTX-header-free, libprotobuf-free; linked into libprof.so).
// libprof/nvtx/nvtx_payload_handlers.cc checks these values against NVTX's header.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "proto/trace_model.h"

namespace libprof::nvtx_payload {

// NVTX_PAYLOAD_ENTRY_TYPE_* (CUDA 13.0 nvToolsExtPayload.h).
inline constexpr uint64_t kTypeInvalid = 0, kTypeChar = 1, kTypeUchar = 2, kTypeShort = 3,
                          kTypeUshort = 4, kTypeInt = 5, kTypeUint = 6, kTypeLong = 7,
                          kTypeUlong = 8, kTypeLongLong = 9, kTypeUlongLong = 10, kTypeInt8 = 11,
                          kTypeUint8 = 12, kTypeInt16 = 13, kTypeUint16 = 14, kTypeInt32 = 15,
                          kTypeUint32 = 16, kTypeInt64 = 17, kTypeUint64 = 18, kTypeFloat = 19,
                          kTypeDouble = 20, kTypeLongDouble = 21, kTypeSize = 22,
                          kTypeAddress = 23, kTypeWchar = 24, kTypeChar8 = 25, kTypeChar16 = 26,
                          kTypeChar32 = 27;
// Types 0..27 have their size and alignment in the application's type-info array.
inline constexpr size_t kTypeInfoCount = 28;
inline constexpr uint64_t kTypeByte = 32, kTypeInt128 = 33, kTypeUint128 = 34, kTypeFloat16 = 42,
                          kTypeFloat32 = 43, kTypeFloat64 = 44, kTypeFloat128 = 45, kTypeBf16 = 50,
                          kTypeTf32 = 52, kTypeCategory = 68, kTypeColorArgb = 69,
                          kTypeScopeId = 70, kTypePidUint32 = 71, kTypePidUint64 = 72,
                          kTypeTidUint32 = 73, kTypeTidUint64 = 74, kTypeCstring = 75,
                          kTypeCstringUtf8 = 76, kTypeCstringUtf16 = 77, kTypeCstringUtf32 = 78,
                          kTypeRegisteredString = 80, kTypeUnionSelector = 100;
// Schema ids with a meaning of their own, and where application and tool ids start.
inline constexpr uint64_t kSchemaReferenced = 1022, kSchemaRaw = 1023;
inline constexpr uint64_t kSchemaIdStaticStart = uint64_t{1} << 24;
inline constexpr uint64_t kSchemaIdDynamicStart = uint64_t{1} << 32;

// NVTX_PAYLOAD_ENTRY_FLAG_*.
inline constexpr uint64_t kFlagPointer = 1 << 1, kFlagOffsetFromBase = 1 << 2,
                          kFlagOffsetFromHere = 1 << 3, kFlagArrayFixedSize = 1 << 4,
                          kFlagArrayZeroTerminated = 2 << 4, kFlagArrayLengthIndex = 3 << 4,
                          kFlagArrayLengthPayloadIndex = 4 << 4, kFlagArrayMask = 7 << 4;

// NVTX_PAYLOAD_SCHEMA_TYPE_*.
inline constexpr uint32_t kSchemaTypeStatic = 1, kSchemaTypeDynamic = 2, kSchemaTypeUnion = 3,
                          kSchemaTypeUnionWithSelector = 4;

// nvtxPayloadEntryTypeInfo_t: one predefined type's size and alignment in bytes.
struct TypeInfo {
  uint16_t size = 0;
  uint16_t align = 0;
};

// What an LP64 platform (x86-64, aarch64 Linux) gives for types 0..27: used when the
// application's NVTX did not pass its own array.
std::array<TypeInfo, kTypeInfoCount> Lp64TypeInfo();

// Finds a schema or enum of the same domain by id (nested entries); nullptr when unknown.
using SchemaLookup = std::function<const NvtxPayloadSchema*(uint64_t schema_id)>;

// Fills each entry's size_bytes (of one element) and, where the application left it 0 after the
// first entry, its offset_bytes by natural alignment; then the schema's static_size_bytes when
// 0 (end of the last entry, rounded up to the largest alignment, as a C struct). An entry whose
// size cannot be known (a variable-length array, an unknown nested schema) gets size 0, and so
// does every later entry without an offset of its own. Enums get their value size only.
void ResolveLayout(std::span<const TypeInfo> type_info, const SchemaLookup& lookup,
                   NvtxPayloadSchema* schema);

// One decoded entry: its name ("field 2" when unnamed; nested schemas give "outer.inner") and
// its value as text (integers in decimal, enum values by name, addresses in hex, arrays as
// "[a, b]"). Integral values also come as numbers, for the analyses that need them.
struct Field {
  std::string name;
  std::string text;
  bool is_integer = false;
  int64_t as_signed = 0;
  uint64_t as_unsigned = 0;
};

struct DecodedPayload {
  uint64_t schema_id = 0;
  bool decoded = false;
  std::string problem;  // why not decoded: "unknown schema 16777221", "size 12, schema says 24"
  std::vector<Field> fields;
  // The field named `name`, or nullptr.
  const Field* Find(std::string_view name) const;
};

// Decodes `payload` with the schemas of its event's domain (`lookup`), naming entries through
// `strings` (the trace's string table; ids beyond it read as ""). The payload's schema id may
// also be a predefined entry type (a payload of one value).
DecodedPayload Decode(const NvtxPayload& payload, const SchemaLookup& lookup,
                      std::span<const std::string> strings);

}  // namespace libprof::nvtx_payload
