#include "analysis/reports/table_renderer.h"

#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <map>
#include <set>
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

// Length of the common prefix of `a` and `b`, in bytes.
size_t CommonPrefix(std::string_view a, std::string_view b) {
  size_t n = 0;
  while (n < a.size() && n < b.size() && a[n] == b[n]) ++n;
  return n;
}

bool IsNameBreak(char c) {
  return c == '_' || c == ':' || c == '<' || c == '>' || c == ',' || c == '(' || c == ')' ||
         c == ' ' || c == '.' || c == '/';
}

// `text` without the namespaces that qualify names inside it ("at::native::(anonymous
// namespace)::Foo<float>" -> "Foo<float>"): in a cell's distinguishing part they take the room
// of what tells the rows apart.
std::string WithoutQualifiers(std::string_view text) {
  std::string out;
  size_t word = 0;  // where the current qualified name's text starts in `out`
  for (size_t i = 0; i < text.size(); ++i) {
    constexpr std::string_view kAnonymous = "(anonymous namespace)::";
    if (text.substr(i, kAnonymous.size()) == kAnonymous) {
      i += kAnonymous.size() - 1;
      out.resize(word);
      continue;
    }
    if (text[i] == ':' && i + 1 < text.size() && text[i + 1] == ':') {
      ++i;
      // A part may start inside "(anonymous namespace)::": its tail goes too.
      constexpr std::string_view kAnonymousTail = "namespace)";
      out.resize(out.ends_with(kAnonymousTail) ? out.size() - kAnonymousTail.size() : word);
      continue;
    }
    out += text[i];
    const char c = text[i];
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_')) word = out.size();
  }
  return out;
}

// The start of the word of `text` that holds byte `at` (of the word before, when `at` starts a
// word); 0 at the first word.
size_t WordStartBefore(std::string_view text, size_t at) {
  at = std::min(at, text.size());
  while (at > 0 && !IsNameBreak(text[at - 1])) --at;
  return at;
}

// `text` from byte `start` on, without the separators it would start with and the qualifiers in
// it: what a cell shows after its head.
std::string PartFrom(std::string_view text, size_t start) {
  while (start < text.size() && IsNameBreak(text[start])) ++start;
  return WithoutQualifiers(text.substr(start));
}

}  // namespace

std::vector<std::string> DistinguishCutCells(const std::vector<std::string_view>& texts,
                                             std::vector<std::string> cells, size_t width) {
  // Narrower, a head and a part say nothing: the trace listing's 12-character Details cells
  // read "str…4.00 Mi…" instead of "stream 15, …".
  constexpr size_t kMinWidth = 16;
  if (width < kMinWidth) return cells;
  // Rows by their cell, among those whose cell was cut.
  std::map<std::string, std::vector<size_t>> by_cell;
  for (size_t r = 0; r < texts.size(); ++r) {
    if (cells[r] != texts[r]) by_cell[cells[r]].push_back(r);
  }
  for (const auto& [cell, rows] : by_cell) {
    // The group's distinct texts, sorted, each with its rows (a trace listing repeats a name
    // in millions of rows: the work below goes by text, not by row).
    std::map<std::string_view, std::vector<size_t>> rows_of;
    for (size_t r : rows) rows_of[texts[r]].push_back(r);
    if (rows_of.size() < 2) continue;
    std::vector<std::string_view> distinct;
    for (const auto& [text, of] : rows_of) distinct.push_back(text);
    // Each text shown as the start of its cell, then itself from the word where it leaves the
    // text closest to it ("…::multi_ten…multiplies<float>, f…"): its longest common prefix with
    // another text, which is with a neighbour in sorted order. Texts still shown alike start a
    // word earlier, until none are (cuBLAS's "sm80_xmma_ge…tn_n_tilesize32x32…" against
    // "…nn_n_tilesize32x32…") or a text has no word left before.
    const size_t head = std::min(width * 2 / 5, DisplayWidth(cell));
    std::vector<size_t> start(distinct.size());
    for (size_t k = 0; k < distinct.size(); ++k) {
      size_t departs = 0;
      if (k > 0) departs = CommonPrefix(distinct[k], distinct[k - 1]);
      if (k + 1 < distinct.size()) {
        departs = std::max(departs, CommonPrefix(distinct[k], distinct[k + 1]));
      }
      start[k] = WordStartBefore(distinct[k], departs);
    }
    std::vector<std::string> shown(distinct.size());
    bool apart = false;
    while (!apart) {
      std::map<std::string, size_t> texts_shown_as;
      for (size_t k = 0; k < distinct.size(); ++k) {
        shown[k] = Truncate(cell, head) + Truncate(PartFrom(distinct[k], start[k]), width - head);
        ++texts_shown_as[shown[k]];
      }
      apart = true;
      bool moved = false;
      for (size_t k = 0; k < distinct.size(); ++k) {
        if (texts_shown_as[shown[k]] < 2) continue;
        apart = false;
        if (start[k] > 0) {
          start[k] = WordStartBefore(distinct[k], start[k] - 1);
          moved = true;
        }
      }
      if (!apart && !moved) break;
    }
    if (!apart) continue;  // nothing tells them apart in this width: cut alike
    for (size_t k = 0; k < distinct.size(); ++k) {
      for (size_t r : rows_of[distinct[k]]) cells[r] = shown[k];
    }
  }
  return cells;
}

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
    // Any column, not only names: a diff's "About" cells ("cudaMemcpyAsync on [copy pageable to
    // device memory], from fuse_attention.py:985 in …") differ only in their call sites.
    for (size_t c = 0; c < columns.size(); ++c) {
      if (widths[c] >= natural[c]) continue;  // no cell of it was cut
      std::vector<std::string_view> texts(rows.size());  // (views: a listing has millions)
      std::vector<std::string> cut(rows.size());
      for (size_t r = 0; r < rows.size(); ++r) {
        texts[r] = rows[r][c];
        cut[r] = std::move(cells[r][c]);
      }
      cut = DistinguishCutCells(texts, std::move(cut), widths[c]);
      for (size_t r = 0; r < rows.size(); ++r) cells[r][c] = std::move(cut[r]);
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
