// Quiescent points of a set of spans: where trace_windows.h may cut a trace.
//
// Layer: analysis/model/. Pure.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <utility>
#include <vector>

namespace libprof::analysis {

// A span [start, end) of something running (a call, a device operation from the start of its
// call), every one starting before `limit`.
using Span = std::pair<uint64_t, uint64_t>;

// The latest time q that no span crosses (every span starting before q ends by q) among `limit`
// and the spans' starts after `after`; none if every such time lies inside a span. `spans` is
// reordered. Linear on the spans (a bucket pass, then a sort of the one bucket that holds the
// answer) rather than a sort of them all: the windowed read asks this of every record waiting.
std::optional<uint64_t> LatestQuiescentPoint(std::span<Span> spans, uint64_t after,
                                             uint64_t limit);

// Several cuts at once, in increasing order: the last is LatestQuiescentPoint's answer, and
// before it, where quiescent points allow, cuts about `every` spans apart (each the latest
// quiescent span start at or before the time by which `every` more spans have started, found
// per bucket of start times). Empty when LatestQuiescentPoint has no answer. `spans` is
// reordered. One bucket pass for all the cuts: the windowed read cuts what a try found before
// its limit into windows of about `every` records instead of trying again for each window (each
// try looks at every record waiting, and the horizon's records wait through many tries).
std::vector<uint64_t> QuiescentCuts(std::span<Span> spans, uint64_t after, uint64_t limit,
                                    size_t every);

}  // namespace libprof::analysis
