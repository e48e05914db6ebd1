// The findings rule no-overlap-default-stream: copies and kernels that could not overlap because
// of how they were issued, per device (host copies of more than 64 KiB; smaller ones are mostly
// latency):
//   legacy-default-stream  host copies (HtoD, DtoH) and kernels on the legacy default stream:
//                          it runs everything issued to it in order and waits for (and holds
//                          back) every blocking stream, so its copies and kernels never overlap;
//   pageable-memory        a copy from or to pageable host memory held the host until it was
//                          done (the driver stages it), and the next call of that thread that
//                          issued work launched a kernel on the device that did not have to
//                          follow the copy (another stream, no event or legacy-stream link):
//                          with pinned memory the kernel could have started during the copy.
// Time that could have overlapped (blocked_ns), an upper bound:
//   legacy: min(|C|, |K|) - |C ∩ K_all|, C and K the unions of the stream's copies and kernels,
//           K_all every kernel of the device (what the copies already overlapped elsewhere);
//   pageable: the sum over (copy, kernel) pairs of the shorter of the two durations.
//
// Layer: analysis/rules/, rules; run from the rule registry. Built on TraceIndex
// and StreamModel; pure computation.
#pragma once

#include <vector>

#include "analysis/rules/findings.h"
#include "analysis/model/stream_deps.h"
#include "analysis/model/trace_index.h"

namespace libprof::analysis {

// The rule's pass, registered in rule_registry.cc: appends at most one finding per device and
// cause, when its time is >= options.min_wait_ns.
void FindOverlapFindings(const RuleInput& input, std::vector<Finding>* out);

}  // namespace libprof::analysis
