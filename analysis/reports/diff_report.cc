#include "analysis/reports/diff_report.h"

#include <cmath>
#include <cstdio>

#include "analysis/model/kernel_names.h"
#include "analysis/model/units.h"
#include "analysis/reports/findings_report.h"
#include "analysis/reports/formats.h"
#include "analysis/reports/table_renderer.h"

namespace libprof::analysis {
namespace {

std::string Dur(double ns) { return FormatDuration(ns); }

// Calls per iteration may be fractional; per run they are whole.
std::string Count(double value) {
  return value == std::floor(value) ? std::to_string(static_cast<uint64_t>(value))
                                    : FormatNumber(value);
}

std::string Joined(const std::vector<std::string>& inputs) {
  std::string out;
  for (const std::string& s : inputs) out += (out.empty() ? "" : " ") + s;
  return out;
}

// The Name column: the full name, abbreviated to the column by FitName; NVTX with its domain.
std::string DisplayName(const RowDiff& r) {
  if (r.kind == "nvtx" && !r.domain.empty()) return r.domain + ": " + r.name;
  return r.name;
}

// A qualified kernel name with its argument lists elided fits (as summary's Name column).
constexpr size_t kNameMinWidth = 34;

// "a → b" for two values, one value when they are equal.
std::string Arrow(const std::string& a, const std::string& b) {
  return a == b ? a : a + " → " + b;
}

// A side's cell: its value, or "-" when the run lacks the row.
template <class F>
std::string SideCell(bool present, F format) {
  return present ? format() : "-";
}

// The per-call mean: "a → b", with ↑/↓ when it changed beyond noise.
std::string MeanCell(const RowDiff& r) {
  if (!r.base || !r.next) {
    const RowSide& s = r.base ? *r.base : *r.next;
    return Dur(s.stats.mean());
  }
  std::string cell = Arrow(Dur(r.mean.base), Dur(r.mean.next));
  if (r.mean.significant) cell += r.mean.delta() > 0 ? " ↑" : " ↓";
  return cell;
}

std::string PerLabel(const RunComparison& diff) {
  return diff.base_iterations ? "per iteration" : "per run";
}

std::string RowTable(const std::vector<RowDiff>& rows, size_t width) {
  bool bytes = false, nvtx = false;
  for (const RowDiff& r : rows) {
    bytes |= r.has_bytes;
    nvtx |= r.kind == "nvtx";
  }
  std::vector<TableColumn> columns = {
      {"Verdict", Align::kLeft},       {"Base", Align::kRight},  {"New", Align::kRight},
      {"Change", Align::kRight},       {"Change (%)", Align::kRight},
      {"Noise ±", Align::kRight},      {"Calls", Align::kRight}, {"Mean per call", Align::kLeft}};
  if (bytes) {
    columns.push_back({"Bytes", Align::kRight});
    columns.push_back({"Bandwidth", Align::kRight});
  }
  if (nvtx) columns.push_back({"GPU time", Align::kRight});
  columns.push_back({"Name", Align::kLeft, /*shrinkable=*/true, kNameMinWidth, FitName});
  std::vector<std::vector<std::string>> table;
  for (const RowDiff& r : rows) {
    std::vector<std::string> line = {
        ToString(r.status),
        SideCell(r.base.has_value(), [&] { return Dur(r.total.base); }),
        SideCell(r.next.has_value(), [&] { return Dur(r.total.next); }),
        SignedDuration(r.total.delta()),
        SignedPercent(r.total.relative()),
        Dur(r.total.noise),
        Arrow(SideCell(r.base.has_value(), [&] { return Count(r.calls.base); }),
              SideCell(r.next.has_value(), [&] { return Count(r.calls.next); })),
        MeanCell(r)};
    if (bytes) {
      auto side_bytes = [&](const std::optional<RowSide>& s, double per_value) {
        return s ? FormatBytes(static_cast<uint64_t>(std::llround(per_value))) : "-";
      };
      auto side_bw = [&](const std::optional<RowSide>& s) {
        return s ? FormatBandwidth(s->bytes, s->stats.total()) : "-";
      };
      line.push_back(r.has_bytes ? Arrow(side_bytes(r.base, r.bytes.base),
                                         side_bytes(r.next, r.bytes.next))
                                 : "");
      line.push_back(r.has_bytes ? Arrow(side_bw(r.base), side_bw(r.next)) : "");
    }
    if (nvtx) {
      std::string gpu = Arrow(Dur(r.gpu.base), Dur(r.gpu.next));
      if (r.gpu.significant && r.base && r.next) gpu += r.gpu.delta() > 0 ? " ↑" : " ↓";
      line.push_back(gpu);
    }
    line.push_back(DisplayName(r));
    table.push_back(std::move(line));
  }
  return RenderTable(columns, table, width);
}

std::string ProcessCell(const std::optional<ProcessLabel>& p) {
  if (!p) return "-";
  std::string cell = "pid " + std::to_string(p->pid);
  if (p->rank) cell += ", rank " + std::to_string(*p->rank);
  return cell;
}

std::string ChangeCell(const ProcessPair& p, const Change& c) {
  if (!p.base) return Dur(c.next) + " (new run only)";
  if (!p.next) return Dur(c.base) + " (base run only)";
  return Arrow(Dur(c.base), Dur(c.next)) + " (" +
         (c.relative() ? SignedPercent(c.relative()) : SignedDuration(c.delta())) + ")";
}

std::string IterationsSentence(const RunComparison& diff) {
  if (!diff.base_iterations) {
    // Start-up is paid in whichever CUDA call comes first: a change of the first call moves it
    // from one row to another.
    return std::string("Figures per run") +
           (diff.per_run_chosen
                ? " (--per-run)"
                : ": the runs repeat no NVTX range in common (--nvtx NAME chooses one)") +
           ". They include start-up (context creation, module loading), paid in the first "
           "calls that need it: see the start-up finding.\n";
  }
  const RangeInstances& b = *diff.base_iterations;
  const RangeInstances& n = *diff.next_iterations;
  std::string out = "Figures per iteration of NVTX range '" + b.Label() + "' (" +
                    (diff.iterations_chosen ? "chosen by --nvtx"
                                            : "the most repeated top-level range; --nvtx NAME "
                                              "chooses another") +
                    "): base " + Count(diff.base_per) + ", new " + Count(diff.next_per) +
                    " iterations";
  if (b.processes > 1 || n.processes > 1) out += " per process";
  out += "; only activity inside the range counts.\n";
  for (const auto& [side, warm_up] : {std::pair{"base", &diff.base_warm_up_ns},
                                      std::pair{"new", &diff.next_warm_up_ns}}) {
    if (warm_up->empty()) continue;
    std::string durations;
    for (uint64_t ns : *warm_up) durations += (durations.empty() ? "" : ", ") + Dur(ns);
    const bool one = warm_up->size() == 1;
    out += "Warm-up left out of the " + std::string(side) + " run: its first " +
           (one ? "iteration" : std::to_string(warm_up->size()) + " iterations") + " (" +
           durations + ") took over " + FormatNumber(kWarmUpIterationFactor) +
           "x the median (compilation, autotuning, first allocations); --keep-warm-up keeps " +
           (one ? "it" : "them") + ".\n";
  }
  return out;
}

std::string NoiseSentence(const RunComparison& diff, double threshold) {
  return std::string("A change is significant when it exceeds max(") +
         FormatNumber(threshold * 100) + "% of base, the spread of either run): " +
         (diff.base_iterations ? "the iterations' interquartile range; " : "") +
         "for a row's total the std of its calls x sqrt(calls" +
         (diff.base_iterations ? " per iteration" : "") +
         "), for CUDA API time and GPU busy that of their rows together, and at least " +
         Dur(diff.floor_ns) + " (--min-share of the base " +
         (diff.base_iterations ? "time per iteration" : "wall time") +
         "). Else its verdict is ~ (within noise). ↑/↓: mean per call changed beyond its "
         "calls' std.\n";
}

void ChangeJson(JsonWriter& j, std::string_view key, const Change& c) {
  j.Key(key).BeginObject().Field("base", c.base).Field("new", c.next).Field("delta", c.delta());
  if (auto r = c.relative()) {
    j.Field("relative", *r);
  } else {
    j.Key("relative").Null();
  }
  j.Field("noise", c.noise).Field("significant", c.significant).EndObject();
}

void IterationsJson(JsonWriter& j, const RangeInstances& r, double per,
                    const std::vector<uint64_t>& warm_up_ns) {
  j.BeginObject()
      .Field("count", static_cast<uint64_t>(r.durations_ns.size()))
      .Field("per_process", per)
      .Field("median_ns", r.Median())
      .Field("p25_ns", r.Quantile(0.25))
      .Field("p75_ns", r.Quantile(0.75))
      .Key("warm_up_ns")
      .BeginArray();
  for (uint64_t ns : warm_up_ns) j.Uint(ns);
  j.EndArray().EndObject();
}

void ProcessJson(JsonWriter& j, std::string_view key, const std::optional<ProcessLabel>& p) {
  j.Key(key);
  if (!p) {
    j.Null();
    return;
  }
  j.BeginObject().Field("pid", p->pid);
  if (p->rank) j.Field("rank", *p->rank);
  j.Field("file", p->path).EndObject();
}

void RowsJson(JsonWriter& j, std::string_view key, const std::vector<RowDiff>& rows) {
  j.Key(key).BeginArray();
  for (const RowDiff& r : rows) {
    j.BeginObject().Field("status", ToString(r.status)).Field("kind", r.kind).Field("name", r.name);
    if (r.kind == "nvtx") j.Field("domain", r.domain);
    if (!r.base_name.empty()) j.Field("base_name", r.base_name).Field("new_name", r.next_name);
    ChangeJson(j, "total", r.total);
    ChangeJson(j, "calls", r.calls);
    ChangeJson(j, "mean", r.mean);
    if (r.kind == "nvtx") ChangeJson(j, "gpu", r.gpu);
    if (r.has_bytes) ChangeJson(j, "bytes", r.bytes);
    j.EndObject();
  }
  j.EndArray();
}

std::string CsvNumber(double v) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.6g", v);
  return buffer;
}

std::vector<std::string> ChangeCsv(const Change& c) {
  auto r = c.relative();
  return {CsvNumber(c.base), CsvNumber(c.next), CsvNumber(c.delta()), r ? CsvNumber(*r) : "",
          CsvNumber(c.noise), c.significant ? "true" : "false"};
}

}  // namespace

