#include "analysis/reports/html_writer.h"

#include <cmath>
#include <cstdio>

namespace libprof::analysis {
namespace {

// The length of the valid UTF-8 sequence starting at text[i], or 0 when it is not one.
size_t Utf8Length(std::string_view text, size_t i) {
  const auto byte = [&](size_t k) { return static_cast<unsigned char>(text[k]); };
  const unsigned char c = byte(i);
  size_t n = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xE ? 3 : (c >> 3) == 0x1E ? 4 : 0;
  if (n == 0 || i + n > text.size()) return 0;
  for (size_t k = 1; k < n; ++k) {
    if ((byte(i + k) & 0xC0) != 0x80) return 0;
  }
  return n;
}

}  // namespace

std::string HtmlEscape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    const char c = text[i];
    switch (c) {
      case '&': out += "&amp;"; ++i; continue;
      case '<': out += "&lt;"; ++i; continue;
      case '>': out += "&gt;"; ++i; continue;
      case '"': out += "&quot;"; ++i; continue;
      case '\'': out += "&#39;"; ++i; continue;
      default: break;
    }
    const size_t n = Utf8Length(text, i);
    if (n == 0) {
      out += "\xEF\xBF\xBD";
      ++i;
      continue;
    }
    // Control characters other than tab and newline have no place in a page.
    if (n == 1 && static_cast<unsigned char>(c) < 0x20 && c != '\n' && c != '\t') {
      out += ' ';
    } else {
      out.append(text.substr(i, n));
    }
    i += n;
  }
  return out;
}

std::string Coord(double value) {
  if (!std::isfinite(value)) return "0";
  const double rounded = std::round(value * 10) / 10;
  char buffer[32];
  if (rounded == std::floor(rounded)) {
    std::snprintf(buffer, sizeof(buffer), "%.0f", rounded);
  } else {
    std::snprintf(buffer, sizeof(buffer), "%.1f", rounded);
  }
  std::string out = buffer;
  return out == "-0" ? "0" : out;
}

std::string Fixed(double value, int decimals) {
  if (!std::isfinite(value)) return "0";
  char buffer[64];
  std::snprintf(buffer, sizeof(buffer), "%.*f", decimals, value);
  return buffer;
}

}  // namespace libprof::analysis
