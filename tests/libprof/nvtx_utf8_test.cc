// AppendWideAsUtf8: every UTF-8 length, null input, and invalid code points replaced.
#include <gtest/gtest.h>

#include "libprof/nvtx/utf8.h"

namespace libprof {
namespace {

std::string Utf8(const wchar_t* text) {
  std::string out;
  AppendWideAsUtf8(text, &out);
  return out;
}

TEST(NvtxUtf8Test, EncodesEveryLength) {
  EXPECT_EQ(Utf8(L"abc"), "abc");
  EXPECT_EQ(Utf8(L"\u00e9"), "\xC3\xA9");
  EXPECT_EQ(Utf8(L"\u4e2d"), "\xE4\xB8\xAD");
  EXPECT_EQ(Utf8(L"\U0001F600"), "\xF0\x9F\x98\x80");
  EXPECT_EQ(Utf8(L""), "");
  EXPECT_EQ(Utf8(nullptr), "");
}

TEST(NvtxUtf8Test, ReplacesInvalidCodePoints) {
  const wchar_t surrogate[] = {L'a', static_cast<wchar_t>(0xD800), L'b', 0};
  const wchar_t too_large[] = {static_cast<wchar_t>(0x110000), 0};
  EXPECT_EQ(Utf8(surrogate),
            "a\xEF\xBF\xBD"
            "b");
  EXPECT_EQ(Utf8(too_large), "\xEF\xBF\xBD");
}

}  // namespace
}  // namespace libprof
