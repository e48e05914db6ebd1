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

// Names that a column cuts to the same text (cuBLAS's kernels differ only past their first 33
// characters; PyTorch's foreach kernels only in template arguments) are told apart by the
// part where they differ, within the column's width; names that a width cannot tell apart,
// and names cut to different texts, stay as FitName cuts them.
TEST(TableTest, NamesCutAlikeAreToldApart) {
  const std::string xmma = "sm80_xmma_gemm_f32f32_f32f32_f32_";
  const std::string tail = "_stage3_warpsize1x2x1_ffma_aligna4_alignc4_execute_kernel__5x_cublas";
  const std::vector<std::string> gemms = {xmma + "tn_n_tilesize32x32x8" + tail,
                                          xmma + "nn_n_tilesize32x32x8" + tail,
                                          xmma + "nn_n_tilesize32x64x8" + tail,
                                          xmma + "tn_n_tilesize128x128x8" + tail};
  const std::string ns = "at::native::(anonymous namespace)::";
  const std::vector<std::string> foreach = {
      ns + "multi_tensor_apply_kernel<" + ns + "TensorListMetadata<1>, " + ns +
          "BinaryOpScalarFunctor<float, 1, 1, 0>, std::multiplies<float>, float>(int)",
      ns + "multi_tensor_apply_kernel<" + ns + "TensorListMetadata<1>, " + ns +
          "BinaryOpScalarFunctor<float, 1, 1, 0>, std::plus<float>, float>(int)"};
  std::vector<std::string> texts = gemms;
  texts.insert(texts.end(), foreach.begin(), foreach.end());
  texts.push_back(gemms[0]);  // the same name twice is shown the same way twice
  texts.push_back("memset");  // not cut: left alone
  std::vector<std::string> cut;
  for (const std::string& t : texts) cut.push_back(t.size() <= 34 ? t : FitName(t, 34));
  ASSERT_EQ(cut[0], cut[1]);  // what the tables showed before: six rows alike
  ASSERT_EQ(cut[4], cut[5]);

  const std::vector<std::string> shown =
      DistinguishCutCells(std::vector<std::string_view>(texts.begin(), texts.end()), cut, 34);
  EXPECT_EQ(shown[0], "sm80_xmma_ge…tn_n_tilesize32x32x8…");
  EXPECT_EQ(shown[1], "sm80_xmma_ge…nn_n_tilesize32x32x8…");
  EXPECT_EQ(shown[2], "sm80_xmma_ge…tilesize32x64x8_stag…");
  EXPECT_EQ(shown[3], "sm80_xmma_ge…tilesize128x128x8_st…");
  EXPECT_EQ(shown[4], "…::multi_ten…multiplies<float>, f…");  // qualifiers dropped
  EXPECT_EQ(shown[5], "…::multi_ten…plus<float>, float>(…");
  EXPECT_EQ(shown[6], shown[0]);
  EXPECT_EQ(shown[7], "memset");
  for (const std::string& s : shown) EXPECT_LE(DisplayWidth(s), 34u) << s;

  // Too narrow to tell them apart: cut alike, as FitName cuts them.
  const std::vector<std::string> narrow_cut(gemms.size(), FitName(gemms[0], 16));
  EXPECT_EQ(DistinguishCutCells(std::vector<std::string_view>(gemms.begin(), gemms.end()),
                                narrow_cut, 16),
            narrow_cut);

  // The tables do it: every row of the rendered name column differs.
  std::vector<std::vector<std::string>> rows;
  for (const std::string& g : gemms) rows.push_back({"1", g});
  const std::string table = RenderTable(
      {{"Calls", Align::kRight}, {"Name", Align::kLeft, true, 12, FitName}}, rows, 46);
  for (size_t i = 0; i < gemms.size(); ++i) {
    EXPECT_NE(table.find("│ " + shown[i] + " │"), std::string::npos) << table;
  }
  // Any column: the diff's "About" cells differ only in their call sites' lines.
  const std::string about = "cudaMemcpyAsync on [copy pageable to device memory], from attn.py:";
  const std::string about_table =
      RenderTable({{"Calls", Align::kRight}, {"About", Align::kLeft, true, 12}},
                  {{"1", about + "985 in f"}, {"2", about + "1062 in f"}}, 40);
  EXPECT_NE(about_table.find("…985 in f"), std::string::npos) << about_table;
  EXPECT_NE(about_table.find("…1062 in f"), std::string::npos) << about_table;
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
