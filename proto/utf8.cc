// UTF-8 validation as protobuf applies it to proto3 strings, and the replacement of bad bytes.
#include "proto/utf8.h"

#include <cstddef>
#include <cstdint>

namespace libprof {
namespace {

bool IsContinuation(uint8_t byte) { return (byte & 0xC0) == 0x80; }

// Length of the valid sequence starting at s[0] (n bytes available), or 0 when it is invalid.
size_t SequenceLength(const uint8_t* s, size_t n) {
  const uint8_t lead = s[0];
  if (lead < 0x80) return 1;
  if (lead < 0xC2) return 0;  // a stray continuation byte, or an overlong 2-byte form
  if (lead < 0xE0) return n >= 2 && IsContinuation(s[1]) ? 2 : 0;
  if (lead < 0xF0) {
    if (n < 3 || !IsContinuation(s[1]) || !IsContinuation(s[2])) return 0;
    if (lead == 0xE0 && s[1] < 0xA0) return 0;   // overlong
    if (lead == 0xED && s[1] >= 0xA0) return 0;  // UTF-16 surrogate
    return 3;
  }
  if (lead < 0xF5) {
    if (n < 4 || !IsContinuation(s[1]) || !IsContinuation(s[2]) || !IsContinuation(s[3])) {
      return 0;
    }
    if (lead == 0xF0 && s[1] < 0x90) return 0;   // overlong
    if (lead == 0xF4 && s[1] >= 0x90) return 0;  // past U+10FFFF
    return 4;
  }
  return 0;
}

}  // namespace

std::string_view ValidUtf8(std::string_view value, std::string* storage) {
  const auto* bytes = reinterpret_cast<const uint8_t*>(value.data());
  size_t pos = 0;
  // Fast path: nearly every string is ASCII or valid, and is returned without a copy.
  while (pos < value.size()) {
    const size_t length = SequenceLength(bytes + pos, value.size() - pos);
    if (length == 0) break;
    pos += length;
  }
  if (pos == value.size()) return value;
  storage->assign(value.substr(0, pos));
  while (pos < value.size()) {
    const size_t length = SequenceLength(bytes + pos, value.size() - pos);
    if (length == 0) {
      storage->append("\xEF\xBF\xBD");  // U+FFFD REPLACEMENT CHARACTER
      ++pos;
    } else {
      storage->append(value.substr(pos, length));
      pos += length;
    }
  }
  return *storage;
}

}  // namespace libprof
