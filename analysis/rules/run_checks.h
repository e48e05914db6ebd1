// `profview check`: assertions on one run, for CI ("--max pageable-async-memcpy=0",
// "--max implicit-sync=3/step", "--min gpu-busy=60%", "--max kernel:NAME:mean=1.2ms",
// "--max-regression 5%" against a baseline), parsed here and evaluated against a run's summary,
// findings and iterations (and a comparison with the baseline).
//
// Layer: analysis/rules/. Pure: parses text, reads results computed elsewhere.
//
// Metrics (the part before '='):
//   a rule id (rule_registry.h)   the run's findings of that rule: a count, their time lost
//                                 (a duration) or that time's share of the wall time (%);
//                                 without those in one-time work unless CheckRun says so
//   wall                          the analysed wall time (duration)
//   host-api, gpu-busy            CUDA API time and GPU busy time (duration, or % of wall)
//   iteration                     the median duration of the iteration range (duration)
//   KIND:NAME[:STAT]              rows of the summary: KIND api, kernel, memcpy, memset, graph or
//                                 nvtx; STAT calls, total (default), mean, min, max, std, bytes,
//                                 bandwidth (GB/s), gpu (NVTX GPU time)
// Values: a plain number is a count (bytes for `bytes`, GB/s for `bandwidth`); durations carry
// a unit (20us, 1.2ms); "%" is a share of the wall time; "/step" divides by the iterations
// (per iteration of the range, counting only activity inside it).
#pragma once

#include <cstdint>
#include <expected>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/metrics/iterations.h"
#include "analysis/metrics/run_diff.h"
#include "analysis/metrics/summary.h"
#include "analysis/rules/findings_diff.h"
#include "analysis/rules/rule_registry.h"

namespace libprof::analysis {

enum class CheckBound : uint8_t { kMax, kMin, kMaxRegression };

struct CheckMetric {
  enum class Kind : uint8_t { kRule, kFigure, kRow };
  Kind kind = Kind::kFigure;
  RuleId rule = RuleId::kBlockedOnPriorWork;
  std::string figure;  // kFigure: "wall", "host-api", "gpu-busy", "iteration"; "" = default
  std::string row_kind, row_name, stat;  // kRow
  std::string Text() const;
};

enum class CheckUnit : uint8_t { kCount, kDuration, kShare, kBytes, kBandwidth, kRelative };

struct Assertion {
  std::string text;  // as written: "implicit-sync=3/step"
  CheckBound bound = CheckBound::kMax;
  CheckMetric metric;
  double limit = 0;  // count, ns, fraction, bytes, GB/s, or relative change (0.05)
  CheckUnit unit = CheckUnit::kCount;
  bool per_step = false;
};

// Parses "METRIC=VALUE" (for --max-regression also "PERCENT" alone: the default metric). The
// error names the text and what was expected (profview exits 2 on it).
std::expected<Assertion, std::string> ParseAssertion(CheckBound bound, std::string_view text);

// What a run offers to assertions in one scope: the whole run, or the inside of its iteration
// range (then `per` is the iterations per process).
struct CheckScope {
  const Summary* summary = nullptr;  // the total over the run's processes
  const FindingTotals* findings = nullptr;
  double per = 1;
};

struct CheckRun {
  CheckScope run;
  std::optional<CheckScope> step;             // when the run has an iteration range
  const RangeInstances* iterations = nullptr;  // idem
  // --max-regression: the comparison with the baseline (per iteration when both repeat the
  // range), and both runs' findings in the same scope.
  const SummaryReport* baseline = nullptr;
  const SummaryReport* compared = nullptr;  // this run, in the scope of the comparison
  const RangeInstances* baseline_iterations = nullptr;
  const RangeInstances* compared_iterations = nullptr;
  const FindingTotals* baseline_findings = nullptr;
  const FindingTotals* compared_findings = nullptr;
  double min_share = 0.001;  // DiffOptions::min_share
  // Whether a rule's figures count its findings in one-time work (an autotuner's or a
  // compiler's own waits, one_time_work.h): left out by default, since they are paid once and
  // are not the program's code (XLA's autotuning alone fails "sync-api=0" on any JAX program).
  bool keep_one_time = false;
};

struct CheckOutcome {
  std::string assertion;  // "implicit-sync ≤ 3/step"
  bool passed = false;
  double measured = 0;   // in the assertion's unit
  std::string measured_text;  // "4.5 per iteration", "+7.02% (noise ±3.10%)"
  // What the figure left out, said in full below the table: "sync-api: 138 findings in
  // Triton's autotuning left out, ..." (measured_text says "(+138 one-time left out)").
  std::string note;
};

// Evaluates one assertion. Errors (exit 2): a metric the run cannot answer (no row of that
// name, /step or iteration without an iteration range, a regression without a baseline).
std::expected<CheckOutcome, std::string> Evaluate(const Assertion& assertion, const CheckRun& run);

// Whether an assertion needs the run's findings, its iteration range, or a baseline.
bool NeedsFindings(const Assertion& assertion);

}  // namespace libprof::analysis
