// Random training loops delivered as libprof's flushes deliver them, for the tests of findings
// in windows (windowed_findings_test, windowed_findings_parallel_test): several threads, two
// devices, streams of every class, start-up and later module loading, events synchronised in
// later steps, allocation churn, pageable copies followed by launches, long idle stretches with
// host calls in them, nested NVTX ranges, a warm-up before the loop (every third seed); and
// option sets that make every rule family fire.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "analysis/model/trace_windows.h"
#include "analysis/rules/findings.h"
#include "tests/analysis/trace_builder.h"

namespace libprof::analysis::testing {

struct LoopShape {
  bool epoch_range = false;  // one NVTX range over every step: written at its end, after cuts
  // Event synchronisations may name a recording of an event recorded again since (else each
  // names its event's latest recording).
  bool stale_event_syncs = false;
};

// Steps of a training loop; every step ends with every stream drained (a quiescent point).
TraceBuilder FindingsLoop(uint64_t seed, int steps, const LoopShape& shape = {});

// Options that make every rule family fire on the loops above.
std::vector<FindingsOptions> OptionSets();

// A finding as the reports show it, with its seq.
std::string Describe(uint64_t seq, const Finding& f);

// The flush delivery's disorder, as a horizon the windows wait for: a flush and the device
// lag, and 2 ms for a call or a queued operation that ends after a cut it started before (the
// longest of these loops' waits; libprof's horizon is two flush intervals).
WindowLimits LimitsFor(double flush_us, double lag_us, size_t cut_every);

// Writes `b` at `path` as libprof flushes it, with a flush interval (20-319 us) and device lag
// (0-299 us) drawn from `seed`, and returns LimitsFor them with windows of 16 to
// 15 + `cut_spread` records (also drawn): the random windowed loops of the tests.
WindowLimits WriteFlushedForWindows(const TraceBuilder& b, uint64_t seed, const std::string& path,
                                    size_t cut_spread = 64);

// StreamFindings over the whole trace at `path`, Describe'd, in seq order.
std::vector<std::string> WholeFindings(const std::string& path, const FindingsOptions& options);

}  // namespace libprof::analysis::testing