std::string SignedDuration(double ns) {
  return (ns < 0 ? "-" : "+") + FormatDuration(std::fabs(ns));
}

std::string SignedPercent(std::optional<double> fraction) {
  return fraction ? FormatSignedPercent(*fraction) : "";
}

// "cudaMemcpyAsync on SpinKernel(unsigned long), from cublasSnrm2_v2 (libcublas.so.13) ←
// NormalizeLoop (app)": the call and what it waited for first, so that a narrow column still
// says them; the rest of the call site after.
std::string FindingAbout(const FindingKey& key) {
  std::string about = !key.api.empty()  ? key.api
                      : key.device_id   ? "GPU " + std::to_string(*key.device_id)
                                        : key.call_site;
  if (!key.blamed.empty()) {
    about += " on " + AbbreviateName(key.blamed, kProseNameChars);
  }
  if (key.one_time != OneTimeWork::kNone) about += " in " + std::string(OneTimeWorkName(key.one_time));
  if (!key.detail.empty()) about += " (" + key.detail + ")";
  if (!key.api.empty() && !key.call_site.empty()) {
    // The call site names the API first: "cudaMemcpyAsync ← caller ← ...".
    const std::string prefix = key.api + " ← ";
    about += ", from " + (key.call_site.starts_with(prefix) ? key.call_site.substr(prefix.size())
                                                            : key.call_site);
  }
  return about;
}

