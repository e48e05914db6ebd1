// Tests of LayoutForCuptiVersion: both encodings of cuptiGetVersion map to the right CUDA release
// and the version-gated fields open exactly at the releases that added them.
#include <gtest/gtest.h>

#include "libprof/cupti/record_layout.h"

namespace libprof {
namespace {

// Proves the pre-13 index encoding (cupti_version.h: v19 = 12.0 ... v28 = 12.9 Update 1).
TEST(RecordLayoutTest, IndexEncoding) {
  RecordLayout v19 = LayoutForCuptiVersion(19);
  EXPECT_TRUE(v19.supported);
  EXPECT_EQ(v19.cuda_major, 12u);
  EXPECT_EQ(v19.cuda_minor, 0u);
  EXPECT_FALSE(v19.overhead_data);
  EXPECT_FALSE(LayoutForCuptiVersion(18).supported);  // CUDA 11.8
  EXPECT_FALSE(LayoutForCuptiVersion(1).supported);
  EXPECT_TRUE(LayoutForCuptiVersion(22).overhead_data);  // CUDA 12.4: Overhead3
  EXPECT_FALSE(LayoutForCuptiVersion(21).overhead_data);
  RecordLayout v26 = LayoutForCuptiVersion(26);  // CUDA 12.8
  EXPECT_TRUE(v26.sync_event_sync_id);
  EXPECT_TRUE(v26.cuda_event_v2);
  EXPECT_TRUE(v26.memcpy_copy_count);
  EXPECT_FALSE(v26.kernel_is_device_launched);
  EXPECT_FALSE(LayoutForCuptiVersion(25).sync_event_sync_id);
  RecordLayout v28 = LayoutForCuptiVersion(28);
  EXPECT_EQ(v28.cuda_minor, 9u);
  EXPECT_FALSE(v28.device_name_owned);
}

// Proves the 13.x encoding (major*10000 + minor*100 + patch) and unknown values.
TEST(RecordLayoutTest, DecimalEncoding) {
  RecordLayout v13 = LayoutForCuptiVersion(130001);
  EXPECT_TRUE(v13.supported);
  EXPECT_EQ(v13.cuda_major, 13u);
  EXPECT_EQ(v13.cuda_minor, 0u);
  EXPECT_TRUE(v13.kernel_is_device_launched);
  EXPECT_TRUE(v13.device_name_owned);
  EXPECT_TRUE(v13.overhead_data);
  EXPECT_EQ(LayoutForCuptiVersion(130400).cuda_minor, 4u);
  EXPECT_TRUE(LayoutForCuptiVersion(140000).kernel_is_device_launched);
  EXPECT_FALSE(LayoutForCuptiVersion(0).supported);
  EXPECT_FALSE(LayoutForCuptiVersion(500).supported);    // an index nobody issued
  EXPECT_FALSE(LayoutForCuptiVersion(12050).supported);  // neither encoding
  EXPECT_EQ(CompiledRecordLayout().cuda_major, 13u);
}

}  // namespace
}  // namespace libprof
