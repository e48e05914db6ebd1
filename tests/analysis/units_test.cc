// Proves the number formats match CUDA.jl's @profile output and duration flags parse.
#include "analysis/model/units.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

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

// FormatNumber writes the rounded number from an integer, not with snprintf: the same text as
// "%.2f" of the value rounded to 2 decimals with trailing zeros dropped (the format's
// definition), over values of every magnitude a duration in any unit takes, halves, negatives.
TEST(UnitsTest, NumbersPrintAsPrintfWould) {
  auto by_printf = [](double value) {
    const double rounded = std::round(value * 100.0) / 100.0;
    char buffer[64];
    std::snprintf(buffer, sizeof buffer, "%.2f", rounded == 0.0 ? 0.0 : rounded);
    std::string text = buffer;
    while (text.size() > 1 && text.back() == '0' && text[text.size() - 2] != '.') text.pop_back();
    return text;
  };
  std::mt19937_64 random(15);
  std::vector<double> values = {0.0,     -0.0,   0.005, 0.015,     0.125,  0.995, 999.995,
                                -0.005,  -1.5,   1e13,  1.5e13,    1e15,   1e300, -1e300,
                                1.0 / 3, 2.0 / 3, 12.345, 999.999, 1000.0, 0.01};
  for (int i = 0; i < 200'000; ++i) {
    const double magnitude = std::pow(10.0, std::uniform_real_distribution<double>(-3, 16)(random));
    const double v = std::uniform_real_distribution<double>(0, 1)(random) * magnitude;
    values.push_back(i % 7 == 0 ? -v : v);
    // Exact hundredths and halves of them (ties), as durations in ns, µs and ms give.
    const int64_t k = static_cast<int64_t>(random() % 100'000'000);
    values.push_back(static_cast<double>(k) / 100.0);
    values.push_back((static_cast<double>(k) + 0.5) / 100.0);
    values.push_back(static_cast<double>(k) / 1e3);
  }
  for (double v : values) ASSERT_EQ(FormatNumber(v), by_printf(v)) << v;
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

TEST(UnitsTest, GpuUuidAsNvidiaSmiPrintsIt) {
  EXPECT_EQ(FormatGpuUuid(std::string("\x22\x2b\x92\xb5\x44\x3f\x05\xf8\xb6\x63\xf5\xf7"
                                      "\xc1\x7b\x5e\x63",
                                      16)),
            "GPU-222b92b5-443f-05f8-b663-f5f7c17b5e63");
  EXPECT_EQ(FormatGpuUuid("short"), "");
  EXPECT_EQ(FormatGpuUuid(""), "");
}

}  // namespace
}  // namespace libprof::analysis
