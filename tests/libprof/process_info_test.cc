#include "libprof/process_info.h"

#include <gtest/gtest.h>

#include <map>
#include <string>

namespace libprof {
namespace {

std::optional<Rank> RankOf(const std::map<std::string, std::string>& env) {
  return RankFromEnvironment([&](const char* name) -> const char* {
    auto it = env.find(name);
    return it == env.end() ? nullptr : it->second.c_str();
  });
}

// Proves each launcher's variable is read, rank 0 included, with the variable named.
TEST(ProcessInfoTest, RankComesFromTheLaunchersVariable) {
  for (const char* name : {"LIBPROF_RANK", "RANK", "OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK",
                           "SLURM_PROCID", "MV2_COMM_WORLD_RANK"}) {
    auto rank = RankOf({{name, "0"}});
    ASSERT_TRUE(rank.has_value()) << name;
    EXPECT_EQ(rank->value, 0u);
    EXPECT_EQ(rank->source, name);
  }
  EXPECT_EQ(RankOf({{"OMPI_COMM_WORLD_RANK", "63"}})->value, 63u);
}

// Proves the order: an explicit LIBPROF_RANK wins, torchrun's RANK beats srun's SLURM_PROCID (a
// torchrun started by srun has both, and RANK is the training rank), LOCAL_RANK is never a rank.
TEST(ProcessInfoTest, RankPrefersTheInnermostLauncher) {
  EXPECT_EQ(RankOf({{"SLURM_PROCID", "1"}, {"RANK", "9"}})->source, "RANK");
  EXPECT_EQ(RankOf({{"RANK", "9"}, {"LIBPROF_RANK", "4"}})->value, 4u);
  EXPECT_FALSE(RankOf({{"LOCAL_RANK", "2"}}).has_value());
  EXPECT_FALSE(RankOf({}).has_value());
}

// Proves values that are not plain numbers are skipped for the next variable, not misread.
TEST(ProcessInfoTest, RankIgnoresValuesThatAreNotNumbers) {
  EXPECT_FALSE(RankOf({{"RANK", ""}, {"PMI_RANK", "-1"}, {"SLURM_PROCID", "3x"}}).has_value());
  EXPECT_FALSE(RankOf({{"RANK", "4294967296"}}).has_value());  // over 32 bits
  auto rank = RankOf({{"RANK", "abc"}, {"PMI_RANK", "4294967295"}});
  ASSERT_TRUE(rank.has_value());
  EXPECT_EQ(rank->value, 4294967295u);
  EXPECT_EQ(rank->source, "PMI_RANK");
}

}  // namespace
}  // namespace libprof
