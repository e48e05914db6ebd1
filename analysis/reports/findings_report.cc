#include "analysis/reports/findings_report.h"

#include <algorithm>
#include <map>
#include <set>
#include <string_view>
#include <type_traits>

#include "analysis/reports/formats.h"
#include "analysis/model/kernel_names.h"
#include "analysis/reports/table_renderer.h"
#include "analysis/model/units.h"

namespace libprof::analysis {
namespace {

std::string Dur(uint64_t ns) { return FormatDuration(static_cast<double>(ns)); }

RuleFamily FamilyOf(const Finding& f) { return Rule(f.rule).family; }

}  // namespace

std::string RuleLabel(std::string_view rule, bool in_start_up, OneTimeWork one_time) {
  std::string label(rule);
  if (one_time == OneTimeWork::kTorchCompile) return label + " (compilation)";
  if (one_time == OneTimeWork::kLibrarySetUp) return label + " (library set-up)";
  if (one_time != OneTimeWork::kNone) return label + " (autotuning)";
  return in_start_up ? label + " (start-up)" : label;
}

std::string FindingWaitingFor(const Finding& f) {
  std::string text = DetailsWaitingFor(f.details, f.device_id);
  if (!text.empty() || f.blamed.empty()) return text;
  const Blamed& b = f.blamed.front();
  text = b.name;
  const uint64_t more = f.blamed.size() - 1 + f.blamed_omitted;
  if (more > 0) text += " +" + std::to_string(more);
  return text;
}

std::string FitWaitingFor(const std::string& text, size_t width) {
  const size_t plus = text.rfind(" +");
  const bool counted = plus != std::string::npos && plus + 2 < text.size() &&
                       text.find_first_not_of("0123456789", plus + 2) == std::string::npos;
  const size_t suffix = counted ? text.size() - plus : 0;
  if (!counted || suffix + 4 > width) return FitName(text, width);
  return FitName(text.substr(0, plus), width - suffix) + text.substr(plus);
}

namespace {

// A steady state at least this busy is said to be GPU-bound (GpuBoundLine).
constexpr double kGpuBoundShare = 0.8;

std::string WaitingFor(const Finding& f) { return FindingWaitingFor(f); }

// A "Called from" cell cut to `width`: "NormalizeLoop (app)" loses its module first, then the
// function is abbreviated like every name; a Python call site keeps its line.
std::string FitCaller(const std::string& text, size_t width) {
  if (auto python = FitPythonCallSite(text, width)) return *python;
  const size_t module = text.rfind(" (");
  if (module == std::string::npos || text.back() != ')') return FitName(text, width);
  return FitName(text.substr(0, module), width);
}

std::string NvtxPath(const Finding& f) {
  std::string path;
  for (const std::string& n : f.nvtx) path += (path.empty() ? "" : " › ") + n;
  return path;
}

// `with_pid`: findings of several processes are listed together; say whose each one is.
std::string ExplanationLine(const std::string& number, const Finding& f, uint64_t count,
                            bool with_pid) {
  std::string line = "[" + number + "] " +
                     (with_pid ? "pid " + std::to_string(f.pid) + " " : "") +
                     std::string(RuleName(f.rule)) + ": " + f.explanation;
  if (count > 1) line += " (the longest of " + std::to_string(count) + ")";
  line += ".\n";
  if (!f.nvtx.empty()) line += "    in NVTX " + NvtxPath(f) + "\n";
  if (!f.call_site.empty()) line += "    called from " + f.call_site + "\n";
  return line;
}

void FindingJson(JsonWriter& j, const Finding& f, const FindingGroup* group) {
  j.BeginObject()
      .Field("rule", RuleName(f.rule))
      .Field("family", ToString(FamilyOf(f)))
      .Field("time_kind", ToString(TimeKindOf(FamilyOf(f))))
      .Field("api", f.api)
      .Field("pid", f.pid)
      .Field("thread_id", f.thread_id)
      .Field("correlation_id", f.correlation_id)
      .Field("host_start_ns", f.host_start_ns)
      .Field("host_duration_ns", f.host_duration_ns)
      .Field("blocked_ns", f.blocked_ns)
      .Field("in_start_up", f.in_start_up)
      .Field("one_time", OneTimeWorkId(f.one_time));
  if (f.stream_id) j.Field("stream_id", *f.stream_id);
  // The rule's own fields (rule_details.h): the memory ones here, its measures after device_id.
  auto details = [&](bool memory) {
    DetailFields(f.details, [&](std::string_view key, const auto& value, FieldUse use) {
      if ((use == FieldUse::kMemory) == memory) j.Field(key, value);
    });
  };
  details(true);
  j.Key("blamed").BeginArray();
  for (const Blamed& b : f.blamed) {
    j.BeginObject()
        .Field("kind", b.kind)
        .Field("name", b.name)
        .Field("correlation_id", b.correlation_id)
        .Field("stream_id", b.stream_id)
        .Field("overlap_ns", b.overlap_ns)
        .Field("launched_before_ns", b.launched_before_ns)
        .Field("via", b.via)
        .EndObject();
  }
  j.EndArray();
  if (f.blamed_omitted > 0) j.Field("blamed_omitted", f.blamed_omitted);
  j.Key("nvtx").BeginArray();
  for (const std::string& n : f.nvtx) j.String(n);
  j.EndArray();
  j.Field("explanation", f.explanation);
  if (!f.call_site.empty()) {
    j.Field("call_site", f.call_site);
    if (!f.caller.empty()) j.Field("caller", f.caller);
    j.Key("stack").BeginArray();
    for (const FindingFrame& frame : f.stack) {
      if (!frame.python_file.empty()) {
        j.BeginObject()
            .Field("function", frame.function)
            .Field("file", frame.python_file)
            .Field("line", frame.line)
            .EndObject();
        continue;
      }
      j.BeginObject()
          .Field("function", frame.function)
          .Field("module", frame.module)
          .Field("module_offset", frame.module_offset)
          .EndObject();
    }
    j.EndArray();
  }
  if (f.device_id) j.Field("device_id", *f.device_id);
  details(false);
  j.Field("file", f.file);
  if (group != nullptr) {
    j.Field("count", group->count)
        .Field("total_blocked_ns", group->total_blocked_ns)
        .Field("mean_blocked_ns", group->total_blocked_ns / group->count);
  }
  j.EndObject();
}

// The sections of the table output, one per kind of time lost (TimeKind), in display order.
struct Section {
  TimeKind kind;
  const char* label;   // "H": explanations are numbered [H1], [H2], ...
  const char* column;  // the "Time lost" column's header
};
constexpr Section kSections[] = {
    {TimeKind::kHost, "H", "Time lost"},
    {TimeKind::kGpuIdle, "G", "Idle"},
    {TimeKind::kSaving, "P", "Saving"},
    {TimeKind::kRankWait, "R", "Waited"},
};

TimeKind KindOf(const Finding& f) { return TimeKindOf(FamilyOf(f)); }

std::string Count(size_t n) { return std::to_string(n) + (n == 1 ? " finding" : " findings"); }

// Whether a stack was recorded for any group's worst finding: the tables then have a "Called
// from" column.
bool AnyCaller(const std::vector<FindingGroup>& groups) {
  return std::any_of(groups.begin(), groups.end(),
                     [](const FindingGroup& g) { return !g.worst.caller.empty(); });
}

// "; 10.9 ms of it during start-up and 59.9 ms in XLA's autotuning, paid once, listed last", or
// "" when nothing was paid once.
std::string PaidOnceClause(const FindingsTotals& t) {
  std::vector<std::string> parts;
  if (t.host_in_start_up > 0) parts.push_back(Dur(t.host_in_start_up) + " of it during start-up");
  if (t.host_in_one_time > 0) {
    parts.push_back(Dur(t.host_in_one_time) + (parts.empty() ? " of it" : "") + " in " +
                    OneTimeWorkNames(t.one_time_kinds));
  }
  if (parts.empty()) return "";
  return "; " + (parts.size() == 1 ? parts[0] : parts[0] + " and " + parts[1]) +
         ", paid once, listed last";
}

// A line after the host headline when the waits for the GPU exceed what they can cost: the
// GPU's work takes as long without them, so they can shorten the run by at most the GPU's idle
// time (FindingsTotals::bound_span_ns; "" when the waits are within it, or no bound is known).
// The final torch.cuda.synchronize() of a loop of large GEMMs (.carry/s18/one_gemm.py): 858 ms
// of waiting, the GPU busy 98% after start-up.
std::string GpuBoundLine(const FindingsTotals& t) {
  if (t.bound_span_ns == 0 || t.bound_gpu_busy_ns > t.bound_span_ns) return "";
  const uint64_t idle = t.bound_span_ns - t.bound_gpu_busy_ns;
  if (t.host_waits <= idle) return "";
  const double busy =
      static_cast<double>(t.bound_gpu_busy_ns) / static_cast<double>(t.bound_span_ns);
  const bool paid_once = t.host_in_start_up + t.host_in_one_time > 0;
  return std::string(t.bound_processes > 1 ? "  Each process's busiest GPU was busy, in all, "
                                           : "  The GPU was busy ") +
         FormatPercent(busy, 1.0) +
         (t.bound_after_start_up ? " of the steady state ("
                                 : " of the time from its first operation to its last (") +
         Dur(t.bound_span_ns) + "), so the waits for its work (" +
         (paid_once ? "after start-up: " : "") + Dur(t.host_waits) + ") can shorten the run by " +
         Dur(idle) + " at most, its idle time" +
         (busy >= kGpuBoundShare
              ? ": the host waited for a GPU-bound program, whose GPU work sets the pace; "
                "make that faster"
              : "") +
         ".\n";
}

std::string Headline(TimeKind kind, size_t findings, const FindingsTotals& t,
                     const FindingsReportContext& c) {
  switch (kind) {
    case TimeKind::kHost:
      // Several threads lose time at once: a share of the trace would exceed 100% then.
      return "Host: API calls lost " + Dur(t.host) +
             (t.host_threads > 1 ? " summed over " + std::to_string(t.host_threads) + " threads"
                                 : " (" +
                                       FormatPercent(static_cast<double>(t.host),
                                                     static_cast<double>(c.trace_ns)) +
                                       " of the trace)") +
             " waiting for the GPU or in synchronous work (" + Count(findings) + ")" +
             PaidOnceClause(t) + ".\n" + GpuBoundLine(t);
    case TimeKind::kGpuIdle:
      return "GPU idle: the GPU rules find " + Dur(t.gpu_idle) +
             " of idle GPU time in the steady state (" + Count(findings) + ")" +
             (t.gpu_idle_in_one_time > 0
                  ? "; " + Dur(t.gpu_idle_in_one_time) +
                        " more, while autotuners or compilers ran, is left out as paid once"
                  : "") +
             ".\n";
    case TimeKind::kSaving:
      return "Patterns: the pattern rules (" + RuleNames(", ", RuleFamily::kPattern) +
             ") estimate " + Dur(t.saving) +
             " could be saved; it overlaps the host and GPU time above (" +
             Count(findings) + ").\n";
    case TimeKind::kRankWait:
      return "Ranks: ranks waited " + Dur(t.rank_wait) +
             " in all for a late rank in NCCL collectives (" + Count(findings) + ").\n";
    case TimeKind::kStartUp:
      break;
  }
  return "";
}

// The table of one section: grouped (worst finding of each group) or, with --all, every finding.
std::string SectionTable(const Section& section, const std::vector<FindingGroup>& groups,
                         const FindingsReportContext& c) {
  const bool host = section.kind == TimeKind::kHost;
  const bool callers = AnyCaller(groups);
  std::vector<TableColumn> columns;
  std::vector<std::vector<std::string>> rows;
  auto number = [&](size_t i) { return std::string(section.label) + std::to_string(i + 1); };
  const bool calls = section.kind != TimeKind::kGpuIdle;  // GPU findings have no API call
  const char* what = host ? "Waiting for" : section.kind == TimeKind::kGpuIdle ? "Where" : "What";
  if (c.all) {
    columns = {{"#", Align::kRight},
               {"Start", Align::kRight},
               {host ? "Host time" : "Duration", Align::kRight},
               {section.column, Align::kRight},
               {"Rule", Align::kLeft}};
    if (calls) {
      columns.push_back({"API", Align::kLeft, false, 12, FitName});
      columns.push_back({"Corr", Align::kRight});
    }
    columns.push_back({what, Align::kLeft, true, 12, FitWaitingFor});
  } else {
    columns = {{"#", Align::kRight},
               {section.column, Align::kRight},
               {"Count", Align::kRight},
               {"Mean", Align::kRight},
               {"Rule", Align::kLeft}};
    if (calls) columns.push_back({"API", Align::kLeft, false, 12, FitName});
    // The caller before what was waited for: the line to change is the answer, and the last
    // column is the first to narrow.
    if (host && callers) columns.push_back({"Called from", Align::kLeft, true, 16, FitCaller});
    columns.push_back({what, Align::kLeft, true, 12, FitWaitingFor});
  }
  if (c.all && host && callers) {
    columns.push_back({"Called from", Align::kLeft, true, 16, FitCaller});
  }
  for (size_t i = 0; i < groups.size(); ++i) {
    const FindingGroup& g = groups[i];
    const Finding& f = g.worst;
    // Waits paid once are listed last (GroupFindings) and say why.
    const std::string rule = RuleLabel(RuleName(f.rule), f.in_start_up, f.one_time);
    std::vector<std::string> row;
    if (c.all) {
      row = {number(i), Dur(f.host_start_ns), Dur(f.host_duration_ns), Dur(f.blocked_ns), rule};
      if (calls) {
        row.push_back(f.api);
        row.push_back(f.correlation_id ? std::to_string(f.correlation_id) : "");
      }
      row.push_back(WaitingFor(f));
    } else {
      row = {number(i), Dur(g.total_blocked_ns), std::to_string(g.count),
             Dur(g.total_blocked_ns / g.count), rule};
      if (calls) row.push_back(f.api);
      if (host && callers) row.push_back(f.caller);
      row.push_back(WaitingFor(f));
    }
    if (c.all && host && callers) row.push_back(f.caller);
    rows.push_back(std::move(row));
  }
  return RenderTable(columns, rows, c.terminal_width);
}

// The start-up findings, one line each, first: paid once, kept out of the tables.
std::string StartUpLines(const FindingsDigest& findings) {
  std::string out;
  for (const Finding& f : findings.start_ups()) {
    out += (findings.processes() > 1 ? "pid " + std::to_string(f.pid) + ": " : "") +
           f.explanation + ".\n";
  }
  return out;
}

}  // namespace

std::string FindingsHeadline(const FindingsDigest& findings, const FindingsReportContext& c) {
  std::string out = StartUpLines(findings);
  const FindingsTotals totals = findings.Totals();
  for (const Section& section : kSections) {
    if (const size_t n = findings.Count(section.kind); n > 0) {
      out += Headline(section.kind, n, totals, c);
    }
  }
  return out;
}

TableCells FindingGroupCells(const std::vector<FindingGroup>& groups) {
  std::vector<TableColumn> columns = {{"#", Align::kRight},
                                      {"Time lost", Align::kRight},
                                      {"Count", Align::kRight},
                                      {"Mean", Align::kRight},
                                      {"Rule", Align::kLeft},
                                      {"API", Align::kLeft, false, 12, FitName}};
  // The caller before what was waited for, as the terminal table has it.
  const bool callers = AnyCaller(groups);
  if (callers) columns.push_back({"Called from", Align::kLeft, true, 16, FitCaller});
  columns.push_back({"Waiting for", Align::kLeft, true, 12, FitWaitingFor});
  std::vector<std::vector<std::string>> rows;
  for (size_t i = 0; i < groups.size(); ++i) {
    const FindingGroup& g = groups[i];
    std::vector<std::string> row = {
        std::to_string(i + 1), Dur(g.total_blocked_ns), std::to_string(g.count),
        Dur(g.total_blocked_ns / g.count),
        RuleLabel(RuleName(g.worst.rule), g.worst.in_start_up, g.worst.one_time), g.worst.api};
    if (callers) row.push_back(g.worst.caller);
    row.push_back(WaitingFor(g.worst));
    rows.push_back(std::move(row));
  }
  return {std::move(columns), std::move(rows)};
}

std::string FindingsTable(const FindingsDigest& findings, const FindingsReportContext& c) {
  const bool with_pid = findings.processes() > 1;
  std::string out = StartUpLines(findings);
  if (!out.empty()) out += "\n";
  const FindingsTotals totals = findings.Totals();
  const std::vector<FindingGroup> all_groups = c.all ? std::vector<FindingGroup>() : findings.Groups();
  std::string tables, explanations;
  bool with_call_sites = false, paid_once_groups = false, one_time_groups = false;
  for (const Section& section : kSections) {
    const size_t members = findings.Count(section.kind);
    if (members == 0) continue;
    // The section's rows: every finding (--all, by time) or the groups, largest first.
    std::vector<FindingGroup> groups;
    if (c.all) {
      for (const Finding& f : findings.all()) {
        if (KindOf(f) == section.kind) groups.push_back({f, 1, f.blocked_ns, f.host_duration_ns});
      }
    } else {
      for (const FindingGroup& g : all_groups) {
        if (KindOf(g.worst) == section.kind) groups.push_back(g);
      }
    }
    tables += Headline(section.kind, members, totals, c) + SectionTable(section, groups, c) + "\n";
    for (size_t i = 0; i < groups.size(); ++i) {
      explanations += ExplanationLine(std::string(section.label) + std::to_string(i + 1),
                                      groups[i].worst, groups[i].count, with_pid);
      with_call_sites |= !groups[i].worst.call_site.empty();
      paid_once_groups |= PaidOnce(groups[i].worst);
      one_time_groups |= groups[i].worst.one_time != OneTimeWork::kNone;
    }
  }
  if (tables.empty()) {
    return out + "No findings: no API call waited " + Dur(c.thresholds.min_wait_ns) +
           " or more (--min-wait) for device work or synchronous copies, no GPU idle gap "
           "reached " +
           Dur(c.thresholds.gap_threshold_ns) +
           " (--gap-threshold) and no chunk of the steady state was under the utilization "
           "threshold.\n";
  }
  out += tables + explanations;
  if (c.all) return out;
  // (Waits paid once are grouped without what they waited for, one-time work's without call
  // site too: findings_digest.cc.)
  const std::string waited_for =
      one_time_groups    ? "what was waited for (not for waits paid once)"
      : paid_once_groups ? "what was waited for (not for start-up's waits)"
                         : "what was waited for";
  out += with_call_sites ? "\n(Grouped by rule, API, " + waited_for + " and call site" +
                               (one_time_groups ? " (not for one-time work)" : "") +
                               "; --all lists every finding.)\n"
                         : "\n(Grouped by rule, API and " + waited_for +
                               "; --all lists every finding.)\n";
  return out;
}

std::string FindingsJson(const FindingsDigest& findings, const FindingsReportContext& c) {
  JsonWriter j;
  j.BeginObject();
  j.Key("findings").BeginArray();
  if (c.all) {
    for (const Finding& f : findings.all()) FindingJson(j, f, nullptr);
  } else {
    for (const FindingGroup& g : findings.Groups()) FindingJson(j, g.worst, &g);
  }
  j.EndArray();
  // The headlines of the table output: each kind of time lost, in its own unit.
  const FindingsTotals totals = findings.Totals();
  j.Key("totals")
      .BeginObject()
      .Field("host_ns", totals.host)
      .Field("gpu_idle_ns", totals.gpu_idle)
      .Field("saving_ns", totals.saving)
      .Field("start_up_ns", totals.start_up)
      .Field("host_in_start_up_ns", totals.host_in_start_up)
      .Field("host_in_one_time_ns", totals.host_in_one_time)
      .Field("gpu_idle_in_one_time_ns", totals.gpu_idle_in_one_time)
      .Field("host_waits_ns", totals.host_waits)
      .Field("bound_span_ns", totals.bound_span_ns)
      .Field("bound_gpu_busy_ns", totals.bound_gpu_busy_ns)
      .Field("bound_after_start_up", totals.bound_after_start_up)
      .EndObject();
  j.Key("thresholds")
      .BeginObject()
      .Field("min_wait_ns", c.thresholds.min_wait_ns)
      .Field("gap_threshold_ns", c.thresholds.gap_threshold_ns)
      .Field("util_chunks", c.thresholds.util_chunks)
      .Field("util_threshold", c.thresholds.util_threshold)
      .Field("sync_memcpy_min_h2d_bytes", c.thresholds.sync_memcpy_min_h2d_bytes)
      .Field("idle_share", c.thresholds.idle_share)
      .Field("churn_min_pairs", c.thresholds.churn_min_pairs)
      .EndObject();
  j.EndObject();
  return j.str();
}

std::string FindingsCsv(const FindingsDigest& findings, const FindingsReportContext& c) {
  std::string out = CsvLine({"rule",
                             "api",
                             "pid",
                             "thread_id",
                             "correlation_id",
                             "host_start_ns",
                             "host_duration_ns",
                             "blocked_ns",
                             "count",
                             "total_blocked_ns",
                             "stream_id",
                             "bytes",
                             "copy_kind",
                             "src_kind",
                             "dst_kind",
                             "blamed_kind",
                             "blamed_name",
                             "blamed_correlation_id",
                             "blamed_overlap_ns",
                             "nvtx",
                             "explanation",
                             "call_site",
                             "family",
                             "time_kind",
                             "in_start_up",
                             "one_time"});
  auto line = [&](const Finding& f, uint64_t count, uint64_t total) {
    const Blamed* b = f.blamed.empty() ? nullptr : &f.blamed.front();
    // The details' memory fields fill the columns of the same names; others stay empty.
    std::string bytes, copy_kind, src_kind, dst_kind;
    DetailFields(f.details, [&](std::string_view key, const auto& value, FieldUse use) {
      if (use != FieldUse::kMemory) return;
      if constexpr (std::is_same_v<std::decay_t<decltype(value)>, std::string>) {
        (key == "copy_kind" ? copy_kind : key == "src_kind" ? src_kind : dst_kind) = value;
      } else {
        bytes = std::to_string(value);
      }
    });
    out += CsvLine({std::string(RuleName(f.rule)),
                    f.api,
                    std::to_string(f.pid),
                    std::to_string(f.thread_id),
                    std::to_string(f.correlation_id),
                    std::to_string(f.host_start_ns),
                    std::to_string(f.host_duration_ns),
                    std::to_string(f.blocked_ns),
                    std::to_string(count),
                    std::to_string(total),
                    f.stream_id ? std::to_string(*f.stream_id) : "",
                    bytes,
                    copy_kind,
                    src_kind,
                    dst_kind,
                    b ? b->kind : "",
                    b ? b->name : "",
                    b ? std::to_string(b->correlation_id) : "",
                    b ? std::to_string(b->overlap_ns) : "",
                    NvtxPath(f),
                    f.explanation,
                    f.call_site,
                    ToString(FamilyOf(f)),
                    ToString(TimeKindOf(FamilyOf(f))),
                    f.in_start_up ? "true" : "false",
                    std::string(OneTimeWorkId(f.one_time))});
  };
  if (c.all) {
    for (const Finding& f : findings.all()) line(f, 1, f.blocked_ns);
  } else {
    for (const FindingGroup& g : findings.Groups())
      line(g.worst, g.count, g.total_blocked_ns);
  }
  return out;
}

static FindingsDigest DigestOf(const std::vector<Finding>& findings, bool all) {
  FindingsDigest digest(all);
  for (const Finding& f : findings) digest.Add(f);
  return digest;
}

std::string FindingsHeadline(const std::vector<Finding>& findings,
                             const FindingsReportContext& c) {
  return FindingsHeadline(DigestOf(findings, false), c);
}
std::string FindingsTable(const std::vector<Finding>& findings, const FindingsReportContext& c) {
  return FindingsTable(DigestOf(findings, c.all), c);
}
std::string FindingsCsv(const std::vector<Finding>& findings, const FindingsReportContext& c) {
  return FindingsCsv(DigestOf(findings, c.all), c);
}
std::string FindingsJson(const std::vector<Finding>& findings, const FindingsReportContext& c) {
  return FindingsJson(DigestOf(findings, c.all), c);
}

}  // namespace libprof::analysis
