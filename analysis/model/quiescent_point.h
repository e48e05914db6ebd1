// The latest quiescent point of a set of spans: where trace_windows.h may cut a trace.
//
// Layer: analysis/model/. Pure.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <utility>

namespace libprof::analysis {

// A span [start, end) of something running (a call, a device operation from the start of its
// call), every one starting before `limit`.
using Span = std::pair<uint64_t, uint64_t>;

// The latest time q that no span crosses (every span starting before q ends by q) among `limit`
// and the spans' starts after `after`; none if every such time lies inside a span. `spans` is
// reordered. Linear on the spans (a bucket pass, then a sort of the one bucket that holds the
// answer) rather than a sort of them all: the windowed read asks this of every record waiting,
// once per window.
std::optional<uint64_t> LatestQuiescentPoint(std::span<Span> spans, uint64_t after,
                                             uint64_t limit);

}  // namespace libprof::analysis
