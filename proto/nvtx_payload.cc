#include "proto/nvtx_payload.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <cstring>

namespace libprof::nvtx_payload {
namespace {

// Nested schemas deeper than this are not followed (a schema that contains itself, directly or
// not, would otherwise recurse forever).
constexpr int kMaxNesting = 8;
// Array elements rendered per entry; the rest are counted ("... 90 more").
constexpr uint64_t kMaxArrayElements = 16;

bool IsStringType(uint64_t type) {
  return type == kTypeCstring || type == kTypeCstringUtf8 || type == kTypeCstringUtf16 ||
         type == kTypeCstringUtf32;
}

uint16_t CharSize(uint64_t type) {
  if (type == kTypeCstringUtf16) return 2;
  if (type == kTypeCstringUtf32) return 4;
  return 1;
}

// Size and alignment of one element of a type, 0 when unknown.
TypeInfo ElementInfo(uint64_t type, uint64_t flags, std::span<const TypeInfo> type_info,
                     const SchemaLookup& lookup, int depth) {
  const TypeInfo pointer = type_info.size() > kTypeAddress && type_info[kTypeAddress].size != 0
                               ? type_info[kTypeAddress]
                               : TypeInfo{8, 8};
  if ((flags & kFlagPointer) != 0) return pointer;
  if (type < kTypeInfoCount) return type < type_info.size() ? type_info[type] : TypeInfo{};
  switch (type) {
    case kTypeByte: return {1, 1};
    case kTypeInt128: case kTypeUint128: case kTypeFloat128: return {16, 16};
    case kTypeFloat16: case kTypeBf16: return {2, 2};
    case kTypeFloat32: case kTypeTf32: case kTypeCategory: case kTypeColorArgb:
    case kTypePidUint32: case kTypeTidUint32: return {4, 4};
    case kTypeFloat64: case kTypeScopeId: case kTypePidUint64: case kTypeTidUint64:
      return {8, 8};
    case kTypeRegisteredString: return pointer;
    default: break;
  }
  if (IsStringType(type)) {
    // Embedded fixed-size string (arrayOrUnionDetail = length, no array flag) or a pointer.
    return (flags & kFlagArrayMask) == 0 ? TypeInfo{CharSize(type), CharSize(type)} : pointer;
  }
  if (depth >= kMaxNesting || lookup == nullptr) return {};
  const NvtxPayloadSchema* nested = lookup(type);
  if (nested == nullptr || nested->static_size_bytes == 0) return {};
  if (nested->is_enum) {
    const auto size = static_cast<uint16_t>(nested->static_size_bytes);
    return {size, size};
  }
  uint16_t align = 1;
  for (const NvtxPayloadEntry& entry : nested->entries) {
    const TypeInfo info = ElementInfo(entry.type, entry.flags, type_info, lookup, depth + 1);
    align = std::max(align, info.align);
  }
  return {static_cast<uint16_t>(std::min<uint64_t>(nested->static_size_bytes, 0xFFFF)), align};
}

// Elements in an entry: fixed-size arrays and embedded strings give their length.
uint64_t ElementCount(const NvtxPayloadEntry& entry) {
  const uint64_t array = entry.flags & kFlagArrayMask;
  if (array == kFlagArrayFixedSize) return entry.array_length;
  if (array == 0 && IsStringType(entry.type) && (entry.flags & kFlagPointer) == 0) {
    return entry.array_length;  // 0 = a zero-terminated string somewhere else: not embedded
  }
  return 1;
}

bool HasFixedLayout(const NvtxPayloadEntry& entry) {
  const uint64_t array = entry.flags & kFlagArrayMask;
  if ((entry.flags & kFlagPointer) != 0) return true;
  if (array == kFlagArrayFixedSize) return true;
  if (array != 0) return false;  // zero-terminated or length-indexed: size known per payload
  if (IsStringType(entry.type)) return entry.array_length > 0;
  return true;
}

uint64_t AlignUp(uint64_t value, uint64_t align) {
  return align <= 1 ? value : (value + align - 1) / align * align;
}

std::string Hex(uint64_t value) {
  char text[24];
  std::snprintf(text, sizeof(text), "0x%" PRIx64, value);
  return text;
}

uint64_t ReadUnsigned(const char* p, size_t size) {
  uint64_t value = 0;
  std::memcpy(&value, p, std::min<size_t>(size, 8));  // little-endian platforms only
  return value;
}

int64_t ReadSigned(const char* p, size_t size) {
  const uint64_t raw = ReadUnsigned(p, size);
  if (size >= 8) return static_cast<int64_t>(raw);
  const uint64_t sign = uint64_t{1} << (size * 8 - 1);
  return static_cast<int64_t>((raw ^ sign) - sign);
}

bool IsSignedType(uint64_t type) {
  switch (type) {
    case kTypeChar: case kTypeShort: case kTypeInt: case kTypeLong: case kTypeLongLong:
    case kTypeInt8: case kTypeInt16: case kTypeInt32: case kTypeInt64: case kTypeWchar:
      return true;
    default:
      return false;
  }
}

bool IsUnsignedType(uint64_t type) {
  switch (type) {
    case kTypeUchar: case kTypeUshort: case kTypeUint: case kTypeUlong: case kTypeUlongLong:
    case kTypeUint8: case kTypeUint16: case kTypeUint32: case kTypeUint64: case kTypeSize:
    case kTypeCategory: case kTypeScopeId: case kTypePidUint32: case kTypePidUint64:
    case kTypeTidUint32: case kTypeTidUint64: case kTypeByte: case kTypeChar8:
    case kTypeChar16: case kTypeChar32: case kTypeUnionSelector:
      return true;
    default:
      return false;
  }
}

class Decoder {
 public:
  Decoder(const SchemaLookup& lookup, std::span<const std::string> strings)
      : lookup_(lookup), strings_(strings) {}