std::string DiffTable(const RunComparison& diff, const DiffReportContext& context) {
  const size_t width = context.terminal_width;
  std::string out = "Base: " + Joined(context.base_inputs) + "\nNew:  " +
                    Joined(context.next_inputs) + "\n" + IterationsSentence(diff) +
                    NoiseSentence(diff, context.threshold);
  if (diff.pairs.size() > 1) {
    out += "\nProcesses, paired by " + diff.paired_by + " (figures per run)\n";
    std::vector<std::vector<std::string>> rows;
    for (const ProcessPair& p : diff.pairs) {
      rows.push_back({ProcessCell(p.base), ProcessCell(p.next), ChangeCell(p, p.trace),
                      ChangeCell(p, p.host_api), ChangeCell(p, p.gpu_busy)});
    }
    out += RenderTable({{"Base", Align::kLeft},
                        {"New", Align::kLeft},
                        {"Wall time", Align::kLeft},
                        {"CUDA API time", Align::kLeft},
                        {"GPU busy", Align::kLeft}},
                       rows, width);
  }
  out += "\nOverall (" + PerLabel(diff) + ")\n";
  std::vector<std::vector<std::string>> headline;
  for (const HeadlineFigure& h : diff.headline) {
    const Change& c = h.change;
    headline.push_back({c.significant ? (c.delta() > 0 ? "slower" : "faster") : "~", h.label,
                        Dur(c.base), Dur(c.next), SignedDuration(c.delta()),
                        SignedPercent(c.relative()), Dur(c.noise)});
  }
  out += RenderTable({{"Verdict", Align::kLeft},
                      {"Figure", Align::kLeft},
                      {"Base", Align::kRight},
                      {"New", Align::kRight},
                      {"Change", Align::kRight},
                      {"Change (%)", Align::kRight},
                      {"Noise ±", Align::kRight}},
                     headline, width);
  const std::string per = PerLabel(diff);
  auto section = [&](const char* title, const std::vector<RowDiff>& rows) {
    if (rows.empty()) return;
    out += std::string("\n") + title + " (total time " + per + ", biggest changes first)\n";
    out += RowTable(rows, width);
  };
  section("API calls", diff.host);
  section("GPU work", diff.device);
  section("NVTX ranges", diff.nvtx);
  if (context.findings != nullptr) {
    out += "\nFindings (time lost " + per + ", biggest changes first)\n";
    if (context.findings->empty()) {
      out += "No findings in either run.\n";
    } else {
      std::vector<std::vector<std::string>> rows;
      for (const FindingDiff& f : *context.findings) {
        auto side = [](const std::optional<FindingTotal>& t, double value, double count) {
          return t ? Dur(value) + " (" + Count(count) + ")" : "-";
        };
        rows.push_back({ToString(f.status), RuleLabel(RuleName(f.key.rule), false, f.key.one_time),
                        side(f.base, f.blocked.base, f.count.base),
                        side(f.next, f.blocked.next, f.count.next),
                        SignedDuration(f.blocked.delta()), FindingAbout(f.key)});
      }
      out += RenderTable({{"Verdict", Align::kLeft},
                          {"Rule", Align::kLeft},
                          {"Base (count)", Align::kRight},
                          {"New (count)", Align::kRight},
                          {"Change", Align::kRight},
                          {"About", Align::kLeft, /*shrinkable=*/true, 16}},
                         rows, width);
    }
  }
  return out;
}

