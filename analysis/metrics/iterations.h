// The iterations of a run: an NVTX range that repeats (a training step), whose instances the
// per-iteration figures of `profview diff` and `profview check` divide by and whose durations
// give the spread the run shows itself.
//
// Layer: analysis/metrics/. Reads trace files through TraceReader::NextNvtx (NVTX events only,
// every other record skipped unparsed), in memory bounded by the number of top-level ranges.
#pragma once

#include <cstdint>
#include <expected>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace libprof::analysis {

// An iteration of a one-process run in start order (RangeInstances::in_order).
struct Iteration {
  uint64_t start_ns = 0;  // from the recording start (the trace header's start time)
  uint64_t duration_ns = 0;
};

// One NVTX range name and the durations of its instances.
struct RangeInstances {
  std::string domain;  // "" for the default domain
  std::string name;
  std::vector<uint64_t> durations_ns;  // sorted ascending
  uint32_t processes = 0;              // processes with at least one instance
  // Every instance in start order, when one process has the range and its header gives the
  // recording start (else empty): where warm-up iterations lie (LeadingWarmUp).
  std::vector<Iteration> in_order;

  // "domain:name", or the name alone in the default domain: what --nvtx accepts.
  std::string Label() const;
  // Instances per process (count over the processes that have the range; 0 when none).
  double PerProcess() const;
  // Linear-interpolated quantile of the durations (q in [0, 1]); 0 when there are none.
  double Quantile(double q) const;
  double Median() const { return Quantile(0.5); }
  // The spread of the iterations: the interquartile range (p75 - p25). Robust to the slow
  // first step (warm-up, autotuning) that a standard deviation would be dominated by.
  double Spread() const { return Quantile(0.75) - Quantile(0.25); }
};

// The NVTX ranges of one run (one or several trace files), by (domain, name).
struct RunRanges {
  // Instances of each name that are outermost on their thread (push/pop depth 0; start/end
  // ranges, which do not nest, always count). Ranges never closed are left out.
  std::map<std::pair<std::string, std::string>, RangeInstances> top_level;
  // Every closed instance of the range named by `wanted` (any depth), when one was given.
  RangeInstances wanted;
  bool wanted_found = false;
};

// Reads the NVTX ranges of `files` (paths already expanded), keeping top-level ones and every
// instance of `wanted` ("name" or "domain:name", as --nvtx; "" for none). Errors: the reader's.
std::expected<RunRanges, std::string> ReadRunRanges(const std::vector<std::string>& files,
                                                    const std::string& wanted);

// Warm-up iterations: the leading instances of a one-process run that each took more than
// kWarmUpIterationFactor times the median instance (compilation, autotuning, the first
// allocations and module loads happen in the first steps of torch.compile, JAX, CuPy and eager
// PyTorch alike). None when more than half the instances would be (then no median is typical),
// when fewer than 3 would remain, or when the run has several processes (their iterations are
// not one sequence).
inline constexpr double kWarmUpIterationFactor = 3.0;
size_t LeadingWarmUp(const RangeInstances& range);

// `range` without its first `count` instances (by start); `*from_ns` is where the first one
// kept starts, from the recording start (for FilterOptions::from_ns).
RangeInstances WithoutLeading(const RangeInstances& range, size_t count, uint64_t* from_ns);

// The iteration range two runs share: the top-level name with the most instances in `base`
// that has at least two instances in both; ties go to the name that sorts first. Null when
// there is none.
const RangeInstances* CommonIterationRange(const RunRanges& base, const RunRanges& next);
// For one run alone (profview check): its most repeated top-level range with two or more
// instances, or null.
const RangeInstances* IterationRange(const RunRanges& run);

}  // namespace libprof::analysis