  std::string_view Name(uint32_t id) const {
    return id < strings_.size() ? std::string_view(strings_[id]) : std::string_view();
  }

  // One element of `type` at `p` (size bytes), as a field (name set by the caller).
  Field Element(uint64_t type, uint64_t flags, const char* p, size_t size, int depth,
                std::vector<Field>* nested_out, const std::string& prefix) const {
    Field field;
    if ((flags & kFlagPointer) != 0 || type == kTypeAddress || type == kTypeRegisteredString) {
      field.text = Hex(ReadUnsigned(p, size));  // an address of the recording process
      return field;
    }
    if (IsSignedType(type)) {
      field.is_integer = true;
      field.as_signed = ReadSigned(p, size);
      field.as_unsigned = static_cast<uint64_t>(field.as_signed);
      field.text = std::to_string(field.as_signed);
      return field;
    }
    if (IsUnsignedType(type)) {
      field.is_integer = true;
      field.as_unsigned = ReadUnsigned(p, size);
      field.as_signed = static_cast<int64_t>(field.as_unsigned);
      field.text = type == kTypeColorArgb ? Hex(field.as_unsigned)
                                          : std::to_string(field.as_unsigned);
      return field;
    }
    if (type == kTypeColorArgb) {
      field.text = Hex(ReadUnsigned(p, size));
      return field;
    }
    if ((type == kTypeFloat || type == kTypeFloat32) && size == 4) {
      float value;
      std::memcpy(&value, p, 4);
      field.text = std::to_string(value);
      return field;
    }
    if ((type == kTypeDouble || type == kTypeFloat64) && size == 8) {
      double value;
      std::memcpy(&value, p, 8);
      field.text = std::to_string(value);
      return field;
    }
    if (const NvtxPayloadSchema* schema = lookup_ ? lookup_(type) : nullptr) {
      if (schema->is_enum) {
        field.is_integer = true;
        field.as_unsigned = ReadUnsigned(p, size);
        field.as_signed = ReadSigned(p, size);
        field.text = std::to_string(field.as_signed);
        for (const NvtxPayloadEnumValue& value : schema->enum_values) {
          if (value.value == field.as_unsigned) field.text = std::string(Name(value.name_id));
        }
        return field;
      }
      if (depth < kMaxNesting && nested_out != nullptr) {
        std::string problem;
        Entries(*schema, p, size, depth + 1, prefix + ".", nested_out, &problem);
        field.text = problem.empty() ? "" : "(" + problem + ")";
        return field;
      }
    }
    // A type we cannot read (long double, 128-bit, half floats): its bytes.
    for (size_t i = 0; i < size; ++i) {
      char byte[4];
      std::snprintf(byte, sizeof(byte), "%02x", static_cast<unsigned char>(p[i]));
      field.text += byte;
    }
    return field;
  }

