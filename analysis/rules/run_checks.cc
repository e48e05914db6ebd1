#include "analysis/rules/run_checks.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>

#include "analysis/model/filters.h"
#include "analysis/model/kernel_names.h"
#include "analysis/model/units.h"

namespace libprof::analysis {
namespace {

constexpr std::string_view kFigures[] = {"wall", "host-api", "gpu-busy", "iteration"};
constexpr std::string_view kRowKinds[] = {"api", "kernel", "memcpy", "memset", "graph", "nvtx"};
constexpr std::string_view kStats[] = {"calls", "total", "mean",      "min",
                                       "max",   "std",   "bytes",     "bandwidth", "gpu"};

template <size_t N>
bool OneOf(std::string_view word, const std::string_view (&list)[N]) {
  return std::find(std::begin(list), std::end(list), word) != std::end(list);
}

std::optional<RuleId> RuleNamed(std::string_view id) {
  for (const RuleInfo& r : Rules()) {
    if (r.id == id) return r.rule;
  }
  return std::nullopt;
}

std::string UnknownMetric(std::string_view metric) {
  return "unknown metric '" + std::string(metric) + "': use a rule (" + RuleNames(", ") +
         "), wall, host-api, gpu-busy, iteration, or KIND:NAME[:STAT] with KIND api, kernel, "
         "memcpy, memset, graph or nvtx";
}

std::expected<CheckMetric, std::string> ParseMetric(std::string_view text) {
  CheckMetric m;
  if (auto rule = RuleNamed(text)) {
    m.kind = CheckMetric::Kind::kRule;
    m.rule = *rule;
    return m;
  }
  if (OneOf(text, kFigures)) {
    m.figure = std::string(text);
    return m;
  }
  const size_t colon = text.find(':');
  if (colon == std::string_view::npos || !OneOf(text.substr(0, colon), kRowKinds)) {
    return std::unexpected(UnknownMetric(text));
  }
  m.kind = CheckMetric::Kind::kRow;
  m.row_kind = std::string(text.substr(0, colon));
  std::string_view rest = text.substr(colon + 1);
  m.stat = "total";
  if (const size_t last = rest.rfind(':'); last != std::string_view::npos &&
                                           OneOf(rest.substr(last + 1), kStats)) {
    m.stat = std::string(rest.substr(last + 1));
    rest = rest.substr(0, last);
  }
  if (rest.empty()) return std::unexpected("'" + std::string(text) + "' names no " + m.row_kind);
  if (m.stat == "gpu" && m.row_kind != "nvtx") {
    return std::unexpected("'" + std::string(text) + "': gpu is a statistic of NVTX ranges");
  }
  m.row_name = std::string(rest);
  return m;
}

bool EndsWith(std::string_view s, std::string_view suffix) { return s.ends_with(suffix); }

// Bytes with an optional unit (B, KB, MB, GB decimal; KiB, MiB, GiB binary).
std::optional<double> ParseBytes(std::string_view text) {
  static constexpr std::pair<std::string_view, double> kUnits[] = {
      {"KiB", 1024.0}, {"MiB", 1024.0 * 1024}, {"GiB", 1024.0 * 1024 * 1024},
      {"KB", 1e3},     {"MB", 1e6},            {"GB", 1e9},
      {"B", 1.0}};
  double scale = 1;
  for (auto [unit, s] : kUnits) {
    if (EndsWith(text, unit)) {
      text.remove_suffix(unit.size());
      scale = s;
      break;
    }
  }
  char* end = nullptr;
  const std::string number(text);
  const double v = std::strtod(number.c_str(), &end);
  if (number.empty() || end != number.c_str() + number.size() || !(v >= 0)) return std::nullopt;
  return v * scale;
}

bool IsPlainNumber(std::string_view text) {
  if (text.empty()) return false;
  return std::all_of(text.begin(), text.end(),
                     [](char c) { return std::isdigit(static_cast<unsigned char>(c)) || c == '.'; });
}

// The units each metric accepts.
bool UnitAllowed(const CheckMetric& m, CheckUnit unit) {
  switch (m.kind) {
    case CheckMetric::Kind::kRule:
      return unit == CheckUnit::kCount || unit == CheckUnit::kDuration ||
             unit == CheckUnit::kShare;
    case CheckMetric::Kind::kFigure:
      if (m.figure == "wall" || m.figure == "iteration") return unit == CheckUnit::kDuration;
      return unit == CheckUnit::kDuration || unit == CheckUnit::kShare;
    case CheckMetric::Kind::kRow:
      if (m.stat == "calls") return unit == CheckUnit::kCount;
      if (m.stat == "bytes") return unit == CheckUnit::kBytes;
      if (m.stat == "bandwidth") return unit == CheckUnit::kBandwidth;
      if (m.stat == "total" || m.stat == "gpu") {
        return unit == CheckUnit::kDuration || unit == CheckUnit::kShare;
      }
      return unit == CheckUnit::kDuration;
  }
  return false;
}

std::string Number(double v) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.6g", v);
  return buffer;
}

std::string FormatValue(double v, CheckUnit unit) {
  switch (unit) {
    case CheckUnit::kCount:
      return v == std::floor(v) ? Number(v) : FormatNumber(v);
    case CheckUnit::kDuration:
      return FormatDuration(v);
    case CheckUnit::kShare:
      return FormatPercent(v, 1.0);
    case CheckUnit::kBytes:
      return FormatBytes(static_cast<uint64_t>(std::llround(v)));
    case CheckUnit::kBandwidth:
      return FormatNumber(v) + " GB/s";
    case CheckUnit::kRelative:
      return FormatSignedPercent(v);
  }
  return Number(v);
}

// Does summary row `row` (of the row kind's table) answer to `name`?
bool RowMatches(const SummaryRow& row, const CheckMetric& m) {
  const std::string& n = m.row_name;
  if (m.row_kind == "api") return row.name == n;
  if (m.row_kind == "nvtx") return NvtxNameMatches(n, row.domain, row.name);
  if (row.kind != m.row_kind) return false;
  if (m.row_kind == "kernel") {
    if (row.name == n) return true;
    // The function's name without its template and parameter lists, with or without its
    // namespaces: "nrm2_kernel" for "nrm2_kernel<float, float, float, 1, 0, 128>(…)".
    std::string_view base = row.name;
    int depth = 0;
    for (size_t i = 0; i < base.size(); ++i) {
      const char c = base[i];
      if (depth == 0 && (c == '<' || c == '(') && i > 0) {
        base = base.substr(0, i);
        break;
      }
      depth += c == '(' ? 1 : c == ')' ? -1 : 0;
    }
    if (base == n) return true;
    const size_t scope = base.rfind("::");
    return scope != std::string_view::npos && base.substr(scope + 2) == n;
  }
  // Copies, memsets and graphs by a part of their name: "pageable to device", "graph 3".
  auto lower = [](std::string s) {
    for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
  };
  return lower(row.name).find(lower(n)) != std::string::npos;
}

const std::vector<SummaryRow>& RowsOf(const Summary& s, const std::string& kind) {
  if (kind == "api") return s.host;
  if (kind == "nvtx") return s.nvtx;
  return s.device;
}

struct MatchedRows {
  Stats stats;
  uint64_t bytes = 0, gpu_ns = 0;
  size_t rows = 0;
};

std::expected<MatchedRows, std::string> MatchRows(const Summary& s, const CheckMetric& m) {
  MatchedRows out;
  for (const SummaryRow& row : RowsOf(s, m.row_kind)) {
    if (!RowMatches(row, m)) continue;
    out.stats.Merge(row.stats);
    out.bytes += row.bytes;
    out.gpu_ns += row.gpu_ns;
    ++out.rows;
  }
  if (out.rows == 0) {
    return std::unexpected("no " + m.row_kind + " named '" + m.row_name + "' in the run");
  }
  return out;
}

// A time in `unit`: its share of the scope's wall time, or per iteration.
double TimeValue(double ns, CheckUnit unit, const CheckScope& scope, double per) {
  const double wall = static_cast<double>(scope.summary->trace_ns);
  return unit == CheckUnit::kShare ? (wall > 0 ? ns / wall : 0.0) : ns / per;
}

// A rule's findings in `unit`: their number, or their time lost (TimeValue).
double RuleValue(const FindingTotal& t, CheckUnit unit, const CheckScope& scope, double per) {
  if (unit == CheckUnit::kCount) return static_cast<double>(t.count) / per;
  return TimeValue(static_cast<double>(t.blocked_ns), unit, scope, per);
}

// The value of a metric in one scope, in `unit`.
std::expected<double, std::string> Measure(const CheckMetric& m, CheckUnit unit,
                                           const CheckScope& scope, double per,
                                           const CheckRun& run) {
  const Summary& s = *scope.summary;
  const double wall = static_cast<double>(s.trace_ns);
  auto time = [&](double ns) { return TimeValue(ns, unit, scope, per); };
  const RangeInstances* iterations = run.iterations;
  switch (m.kind) {
    case CheckMetric::Kind::kRule:
      return RuleValue(scope.findings->OfRule(m.rule, run.keep_one_time), unit, scope, per);
    case CheckMetric::Kind::kFigure:
      if (m.figure == "iteration") {
        if (iterations == nullptr) {
          return std::unexpected("'iteration' needs an NVTX range that repeats (--nvtx NAME)");
        }
        return iterations->Median();
      }
      if (m.figure == "wall") return wall / per;
      return time(static_cast<double>(m.figure == "host-api" ? s.host_api_ns : s.gpu_busy_ns));
    case CheckMetric::Kind::kRow: {
      auto rows = MatchRows(s, m);
      // A name the run lacks was called 0 times, so that "--max
      // api:cudaDeviceSynchronize:calls=0" holds when the call never happens. Any other figure
      // of it stays an error: a misspelt name must not pass a time limit unnoticed.
      if (!rows && m.stat == "calls") return 0.0;
      if (!rows) return std::unexpected(rows.error());
      const Stats& st = rows->stats;
      if (m.stat == "calls") return static_cast<double>(st.count()) / per;
      if (m.stat == "total") return time(static_cast<double>(st.total()));
      if (m.stat == "gpu") return time(static_cast<double>(rows->gpu_ns));
      if (m.stat == "mean") return st.mean();
      if (m.stat == "min") return static_cast<double>(st.min());
      if (m.stat == "max") return static_cast<double>(st.max());
      if (m.stat == "std") return st.std();
      if (m.stat == "bytes") return static_cast<double>(rows->bytes) / per;
      return GigabytesPerSecond(rows->bytes, st.total());  // bandwidth
    }
  }
  return 0.0;
}

std::string UnitWord(const CheckMetric& m, CheckUnit unit) {
  if (unit == CheckUnit::kCount) {
    return m.kind == CheckMetric::Kind::kRule ? " findings" : " calls";
  }
  if (unit == CheckUnit::kShare) return " of the wall time";
  return "";
}

// The change a regression assertion is about, judged with its limit as the threshold; *what
// names the figure when the assertion left it to the default.
std::expected<Change, std::string> RegressionChange(const Assertion& a, const CheckRun& run,
                                                    std::string* what) {
  const double threshold = a.limit;
  RunComparison diff =
      CompareRuns(*run.baseline, *run.compared, run.baseline_iterations, run.compared_iterations,
                  DiffOptions{.threshold = threshold, .min_share = run.min_share});
  const CheckMetric& m = a.metric;
  switch (m.kind) {
    case CheckMetric::Kind::kFigure: {
      std::string id = m.figure.empty() ? (diff.base_iterations ? "iteration" : "wall")
                                        : m.figure;
      *what = id;
      std::replace(id.begin(), id.end(), '-', '_');
      for (const HeadlineFigure& h : diff.headline) {
        if (h.id == id) return h.change;
      }
      return std::unexpected("'" + m.figure +
                             "' needs an NVTX range that both runs repeat (--nvtx NAME)");
    }
    case CheckMetric::Kind::kRule: {
      const FindingTotal b = run.baseline_findings->OfRule(m.rule, run.keep_one_time);
      const FindingTotal n = run.compared_findings->OfRule(m.rule, run.keep_one_time);
      return Compare(static_cast<double>(b.blocked_ns) / diff.base_per,
                     static_cast<double>(n.blocked_ns) / diff.next_per, 0, 0, threshold,
                     diff.floor_ns);
    }
    case CheckMetric::Kind::kRow: {
      const std::vector<RowDiff>& rows = m.row_kind == "api"    ? diff.host
                                         : m.row_kind == "nvtx" ? diff.nvtx
                                                                : diff.device;
      const RowDiff* found = nullptr;
      for (const RowDiff& r : rows) {
        // A copy row pairing two names (run_diff.h) answers to either, or to its own.
        auto matches = [&](const std::string& name) {
          SummaryRow probe;
          probe.name = name;
          probe.kind = r.kind;
          probe.domain = r.domain;
          return !name.empty() && RowMatches(probe, m);
        };
        if (!matches(r.name) && !matches(r.base_name) && !matches(r.next_name)) continue;
        if (found != nullptr) {
          return std::unexpected("'" + m.Text() + "' names more than one " + m.row_kind +
                                 ": give the full name");
        }
        found = &r;
      }
      if (found == nullptr) {
        return std::unexpected("no " + m.row_kind + " named '" + m.row_name + "' in either run");
      }
      if (m.stat == "total") return found->total;
      if (m.stat == "mean") return found->mean;
      if (m.stat == "calls") return found->calls;
      if (m.stat == "gpu") return found->gpu;
      return std::unexpected("--max-regression compares total, mean, calls or gpu, not " + m.stat);
    }
  }
  return Change{};
}

}  // namespace

