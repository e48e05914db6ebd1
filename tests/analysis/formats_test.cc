// Proves CSV and JSON output escape what they must, and tables draw and fit like CUDA.jl's.
#include "analysis/reports/formats.h"

#include <gtest/gtest.h>

#include <cstdlib>

#include "analysis/model/kernel_names.h"
#include "analysis/reports/summary_report.h"
#include "analysis/reports/table_renderer.h"

namespace libprof::analysis {
namespace {

TEST(CsvTest, QuotesOnlyWhenNeeded) {
  EXPECT_EQ(CsvField("plain"), "plain");
  EXPECT_EQ(CsvField("spin(float*, int)"), "\"spin(float*, int)\"");
  EXPECT_EQ(CsvField("say \"hi\""), "\"say \"\"hi\"\"\"");
  EXPECT_EQ(CsvField("two\nlines"), "\"two\nlines\"");
  EXPECT_EQ(CsvLine({"a", "b,c", ""}), "a,\"b,c\",\n");
}

TEST(JsonTest, EscapesControlQuotesAndBadUtf8) {
  EXPECT_EQ(JsonString("a\"b\\c"), "\"a\\\"b\\\\c\"");
  EXPECT_EQ(JsonString("tab\tnl\n\x01"), "\"tab\\tnl\\n\\u0001\"");
  EXPECT_EQ(JsonString("µs ‥"), "\"µs ‥\"");                      // valid UTF-8 kept
  EXPECT_EQ(JsonString("bad\xff\xc3"), "\"bad\\ufffd\\ufffd\"");  // invalid bytes replaced
}

TEST(JsonTest, WriterPlacesCommasAndNesting) {
  JsonWriter j;
  j.BeginObject()
      .Field("a", uint64_t{1})
      .Key("list")
      .BeginArray()
      .String("x")
      .String("y")
      .EndArray();
  j.Key("objs")
      .BeginArray()
      .BeginObject()
      .Field("k", "v")
      .EndObject()
      .BeginObject()
      .EndObject()
      .EndArray();
  j.Field("d", 0.5).Field("b", true).EndObject();
  EXPECT_EQ(
      j.str(),
      "{\n  \"a\": 1,\n  \"list\": [\"x\", \"y\"],\n  \"objs\": [\n    {\n      \"k\": \"v\"\n"
      "    },\n    {}\n  ],\n  \"d\": 0.5,\n  \"b\": true\n}\n");
}

TEST(TableTest, DrawsBoxesLikeCudaJl) {
  const std::string table = RenderTable({{"Time (%)", Align::kRight}, {"Name", Align::kLeft}},
                                        {{"98.38%", "cudaMemcpyAsync"}, {"0.75%", "x"}}, 120);
  EXPECT_EQ(table,
            "┌──────────┬─────────────────┐\n"
            "│ Time (%) │ Name            │\n"
            "├──────────┼─────────────────┤\n"
            "│   98.38% │ cudaMemcpyAsync │\n"
            "│    0.75% │ x               │\n"
            "└──────────┴─────────────────┘\n");
}

TEST(TableTest, ShrinksTheNameColumnToFit) {
  const std::string name(100, 'k');
  const std::string table =
      RenderTable({{"Calls", Align::kRight}, {"Name", Align::kLeft, true, 10}}, {{"1", name}}, 40);
  std::string first_line = table.substr(0, table.find('\n'));
  // 40 characters wide, the name cut with an ellipsis.
  EXPECT_EQ(DisplayWidth(first_line), 40u);
  EXPECT_NE(table.find("kkk…"), std::string::npos);
  // Never below min_width, even if the table then exceeds the width.
  const std::string narrow =
      RenderTable({{"Calls", Align::kRight}, {"Name", Align::kLeft, true, 10}}, {{"1", name}}, 5);
  EXPECT_NE(narrow.find("│ kkkkkkkkk… │"), std::string::npos);
}

// A name column abbreviates (argument lists, then namespaces) instead of cutting mid-word, and
// takes only the width its abbreviations need; --wide's width keeps every name whole.
TEST(TableTest, NameColumnsAbbreviateInsteadOfCutting) {
  const std::string name =
      "cudnn::detail::dgrad_engine<float, 128, 6, 7, 3, 3, 5, false>(int, int, float const*)";
  const std::vector<TableColumn> columns = {{"Calls", Align::kRight},
                                            {"Name", Align::kLeft, true, 10, FitName}};
  const std::string table = RenderTable(columns, {{"1", name}, {"2", "memset"}}, 50);
  EXPECT_NE(table.find("│ cudnn::detail::dgrad_engine<…>(…) │"), std::string::npos) << table;
  EXPECT_LT(DisplayWidth(table.substr(0, table.find('\n'))), 50u);
  const std::string wide = RenderTable(columns, {{"1", name}}, kUnlimitedWidth);
  EXPECT_NE(wide.find(name), std::string::npos);
}

TEST(TableTest, TerminalWidthFromColumns) {
  setenv("COLUMNS", "77", 1);
  EXPECT_EQ(TerminalWidth(), 77u);
  setenv("COLUMNS", "junk", 1);
  EXPECT_EQ(TerminalWidth(), 120u);  // stdout is not a terminal under ctest
  unsetenv("COLUMNS");
}

TEST(DistributionTest, MeanStdMinMaxAligned) {
  Stats a, b, single;
  for (uint64_t v : {17'640, 22'890}) a.Add(v);
  for (uint64_t v : {5'010, 17'640}) b.Add(v);
  single.Add(99'180);
  const auto cells = DistributionCells({&a, &b, &single});
  EXPECT_EQ(cells[0], "20.27 µs ± 3.71 (17.64 ‥ 22.89)");
  EXPECT_EQ(cells[1], "11.33 µs ± 8.93 ( 5.01 ‥ 17.64)");
  EXPECT_EQ(cells[2], "");  // one call: no distribution
}

}  // namespace
}  // namespace libprof::analysis