std::string DiffJson(const RunComparison& diff, const DiffReportContext& context) {
  JsonWriter j;
  j.BeginObject();
  for (auto [key, inputs] : {std::pair{"base", &context.base_inputs},
                             std::pair{"new", &context.next_inputs}}) {
    j.Key(key).BeginObject().Key("inputs").BeginArray();
    for (const std::string& s : *inputs) j.String(s);
    j.EndArray().EndObject();
  }
  j.Field("threshold", context.threshold)
      .Field("per", diff.base_iterations ? "iteration" : "run");
  if (diff.base_iterations) {
    j.Key("iterations").BeginObject().Field("range", diff.base_iterations->Label());
    j.Field("chosen_by", diff.iterations_chosen ? "nvtx" : "most-repeated");
    j.Key("base");
    IterationsJson(j, *diff.base_iterations, diff.base_per, diff.base_warm_up_ns);
    j.Key("new");
    IterationsJson(j, *diff.next_iterations, diff.next_per, diff.next_warm_up_ns);
    j.EndObject();
  }
  j.Field("paired_by", diff.paired_by).Key("processes").BeginArray();
  for (const ProcessPair& p : diff.pairs) {
    j.BeginObject();
    ProcessJson(j, "base", p.base);
    ProcessJson(j, "new", p.next);
    ChangeJson(j, "trace", p.trace);
    ChangeJson(j, "host_api", p.host_api);
    ChangeJson(j, "gpu_busy", p.gpu_busy);
    j.EndObject();
  }
  j.EndArray().Key("headline").BeginArray();
  for (const HeadlineFigure& h : diff.headline) {
    j.BeginObject().Field("figure", h.id);
    const Change& c = h.change;
    j.Field("base", c.base).Field("new", c.next).Field("delta", c.delta());
    if (auto r = c.relative()) {
      j.Field("relative", *r);
    } else {
      j.Key("relative").Null();
    }
    j.Field("noise", c.noise).Field("significant", c.significant).EndObject();
  }
  j.EndArray();
  RowsJson(j, "host", diff.host);
  RowsJson(j, "device", diff.device);
  RowsJson(j, "nvtx", diff.nvtx);
  if (context.findings != nullptr) {
    j.Key("findings").BeginArray();
    for (const FindingDiff& f : *context.findings) {
      j.BeginObject()
          .Field("status", ToString(f.status))
          .Field("rule", RuleName(f.key.rule))
          .Field("api", f.key.api);
      if (f.key.device_id) j.Field("device_id", *f.key.device_id);
      j.Field("blamed_kind", f.key.blamed_kind)
          .Field("blamed", f.key.blamed)
          .Field("detail", f.key.detail)
          .Field("call_site", f.key.call_site)
          .Field("one_time", OneTimeWorkId(f.key.one_time))
          .Field("base_count", f.base ? f.base->count : uint64_t{0})
          .Field("new_count", f.next ? f.next->count : uint64_t{0});
      ChangeJson(j, "blocked", f.blocked);
      j.EndObject();
    }
    j.EndArray();
  }
  j.EndObject();
  return j.str();
}