  // Appends the fields of `schema` read from `data`; false with `problem` when an entry lies
  // outside the data.
  bool Entries(const NvtxPayloadSchema& schema, const char* data, size_t size, int depth,
               const std::string& prefix, std::vector<Field>* out, std::string* problem) const {
    for (size_t i = 0; i < schema.entries.size(); ++i) {
      const NvtxPayloadEntry& entry = schema.entries[i];
      std::string name(Name(entry.name_id));
      if (name.empty()) name = "field " + std::to_string(i);
      name = prefix + name;
      if (entry.size_bytes == 0 || !HasFixedLayout(entry)) {
        out->push_back(Field{.name = name, .text = "(not decoded: variable layout)"});
        continue;
      }
      const uint64_t count = ElementCount(entry);
      const uint64_t bytes = entry.size_bytes * count;
      if (entry.offset_bytes > size || bytes > size - entry.offset_bytes) {
        *problem = "entry '" + name + "' ends at byte " +
                   std::to_string(entry.offset_bytes + bytes) + ", past the payload's " +
                   std::to_string(size);
        return false;
      }
      const char* p = data + entry.offset_bytes;
      if (IsStringType(entry.type) && (entry.flags & kFlagPointer) == 0 && count > 0) {
        // An embedded string: up to its first NUL (UTF-16/32 kept as raw code units).
        const size_t length = CharSize(entry.type) == 1 ? strnlen(p, count) : bytes;
        out->push_back(Field{.name = name, .text = std::string(p, length)});
        continue;
      }
      if (count == 1) {
        const size_t before = out->size();
        Field field = Element(entry.type, entry.flags, p, entry.size_bytes, depth, out, name);
        field.name = name;
        if (out->size() == before || !field.text.empty()) {
          out->insert(out->begin() + static_cast<std::ptrdiff_t>(before), std::move(field));
        }
        continue;
      }
      std::string text = "[";
      for (uint64_t k = 0; k < std::min(count, kMaxArrayElements); ++k) {
        if (k > 0) text += ", ";
        text += Element(entry.type, entry.flags, p + k * entry.size_bytes, entry.size_bytes,
                        kMaxNesting, nullptr, name)
                    .text;
      }
      if (count > kMaxArrayElements) {
        text += ", ... " + std::to_string(count - kMaxArrayElements) + " more";
      }
      out->push_back(Field{.name = name, .text = text + "]"});
    }
    return true;
  }

