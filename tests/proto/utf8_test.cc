#include "proto/utf8.h"

#include <gtest/gtest.h>

#include <string>

namespace libprof {
namespace {

std::string Fixed(std::string_view value) {
  std::string storage;
  return std::string(ValidUtf8(value, &storage));
}

// Proves valid UTF-8 (ASCII, 2-, 3- and 4-byte forms, NUL) passes unchanged and without a copy.
TEST(Utf8Test, ValidPassesThrough) {
  for (std::string_view valid :
       {std::string_view(""), std::string_view("cudaLaunchKernel"),
        std::string_view("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x9a\x80"), std::string_view("a\0b", 3),
        std::string_view("\xef\xbf\xbd\xf4\x8f\xbf\xbf")}) {
    std::string storage;
    EXPECT_EQ(ValidUtf8(valid, &storage).data(), valid.data());
  }
}

// Proves each byte of an invalid sequence (stray continuation, Latin-1, overlong form,
// surrogate, past U+10FFFF, cut sequence) becomes U+FFFD, as protobuf would otherwise reject it.
TEST(Utf8Test, InvalidBytesAreReplaced) {
  const std::string r = "\xef\xbf\xbd";
  EXPECT_EQ(Fixed("\x80"), r);
  EXPECT_EQ(Fixed("caf\xe9!"), "caf" + r + "!");
  EXPECT_EQ(Fixed("\xc0\xaf"), r + r);                  // overlong '/'
  EXPECT_EQ(Fixed("\xe0\x80\xaf"), r + r + r);          // overlong, 3 bytes
  EXPECT_EQ(Fixed("\xed\xa0\x80"), r + r + r);          // surrogate U+D800
  EXPECT_EQ(Fixed("\xf4\x90\x80\x80"), r + r + r + r);  // U+110000
  EXPECT_EQ(Fixed("ok\xe2\x82"), "ok" + r + r);         // cut at the end
  EXPECT_EQ(Fixed("\xff\xfe"
                  "abc"),
            r + r + "abc");
}

}  // namespace
}  // namespace libprof
