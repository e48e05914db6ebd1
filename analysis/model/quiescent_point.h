// Quiescent points of a set of spans: where trace_windows.h may cut a trace.
//
// Layer: analysis/model/. Pure.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <utility>
#include <vector>

namespace libprof::analysis {

// A span [start, end) of something running (a call, a device operation from the start of its
// call), every one starting before `limit`.
using Span = std::pair<uint64_t, uint64_t>;

// Cuts at quiescent points, in increasing order. The last is the latest time q that no span
// crosses (every span starting before q ends by q) among `limit` and the spans' starts after
// `after`; before it, where quiescent points allow, cuts about `every` spans apart (each the
// latest quiescent span start at or before the time by which `every` more spans have started;
// none with `every` 0). Empty when every such time lies inside a span. Linear on the spans: one
// bucket pass of their starts for all the cuts, then a sort of only the buckets that may hold
// one. The windowed read cuts what a try found before its limit into windows of about `every`
// records this way instead of trying again for each window (each try looks at every waiting
// record, and the horizon's records wait through many tries).
std::vector<uint64_t> QuiescentCuts(std::span<const Span> spans, uint64_t after, uint64_t limit,
                                    size_t every);

}  // namespace libprof::analysis
