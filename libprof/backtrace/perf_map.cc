#include "libprof/backtrace/perf_map.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>

namespace libprof {
namespace {

// A map larger than this is read only up to it (a long-running JVM's can grow without bound;
// Julia's for a large program is a few MiB).
constexpr uint64_t kMaxPerfMapBytes = uint64_t{256} << 20;

bool ParseHex(std::string_view* text, uint64_t* out) {
  std::string_view s = *text;
  if (s.size() >= 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) s.remove_prefix(2);
  uint64_t value = 0;
  size_t i = 0;
  for (; i < s.size() && i < 16; ++i) {
    const char c = s[i];
    int digit = c >= '0' && c <= '9'   ? c - '0'
                : c >= 'a' && c <= 'f' ? c - 'a' + 10
                : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                       : -1;
    if (digit < 0) break;
    value = value << 4 | static_cast<uint64_t>(digit);
  }
  if (i == 0 || (i < s.size() && s[i] != ' ')) return false;
  *out = value;
  text->remove_prefix(text->size() - s.size() + i);
  return true;
}

void SortAndDeduplicate(std::vector<PerfMapSymbol>* symbols) {
  // Stable: of equal starts the later line stays last, and is the one kept.
  std::stable_sort(symbols->begin(), symbols->end(),
                   [](const PerfMapSymbol& a, const PerfMapSymbol& b) { return a.start < b.start; });
  std::vector<PerfMapSymbol> out;
  out.reserve(symbols->size());
  for (PerfMapSymbol& s : *symbols) {
    if (!out.empty() && out.back().start == s.start) {
      out.back() = std::move(s);
    } else {
      out.push_back(std::move(s));
    }
  }
  symbols->swap(out);
}

void ParseLines(std::string_view text, std::vector<PerfMapSymbol>* out) {
  while (!text.empty()) {
    const size_t end = text.find('\n');
    std::string_view line = text.substr(0, end);
    text.remove_prefix(end == std::string_view::npos ? text.size() : end + 1);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    PerfMapSymbol symbol;
    if (!ParseHex(&line, &symbol.start) || line.empty()) continue;
    line.remove_prefix(1);
    if (!ParseHex(&line, &symbol.size) || symbol.size == 0 || line.size() < 2) continue;
    symbol.name = std::string(line.substr(1));
    out->push_back(std::move(symbol));
  }
}

}  // namespace

std::vector<PerfMapSymbol> ParsePerfMap(std::string_view text) {
  std::vector<PerfMapSymbol> symbols;
  ParseLines(text, &symbols);
  SortAndDeduplicate(&symbols);
  return symbols;
}

PerfMap::PerfMap() : path_("/tmp/perf-" + std::to_string(getpid()) + ".map") {}

void PerfMap::ReadAppended() {
  const int fd = open(path_.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return;
  std::string text;
  char buffer[65536];
  uint64_t offset = read_bytes_;
  while (offset < kMaxPerfMapBytes) {
    const ssize_t n = pread(fd, buffer, sizeof buffer, static_cast<off_t>(offset));
    if (n <= 0) break;
    text.append(buffer, static_cast<size_t>(n));
    offset += static_cast<uint64_t>(n);
  }
  close(fd);
  // Only complete lines: the runtime may be writing the last one now.
  const size_t complete = text.rfind('\n');
  if (complete == std::string::npos) return;
  text.resize(complete + 1);
  read_bytes_ += text.size();
  ParseLines(text, &symbols_);
  SortAndDeduplicate(&symbols_);
}

const PerfMapSymbol* PerfMap::Find(uint64_t address) {
  if (const PerfMapSymbol* known = Lookup(address)) return known;
  ReadAppended();
  return Lookup(address);
}

const PerfMapSymbol* PerfMap::Lookup(uint64_t address) const {
  auto it = std::upper_bound(symbols_.begin(), symbols_.end(), address,
                             [](uint64_t a, const PerfMapSymbol& s) { return a < s.start; });
  if (it == symbols_.begin()) return nullptr;
  --it;
  return address - it->start < it->size ? &*it : nullptr;
}

}  // namespace libprof
