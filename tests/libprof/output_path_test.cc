#include "libprof/output_path.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <set>

namespace libprof {
namespace {

PathContext Context() {
  return PathContext{4242, "node7", 3, [](const char* name) -> const char* {
                       std::string n(name);
                       if (n == "RANK") return "5";
                       if (n == "EMPTY") return "";
                       return nullptr;
                     }};
}

std::string Expand(const std::string& templ) {
  std::string out, error;
  EXPECT_TRUE(ExpandOutputTemplate(templ, Context(), &out, &error)) << error;
  return out;
}

// Proves each template code expands as documented.
TEST(OutputPathTest, ExpandsEveryCode) {
  EXPECT_EQ(Expand("libprof-%p.pb"), "libprof-4242.pb");
  EXPECT_EQ(Expand("/x/%h-%p-%n.pb"), "/x/node7-4242-3.pb");
  EXPECT_EQ(Expand("r%q{RANK}.pb"), "r5.pb");
  EXPECT_EQ(Expand("r%q{UNSET}%q{EMPTY}.pb"), "r.pb");
  EXPECT_EQ(Expand("100%%.pb"), "100%.pb");
}

// Proves a directory (existing, or written with a trailing slash) gets one file per process.
TEST(OutputPathTest, DirectoryGetsPerProcessName) {
  std::string dir = ::testing::TempDir();
  std::filesystem::create_directories(dir + "/traces");
  EXPECT_EQ(Expand(dir + "/traces"), dir + "/traces/libprof-node7-4242.pb");
  EXPECT_EQ(Expand("out/"), "out/libprof-node7-4242.pb");
}

// Proves malformed templates are refused with a message naming the problem.
TEST(OutputPathTest, MalformedTemplatesAreRefused) {
  for (const char* bad : {"a%", "a%x.pb", "a%q.pb", "a%q{RANK.pb", "a%q{}.pb", ""}) {
    std::string out, error;
    EXPECT_FALSE(ExpandOutputTemplate(bad, Context(), &out, &error)) << bad;
    EXPECT_FALSE(error.empty()) << bad;
  }
}

// Proves an existing file is never overwritten unless asked: the next free .N name is picked.
TEST(OutputPathTest, PicksNextFreeName) {
  std::set<std::string> existing = {"t.pb", "t.1.pb", "dir.v2/noext"};
  auto exists = [&](const std::string& p) { return existing.count(p) > 0; };
  EXPECT_EQ(PickFreePath("u.pb", false, exists), "u.pb");
  EXPECT_EQ(PickFreePath("t.pb", false, exists), "t.2.pb");
  EXPECT_EQ(PickFreePath("t.pb", true, exists), "t.pb");
  EXPECT_EQ(PickFreePath("dir.v2/noext", false, exists), "dir.v2/noext.1");
}

}  // namespace
}  // namespace libprof
