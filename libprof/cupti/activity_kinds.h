// Which CUPTI activity kinds record each LIBPROF_TRACE kind: the one place where a record kind
// meets its CUPTI_ACTIVITY_KIND_* values. Devices, contexts and streams are not here: the
// session enables them always, since the analysis needs them to interpret the rest.
//
// Layer: libprof/cupti/ (includes CUPTI). Pure: no CUPTI call.
#pragma once

#include <cupti.h>

#include <vector>

#include "libprof/settings.h"

namespace libprof {

struct ActivityKindToEnable {
  CUpti_ActivityKind kind;
  const char* what;  // for "this CUPTI cannot record ..."
};

// The data kinds to enable for `kinds`, in the order they must be enabled.
std::vector<ActivityKindToEnable> DataActivityKinds(const RecordKinds& kinds);

}  // namespace libprof
