#include "libprof/output_path.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <vector>

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

std::string FreshDir(const std::string& name) {
  std::string dir = ::testing::TempDir() + "/" + name;
  std::filesystem::remove_all(dir);
  return dir;
}

// Proves %n is the first free number: successive opens of one template get 1, 2, 3, each file
// is created (folders included), and a name taken by someone else is skipped, not replaced.
TEST(OutputPathTest, SequenceCountsToTheFirstFreeName) {
  const std::string dir = FreshDir("seq");
  const std::string templ = dir + "/sub/run.%n.pb";
  std::vector<std::string> opened;
  for (int i = 0; i < 2; ++i) {
    auto out = OpenOutputFile(templ, Context(), /*overwrite=*/false);
    ASSERT_TRUE(out.has_value()) << out.error();
    EXPECT_TRUE(out->requested.empty());
    opened.push_back(out->path);
  }
  EXPECT_EQ(opened, (std::vector<std::string>{dir + "/sub/run.1.pb", dir + "/sub/run.2.pb"}));
  std::filesystem::remove(dir + "/sub/run.1.pb");  // a hole is reused: %n is the first free
  { std::ofstream taken(dir + "/sub/run.3.pb"); }
  auto again = OpenOutputFile(templ, Context(), /*overwrite=*/true);  // %n never overwrites
  ASSERT_TRUE(again.has_value());
  EXPECT_EQ(again->path, dir + "/sub/run.1.pb");
  auto next = OpenOutputFile(templ, Context(), false);
  ASSERT_TRUE(next.has_value());
  EXPECT_EQ(next->path, dir + "/sub/run.4.pb");
  EXPECT_EQ(std::filesystem::file_size(dir + "/sub/run.3.pb"), 0u);
}

// Proves a template without %n opens its own name, then "stem.N.ext" with `requested` set; with
// overwrite the name itself is reused; "%%n" is a literal, not a sequence.
TEST(OutputPathTest, OpenWithoutSequencePicksNextFreeName) {
  const std::string dir = FreshDir("plain");
  auto first = OpenOutputFile(dir + "/t%%n.pb", Context(), false);
  ASSERT_TRUE(first.has_value()) << first.error();
  EXPECT_EQ(first->path, dir + "/t%n.pb");
  EXPECT_TRUE(first->requested.empty());
  auto second = OpenOutputFile(dir + "/t%%n.pb", Context(), false);
  ASSERT_TRUE(second.has_value());
  EXPECT_EQ(second->path, dir + "/t%n.1.pb");
  EXPECT_EQ(second->requested, dir + "/t%n.pb");
  auto replaced = OpenOutputFile(dir + "/t%%n.pb", Context(), true);
  ASSERT_TRUE(replaced.has_value());
  EXPECT_EQ(replaced->path, dir + "/t%n.pb");
}

// Proves failures come back as one sentence: a bad template, a folder that cannot be made.
TEST(OutputPathTest, OpenReportsWhyItFailed) {
  auto bad = OpenOutputFile("x%y.pb", Context(), false);
  ASSERT_FALSE(bad.has_value());
  EXPECT_NE(bad.error().find("unknown code %y"), std::string::npos) << bad.error();
  const std::string dir = FreshDir("blocked");
  std::filesystem::create_directories(dir);
  { std::ofstream file(dir + "/file"); }  // a file where a folder is needed
  auto unusable = OpenOutputFile(dir + "/file/run.%n.pb", Context(), false);
  ASSERT_FALSE(unusable.has_value());
  EXPECT_NE(unusable.error().find("cannot create " + dir + "/file/run.1.pb"), std::string::npos)
      << unusable.error();
}

// Proves the trace list (LIBPROF_TRACE_LIST): one absolute path per line, appended by every
// process, created on first use; an unusable list is an error, not a crash.
TEST(OutputPathTest, TraceListGetsOneAbsolutePathPerTrace) {
  const std::string dir = ::testing::TempDir() + "/trace-list-" + std::to_string(getpid());
  std::filesystem::create_directories(dir);
  const std::string list = dir + "/list";
  ASSERT_TRUE(AppendToTraceList(list, "/abs/a.pb").has_value());
  ASSERT_TRUE(AppendToTraceList(list, "rel.pb").has_value());
  std::ifstream in(list);
  std::string first, second, extra;
  std::getline(in, first);
  std::getline(in, second);
  EXPECT_EQ(first, "/abs/a.pb");
  EXPECT_EQ(second, std::filesystem::current_path().string() + "/rel.pb");
  EXPECT_FALSE(std::getline(in, extra));
  auto failed = AppendToTraceList(dir + "/no/such/dir/list", "/abs/a.pb");
  ASSERT_FALSE(failed.has_value());
  EXPECT_NE(failed.error().find("cannot open"), std::string::npos);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace libprof