std::string CheckMetric::Text() const {
  switch (kind) {
    case Kind::kRule:
      return std::string(RuleName(rule));
    case Kind::kFigure:
      return figure.empty() ? "the run" : figure;
    case Kind::kRow:
      return row_kind + ":" + row_name + (stat == "total" ? "" : ":" + stat);
  }
  return "";
}

std::expected<Assertion, std::string> ParseAssertion(CheckBound bound, std::string_view text) {
  Assertion a;
  a.text = std::string(text);
  a.bound = bound;
  const size_t eq = text.rfind('=');
  std::string_view metric = eq == std::string_view::npos ? "" : text.substr(0, eq);
  std::string_view value = eq == std::string_view::npos ? text : text.substr(eq + 1);
  if (bound == CheckBound::kMaxRegression) {
    if (!metric.empty()) {
      auto m = ParseMetric(metric);
      if (!m) return std::unexpected(m.error());
      a.metric = *m;
    }
    auto pct = ParsePercent(value);
    if (!pct) return std::unexpected("--max-regression " + a.text + ": " + pct.error());
    a.limit = *pct;
    a.unit = CheckUnit::kRelative;
    return a;
  }
  if (metric.empty()) {
    return std::unexpected("'" + a.text + "' is not METRIC=VALUE (e.g. implicit-sync=3/step)");
  }
  auto m = ParseMetric(metric);
  if (!m) return std::unexpected(m.error());
  a.metric = *m;
  if (value.ends_with("/step")) {
    a.per_step = true;
    value.remove_suffix(5);
  }
  const std::string v(value);
  if (value.ends_with('%')) {
    auto pct = ParsePercent(value);
    if (!pct) return std::unexpected(pct.error());
    a.limit = *pct;
    a.unit = CheckUnit::kShare;
  } else if (value.ends_with("GB/s")) {
    auto n = ParseBytes(value.substr(0, value.size() - 4));
    if (!n) return std::unexpected("'" + v + "' is not a bandwidth (e.g. 12GB/s)");
    a.limit = *n;
    a.unit = CheckUnit::kBandwidth;
  } else if (IsPlainNumber(value)) {
    a.limit = std::strtod(v.c_str(), nullptr);
    a.unit = a.metric.kind == CheckMetric::Kind::kRow && a.metric.stat == "bytes"
                 ? CheckUnit::kBytes
             : a.metric.kind == CheckMetric::Kind::kRow && a.metric.stat == "bandwidth"
                 ? CheckUnit::kBandwidth
                 : CheckUnit::kCount;
    if (!UnitAllowed(a.metric, a.unit) && a.limit == 0) a.unit = CheckUnit::kDuration;
  } else if (auto ns = ParseDuration(value)) {
    a.limit = static_cast<double>(*ns);
    a.unit = CheckUnit::kDuration;
  } else if (auto bytes = ParseBytes(value)) {
    a.limit = *bytes;
    a.unit = CheckUnit::kBytes;
  } else {
    return std::unexpected("'" + v + "' in '" + a.text +
                           "' is not a count, duration (1.2ms), percentage (60%), size (16MiB) "
                           "or bandwidth (12GB/s)");
  }
  if (!UnitAllowed(a.metric, a.unit)) {
    return std::unexpected("'" + a.text + "': " + a.metric.Text() + " is not measured in " +
                           (a.unit == CheckUnit::kCount      ? "a plain number (give a unit)"
                            : a.unit == CheckUnit::kDuration ? "time"
                            : a.unit == CheckUnit::kShare    ? "a percentage"
                            : a.unit == CheckUnit::kBytes    ? "bytes"
                                                             : "GB/s"));
  }
  if (a.per_step && (a.unit == CheckUnit::kShare || a.unit == CheckUnit::kBandwidth ||
                     (a.metric.kind == CheckMetric::Kind::kRow && a.metric.stat != "calls" &&
                      a.metric.stat != "total" && a.metric.stat != "bytes" &&
                      a.metric.stat != "gpu") ||
                     (a.metric.kind == CheckMetric::Kind::kFigure &&
                      a.metric.figure == "iteration"))) {
    return std::unexpected("'" + a.text + "': /step applies to counts, totals and time lost");
  }
  return a;
}

