// Proves the number formats match CUDA.jl's @profile output and duration flags parse.
#include "analysis/model/units.h"

#include <gtest/gtest.h>

namespace libprof::analysis {
namespace {

TEST(UnitsTest, DurationsPrintLikeCudaJl) {
  EXPECT_EQ(FormatDuration(4'950'000), "4.95 ms");
  EXPECT_EQ(FormatDuration(1'910), "1.91 µs");
  EXPECT_EQ(FormatDuration(238.42), "238.42 ns");
  EXPECT_EQ(FormatDuration(5'000'000), "5.0 ms");
  EXPECT_EQ(FormatDuration(894'800'000), "894.8 ms");
  EXPECT_EQ(FormatDuration(1'980'000'000), "1.98 s");
  EXPECT_EQ(FormatDuration(0), "0.0 ns");
  // Rounding that reaches 1000 moves to the next unit.
  EXPECT_EQ(FormatDuration(999'999), "1.0 ms");
}

TEST(UnitsTest, NumbersBytesPercentBandwidth) {
  EXPECT_EQ(FormatNumber(3.714), "3.71");
  EXPECT_EQ(FormatNumber(-0.001), "0.0");
  EXPECT_EQ(FormatBytes(4), "4 B");
  EXPECT_EQ(FormatBytes(1536), "1.50 KiB");
  EXPECT_EQ(FormatBytes(16 << 20), "16.00 MiB");
  EXPECT_EQ(FormatPercent(1, 3), "33.33%");
  EXPECT_EQ(FormatPercent(1, 0), "0.00%");
  EXPECT_EQ(FormatBandwidth(16'000'000, 1'000'000), "16.00 GB/s");
  EXPECT_EQ(FormatBandwidth(1, 0), "");
}

TEST(UnitsTest, ParsesDurations) {
  EXPECT_EQ(ParseDuration("1500").value(), 1500u);
  EXPECT_EQ(ParseDuration("20us").value(), 20'000u);
  EXPECT_EQ(ParseDuration("20µs").value(), 20'000u);
  EXPECT_EQ(ParseDuration("1.5ms").value(), 1'500'000u);
  EXPECT_EQ(ParseDuration("2s").value(), 2'000'000'000u);
  EXPECT_FALSE(ParseDuration("").has_value());
  EXPECT_FALSE(ParseDuration("ms").has_value());
  EXPECT_FALSE(ParseDuration("5 parsecs").has_value());
  EXPECT_FALSE(ParseDuration("-5ms").has_value());
}

}  // namespace
}  // namespace libprof::analysis
