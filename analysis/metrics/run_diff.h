// `profview diff`: two runs compared from their summaries (summary.h): the processes paired,
// the headline figures, and every API call, GPU operation and NVTX range by name, with the
// change in total and mean time, bytes and bandwidth, each judged against the noise the runs
// show themselves.
//
// Layer: analysis/metrics/. Pure: compares summaries and range durations already computed
// (SummarizeFiles streams them), so that a diff costs what two summaries cost.
//
// Figures are per run, or per iteration when both runs repeat an NVTX range (iterations.h): then
// the summaries cover only the time inside that range and every total is divided by the
// iterations of a process, so that a run with more steps is not "slower".
//
// Noise (why a change counts): a figure changes significantly when |new - base| exceeds
//   max(threshold x base, spread of base, spread of new)
// (for a row's total, and a finding's time lost, at least min_share of the base wall time) where the spread is what the run shows itself:
// - a row's total: std of its calls x sqrt(calls per iteration, or per run): how much a sum of
//   that many calls varies when each call varies as the run's calls did;
// - a row's mean per call: the std of its calls (judged only with two calls or more a side);
// - the iteration: the interquartile range of its durations; the other headline figures per
//   iteration: that spread relative to the median, applied to the figure;
// - CUDA API time and GPU busy: at least the spread of their rows' totals together (the root of
//   the sum of their squares). Per run, the wall time has no spread of its own: only the
//   threshold applies.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "analysis/metrics/iterations.h"
#include "analysis/metrics/summary.h"
#include "analysis/model/stats.h"

namespace libprof::analysis {

struct DiffOptions {
  // Changes smaller than this share of the base figure are within noise whatever the spread.
  // 5%: a judgement (run-to-run variation of kernel and API times on one GPU is typically a few
  // percent), not a measurement; --threshold sets it.
  double threshold = 0.05;
  // A row's (or finding's) total changing by less than this share of the base run's wall time
  // (per iteration: of the time in the range) is within noise: too small to matter, and a row
  // of one or two calls has no spread to judge it by. 0.1%: a judgement; --min-share sets it.
  double min_share = 0.001;
};

// One figure of both runs and whether its change stands out of the noise.
struct Change {
  double base = 0;
  double next = 0;
  double noise = 0;  // the band within which a change is noise (same unit as the figure)
  bool significant = false;
  double delta() const { return next - base; }
  // (next - base) / base; nullopt when base is 0.
  std::optional<double> relative() const;
};

// Judges a change: significant when |next - base| > max(threshold x |base|, spreads, floor).
Change Compare(double base, double next, double base_spread, double next_spread,
               double threshold, double floor = 0);

enum class DiffStatus : uint8_t {
  kWithinNoise,
  kSlower,       // more time (or, for bandwidth-less figures, more of it)
  kFaster,
  kAppeared,     // only in the new run
  kDisappeared,  // only in the base run
};
const char* ToString(DiffStatus status);  // "~", "slower", "faster", "new", "gone"

// One run's figures of one row, as the summary has them (whole-run sums, not per iteration).
struct RowSide {
  Stats stats;  // durations, ns (NVTX: the ranges' host time)
  uint64_t bytes = 0;
  uint64_t gpu_ns = 0;  // NVTX: device time of the work launched inside
};

struct RowDiff {
  std::string kind;    // "api", "kernel", "memcpy", "memset", "graph", "nvtx"
  std::string name;    // full name (as the summary's rows)
  // Copies of one direction whose memory kind changed ("[copy pageable → pinned to device]" in
  // `name`): the row's name in each run. Empty for every other row.
  std::string base_name, next_name;
  std::string domain;  // NVTX
  bool has_bytes = false;
  std::optional<RowSide> base, next;
  Change total;   // total time per iteration (or per run), ns
  Change calls;   // calls per iteration (or per run); noise: the threshold only
  Change mean;    // mean time per call, ns; never significant unless both runs have 2+ calls
  Change gpu;     // NVTX GPU time per iteration (or run); noise: the threshold only
  Change bytes;   // copies and memsets: bytes per iteration (or run); noise: the threshold only
  DiffStatus status = DiffStatus::kWithinNoise;
};

// Which process a summary part is.
struct ProcessLabel {
  uint32_t pid = 0;
  std::optional<uint32_t> rank;
  std::string path;
};

// A process of each run, paired (one side absent when the other run has no partner).
struct ProcessPair {
  std::optional<ProcessLabel> base, next;
  Change trace, host_api, gpu_busy;  // ns, per run (zeros when a side is absent)
};

struct HeadlineFigure {
  std::string id;  // "iteration", "wall", "host_api", "gpu_busy" (JSON and check's metric)
  std::string label;
  Change change;
};

struct RunComparison {
  // Per iteration, when both runs repeat an NVTX range; else figures are per run.
  std::optional<RangeInstances> base_iterations, next_iterations;
  bool iterations_chosen = false;  // by --nvtx (else the most repeated top-level range)
  bool per_run_chosen = false;     // by --per-run (else no range repeats in both runs)
  // Warm-up iterations left out of each run (iterations.h LeadingWarmUp), their durations in
  // start order: none with --keep-warm-up. The iterations above are those kept.
  std::vector<uint64_t> base_warm_up_ns, next_warm_up_ns;
  double base_per = 1, next_per = 1;  // what totals are divided by (iterations per process)
  std::string paired_by;  // "rank" or "order"
  std::vector<ProcessPair> pairs;
  std::vector<HeadlineFigure> headline;
  // Sorted: significant changes first, then by |change in total time|, then by total (the
  // larger of the runs'), then name.
  std::vector<RowDiff> host, device, nvtx;
  size_t common_names = 0;  // rows present in both runs
  double floor_ns = 0;      // DiffOptions::min_share of the base wall time (per iteration)
};

// Pairs processes by rank when every process of both runs carries one, else by order (the
// i-th with the i-th). Returns the pairs, base order first, then new processes left over;
// `by_rank` says which rule applied.
std::vector<std::pair<std::optional<size_t>, std::optional<size_t>>> PairProcesses(
    const std::vector<std::optional<uint32_t>>& base_ranks,
    const std::vector<std::optional<uint32_t>>& next_ranks, bool* by_rank);

// Compares two summaries. `base_iterations`/`next_iterations`: the iteration range of each run
// when the summaries were restricted to it (both or neither).
RunComparison CompareRuns(const SummaryReport& base, const SummaryReport& next,
                    const RangeInstances* base_iterations, const RangeInstances* next_iterations,
                    const DiffOptions& options);

}  // namespace libprof::analysis
