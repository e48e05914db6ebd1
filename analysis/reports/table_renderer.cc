#include "analysis/reports/table_renderer.h"

#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <string_view>

#include "analysis/model/kernel_names.h"

namespace libprof::analysis {
namespace {

// Default when neither $COLUMNS nor a terminal tells: wide enough for a summary with a
// distribution column and medium-length names.
constexpr size_t kDefaultWidth = 120;

std::string Repeat(std::string_view s, size_t n) {
  std::string out;
  out.reserve(s.size() * n);
  for (size_t i = 0; i < n; ++i) out += s;
  return out;
}

std::string Pad(const std::string& text, size_t width, Align align) {
  const size_t w = DisplayWidth(text);
  if (w >= width) return text;
  const std::string fill(width - w, ' ');
  return align == Align::kLeft ? text + fill : fill + text;
}

std::string Rule(const std::vector<size_t>& widths, std::string_view left, std::string_view mid,
                 std::string_view right) {
  std::string line(left);
  for (size_t i = 0; i < widths.size(); ++i) {
    if (i > 0) line += mid;
    line += Repeat("─", widths[i] + 2);
  }
  line += right;
  line += '\n';
  return line;
}

}  // namespace

std::string Truncate(const std::string& text, size_t width) {
  if (DisplayWidth(text) <= width) return text;
  if (width == 0) return "";
  std::string out;
  size_t chars = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    const bool starts_char = (static_cast<unsigned char>(text[i]) & 0xC0) != 0x80;
    if (starts_char && ++chars > width - 1) break;
    out += text[i];
  }
  return out + "…";
}

std::string FitName(const std::string& text, size_t width) {
  return AbbreviateName(text, width);
}

std::optional<std::string> FitPythonCallSite(const std::string& text, size_t width) {
  const size_t in = text.find(" in ");
  const size_t colon = in == std::string::npos ? std::string::npos : text.rfind(':', in);
  if (colon == std::string::npos || colon + 1 == in ||
      text.find_first_not_of("0123456789", colon + 1) != in) {
    return std::nullopt;
  }
  if (DisplayWidth(text) <= width) return text;
  const std::string place = text.substr(0, in);  // "train.py:12"
  if (DisplayWidth(place) <= width) return place;
  if (width <= 1) return width == 1 ? "…" : "";
  // The last width - 1 characters of the place, after "…".
  size_t start = place.size();
  for (size_t chars = 0; start > 0 && chars < width - 1;) {
    --start;
    if ((static_cast<unsigned char>(place[start]) & 0xC0) != 0x80) ++chars;
  }
  return "…" + place.substr(start);
}

size_t TerminalWidth() {
  if (const char* env = std::getenv("COLUMNS")) {
    char* end = nullptr;
    const long value = std::strtol(env, &end, 10);
    if (end != env && *end == '\0' && value > 0) return static_cast<size_t>(value);
  }
  winsize size{};
  if (isatty(STDOUT_FILENO) && ioctl(STDOUT_FILENO, TIOCGWINSZ, &size) == 0 && size.ws_col > 0) {
    return size.ws_col;
  }
  return kDefaultWidth;
}

std::string RenderTable(const std::vector<TableColumn>& columns,
                        const std::vector<std::vector<std::string>>& rows, size_t max_width) {
  std::vector<size_t> widths(columns.size());
  for (size_t c = 0; c < columns.size(); ++c) {
    widths[c] = DisplayWidth(columns[c].header);
    for (const auto& row : rows) widths[c] = std::max(widths[c], DisplayWidth(row[c]));
  }
  // Each column takes its width plus two spaces and one border; plus the closing border.
  auto total = [&] {
    size_t sum = 1;
    for (size_t w : widths) sum += w + 3;
    return sum;
  };
  const std::vector<size_t> natural = widths;
  for (size_t c = columns.size(); c-- > 0 && total() > max_width;) {
    if (!columns[c].shrinkable) continue;
    const size_t floor = std::max(columns[c].min_width, DisplayWidth(columns[c].header));
    const size_t excess = total() - max_width;
    widths[c] = widths[c] > floor + excess ? widths[c] - excess : std::min(widths[c], floor);
  }
  // Cells cut to their column's width. A column of abbreviated names then takes only the width
  // its longest abbreviation needs, and what that frees goes back to the columns that were cut,
  // the last first (it was the first to give way); a few rounds settle it.
  std::vector<std::vector<std::string>> cells(rows.size());
  for (int round = 0; round < 4; ++round) {
    const std::vector<size_t> fitted_to = widths;
    for (size_t r = 0; r < rows.size(); ++r) {
      cells[r].resize(columns.size());
      for (size_t c = 0; c < columns.size(); ++c) {
        const std::string& text = rows[r][c];
        cells[r][c] = DisplayWidth(text) <= widths[c] ? text
                      : columns[c].fit           ? columns[c].fit(text, widths[c])
                                                 : Truncate(text, widths[c]);
      }
    }
    for (size_t c = 0; c < columns.size(); ++c) {
      if (columns[c].fit == nullptr) continue;
      size_t used = DisplayWidth(columns[c].header);
      for (const auto& row : cells) used = std::max(used, DisplayWidth(row[c]));
      widths[c] = std::min(widths[c], used);
    }
    for (size_t c = columns.size(); c-- > 0 && total() < max_width;) {
      if (widths[c] < natural[c]) widths[c] = std::min(natural[c], widths[c] + max_width - total());
    }
    if (widths == fitted_to) break;  // the cells were cut to these widths
  }
  for (size_t c = 0; c < columns.size(); ++c) {
    if (columns[c].fit == nullptr) continue;
    size_t used = DisplayWidth(columns[c].header);
    for (const auto& row : cells) used = std::max(used, DisplayWidth(row[c]));
    widths[c] = std::min(widths[c], used);
  }
  std::string out = Rule(widths, "┌", "┬", "┐");
  out += "│";
  for (size_t c = 0; c < columns.size(); ++c) {
    out += " " + Pad(Truncate(columns[c].header, widths[c]), widths[c], Align::kLeft) + " │";
  }
  out += '\n';
  out += Rule(widths, "├", "┼", "┤");
  for (const auto& row : cells) {
    out += "│";
    for (size_t c = 0; c < columns.size(); ++c) {
      out += " " + Pad(Truncate(row[c], widths[c]), widths[c], columns[c].align) + " │";
    }
    out += '\n';
  }
  out += Rule(widths, "└", "┴", "┘");
  return out;
}

}  // namespace libprof::analysis
