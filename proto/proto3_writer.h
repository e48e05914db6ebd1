// Proto3Writer: a protozero writer that writes fields the way protobuf's own serializer does for
// proto3: default values (0, false, "") left out, repeated scalars packed, strings made valid
// UTF-8 (see utf8.h).
//
// Layer: proto/, writer side; protozero only, never libprotobuf.
#pragma once

#include <array>
#include <cstdint>
#include <protozero/pbf_writer.hpp>
#include <string>
#include <string_view>

#include "proto/utf8.h"

namespace libprof {

class Proto3Writer {
 public:
  explicit Proto3Writer(std::string* out) : writer_(*out) {}
  void Uint(uint32_t tag, uint64_t value) {
    if (value != 0) writer_.add_uint64(tag, value);
  }
  void Sint64(uint32_t tag, int64_t value) {
    if (value != 0) writer_.add_sint64(tag, value);
  }
  void Sint32(uint32_t tag, int32_t value) {
    if (value != 0) writer_.add_sint32(tag, value);
  }
  void Int64(uint32_t tag, int64_t value) {
    if (value != 0) writer_.add_int64(tag, value);
  }
  void Bool(uint32_t tag, bool value) {
    if (value) writer_.add_bool(tag, true);
  }
  // proto3 strings must be valid UTF-8 or libprotobuf rejects the whole chunk: see utf8.h.
  void String(uint32_t tag, const std::string& value) {
    if (!value.empty()) AnyString(tag, value);
  }
  // Also when empty: elements of repeated strings and map entries are always written.
  void AnyString(uint32_t tag, std::string_view value) {
    const std::string_view valid = ValidUtf8(value, &utf8_storage_);
    writer_.add_string(tag, valid.data(), valid.size());
  }
  void Bytes(uint32_t tag, const std::string& value) {
    if (!value.empty()) writer_.add_bytes(tag, value);
  }
  // A repeated uint32 of proto3 is packed; an all-zero xyz triple is left out entirely.
  void Xyz(uint32_t tag, const std::array<uint32_t, 3>& value) {
    if (value[0] != 0 || value[1] != 0 || value[2] != 0) {
      writer_.add_packed_uint32(tag, value.begin(), value.end());
    }
  }
  protozero::pbf_writer& writer() { return writer_; }

 private:
  protozero::pbf_writer writer_;
  std::string utf8_storage_;
};

}  // namespace libprof
