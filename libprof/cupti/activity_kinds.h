// Which CUPTI activity kinds record each LIBPROF_TRACE kind: the one place where a record kind
// meets its CUPTI_ACTIVITY_KIND_* values. Devices, contexts and streams are not here: the
// session enables them always, since the analysis needs them to interpret the rest.
//
// Layer: libprof/cupti/ (includes CUPTI). Pure: no CUPTI call (a kind's `prepare` makes them when
// the session runs it).
#pragma once

#include <cupti.h>

#include <string>
#include <vector>

#include "libprof/cupti/cupti_api.h"
#include "libprof/settings.h"

namespace libprof {

// What a kind's set-up step says.
enum class PrepareResult {
  kReady,    // enable the kind now
  kNotYet,   // CUPTI needs the driver initialised first: try again once a context exists
  kRefused,  // this platform cannot record it: leave it off
};

struct ActivityKindToEnable {
  CUpti_ActivityKind kind;
  const char* what;  // for "this CUPTI cannot record ..."
  // Set-up CUPTI requires before this kind is enabled (unified-memory counters), or nullptr.
  // The session runs it each time it enables the kind; *warning, when set, is logged once.
  PrepareResult (*prepare)(const CuptiApi& api, std::string* warning) = nullptr;
  // Enabled only once the program starts using managed memory (managed_memory_gate.h): the
  // unified-memory counters, which cost every process seconds at exit once enabled.
  bool after_managed_memory = false;
};

// The data kinds to enable for `kinds`, in the order they must be enabled.
std::vector<ActivityKindToEnable> DataActivityKinds(const RecordKinds& kinds);

}  // namespace libprof
