// Proves that an output file appears under its name only when committed, that nothing is left
// behind when it is not (or when the commit fails), and that bad paths are errors.
#include "analysis/reports/output_file.h"

#include <gtest/gtest.h>

#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "tests/analysis/trace_builder.h"

namespace libprof::analysis::testing {
namespace {

namespace fs = std::filesystem;

std::vector<std::string> Entries(const std::string& dir) {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir)) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

std::string Contents(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(OutputFileTest, AppearsOnlyWhenCommitted) {
  TempDir dir;
  const std::string path = dir.Path("out.json");
  auto file = OutputFile::Create(path);
  ASSERT_TRUE(file.has_value()) << file.error();
  (*file)->stream() << "{}";
  EXPECT_FALSE(fs::exists(path));  // still under its temporary name
  ASSERT_EQ(Entries(dir.Path("")).size(), 1u);
  ASSERT_TRUE((*file)->Commit().has_value());
  EXPECT_EQ(Contents(path), "{}");
  EXPECT_EQ(Entries(dir.Path("")), std::vector<std::string>{"out.json"});
}

TEST(OutputFileTest, ReplacesAnExistingFile) {
  TempDir dir;
  const std::string path = dir.Path("out.json");
  std::ofstream(path) << "old";
  auto file = OutputFile::Create(path);
  ASSERT_TRUE(file.has_value()) << file.error();
  (*file)->stream() << "new";
  EXPECT_EQ(Contents(path), "old");
  ASSERT_TRUE((*file)->Commit().has_value());
  EXPECT_EQ(Contents(path), "new");
}

// Without replace, an existing file is refused at Create, and one that appears before Commit is
// kept (the rename does not replace it) while the temporary file goes.
TEST(OutputFileTest, NoReplaceKeepsAnExistingFile) {
  TempDir dir;
  const std::string path = dir.Path("out.db");
  std::ofstream(path) << "old";
  auto refused = OutputFile::Create(path, {.open_stream = false, .replace = false});
  ASSERT_FALSE(refused.has_value());
  EXPECT_EQ(refused.error(), path + ": exists already (--force replaces it)");
  fs::remove(path);

  auto file = OutputFile::Create(path, {.open_stream = false, .replace = false});
  ASSERT_TRUE(file.has_value()) << file.error();
  std::ofstream((*file)->temp_path()) << "new";  // written by the caller itself
  std::ofstream(path) << "raced";
  auto committed = (*file)->Commit();
  ASSERT_FALSE(committed.has_value());
  EXPECT_EQ(committed.error(), path + ": exists already (--force replaces it)");
  file->reset();
  EXPECT_EQ(Contents(path), "raced");
  EXPECT_EQ(Entries(dir.Path("")), std::vector<std::string>{"out.db"});

  fs::remove(path);
  auto fresh = OutputFile::Create(path, {.open_stream = false, .replace = false});
  ASSERT_TRUE(fresh.has_value());
  std::ofstream((*fresh)->temp_path()) << "new";
  ASSERT_TRUE((*fresh)->Commit().has_value());
  EXPECT_EQ(Contents(path), "new");
}

// Ctrl-C (or kill) during an export: the handler removes the temporary file, and the process
// still dies of the signal, as the shell expects.
TEST(OutputFileDeathTest, SignalRemovesTheTemporaryFile) {
  TempDir dir;
  const std::string path = dir.Path("out.sqlite");
  EXPECT_EXIT(
      {
        RemoveOutputTemporariesOnSignal();
        auto file = OutputFile::Create(path, {.open_stream = false, .replace = false});
        if (!file || Entries(dir.Path("")).size() != 1) std::exit(3);  // the temporary exists
        std::raise(SIGINT);
        std::exit(4);
      },
      ::testing::KilledBySignal(SIGINT), "");
  EXPECT_TRUE(Entries(dir.Path("")).empty());
}

TEST(OutputFileTest, UncommittedFileLeavesNothing) {
  TempDir dir;
  {
    auto file = OutputFile::Create(dir.Path("out.json"));
    ASSERT_TRUE(file.has_value()) << file.error();
    (*file)->stream() << "half a docu";
  }
  EXPECT_TRUE(Entries(dir.Path("")).empty());
}

TEST(OutputFileTest, BadPathsAreErrors) {
  TempDir dir;
  auto missing = OutputFile::Create(dir.Path("no/such/dir/out.json"));
  ASSERT_FALSE(missing.has_value());
  EXPECT_EQ(missing.error(),
            dir.Path("no/such/dir/out.json") + ": cannot create: No such file or directory");
  auto directory = OutputFile::Create(dir.Path(""));
  ASSERT_FALSE(directory.has_value());
  EXPECT_NE(directory.error().find("is a directory"), std::string::npos);
  EXPECT_TRUE(Entries(dir.Path("")).empty());
}

TEST(OutputFileTest, FailedCommitLeavesNothing) {
  TempDir dir;
  const std::string path = dir.Path("out.json");
  auto file = OutputFile::Create(path);
  ASSERT_TRUE(file.has_value()) << file.error();
  (*file)->stream() << "{}";
  fs::create_directory(path);  // the target became a directory meanwhile: rename fails
  auto committed = (*file)->Commit();
  ASSERT_FALSE(committed.has_value());
  EXPECT_EQ(committed.error(), path + ": cannot write: Is a directory");
  file->reset();
  EXPECT_EQ(Entries(dir.Path("")), std::vector<std::string>{"out.json"});
  EXPECT_TRUE(fs::is_directory(path));
}

}  // namespace
}  // namespace libprof::analysis::testing
