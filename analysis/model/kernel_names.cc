#include "analysis/model/kernel_names.h"

#include <cxxabi.h>

#include <cstdlib>
#include <memory>

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

// Replaces the contents of every bracket pair `open`/`close` at depth 0 (outside the other kind)
// with "…". Parentheses of "(anonymous namespace)" are kept.
std::string Collapse(std::string_view name, char open, char close) {
  std::string out;
  int depth = 0;
  for (size_t i = 0; i < name.size(); ++i) {
    const char c = name[i];
    if (depth == 0 && c == '(' && name.substr(i, 21) == "(anonymous namespace)") {
      out += name.substr(i, 21);
      i += 20;
      continue;
    }
    if (c == open) {
      if (depth == 0) out += c;
      ++depth;
      if (depth == 1) out += "…";
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

std::string ShortKernelName(std::string_view name, size_t max_chars) {
  std::string out(name);
  if (DisplayWidth(out) <= max_chars) return out;
  out = Collapse(out, '(', ')');
  if (DisplayWidth(out) <= max_chars) return out;
  return Collapse(out, '<', '>');
}

}  // namespace libprof::analysis
