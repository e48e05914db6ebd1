#include <fcntl.h>
#include <gtest/gtest.h>

#include <string>

#include "proto/trace_writer.h"
#include "tests/proto/trace_test_util.h"

namespace libprof {
namespace {

using testing::ReadFile;
using testing::ScratchDir;
using testing::WriteFile;

// Proves FileSink writes every byte, refuses to clobber an existing file unless told to
// overwrite, and then truncates it.
TEST(FileSinkTest, CreatesExclusivelyOrOverwrites) {
  ScratchDir dir;
  const std::string path = dir.Path("trace.pb");
  std::string error;
  {
    auto sink = FileSink::Create(path, /*overwrite=*/false, &error);
    ASSERT_NE(sink, nullptr) << error;
    const std::string big(3 << 20, 'x');  // large enough for partial writes on some systems
    EXPECT_TRUE(sink->Write(big.data(), big.size()));
    EXPECT_TRUE(sink->Write("end", 3));
  }
  EXPECT_EQ(ReadFile(path).size(), (3u << 20) + 3);

  EXPECT_EQ(FileSink::Create(path, /*overwrite=*/false, &error), nullptr);
  EXPECT_NE(error.find(path), std::string::npos) << error;
  EXPECT_NE(error.find("File exists"), std::string::npos) << error;

  {
    auto sink = FileSink::Create(path, /*overwrite=*/true, &error);
    ASSERT_NE(sink, nullptr) << error;
    EXPECT_TRUE(sink->Write("ab", 2));
  }
  EXPECT_EQ(ReadFile(path), "ab");
}

// Proves a path that cannot be created gives nullptr and a sentence naming the path.
TEST(FileSinkTest, ReportsUncreatablePath) {
  ScratchDir dir;
  const std::string path = dir.Path("no/such/dir/trace.pb");
  std::string error;
  EXPECT_EQ(FileSink::Create(path, true, &error), nullptr);
  EXPECT_EQ(error, "cannot create " + path + ": No such file or directory");
}

// Proves a failing write (here /dev/full: ENOSPC) is reported and sticks.
TEST(FileSinkTest, ReportsWriteErrors) {
  std::string error;
  auto sink = FileSink::Create("/dev/full", /*overwrite=*/true, &error);
  if (sink == nullptr) GTEST_SKIP() << "no /dev/full here: " << error;
  EXPECT_FALSE(sink->Write("abc", 3));
  EXPECT_NE(sink->error().find("No space left"), std::string::npos) << sink->error();
  EXPECT_FALSE(sink->Write("abc", 3));
}

}  // namespace
}  // namespace libprof
