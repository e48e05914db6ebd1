// Box-drawn tables like CUDA.jl's (┌─┬┐ │ ├┼┤ └┴┘), fitted to a terminal width.
//
// Layer: analysis/reports/. Pure string formatting.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace libprof::analysis {

enum class Align { kLeft, kRight };

// How a cell too wide for its column is cut to `width` characters.
using CellFit = std::string (*)(const std::string& text, size_t width);

struct TableColumn {
  std::string header;
  Align align = Align::kLeft;
  // A column that may be narrowed (cells cut with "…") when the table is wider than the
  // terminal; the last such column gives way first. Never below `min_width` characters.
  bool shrinkable = false;
  size_t min_width = 12;
  // How its cells are cut: Truncate by default; FitName for kernel, API and function names.
  CellFit fit = nullptr;
};

// A table's columns and cells before rendering: the text tables and the HTML report render the
// same cells, so that both show the same names and numbers.
struct TableCells {
  std::vector<TableColumn> columns;
  std::vector<std::vector<std::string>> rows;
};

// Renders rows (each with one cell per column) under a header row. Headers are left-aligned;
// widths are measured in characters (UTF-8 code points). If the table is wider than
// `max_width`, shrinkable columns are narrowed down to their min_width.
std::string RenderTable(const std::vector<TableColumn>& columns,
                        const std::vector<std::vector<std::string>>& rows, size_t max_width);

// Cells of one column (RenderTable: each column it cut) cut to `width` (`cells`, from `texts`),
// with the rows whose cells came out the same for different texts told apart: each such cell becomes the start of the cut
// cell, then the part of its text where it leaves the others ("sm80_xmma_gem…tilesize128x128x8…"
// against "…tilesize64x64x8…", cuBLAS's kernels; "…::multi_tensor…TensorListMetadata<2>, …"),
// unless that still leaves two of them alike. Other cells are returned as they came.
std::vector<std::string> DistinguishCutCells(const std::vector<std::string_view>& texts,
                                             std::vector<std::string> cells, size_t width);

// Cuts `text` to at most `width` characters, ending in "…" when cut.
std::string Truncate(const std::string& text, size_t width);
// A name abbreviated to `width` characters the way every table abbreviates names
// (kernel_names.h AbbreviateName: argument lists elided, namespaces kept).
std::string FitName(const std::string& text, size_t width);
// A Python call site ("train.py:12 in step", call_sites.h) cut to `width`: the line is what the
// user acts on, so the function goes first, then the file loses its start ("…in.py:12");
// nullopt when `text` is not a Python call site.
std::optional<std::string> FitPythonCallSite(const std::string& text, size_t width);

// The width that leaves tables as wide as their content: `--wide`.
inline constexpr size_t kUnlimitedWidth = static_cast<size_t>(-1) / 2;

// The terminal width: $COLUMNS when it is a positive number, else the width of the terminal on
// stdout (ioctl TIOCGWINSZ), else 120.
size_t TerminalWidth();

}  // namespace libprof::analysis
