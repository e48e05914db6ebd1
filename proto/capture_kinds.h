// The record kinds LIBPROF_TRACE names: the one list that libprof's settings parser
// (libprof/settings.h, RecordKinds) and `profview --list-trace-kinds` (which collect.sh asks to
// check --trace) read. A trace's header keeps the effective list under "LIBPROF_TRACE".
//
// Layer: proto/ (the contract shared by capture and analysis; header-only, no dependency).
// Adding a kind: a row here, then what records it (libprof/cupti/activity_kinds.cc for a CUPTI
// kind) and README.md's LIBPROF_TRACE line.
#pragma once

#include <string>
#include <string_view>

// X(member, name, on_by_default, group): `member` is the kind's flag in libprof::RecordKinds,
// `name` its word in LIBPROF_TRACE, `group` the alias that switches it on besides its name
// ("cuda" is every CUDA kind that is on by default; "all" is "cuda" and "nvtx").
#define LIBPROF_CAPTURE_KINDS(X)                                                     \
  X(runtime_api, "runtime", true, "cuda")                                            \
  X(driver_api, "driver", true, "cuda") /* internal/noisy calls still filtered */    \
  X(kernels, "kernel", true, "cuda")                                                 \
  X(memcpy, "memcpy", true, "cuda")                                                  \
  X(memset, "memset", true, "cuda")                                                  \
  X(sync, "sync", true, "cuda")     /* synchronisation + CUDA event records */       \
  X(memory, "memory", true, "cuda") /* allocations and frees (MEMORY2) */            \
  X(nvtx, "nvtx", true, "nvtx")                                                      \
  X(overhead, "overhead", true, "cuda")                                              \
  X(graph_trace, "graph", false, "") /* one record per graph launch, not per node */ \
  X(uvm, "uvm", true, "cuda") /* unified memory, from the first managed allocation on */

namespace libprof {

struct CaptureKindName {
  const char* name;
  const char* group;
};

// The aliases, then every kind in table order.
inline constexpr const char* kCaptureKindAliases[] = {"cuda", "all"};
inline constexpr CaptureKindName kCaptureKinds[] = {
#define LIBPROF_CAPTURE_KIND_NAME(member, name, on, group) {name, group},
    LIBPROF_CAPTURE_KINDS(LIBPROF_CAPTURE_KIND_NAME)
#undef LIBPROF_CAPTURE_KIND_NAME
};

// Whether `alias` ("cuda" or "all") switches on a kind of `group`.
constexpr bool AliasCovers(std::string_view alias, std::string_view group) {
  return group == "cuda" ? (alias == "cuda" || alias == "all")
                         : (group == "nvtx" && alias == "all");
}

// Every word LIBPROF_TRACE accepts, aliases first, joined by `separator`.
inline std::string CaptureKindWords(std::string_view separator) {
  std::string out;
  for (const char* alias : kCaptureKindAliases) {
    if (!out.empty()) out += separator;
    out += alias;
  }
  for (const CaptureKindName& kind : kCaptureKinds) {
    out += separator;
    out += kind.name;
  }
  return out;
}

}  // namespace libprof
