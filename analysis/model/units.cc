#include "analysis/model/units.h"

#include <cctype>
#include <cmath>
#include <cstdio>

namespace libprof::analysis {

TimeUnit UnitFor(double ns) {
  const double a = std::fabs(ns);
  if (a < 1e3) return TimeUnit::kNs;
  if (a < 1e6) return TimeUnit::kUs;
  if (a < 1e9) return TimeUnit::kMs;
  return TimeUnit::kS;
}

const char* UnitName(TimeUnit unit) {
  switch (unit) {
    case TimeUnit::kNs:
      return "ns";
    case TimeUnit::kUs:
      return "µs";
    case TimeUnit::kMs:
      return "ms";
    case TimeUnit::kS:
      return "s";
  }
  return "ns";
}

double InUnit(double ns, TimeUnit unit) {
  switch (unit) {
    case TimeUnit::kNs:
      return ns;
    case TimeUnit::kUs:
      return ns / 1e3;
    case TimeUnit::kMs:
      return ns / 1e6;
    case TimeUnit::kS:
      return ns / 1e9;
  }
  return ns;
}

std::string FormatNumber(double value) {
  const double hundredths = std::round(value * 100.0);
  // Below 2^50 hundredths, "%.2f" of hundredths / 100 prints the integer `hundredths` with its
  // point moved (the double nearest k / 100 is far closer to it than to (k +- 1) / 100): written
  // from the integer here, without snprintf (findings format several durations per finding,
  // and snprintf's floating-point path was most of that).
  if (std::fabs(hundredths) < 0x1p50) {
    int64_t k = static_cast<int64_t>(hundredths);
    std::string text;
    if (k < 0) {  // (a negative value rounding to 0 prints "0.0", as below)
      text = "-";
      k = -k;
    }
    text += std::to_string(k / 100);
    text += '.';
    text += static_cast<char>('0' + k % 100 / 10);
    if (k % 10 != 0) text += static_cast<char>('0' + k % 10);
    return text;
  }
  const double rounded = hundredths / 100.0;
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.2f", rounded == 0.0 ? 0.0 : rounded);  // no "-0.00"
  std::string text = buffer;
  // Julia prints 5.0, 4.9, 4.94: keep one decimal at least.
  while (text.size() > 1 && text.back() == '0' && text[text.size() - 2] != '.') text.pop_back();
  return text;
}

std::string FormatDuration(double ns) {
  // Rounding can carry into the next unit (999.999 µs -> "1000.0 µs"); re-pick the unit then.
  TimeUnit unit = UnitFor(ns);
  if (unit != TimeUnit::kS && std::fabs(std::round(InUnit(ns, unit) * 100.0) / 100.0) >= 1000.0) {
    unit = static_cast<TimeUnit>(static_cast<int>(unit) + 1);
  }
  return FormatNumber(InUnit(ns, unit)) + " " + UnitName(unit);
}

std::string FormatGpuUuid(std::string_view raw) {
  if (raw.size() != 16) return "";
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out = "GPU-";
  for (size_t i = 0; i < raw.size(); ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) out += '-';
    const auto byte = static_cast<unsigned char>(raw[i]);
    out += kHex[byte >> 4];
    out += kHex[byte & 0xF];
  }
  return out;
}

std::string FormatBytes(uint64_t bytes) {
  if (bytes < 1024) return std::to_string(bytes) + " B";
  static constexpr const char* kUnits[] = {"KiB", "MiB", "GiB", "TiB", "PiB"};
  double value = static_cast<double>(bytes) / 1024.0;
  int unit = 0;
  while (value >= 1024.0 && unit < 4) {
    value /= 1024.0;
    ++unit;
  }
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.2f %s", value, kUnits[unit]);
  return buffer;
}

double GigabytesPerSecond(uint64_t bytes, uint64_t ns) {
  return ns == 0 ? 0.0 : static_cast<double>(bytes) / static_cast<double>(ns);  // B/ns == GB/s
}

std::string FormatBandwidth(uint64_t bytes, uint64_t ns) {
  if (ns == 0) return "";
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.2f GB/s", GigabytesPerSecond(bytes, ns));
  return buffer;
}

std::string FormatPercent(double part, double total) {
  const double percent = total > 0 ? 100.0 * part / total : 0.0;
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.2f%%", percent);
  return buffer;
}

namespace {

// The length of the unsigned decimal number ("12", "1.5", ".5") that `text` starts with; 0 when
// none ("." alone is none).
size_t LeadingNumberLength(std::string_view text) {
  size_t digits = 0;
  bool seen_dot = false;
  while (digits < text.size() && (std::isdigit(static_cast<unsigned char>(text[digits])) ||
                                  (text[digits] == '.' && !seen_dot))) {
    seen_dot |= text[digits] == '.';
    ++digits;
  }
  return digits == 1 && text[0] == '.' ? 0 : digits;
}

}  // namespace

std::expected<uint64_t, std::string> ParseDuration(std::string_view text) {
  const std::string original(text);
  const size_t digits = LeadingNumberLength(text);
  if (digits == 0) {
    return std::unexpected("'" + original + "' is not a duration (e.g. 1500, 20us, 1.5ms, 2s)");
  }
  const double value = std::stod(std::string(text.substr(0, digits)));
  const std::string_view suffix = text.substr(digits);
  double scale = 0;
  if (suffix.empty() || suffix == "ns")
    scale = 1;
  else if (suffix == "us" || suffix == "µs")
    scale = 1e3;
  else if (suffix == "ms")
    scale = 1e6;
  else if (suffix == "s")
    scale = 1e9;
  else
    return std::unexpected("'" + original + "' has an unknown unit (use ns, us, ms or s)");
  const double ns = value * scale;
  if (ns > 1.8e19) return std::unexpected("'" + original + "' is too large");
  return static_cast<uint64_t>(std::llround(ns));
}

std::string FormatSignedPercent(double fraction) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%+.2f%%", fraction * 100.0);
  return buffer;
}

std::expected<double, std::string> ParsePercent(std::string_view text) {
  const std::string original(text);
  if (text.ends_with('%')) text.remove_suffix(1);
  const size_t digits = LeadingNumberLength(text);
  if (digits == 0 || digits != text.size()) {
    return std::unexpected("'" + original + "' is not a percentage (e.g. 5%, 0.5%)");
  }
  return std::stod(std::string(text)) / 100.0;
}

}  // namespace libprof::analysis
