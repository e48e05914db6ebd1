// `profview diff` and `profview check`: the commands that compare runs or hold one to limits.
// Both read a run the same way: its NVTX ranges first (cheap), then its summary streamed
// (summary.h), restricted to the iteration range when there is one, then its findings (one file
// at a time, in windows where it can, else loaded whole; totalled as they are found). `diff`
// reads its two runs at once (ReadRun), the base run on a thread of its own.
#include <cmath>
#include <future>
#include <map>
#include <optional>

#include "analysis/check_config.h"
#include "analysis/commands.h"
#include "analysis/metrics/iterations.h"
#include "analysis/metrics/run_diff.h"
#include "analysis/metrics/summary.h"
#include "analysis/model/units.h"
#include "analysis/process_loop.h"
#include "analysis/reports/check_report.h"
#include "analysis/reports/diff_report.h"
#include "analysis/reports/output_file.h"
#include "analysis/rules/cross_process_rules.h"
#include "analysis/rules/findings_diff.h"
#include "analysis/rules/run_checks.h"
#include "analysis/rules/windowed_findings.h"
#include "proto/trace_inputs.h"

namespace libprof::analysis {
namespace {

std::string FormatNumberOfIterations(double n) {
  return n == std::floor(n) ? std::to_string(static_cast<uint64_t>(n)) : FormatNumber(n);
}

// "the base run", "the new run": names a side in errors.
std::expected<std::vector<std::string>, std::string> RunFiles(
    const std::vector<std::string>& inputs, const char* side) {
  if (inputs.empty()) return std::unexpected(std::string("no trace file given for ") + side);
  return ExpandTraceInputs(inputs);
}

// The findings of a run's files, totalled by key (findings_diff.h), the cross-process rules'
// over all of its processes included.
std::expected<FindingTotals, std::string> RunFindings(const std::vector<std::string>& files,
                                                      const FilterOptions& filters,
                                                      const FindingsOptions& thresholds,
                                                      std::vector<std::string>* warnings) {
  FindingTotals totals;
  CrossProcessInputs cross_process;
  auto add = [&](Finding&& f, uint64_t) { totals.Add(f); };
  // Totals read a finding's key and time lost only (KeyOf): none needs its text.
  auto no_text = [](const Finding&, uint64_t) { return false; };
  // Each file in windows as `findings` reads it (bounded memory; per iteration filtered there
  // to the iteration range), else whole.
  auto windowed = [&](const std::string& path,
                      FilterMatches* matches) -> std::expected<bool, std::string> {
    auto plan = WindowedFindings::Plan(path, thresholds, filters);
    if (!plan) return std::unexpected(plan.error());
    if (!plan->exact()) return false;
    warnings->insert(warnings->end(), plan->warnings().begin(), plan->warnings().end());
    NoteMatches(plan->matches(), matches);
    if (!plan->kept()) return true;
    WindowedCrossProcessInputs process_inputs;
    if (auto ran = plan->Run(add, no_text, process_inputs.Hooks()); !ran) {
      return std::unexpected(ran.error());
    }
    process_inputs.Finish(*plan, &cross_process);
    return true;
  };
  auto done = ForEachFileInWindows(files, filters, warnings, windowed, [&](const ProcessTrace& t) {
    cross_process.AddWhole(t, warnings);
    StreamFindings(t, thresholds, add, no_text);
  });
  if (!done) return std::unexpected(done.error());
  for (const Finding& f : FindCrossProcessFindings(cross_process, thresholds)) totals.Add(f);
  return totals;
}

// What diff reads of one run: its summary, then (when asked) its findings, each with the
// warnings it gave.
struct RunRead {
  std::expected<SummaryReport, std::string> summary;
  std::vector<std::string> summary_warnings;
  std::optional<std::expected<FindingTotals, std::string>> findings;
  std::vector<std::string> findings_warnings;
};

RunRead ReadRun(const std::vector<std::string>& files, const FilterOptions& filters,
                const DiffCommandOptions& options) {
  std::vector<std::string> warnings;
  auto summary = SummarizeFiles(files, filters, SummaryOptions{}, &warnings);
  RunRead read{.summary = std::move(summary),
               .summary_warnings = std::move(warnings),
               .findings = std::nullopt,
               .findings_warnings = {}};
  if (read.summary && options.findings) {
    read.findings = RunFindings(files, filters, options.thresholds, &read.findings_warnings);
  }
  return read;
}

// A run's iteration range without its warm-up iterations (iterations.h LeadingWarmUp) and
// where the run is then read from; nothing left out when `keep` (--keep-warm-up) or there is none.
struct WarmUp {
  std::optional<RangeInstances> kept;  // the range without its warm-up, when it had one
  uint64_t from_ns = 0;                // FilterOptions::from_ns: the first iteration kept
  std::vector<uint64_t> durations_ns;  // of the iterations left out, in order
  const RangeInstances* Range(const RangeInstances* range) const { return kept ? &*kept : range; }
  void Apply(FilterOptions* filters) const {
    if (kept) filters->from_ns = from_ns;
  }
};

WarmUp LeaveOutWarmUp(const RangeInstances* range, bool keep) {
  WarmUp w;
  if (range == nullptr || keep) return w;
  const size_t count = LeadingWarmUp(*range);
  if (count == 0) return w;
  for (size_t i = 0; i < count; ++i) w.durations_ns.push_back(range->in_order[i].duration_ns);
  w.kept = WithoutLeading(*range, count, &w.from_ns);
  return w;
}

}  // namespace

std::expected<std::string, std::string> RunDiff(const DiffCommandOptions& options,
                                                std::vector<std::string>* warnings) {
  if (!(options.threshold >= 0) || !std::isfinite(options.threshold)) {
    return std::unexpected("--threshold must be a percentage of 0 or more");
  }
  if (!(options.min_share >= 0) || !(options.min_share <= 1)) {
    return std::unexpected("--min-share must be a percentage between 0 and 100");
  }
  auto base_files = RunFiles(options.base, "the base run");
  if (!base_files) return std::unexpected(base_files.error());
  auto next_files = RunFiles(options.next, "the new run");
  if (!next_files) return std::unexpected(next_files.error());
  // The two runs' NVTX ranges read at once, as their summaries and findings are below; the base
  // run's error first, as reading one after the other gives it.
  auto base_ranges_reading =
      std::async(std::launch::async, [&] { return ReadRunRanges(*base_files, options.nvtx); });
  auto next_ranges = ReadRunRanges(*next_files, options.nvtx);
  auto base_ranges = base_ranges_reading.get();
  if (!base_ranges) return std::unexpected(base_ranges.error());
  if (!next_ranges) return std::unexpected(next_ranges.error());

  // The iteration range: the one asked for, else the most repeated one both runs share.
  const RangeInstances* base_iterations = nullptr;
  const RangeInstances* next_iterations = nullptr;
  if (!options.nvtx.empty()) {
    for (auto [ranges, side] : {std::pair{&*base_ranges, "base"}, std::pair{&*next_ranges, "new"}}) {
      if (!ranges->wanted_found) {
        return std::unexpected("no NVTX range named '" + options.nvtx + "' in the " + side +
                               " run");
      }
    }
    base_iterations = &base_ranges->wanted;
    next_iterations = &next_ranges->wanted;
  } else if (!options.per_run) {
    base_iterations = CommonIterationRange(*base_ranges, *next_ranges);
    if (base_iterations != nullptr) {
      next_iterations =
          &next_ranges->top_level.at({base_iterations->domain, base_iterations->name});
    }
  }
  FilterOptions base_filters;
  if (base_iterations != nullptr) base_filters.nvtx = {base_iterations->Label()};
  FilterOptions next_filters = base_filters;
  // Each run's warm-up iterations (compilation, autotuning, first allocations) left out: each
  // run is then read from its first iteration kept on.
  const WarmUp base_warm_up = LeaveOutWarmUp(base_iterations, options.keep_warm_up);
  const WarmUp next_warm_up = LeaveOutWarmUp(next_iterations, options.keep_warm_up);
  base_iterations = base_warm_up.Range(base_iterations);
  next_iterations = next_warm_up.Range(next_iterations);
  base_warm_up.Apply(&base_filters);
  next_warm_up.Apply(&next_filters);

  // Both runs at once, the base run on a thread of its own: with a second free core a diff
  // takes the time of its longer side rather than of both. Warnings and errors come in the
  // order reading one run after the other gives them.
  auto base_reading =
      std::async(std::launch::async, [&] { return ReadRun(*base_files, base_filters, options); });
  RunRead next_read = ReadRun(*next_files, next_filters, options);
  RunRead base_read = base_reading.get();
  // (A side that fails ends the diff before the next side's warnings, as when read in turn.)
  for (const RunRead* read : {&base_read, &next_read}) {
    warnings->insert(warnings->end(), read->summary_warnings.begin(),
                     read->summary_warnings.end());
    if (!read->summary) return std::unexpected(read->summary.error());
  }
  const SummaryReport* base = &*base_read.summary;
  const SummaryReport* next = &*next_read.summary;
  RunComparison diff = CompareRuns(*base, *next, base_iterations, next_iterations,
                             DiffOptions{.threshold = options.threshold,
                                         .min_share = options.min_share});
  diff.iterations_chosen = !options.nvtx.empty();
  diff.per_run_chosen = options.per_run && options.nvtx.empty();
  diff.base_warm_up_ns = base_warm_up.durations_ns;
  diff.next_warm_up_ns = next_warm_up.durations_ns;
  if (diff.common_names == 0) {
    return std::unexpected(
        "the two runs have no API call, GPU operation or NVTX range name in common: "
        "are they recordings of the same program?");
  }

  std::vector<FindingDiff> findings;
  if (options.findings) {
    for (const RunRead* read : {&base_read, &next_read}) {
      warnings->insert(warnings->end(), read->findings_warnings.begin(),
                       read->findings_warnings.end());
      if (!*read->findings) return std::unexpected(read->findings->error());
    }
    // Per iteration, the runs' start-up lies outside the iterations compared: the start-up
    // finding of the filtered trace would only be the time before its first kernel kept.
    auto totals = [&](const FindingTotals& run) {
      std::vector<FindingTotal> all = run.Totals();
      if (diff.base_iterations) {
        std::erase_if(all, [](const FindingTotal& t) { return t.key.rule == RuleId::kStartUp; });
      }
      return all;
    };
    findings = CompareFindings(totals(**base_read.findings), totals(**next_read.findings),
                               diff.base_per, diff.next_per, options.threshold, diff.floor_ns);
  }
  const DiffReportContext context{.base_inputs = options.base,
                                  .next_inputs = options.next,
                                  .threshold = options.threshold,
                                  .findings = options.findings ? &findings : nullptr,
                                  .terminal_width = options.terminal_width};
  switch (options.format) {
    case OutputFormat::kCsv:
      return DiffCsv(diff, context);
    case OutputFormat::kJson:
      return DiffJson(diff, context);
    case OutputFormat::kTable:
      break;
  }
  return DiffTable(diff, context);
}

namespace {

// A run read in one scope for check: its summary and, when wanted, its findings.
struct ScopedRun {
  SummaryReport summary;
  FindingTotals findings;
};

// `range` null: the whole run; else inside the range, from its first iteration `warm_up` kept.
std::expected<ScopedRun, std::string> ReadScoped(const std::vector<std::string>& files,
                                                 const RangeInstances* range, const WarmUp& warm_up,
                                                 bool findings, const FindingsOptions& thresholds,
                                                 std::vector<std::string>* warnings) {
  FilterOptions filters;
  if (range != nullptr) {
    filters.nvtx = {range->Label()};
    warm_up.Apply(&filters);
  }
  auto summary = SummarizeFiles(files, filters, SummaryOptions{}, warnings);
  if (!summary) return std::unexpected(summary.error());
  ScopedRun run;
  run.summary = std::move(*summary);
  if (findings) {
    auto totals = RunFindings(files, filters, thresholds, warnings);
    if (!totals) return std::unexpected(totals.error());
    run.findings = std::move(*totals);
  }
  return run;
}

}  // namespace

std::expected<CheckCommandResult, std::string> RunCheck(const CheckCommandOptions& options,
                                                        std::vector<std::string>* warnings) {
  CheckCommandOptions o = options;
  if (!o.config.empty()) {
    auto config = ReadCheckConfig(o.config);
    if (!config) return std::unexpected(config.error());
    o.max.insert(o.max.end(), config->max.begin(), config->max.end());
    o.min.insert(o.min.end(), config->min.begin(), config->min.end());
    o.max_regression.insert(o.max_regression.end(), config->max_regression.begin(),
                            config->max_regression.end());
    if (o.baseline.empty()) o.baseline = config->baseline;
    if (o.nvtx.empty()) o.nvtx = config->nvtx;
    o.keep_warm_up |= config->keep_warm_up;
    o.keep_one_time |= config->keep_one_time;
  }
  std::vector<Assertion> assertions;
  for (auto [texts, bound] : {std::pair{&o.max, CheckBound::kMax},
                              std::pair{&o.min, CheckBound::kMin},
                              std::pair{&o.max_regression, CheckBound::kMaxRegression}}) {
    for (const std::string& text : *texts) {
      auto a = ParseAssertion(bound, text);
      if (!a) return std::unexpected(a.error());
      assertions.push_back(std::move(*a));
    }
  }
  if (assertions.empty()) {
    return std::unexpected("no assertion given (--max, --min, --max-regression or --config)");
  }
  bool run_findings = false, step_findings = false, step = false, regression = false,
       regression_findings = false;
  for (const Assertion& a : assertions) {
    if (a.bound == CheckBound::kMaxRegression) {
      regression = true;
      regression_findings |= NeedsFindings(a);
    } else if (a.per_step) {
      step = true;
      step_findings |= NeedsFindings(a);
    } else {
      run_findings |= NeedsFindings(a);
    }
  }
  if (regression && o.baseline.empty()) {
    return std::unexpected("--max-regression needs --baseline (the run to compare with)");
  }

  auto files = RunFiles(o.files, "the run");
  if (!files) return std::unexpected(files.error());
  auto ranges = ReadRunRanges(*files, o.nvtx);
  if (!ranges) return std::unexpected(ranges.error());
  const RangeInstances* iterations = nullptr;
  if (!o.nvtx.empty()) {
    if (!ranges->wanted_found) {
      return std::unexpected("no NVTX range named '" + o.nvtx + "' in the run");
    }
    iterations = &ranges->wanted;
  } else {
    iterations = IterationRange(*ranges);
  }
  // Per step and in regressions, the run's warm-up iterations are left out as diff leaves them.
  const WarmUp warm_up = LeaveOutWarmUp(iterations, o.keep_warm_up);
  iterations = warm_up.Range(iterations);

  auto whole = ReadScoped(*files, nullptr, {}, run_findings, o.thresholds, warnings);
  if (!whole) return std::unexpected(whole.error());
  CheckRun run;
  run.run = CheckScope{.summary = &whole->summary.total, .findings = &whole->findings};
  run.iterations = iterations;
  run.keep_one_time = o.keep_one_time;
  std::optional<ScopedRun> inside;
  if (step && iterations != nullptr) {
    auto scoped = ReadScoped(*files, iterations, warm_up, step_findings, o.thresholds, warnings);
    if (!scoped) return std::unexpected(scoped.error());
    inside = std::move(*scoped);
    run.step = CheckScope{.summary = &inside->summary.total,
                          .findings = &inside->findings,
                          .per = std::max(1.0, iterations->PerProcess())};
  }

  // The baseline, read as diff reads two runs: per iteration when both repeat the range.
  std::optional<ScopedRun> baseline, compared;
  std::optional<RunRanges> baseline_ranges;
  WarmUp base_warm_up, next_warm_up;
  if (regression) {
    auto base_files = RunFiles(o.baseline, "the baseline");
    if (!base_files) return std::unexpected(base_files.error());
    auto read_ranges = ReadRunRanges(*base_files, o.nvtx);
    if (!read_ranges) return std::unexpected(read_ranges.error());
    baseline_ranges = std::move(*read_ranges);
    const RangeInstances* base_range = nullptr;
    const RangeInstances* next_range = nullptr;
    if (!o.nvtx.empty()) {
      if (!baseline_ranges->wanted_found) {
        return std::unexpected("no NVTX range named '" + o.nvtx + "' in the baseline");
      }
      base_range = &baseline_ranges->wanted;
      next_range = &ranges->wanted;
    } else if ((base_range = CommonIterationRange(*baseline_ranges, *ranges)) != nullptr) {
      next_range = &ranges->top_level.at({base_range->domain, base_range->name});
    }
    base_warm_up = LeaveOutWarmUp(base_range, o.keep_warm_up);
    next_warm_up = LeaveOutWarmUp(next_range, o.keep_warm_up);
    base_range = base_warm_up.Range(base_range);
    next_range = next_warm_up.Range(next_range);
    auto b = ReadScoped(*base_files, base_range, base_warm_up, regression_findings, o.thresholds,
                        warnings);
    if (!b) return std::unexpected(b.error());
    baseline = std::move(*b);
    auto n = ReadScoped(*files, next_range, next_warm_up, regression_findings, o.thresholds,
                        warnings);
    if (!n) return std::unexpected(n.error());
    compared = std::move(*n);
    run.baseline = &baseline->summary;
    run.compared = &compared->summary;
    run.baseline_iterations = base_range;
    run.compared_iterations = next_range;
    run.baseline_findings = &baseline->findings;
    run.compared_findings = &compared->findings;
  }

  std::vector<CheckOutcome> outcomes;
  for (const Assertion& a : assertions) {
    auto outcome = Evaluate(a, run);
    if (!outcome) return std::unexpected(outcome.error());
    outcomes.push_back(std::move(*outcome));
  }
  CheckReportContext context;
  context.inputs = o.files;
  context.terminal_width = o.terminal_width;
  if (iterations != nullptr && step) {
    context.scope = "per iteration of NVTX range '" + iterations->Label() + "' (" +
                    FormatNumberOfIterations(iterations->PerProcess()) + " iterations" +
                    (iterations->processes > 1 ? " per process" : "") +
                    (warm_up.durations_ns.empty()
                         ? ""
                         : ", after " + std::to_string(warm_up.durations_ns.size()) +
                               " warm-up iteration" +
                               (warm_up.durations_ns.size() == 1 ? "" : "s") +
                               " left out (--keep-warm-up keeps them)") +
                    "), only activity inside it";
  }
  CheckCommandResult result{.text = CheckTable(outcomes, context), .passed = true};
  for (const CheckOutcome& c : outcomes) result.passed &= c.passed;
  if (!o.junit.empty()) {
    auto file = OutputFile::Create(o.junit);
    if (!file) return std::unexpected(file.error());
    (*file)->stream() << CheckJunit(outcomes, context);
    if (auto committed = (*file)->Commit(); !committed) return std::unexpected(committed.error());
  }
  return result;
}

}  // namespace libprof::analysis