std::string DiffCsv(const RunComparison& diff, const DiffReportContext& context) {
  std::string out = CsvLine({"section", "status", "kind", "name", "domain", "base", "new", "delta",
                             "relative", "noise", "significant", "base_calls", "new_calls",
                             "base_mean_ns", "new_mean_ns", "mean_significant", "base_bytes",
                             "new_bytes"});
  auto line = [&](std::vector<std::string> head, const Change& c,
                  std::vector<std::string> tail) {
    for (std::string& s : ChangeCsv(c)) head.push_back(std::move(s));
    for (std::string& s : tail) head.push_back(std::move(s));
    out += CsvLine(head);
  };
  for (const HeadlineFigure& h : diff.headline) {
    line({"headline", h.change.significant ? (h.change.delta() > 0 ? "slower" : "faster") : "~",
          "", h.id, ""},
         h.change, {"", "", "", "", "", "", ""});
  }
  auto rows = [&](const char* section, const std::vector<RowDiff>& list) {
    for (const RowDiff& r : list) {
      line({section, ToString(r.status), r.kind, r.name, r.domain}, r.total,
           {CsvNumber(r.calls.base), CsvNumber(r.calls.next), CsvNumber(r.mean.base),
            CsvNumber(r.mean.next), r.mean.significant ? "true" : "false",
            r.has_bytes ? CsvNumber(r.bytes.base) : "", r.has_bytes ? CsvNumber(r.bytes.next) : ""});
    }
  };
  rows("host", diff.host);
  rows("device", diff.device);
  rows("nvtx", diff.nvtx);
  if (context.findings != nullptr) {
    for (const FindingDiff& f : *context.findings) {
      line({"findings", ToString(f.status), std::string(RuleName(f.key.rule)),
            FindingAbout(f.key), ""},
           f.blocked,
           {CsvNumber(f.count.base), CsvNumber(f.count.next), "", "", "", "", ""});
    }
  }
  return out;
}

}  // namespace libprof::analysis