bool NeedsFindings(const Assertion& a) { return a.metric.kind == CheckMetric::Kind::kRule; }

std::expected<CheckOutcome, std::string> Evaluate(const Assertion& a, const CheckRun& run) {
  CheckOutcome out;
  const char* op = a.bound == CheckBound::kMin ? " ≥ " : " ≤ ";
  if (a.bound == CheckBound::kMaxRegression) {
    if (run.baseline == nullptr) {
      return std::unexpected("--max-regression needs --baseline (the run to compare with)");
    }
    std::string what = a.metric.Text();
    auto change = RegressionChange(a, run, &what);
    if (!change) return std::unexpected(change.error());
    out.assertion = "regression of " + what + op + FormatPercent(a.limit, 1.0);
    const std::optional<double> rel = change->relative();
    out.measured = rel.value_or(change->delta() > 0 ? INFINITY : 0.0);
    // Fails only beyond both the limit and the runs' own spread (run_diff.h).
    out.passed = !(change->significant && change->delta() > 0);
    out.measured_text = (rel ? FormatSignedPercent(*rel) : "from 0") + " (" +
                        FormatDuration(change->base) + " → " + FormatDuration(change->next) +
                        ", noise ±" + FormatDuration(change->noise) + ")";
    return out;
  }
  const CheckScope* scope = &run.run;
  double per = 1;
  if (a.per_step) {
    if (!run.step) {
      return std::unexpected("'" + a.text +
                             "': /step needs an NVTX range that repeats (--nvtx NAME)");
    }
    scope = &*run.step;
    per = run.step->per;
  }
  auto measured = Measure(a.metric, a.unit, *scope, per, run);
  if (!measured) return std::unexpected(measured.error());
  out.measured = *measured;
  out.assertion = a.metric.Text() + op + FormatValue(a.limit, a.unit) + (a.per_step ? "/step" : "");
  out.passed = a.bound == CheckBound::kMin ? *measured >= a.limit : *measured <= a.limit;
  out.measured_text = FormatValue(*measured, a.unit) + UnitWord(a.metric, a.unit) +
                      (a.per_step ? " per iteration" : "");
  // What the figure left out, so that a pass is not mistaken for "no such waits at all".
  if (a.metric.kind == CheckMetric::Kind::kRule && !run.keep_one_time) {
    const FindingTotals::OneTimeShare left_out = scope->findings->OneTimeOf(a.metric.rule);
    if (left_out.total.count > 0) {
      const std::string amount =
          FormatValue(RuleValue(left_out.total, a.unit, *scope, per), a.unit);
      out.measured_text += " (+" + amount + " one-time left out)";
      out.note = a.metric.Text() + ": " + amount + UnitWord(a.metric, a.unit) +
                 (a.per_step ? " per iteration" : "") + " in " +
                 OneTimeWorkNames(left_out.kinds) +
                 " left out: paid once, and not the program's own code (--keep-one-time "
                 "counts them).";
    }
  }
  return out;
}

}  // namespace libprof::analysis
