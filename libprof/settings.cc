#include "libprof/settings.h"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <iterator>
#include <sstream>
#include <string_view>

namespace libprof {
namespace {

using Getenv = std::function<const char*(const char*)>;

// Reads an unsigned integer variable within [min, max]; anything else warns and keeps *value.
void ReadUint(const Getenv& getenv_fn, const char* name, uint32_t min, uint32_t max,
              uint32_t* value, std::vector<std::string>* warnings) {
  const char* text = getenv_fn(name);
  if (text == nullptr || *text == '\0') return;
  errno = 0;
  char* end = nullptr;
  unsigned long long parsed = std::strtoull(text, &end, 10);
  bool ok = errno == 0 && end != text && *end == '\0' && text[0] != '-' && parsed >= min &&
            parsed <= max;
  if (!ok) {
    std::ostringstream message;
    message << name << "=" << text << " is not a whole number from " << min << " to " << max
            << "; using the default " << *value;
    warnings->push_back(message.str());
    return;
  }
  *value = static_cast<uint32_t>(parsed);
}

void ReadBool(const Getenv& getenv_fn, const char* name, bool* value,
              std::vector<std::string>* warnings) {
  const char* text = getenv_fn(name);
  if (text == nullptr || *text == '\0') return;
  std::string_view v(text);
  if (v == "1" || v == "true" || v == "yes" || v == "on") {
    *value = true;
  } else if (v == "0" || v == "false" || v == "no" || v == "off") {
    *value = false;
  } else {
    warnings->push_back(std::string(name) + "=" + text + " is not 0/1/true/false; using the default " +
                        (*value ? "1" : "0"));
  }
}

// Maps a LIBPROF_TRACE item to the flag it switches on.
bool* KindFlag(RecordKinds& kinds, std::string_view name) {
#define LIBPROF_KIND_FLAG_BY_NAME(member, kind_name, on, group) \
  if (name == kind_name) return &kinds.member;
  LIBPROF_CAPTURE_KINDS(LIBPROF_KIND_FLAG_BY_NAME)
#undef LIBPROF_KIND_FLAG_BY_NAME
  return nullptr;
}

// LIBPROF_TRACE="cuda,nvtx" style: a list of kinds and aliases (proto/capture_kinds.h).
void ReadKinds(const Getenv& getenv_fn, RecordKinds* kinds, std::vector<std::string>* warnings) {
  const char* text = getenv_fn("LIBPROF_TRACE");
  if (text == nullptr || *text == '\0') return;
  RecordKinds parsed;
#define LIBPROF_KIND_OFF(member, name, on, group) parsed.member = false;
  LIBPROF_CAPTURE_KINDS(LIBPROF_KIND_OFF)
#undef LIBPROF_KIND_OFF
  std::string_view rest(text);
  while (!rest.empty()) {
    size_t comma = rest.find(',');
    std::string_view item = rest.substr(0, comma);
    rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
    if (item.empty()) continue;
    if (std::find(std::begin(kCaptureKindAliases), std::end(kCaptureKindAliases), item) !=
        std::end(kCaptureKindAliases)) {
#define LIBPROF_KIND_BY_ALIAS(member, name, on, group) \
  if (AliasCovers(item, group)) parsed.member = true;
      LIBPROF_CAPTURE_KINDS(LIBPROF_KIND_BY_ALIAS)
#undef LIBPROF_KIND_BY_ALIAS
      continue;
    }
    bool* flag = KindFlag(parsed, item);
    if (flag == nullptr) {
      warnings->push_back("LIBPROF_TRACE=" + std::string(text) + ": unknown kind '" +
                          std::string(item) + "' (known: " + CaptureKindWords(", ") +
                          "); using the default set");
      return;
    }
    *flag = true;
  }
  *kinds = parsed;
}

std::string KindsToString(const RecordKinds& k) {
  std::string out;
  auto add = [&](bool on, const char* name) {
    if (!on) return;
    if (!out.empty()) out += ',';
    out += name;
  };
#define LIBPROF_KIND_TO_STRING(member, name, on, group) add(k.member, name);
  LIBPROF_CAPTURE_KINDS(LIBPROF_KIND_TO_STRING)
#undef LIBPROF_KIND_TO_STRING
  return out;
}

}  // namespace

std::map<std::string, std::string> Settings::ToMap() const {
  return {
      {"LIBPROF_OUTPUT", output},
      {"LIBPROF_FORCE_OVERWRITE", force_overwrite ? "1" : "0"},
      {"LIBPROF_LOG_LEVEL", log_level},
      {"LIBPROF_BUFFER_SIZE_KB", std::to_string(buffer_size_kb)},
      {"LIBPROF_BUFFER_POOL", std::to_string(buffer_pool)},
      {"LIBPROF_MAX_BUFFERS", std::to_string(max_buffers)},
      {"LIBPROF_DEVICE_BUFFER_SIZE_KB", std::to_string(device_buffer_size_kb)},
      {"LIBPROF_FLUSH_INTERVAL_MS", std::to_string(flush_interval_ms)},
      {"LIBPROF_TRACE", KindsToString(kinds)},
      {"LIBPROF_API_FILTER", api_filter == ApiFilter::kAll ? "all" : "significant"},
      {"LIBPROF_CAPTURE_RANGE", capture_range},
      {"LIBPROF_DELAY_MS", std::to_string(delay_ms)},
      {"LIBPROF_DURATION_MS", std::to_string(duration_ms)},
      {"LIBPROF_WATCH_TAKEOVER", watch_takeover ? "1" : "0"},
      {"LIBPROF_CUPTI_PATH", cupti_path},
      {"LIBPROF_BACKTRACE", backtrace == BacktraceMode::kNone  ? "none"
                            : backtrace == BacktraceMode::kAll ? "all"
                                                               : "blocking"},
      {"LIBPROF_BACKTRACE_DEPTH", std::to_string(backtrace_depth)},
      {"LIBPROF_PYTHON_FRAMES", python_frames ? "1" : "0"},
  };
}

bool ParseCaptureRange(const std::string& text, CaptureRange* range, std::string* error) {
  *range = CaptureRange{};
  if (text.empty()) return true;
  if (text == "cudaProfilerApi") {
    range->kind = CaptureRange::Kind::kCudaProfilerApi;
    return true;
  }
  if (text.rfind("nvtx:", 0) == 0) {
    std::string spec = text.substr(5);
    size_t at = spec.rfind('@');
    range->kind = CaptureRange::Kind::kNvtx;
    range->nvtx_message = at == std::string::npos ? spec : spec.substr(0, at);
    range->nvtx_domain = at == std::string::npos ? "" : spec.substr(at + 1);
    if (!range->nvtx_message.empty() && (at == std::string::npos || !range->nvtx_domain.empty())) {
      return true;
    }
  }
  *error = "expected cudaProfilerApi, nvtx:NAME or nvtx:NAME@DOMAIN";
  *range = CaptureRange{};
  return false;
}

Settings ParseSettings(const Getenv& getenv_fn, std::vector<std::string>* warnings) {
  Settings s;
  if (const char* v = getenv_fn("LIBPROF_OUTPUT"); v != nullptr && *v != '\0') s.output = v;
  ReadBool(getenv_fn, "LIBPROF_FORCE_OVERWRITE", &s.force_overwrite, warnings);
  ReadBool(getenv_fn, "LIBPROF_WATCH_TAKEOVER", &s.watch_takeover, warnings);
  if (const char* v = getenv_fn("LIBPROF_LOG_LEVEL"); v != nullptr && *v != '\0') {
    std::string_view level(v);
    if (level == "off" || level == "error" || level == "warn" || level == "info" ||
        level == "debug" || level == "trace") {
      s.log_level = v;
    } else {
      warnings->push_back(std::string("LIBPROF_LOG_LEVEL=") + v +
                          " is not one of off, error, warn, info, debug, trace; using warn");
    }
  }
  // 64 KiB .. 256 MiB: CUPTI needs room for at least a few records; more than 256 MiB per buffer
  // only delays delivery.
  ReadUint(getenv_fn, "LIBPROF_BUFFER_SIZE_KB", 64, 262144, &s.buffer_size_kb, warnings);
  ReadUint(getenv_fn, "LIBPROF_BUFFER_POOL", 1, 1024, &s.buffer_pool, warnings);
  ReadUint(getenv_fn, "LIBPROF_MAX_BUFFERS", 1, 65536, &s.max_buffers, warnings);
  if (s.max_buffers < s.buffer_pool) {
    warnings->push_back("LIBPROF_MAX_BUFFERS=" + std::to_string(s.max_buffers) +
                        " is below LIBPROF_BUFFER_POOL=" + std::to_string(s.buffer_pool) +
                        "; using " + std::to_string(s.buffer_pool));
    s.max_buffers = s.buffer_pool;
  }
  ReadUint(getenv_fn, "LIBPROF_DEVICE_BUFFER_SIZE_KB", 0, 4194304, &s.device_buffer_size_kb,
           warnings);
  ReadUint(getenv_fn, "LIBPROF_FLUSH_INTERVAL_MS", 10, 3600000, &s.flush_interval_ms, warnings);
  ReadKinds(getenv_fn, &s.kinds, warnings);
  if (const char* v = getenv_fn("LIBPROF_API_FILTER"); v != nullptr && *v != '\0') {
    std::string_view filter(v);
    if (filter == "all") {
      s.api_filter = ApiFilter::kAll;
    } else if (filter == "significant") {
      s.api_filter = ApiFilter::kSignificant;
    } else {
      warnings->push_back(std::string("LIBPROF_API_FILTER=") + v +
                          " is not 'significant' or 'all'; using significant");
    }
  }
  if (const char* v = getenv_fn("LIBPROF_CAPTURE_RANGE"); v != nullptr && *v != '\0') {
    CaptureRange range;
    std::string error;
    if (ParseCaptureRange(v, &range, &error)) {
      s.capture_range = v;
    } else {
      warnings->push_back(std::string("LIBPROF_CAPTURE_RANGE=") + v + ": " + error +
                          "; recording everything");
    }
  }
  // Up to 30 days: beyond that it is surely a unit mistake.
  constexpr uint32_t kMaxWindowMs = 30u * 24 * 3600 * 1000;
  ReadUint(getenv_fn, "LIBPROF_DELAY_MS", 0, kMaxWindowMs, &s.delay_ms, warnings);
  ReadUint(getenv_fn, "LIBPROF_DURATION_MS", 0, kMaxWindowMs, &s.duration_ms, warnings);
  if (const char* v = getenv_fn("LIBPROF_CUPTI_PATH"); v != nullptr) s.cupti_path = v;
  if (const char* v = getenv_fn("LIBPROF_TRACE_LIST"); v != nullptr) s.trace_list = v;
  if (const char* v = getenv_fn("LIBPROF_BACKTRACE"); v != nullptr && *v != '\0') {
    std::string_view mode(v);
    if (mode == "none") {
      s.backtrace = BacktraceMode::kNone;
    } else if (mode == "blocking") {
      s.backtrace = BacktraceMode::kBlocking;
    } else if (mode == "all") {
      s.backtrace = BacktraceMode::kAll;
    } else {
      warnings->push_back(std::string("LIBPROF_BACKTRACE=") + v +
                          " is not one of none, blocking, all; using blocking");
    }
  }
  // 256: the walk's buffer is on the calling thread's stack (call_site_recorder.cc).
  ReadUint(getenv_fn, "LIBPROF_BACKTRACE_DEPTH", 1, 256, &s.backtrace_depth, warnings);
  ReadBool(getenv_fn, "LIBPROF_PYTHON_FRAMES", &s.python_frames, warnings);
  return s;
}

Settings ParseSettingsFromEnvironment(std::vector<std::string>* warnings) {
  return ParseSettings([](const char* name) { return std::getenv(name); }, warnings);
}

}  // namespace libprof
