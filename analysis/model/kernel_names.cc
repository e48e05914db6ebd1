#include "analysis/model/kernel_names.h"

#include <cxxabi.h>

#include <cstdlib>
#include <memory>
#include <vector>

namespace libprof::analysis {
namespace {

std::string Demangle(std::string_view mangled) {
  if (mangled.substr(0, 2) != "_Z") return std::string(mangled);
  int status = 0;
  const std::string input(mangled);
  std::unique_ptr<char, decltype(&std::free)> out(
      abi::__cxa_demangle(input.c_str(), nullptr, nullptr, &status), &std::free);
  return status == 0 && out ? std::string(out.get()) : input;
}

// Drops "void " (or any return type) before a template function's name: the return type is the
// text before the last space that is at bracket depth 0 and before the first '(' at depth 0.
std::string WithoutReturnType(const std::string& name) {
  int depth = 0;
  size_t last_space = std::string::npos;
  for (size_t i = 0; i < name.size(); ++i) {
    const char c = name[i];
    if (c == '<' || c == '[')
      ++depth;
    else if (c == '>' || c == ']')
      --depth;
    else if (c == '(' && depth == 0) {
      // "(anonymous namespace)::f" starts with a parenthesis that is part of the name.
      if (name.compare(i, 21, "(anonymous namespace)") == 0) {
        i += 20;
        continue;
      }
      break;
    } else if (c == ' ' && depth == 0) {
      last_space = i;
    }
  }
  if (last_space == std::string::npos) return name;
  return name.substr(last_space + 1);
}

constexpr std::string_view kAnonymous = "(anonymous namespace)";

// Replaces the contents of every bracket pair `open`/`close` at depth 0 (outside the other kind)
// with "…"; an empty pair and the parentheses of "(anonymous namespace)" are kept.
std::string Collapse(std::string_view name, char open, char close) {
  std::string out;
  int depth = 0;
  for (size_t i = 0; i < name.size(); ++i) {
    const char c = name[i];
    if (depth == 0 && name.substr(i, kAnonymous.size()) == kAnonymous) {
      out += kAnonymous;
      i += kAnonymous.size() - 1;
      continue;
    }
    if (c == open) {
      if (depth == 0) {
        out += c;
        if (i + 1 < name.size() && name[i + 1] != close) out += "…";
      }
      ++depth;
      continue;
    }
    if (c == close && depth > 0) {
      --depth;
      if (depth == 0) out += c;
      continue;
    }
    if (depth == 0) out += c;
  }
  return out;
}

// The positions just after each "::" that separates scopes (outside brackets), in order.
std::vector<size_t> ScopeStarts(std::string_view name) {
  std::vector<size_t> starts;
  int depth = 0;
  for (size_t i = 0; i + 1 < name.size(); ++i) {
    const char c = name[i];
    if (c == '<' || c == '(' || c == '[' || c == '{') {
      if (!(c == '(' && name.substr(i, kAnonymous.size()) == kAnonymous)) ++depth;
    } else if ((c == '>' || c == ')' || c == ']' || c == '}') && depth > 0) {
      --depth;
    } else if (depth == 0 && c == ':' && name[i + 1] == ':') {
      starts.push_back(i + 2);
      ++i;
    }
  }
  return starts;
}

// The byte offset of the `chars`-th code point of `text` (text.size() when shorter).
size_t OffsetOfChar(std::string_view text, size_t chars) {
  size_t seen = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    if ((static_cast<unsigned char>(text[i]) & 0xC0) == 0x80) continue;
    if (seen++ == chars) return i;
  }
  return text.size();
}

// `text` cut to `width` characters ending in "…", at the last word or scope boundary when one
// lies in the last third of what is kept (a cut mid-word otherwise).
std::string CutAtBoundary(std::string_view text, size_t width) {
  if (width == 0) return "";
  const size_t keep = OffsetOfChar(text, width - 1);
  size_t cut = keep;
  for (size_t i = keep; i > 0; --i) {
    const char before = text[i - 1];
    if (before == ' ' || before == ':' || before == '_' || before == ',' || before == '/' ||
        before == '.' || before == '-') {
      cut = i;
      break;
    }
  }
  if (DisplayWidth(text.substr(0, cut)) * 3 < (width - 1) * 2) cut = keep;
  std::string out(text.substr(0, cut));
  while (!out.empty() && out.back() == ' ') out.pop_back();
  return out + "…";
}

}  // namespace

size_t DisplayWidth(std::string_view text) {
  size_t width = 0;
  for (unsigned char c : text) width += (c & 0xC0) != 0x80;
  return width;
}

std::string KernelDisplayName(std::string_view mangled, std::string_view demangled) {
  std::string name;
  if (!demangled.empty() && demangled.substr(0, 2) != "_Z") {
    name = std::string(demangled);
  } else {
    name = Demangle(!mangled.empty() ? mangled : demangled);
  }
  return WithoutReturnType(name);
}

std::string AbbreviateName(std::string_view name, size_t max_chars) {
  std::string out(name);
  if (DisplayWidth(out) <= max_chars) return out;
  out = Collapse(out, '(', ')');
  if (DisplayWidth(out) <= max_chars) return out;
  out = Collapse(out, '<', '>');
  if (DisplayWidth(out) <= max_chars) return out;
  const std::vector<size_t> scopes = ScopeStarts(out);
  for (size_t start : scopes) {
    std::string shorter = "…::" + out.substr(start);
    if (DisplayWidth(shorter) <= max_chars) return shorter;
  }
  if (!scopes.empty()) out = "…::" + out.substr(scopes.back());
  // The last name alone, its elided lists replaced by one "…".
  bool elided = false;
  for (std::string_view list : {"(…)", "<…>", "()", "(…)", "<…>"}) {
    if (out.size() > list.size() && out.ends_with(list)) {
      out.resize(out.size() - list.size());
      elided = true;
    }
  }
  if (elided && DisplayWidth(out) < max_chars) return out + "…";
  return CutAtBoundary(out, max_chars);
}

}  // namespace libprof::analysis