 private:
  const SchemaLookup& lookup_;
  std::span<const std::string> strings_;
};

}  // namespace

std::array<TypeInfo, kTypeInfoCount> Lp64TypeInfo() {
  return {{{kTypeInfoCount, sizeof(TypeInfo)},  // entry 0: the array's own length, as NVTX's
           {1, 1}, {1, 1}, {2, 2}, {2, 2}, {4, 4}, {4, 4}, {8, 8}, {8, 8}, {8, 8}, {8, 8},
           {1, 1}, {1, 1}, {2, 2}, {2, 2}, {4, 4}, {4, 4}, {8, 8}, {8, 8},
           {4, 4}, {8, 8}, {16, 16},
           {8, 8}, {8, 8},
           {4, 4}, {1, 1}, {2, 2}, {4, 4}}};
}

void ResolveLayout(std::span<const TypeInfo> type_info, const SchemaLookup& lookup,
                   NvtxPayloadSchema* schema) {
  if (schema->is_enum) return;  // static_size_bytes is the enum's sizeOfEnum already
  uint64_t end = 0;
  uint16_t max_align = 1;
  bool known = true;  // every entry so far has a known size and place
  for (size_t i = 0; i < schema->entries.size(); ++i) {
    NvtxPayloadEntry& entry = schema->entries[i];
    const TypeInfo info = ElementInfo(entry.type, entry.flags, type_info, lookup, 0);
    entry.size_bytes = HasFixedLayout(entry) ? info.size : 0;
    max_align = std::max(max_align, info.align);
    const bool has_offset = entry.offset_bytes != 0 || i == 0;
    if (!has_offset) {
      if (!known) {
        entry.size_bytes = 0;  // its place depends on an earlier entry of unknown size
        continue;
      }
      entry.offset_bytes = AlignUp(end, info.align);
    }
    if (entry.size_bytes == 0) {
      known = false;
      continue;
    }
    known = true;
    end = std::max(end, entry.offset_bytes + entry.size_bytes * ElementCount(entry));
  }
  if (schema->static_size_bytes == 0 && known && schema->schema_type == kSchemaTypeStatic) {
    schema->static_size_bytes = AlignUp(end, max_align);
  }
}

const Field* DecodedPayload::Find(std::string_view name) const {
  for (const Field& field : fields) {
    if (field.name == name) return &field;
  }
  return nullptr;
}

DecodedPayload Decode(const NvtxPayload& payload, const SchemaLookup& lookup,
                      std::span<const std::string> strings) {
  DecodedPayload out;
  out.schema_id = payload.schema_id;
  const Decoder decoder(lookup, strings);
  const std::string& data = payload.data;
  if (payload.schema_id == kSchemaRaw || payload.schema_id == kSchemaReferenced) {
    out.problem = "raw payload";
    return out;
  }
  if (payload.schema_id < kSchemaReferenced) {  // a predefined type: one value
    const TypeInfo info = ElementInfo(payload.schema_id, 0, Lp64TypeInfo(), nullptr, 0);
    if (info.size == 0 || data.size() != info.size) {
      out.problem = "size " + std::to_string(data.size()) + ", type " +
                    std::to_string(payload.schema_id) + " says " + std::to_string(info.size);
      return out;
    }
    Field field = decoder.Element(payload.schema_id, 0, data.data(), info.size, kMaxNesting,
                                  nullptr, "");
    field.name = "value";
    out.fields.push_back(std::move(field));
    out.decoded = true;
    return out;
  }
  const NvtxPayloadSchema* schema = lookup ? lookup(payload.schema_id) : nullptr;
  if (schema == nullptr) {
    out.problem = "unknown schema " + std::to_string(payload.schema_id);
    return out;
  }
  if (schema->is_enum || schema->schema_type == kSchemaTypeStatic) {
    const uint64_t expected = schema->static_size_bytes;
    if (expected != 0 && data.size() != expected) {
      out.problem = "size " + std::to_string(data.size()) + ", schema " +
                    std::to_string(payload.schema_id) + " says " + std::to_string(expected);
      return out;
    }
  }
  if (schema->is_enum) {
    Field field = decoder.Element(payload.schema_id, 0, data.data(), data.size(), 0, nullptr, "");
    field.name = "value";
    out.fields.push_back(std::move(field));
    out.decoded = true;
    return out;
  }
  if (schema->schema_type != kSchemaTypeStatic && schema->schema_type != kSchemaTypeDynamic) {
    out.problem = "schema type " + std::to_string(schema->schema_type) + " (unions) not decoded";
    return out;
  }
  std::vector<Field> fields;
  if (!decoder.Entries(*schema, data.data(), data.size(), 0, "", &fields, &out.problem)) {
    return out;
  }
  out.fields = std::move(fields);
  out.decoded = true;
  return out;
}

}  // namespace libprof::nvtx_payload
