#include "analysis/reports/summary_report.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "analysis/model/kernel_names.h"
#include "analysis/model/units.h"
#include "analysis/reports/findings_report.h"
#include "analysis/reports/formats.h"
#include "analysis/reports/table_renderer.h"

namespace libprof::analysis {
namespace {

std::string PadLeft(const std::string& s, size_t w) {
  const size_t n = DisplayWidth(s);
  return n >= w ? s : std::string(w - n, ' ') + s;
}
std::string PadRight(const std::string& s, size_t w) {
  const size_t n = DisplayWidth(s);
  return n >= w ? s : s + std::string(w - n, ' ');
}

// The name column of a row (abbreviated by the table to its width): NVTX ranges prefixed with
// their domain.
std::string DisplayName(const SummaryRow& row) {
  if (row.kind == "nvtx" && !row.domain.empty()) return row.domain + ": " + row.name;
  return row.name;
}

// A "Time distribution" cell in a narrowed column: "mean ± std" without "(min ‥ max)".
std::string FitDistribution(const std::string& text, size_t width) {
  const size_t range = text.find(" (");
  if (range != std::string::npos && DisplayWidth(text.substr(0, range)) <= width) {
    return text.substr(0, range);
  }
  return Truncate(text, width);
}

// A Name cell narrowed: a name abbreviated (FitName); a call chain of `summary --by caller`
// ("cudaMemcpyAsync ← cublasSnrm2_v2 (libcublas.so.13) ← NormalizeLoop (app)") keeps the API and
// the caller and drops the frames between, then is cut (a Python caller keeps its line).
std::string FitSummaryName(const std::string& text, size_t width) {
  static constexpr std::string_view kArrow = " ← ";
  const size_t first = text.find(kArrow);
  if (first == std::string::npos) return FitName(text, width);
  const size_t last = text.rfind(kArrow);
  if (last != first) {
    const std::string shorter =
        text.substr(0, first) + std::string(kArrow) + "…" + text.substr(last);
    if (DisplayWidth(shorter) <= width) return shorter;
  }
  // "cudaStreamSynchronize ← train.py:12 in step": the API, then the line (FitPythonCallSite).
  const std::string head = text.substr(0, first) + std::string(kArrow);
  if (DisplayWidth(head) + 8 <= width) {
    if (auto python = FitPythonCallSite(text.substr(last + kArrow.size()), width - DisplayWidth(head))) {
      return head + *python;
    }
  }
  return Truncate(text, width);
}

// The narrowest the Name column gets before the distribution column gives way: a qualified
// kernel name with its argument lists elided ("cudnn::detail::dgrad_engine<…>(…)") fits.
constexpr size_t kNameMinWidth = 34;
// The distribution column narrowed to "mean ± std".
constexpr size_t kDistributionMinWidth = 18;

bool AnyRepeated(std::span<const SummaryRow> rows) {
  return std::any_of(rows.begin(), rows.end(),
                     [](const SummaryRow& r) { return r.stats.count() > 1; });
}

}  // namespace

std::string RepairedEndsSentence(uint64_t repaired_ends) {
  const bool one = repaired_ends == 1;
  return std::to_string(repaired_ends) + (one ? " copy or memset" : " copies or memsets") +
         " had an end from CUPTI after the next operation on " + (one ? "its" : "their") +
         " stream started, which a stream's order rules out: " + (one ? "it is" : "each is") +
         " ended at that start; profview trace shows CUPTI's end.";
}

std::string CopiesHeadline(const std::vector<CopyRow>& copies) {
  uint64_t bytes = 0, ns = 0, count = 0;
  for (const CopyRow& c : copies) {
    ns += c.total_ns;
    // A peer copy staged through host memory is two pieces with its bytes each: counted once,
    // by the source GPU's (DtoH) piece.
    if (c.copy_kind == CopyKind::kHtoD &&
        IsStagedPeerPiece(c.copy_kind, c.src_kind, c.dst_kind)) {
      continue;
    }
    bytes += c.bytes;
    count += c.count;
  }
  return "Memory copies: " + std::to_string(count) + " copies, " + FormatBytes(bytes) + " in " +
         FormatDuration(static_cast<double>(ns));
}

// The table of host, device or NVTX rows, CUDA.jl's columns plus bytes/bandwidth for copies and
// GPU time for NVTX ranges.
RowsShown FirstRows(const std::vector<SummaryRow>& rows, size_t max_rows) {
  RowsShown r{.shown = rows};
  if (max_rows == 0 || rows.size() <= max_rows) return r;
  r.shown = r.shown.first(max_rows);
  r.others = rows.size() - max_rows;
  for (size_t i = max_rows; i < rows.size(); ++i) r.others_ns += rows[i].stats.total();
  return r;
}

TableCells SummaryRowCells(std::span<const SummaryRow> rows, uint64_t trace_ns, bool nvtx) {
  const bool distribution = AnyRepeated(rows);
  const bool bytes =
      std::any_of(rows.begin(), rows.end(), [](const SummaryRow& r) { return r.has_bytes; });
  std::vector<TableColumn> columns = {
      {"Time (%)", Align::kRight}, {"Total time", Align::kRight}, {"Calls", Align::kRight}};
  if (distribution) {
    columns.push_back(
        {"Time distribution", Align::kLeft, true, kDistributionMinWidth, FitDistribution});
  }
  if (bytes) {
    columns.push_back({"Bytes", Align::kRight});
    columns.push_back({"Bandwidth", Align::kRight});
  }
  if (nvtx) columns.push_back({"GPU time", Align::kRight});
  columns.push_back({"Name", Align::kLeft, /*shrinkable=*/true, kNameMinWidth, FitSummaryName});

  std::vector<const Stats*> stats;
  for (const SummaryRow& r : rows) stats.push_back(&r.stats);
  const std::vector<std::string> cells = DistributionCells(stats);
  std::vector<std::vector<std::string>> table;
  for (size_t i = 0; i < rows.size(); ++i) {
    const SummaryRow& r = rows[i];
    std::vector<std::string> line = {
        FormatPercent(static_cast<double>(r.stats.total()), static_cast<double>(trace_ns)),
        FormatDuration(static_cast<double>(r.stats.total())), std::to_string(r.stats.count())};
    if (distribution) line.push_back(cells[i]);
    if (bytes) {
      line.push_back(r.has_bytes ? FormatBytes(r.bytes) : "");
      line.push_back(r.has_bytes ? FormatBandwidth(r.bytes, r.stats.total()) : "");
    }
    if (nvtx) line.push_back(FormatDuration(static_cast<double>(r.gpu_ns)));
    line.push_back(DisplayName(r));
    table.push_back(std::move(line));
  }
  return {std::move(columns), std::move(table)};
}

TableCells CopyRowCells(const std::vector<CopyRow>& copies) {
  std::vector<TableColumn> columns = {{"Copy", Align::kLeft},        {"Memory", Align::kLeft},
                                      {"Count", Align::kRight},      {"Bytes", Align::kRight},
                                      {"Total time", Align::kRight}, {"Bandwidth", Align::kRight}};
  std::vector<std::vector<std::string>> table;
  for (const CopyRow& c : copies) {
    table.push_back(
        {ToString(c.copy_kind), std::string(ToString(c.src_kind)) + " → " + ToString(c.dst_kind),
         std::to_string(c.count), FormatBytes(c.bytes),
         FormatDuration(static_cast<double>(c.total_ns)),
         // (Each piece of a staged peer copy is timed by its last part only.)
         IsStagedPeerPiece(c.copy_kind, c.src_kind, c.dst_kind)
             ? "staged via host"
             : FormatBandwidth(c.bytes, c.total_ns)});
  }
  return {std::move(columns), std::move(table)};
}

namespace {

std::string RowTable(const std::vector<SummaryRow>& rows, uint64_t trace_ns, bool nvtx,
                     size_t width, size_t max_rows) {
  const RowsShown rows_shown = FirstRows(rows, max_rows);
  const TableCells cells = SummaryRowCells(rows_shown.shown, trace_ns, nvtx);
  std::string table = RenderTable(cells.columns, cells.rows, width);
  if (rows_shown.others > 0) {
    table += "(The other " + std::to_string(rows_shown.others) + " rows took " +
             FormatDuration(static_cast<double>(rows_shown.others_ns)) +
             " in all; --rows 0 lists every row, as JSON and CSV do.)\n";
  }
  return table;
}

std::string CopyTable(const std::vector<CopyRow>& copies, size_t width) {
  const TableCells cells = CopyRowCells(copies);
  return RenderTable(cells.columns, cells.rows, width);
}

// A process's top finding group as `profview findings` lists it: its rule ("sync-api",
// "blocked-on-prior-work (start-up)") and its API and what it waited for ("cudaMemcpyAsync →
// worker(float*, int)"; a GPU rule: where, "GPU 0").
std::string TopRuleCell(const ProcessFindings& f) {
  return RuleLabel(f.top_rule, f.top_in_start_up, OneTimeWorkFromId(f.top_one_time));
}
std::string TopWhatCell(const ProcessFindings& f) {
  if (f.top_api.empty()) return f.top_waiting_for;
  return f.top_api + (f.top_waiting_for.empty() ? "" : " → " + f.top_waiting_for);
}
// A TopWhatCell cut to `width`: what was waited for keeps at least two thirds of it, abbreviated
// as the findings table abbreviates it; the API takes what is left, or goes.
std::string FitTopWhat(const std::string& text, size_t width) {
  const std::string arrow = " → ";
  const size_t at = text.find(arrow);
  if (at == std::string::npos || DisplayWidth(text) <= width) return FitWaitingFor(text, width);
  const std::string api = text.substr(0, at), work = text.substr(at + arrow.size());
  const size_t arrow_chars = DisplayWidth(arrow);
  const size_t api_chars = DisplayWidth(api) + arrow_chars;
  const size_t work_room = std::max(width > api_chars ? width - api_chars : 0, width * 2 / 3);
  const std::string short_work = FitWaitingFor(work, work_room);
  const size_t used = DisplayWidth(short_work) + arrow_chars;
  if (width < used + 4) return FitWaitingFor(work, width);
  return FitName(api, width - used) + arrow + short_work;
}

std::string TopFindingCell(const ProcessFindings& f) {
  if (f.top_rule.empty()) return "";
  return FormatDuration(static_cast<double>(f.top_time_lost_ns)) + " " + TopRuleCell(f) + " " +
         TopWhatCell(f);
}

// The line a one-process summary --findings ends with.
std::string FindingsLine(const ProcessFindings& f) {
  if (f.findings == 0) return "\nFindings: none (profview findings tells why time was lost).\n";
  return "\nFindings: API calls lost " + FormatDuration(static_cast<double>(f.host_lost_ns)) +
         " waiting for the GPU or in synchronous work; the top one: " + TopFindingCell(f) + " (" +
         std::to_string(f.top_count) + " of " + std::to_string(f.findings) +
         " findings; profview findings tells more).\n";
}

std::string Section(const Summary& s, size_t width, size_t max_rows) {
  const double trace = static_cast<double>(s.trace_ns);
  std::string out = "Profiler ran for " + FormatDuration(trace) + ", capturing " +
                    std::to_string(s.events) + " events.\n";
  if (s.dropped_records > 0) {
    out += "(" + std::to_string(s.dropped_records) +
           " records were dropped during capture: totals are lower bounds.)\n";
  }
  out += "\n";
  if (s.host.empty()) {
    out += "No host-side activity was recorded.\n";
  } else {
    out += "Host-side activity: calling CUDA APIs took " +
           FormatDuration(static_cast<double>(s.host_api_ns)) + " (" +
           FormatPercent(static_cast<double>(s.host_api_ns), trace) + " of the trace)\n";
    out += RowTable(s.host, s.trace_ns, false, width, max_rows);
  }
  if (s.hidden_calls > 0) {
    const bool one = s.hidden_calls == 1;
    out += "(" + std::to_string(s.hidden_calls) + (one ? " call" : " calls") +
           " to noisy or internal APIs, " + FormatDuration(static_cast<double>(s.hidden_ns)) +
           (one ? ", is" : ", are") + " hidden; --raw shows " + (one ? "it" : "them") + ".)\n";
  }
  out += "\n";
  if (s.device.empty()) {
    out += "No device-side activity was recorded.\n";
  } else {
    out += "Device-side activity: GPU was busy for " +
           FormatDuration(static_cast<double>(s.gpu_busy_ns)) + " (" +
           FormatPercent(static_cast<double>(s.gpu_busy_ns), trace) + " of the trace)\n";
    out += RowTable(s.device, s.trace_ns, false, width, max_rows);
    if (s.repaired_ends > 0) out += "(" + RepairedEndsSentence(s.repaired_ends) + ")\n";
  }
  if (!s.copies.empty()) {
    out += "\n" + CopiesHeadline(s.copies) + "\n";
    out += CopyTable(s.copies, width);
  }
  if (!s.nvtx.empty()) {
    out += "\nNVTX ranges (GPU time: device time of the work launched inside the range)\n";
    out += RowTable(s.nvtx, s.trace_ns, true, width, max_rows);
  }
  return out;
}

std::string ProcessTitle(const Summary& s) {
  std::string title = "Process " + std::to_string(s.pid);
  if (!s.hostname.empty()) title += " on " + s.hostname;
  if (s.rank) title += ", rank " + std::to_string(*s.rank);
  if (!s.path.empty()) title += " (" + s.path + ")";
  return title;
}

void RowJson(JsonWriter& j, const SummaryRow& r) {
  j.BeginObject().Field("name", r.name);
  if (r.kind == "nvtx") j.Field("domain", r.domain);
  if (r.kind != "api" && r.kind != "nvtx") j.Field("kind", r.kind);
  j.Field("calls", r.stats.count())
      .Field("total_ns", r.stats.total())
      .Field("mean_ns", static_cast<uint64_t>(std::llround(r.stats.mean())))
      .Field("std_ns", static_cast<uint64_t>(std::llround(r.stats.std())))
      .Field("min_ns", r.stats.min())
      .Field("max_ns", r.stats.max())
      .Field("p50_ns", r.stats.Quantile(0.5))
      .Field("p90_ns", r.stats.Quantile(0.9))
      .Field("p99_ns", r.stats.Quantile(0.99));
  if (r.has_bytes) j.Field("bytes", r.bytes);
  if (r.kind == "nvtx") j.Field("gpu_ns", r.gpu_ns);
  j.EndObject();
}

void SummaryFields(JsonWriter& j, const Summary& s) {
  j.Field("trace_ns", s.trace_ns)
      .Field("events", s.events)
      .Field("host_api_ns", s.host_api_ns)
      .Field("gpu_busy_ns", s.gpu_busy_ns)
      .Field("dropped_records", s.dropped_records)
      .Field("repaired_ends", s.repaired_ends)
      .Field("hidden_calls", s.hidden_calls)
      .Field("hidden_ns", s.hidden_ns);
  j.Key("host").BeginArray();
  for (const SummaryRow& r : s.host) RowJson(j, r);
  j.EndArray();
  j.Key("device").BeginArray();
  for (const SummaryRow& r : s.device) RowJson(j, r);
  j.EndArray();
  j.Key("copies").BeginArray();
  for (const CopyRow& c : s.copies) {
    j.BeginObject()
        .Field("copy_kind", ToString(c.copy_kind))
        .Field("src_kind", ToString(c.src_kind))
        .Field("dst_kind", ToString(c.dst_kind))
        .Field("count", c.count)
        .Field("bytes", c.bytes)
        .Field("total_ns", c.total_ns)
        .Key("gb_per_s");
    // (null, as the table's "staged via host": a staged piece is timed by its last part only.)
    if (IsStagedPeerPiece(c.copy_kind, c.src_kind, c.dst_kind)) {
      j.Null();
    } else {
      j.Double(GigabytesPerSecond(c.bytes, c.total_ns));
    }
    j.EndObject();
  }
  j.EndArray();
  j.Key("nvtx").BeginArray();
  for (const SummaryRow& r : s.nvtx) RowJson(j, r);
  j.EndArray();
}

void ProcessFindingsJson(JsonWriter& j, const ProcessFindings& f) {
  j.Key("findings").BeginObject().Field("host_lost_ns", f.host_lost_ns).Field("count", f.findings);
  if (!f.top_rule.empty()) {
    j.Key("top").BeginObject()
        .Field("rule", f.top_rule)
        .Field("in_start_up", f.top_in_start_up)
        .Field("one_time", f.top_one_time)
        .Field("api", f.top_api)
        .Field("waiting_for", f.top_waiting_for)
        .Field("time_kind", f.top_time_kind)
        .Field("total_blocked_ns", f.top_time_lost_ns)
        .Field("count", f.top_count)
        .EndObject();
  }
  j.EndObject();
}

void RowsCsv(std::string* out, const std::string& pid, const std::string& section,
             const std::vector<SummaryRow>& rows) {
  for (const SummaryRow& r : rows) {
    *out += CsvLine({section, pid, r.name, r.kind == "nvtx" ? r.domain : "",
                     std::to_string(r.stats.count()), std::to_string(r.stats.total()),
                     std::to_string(std::llround(r.stats.mean())),
                     std::to_string(std::llround(r.stats.std())), std::to_string(r.stats.min()),
                     std::to_string(r.stats.max()), r.has_bytes ? std::to_string(r.bytes) : "",
                     r.kind == "nvtx" ? std::to_string(r.gpu_ns) : "", "", "", ""});
  }
}

void SummaryCsvRows(std::string* out, const std::string& pid, const Summary& s) {
  const std::pair<const char*, uint64_t> metrics[] = {{"trace_ns", s.trace_ns},
                                                      {"events", s.events},
                                                      {"host_api_ns", s.host_api_ns},
                                                      {"gpu_busy_ns", s.gpu_busy_ns},
                                                      {"dropped_records", s.dropped_records},
                                                      {"repaired_ends", s.repaired_ends}};
  for (auto [name, value] : metrics) {
    *out += CsvLine(
        {"trace", pid, name, "", "", std::to_string(value), "", "", "", "", "", "", "", "", ""});
  }
  RowsCsv(out, pid, "host", s.host);
  RowsCsv(out, pid, "device", s.device);
  for (const CopyRow& c : s.copies) {
    *out += CsvLine({"copies", pid,
                     std::string(ToString(c.copy_kind)) + " " + ToString(c.src_kind) + "->" +
                         ToString(c.dst_kind),
                     "", std::to_string(c.count), std::to_string(c.total_ns), "", "", "", "",
                     std::to_string(c.bytes), "", ToString(c.copy_kind), ToString(c.src_kind),
                     ToString(c.dst_kind)});
  }
  RowsCsv(out, pid, "nvtx", s.nvtx);
  if (const auto& f = s.findings) {
    *out += CsvLine({"findings", pid, "host_lost_ns", "", std::to_string(f->findings),
                     std::to_string(f->host_lost_ns), "", "", "", "", "", "", "", "", ""});
    if (!f->top_rule.empty()) {
      *out += CsvLine({"top_finding", pid, TopFindingCell(*f), "", std::to_string(f->top_count),
                       std::to_string(f->top_time_lost_ns), "", "", "", "", "", "", "", "", ""});
    }
  }
}

}  // namespace

std::vector<std::string> DistributionCells(const std::vector<const Stats*>& stats) {
  struct Parts {
    std::string mean, std, min, max;
  };
  std::vector<Parts> parts(stats.size());
  size_t w_mean = 0, w_std = 0, w_min = 0;
  for (size_t i = 0; i < stats.size(); ++i) {
    const Stats& s = *stats[i];
    if (s.count() < 2) continue;
    const TimeUnit unit = UnitFor(s.mean());
    parts[i] = {FormatDuration(s.mean()), FormatNumber(InUnit(s.std(), unit)),
                FormatNumber(InUnit(static_cast<double>(s.min()), unit)),
                FormatNumber(InUnit(static_cast<double>(s.max()), unit))};
    // FormatDuration may round up into the next unit ("1000.0 µs" -> "1.0 ms"): follow it.
    if (parts[i].mean.ends_with(UnitName(unit)) == false) {
      const TimeUnit next = static_cast<TimeUnit>(static_cast<int>(unit) + 1);
      parts[i].std = FormatNumber(InUnit(s.std(), next));
      parts[i].min = FormatNumber(InUnit(static_cast<double>(s.min()), next));
      parts[i].max = FormatNumber(InUnit(static_cast<double>(s.max()), next));
    }
    w_mean = std::max(w_mean, DisplayWidth(parts[i].mean));
    w_std = std::max(w_std, DisplayWidth(parts[i].std));
    w_min = std::max(w_min, DisplayWidth(parts[i].min));
  }
  std::vector<std::string> cells(stats.size());
  for (size_t i = 0; i < stats.size(); ++i) {
    if (stats[i]->count() < 2) continue;
    cells[i] = PadLeft(parts[i].mean, w_mean) + " ± " + PadRight(parts[i].std, w_std) + " (" +
               PadLeft(parts[i].min, w_min) + " ‥ " + parts[i].max + ")";
  }
  return cells;
}

std::string SummaryTable(const std::vector<Summary>& parts, const Summary& total,
                         size_t terminal_width, size_t max_rows) {
  if (parts.size() == 1) {
    const Summary& s = parts.front();
    return Section(s, terminal_width, max_rows) + (s.findings ? FindingsLine(*s.findings) : "");
  }
  std::string out;
  for (const Summary& p : parts) {
    out += ProcessTitle(p) + "\n" + Section(p, terminal_width, max_rows) + "\n";
  }
  out += "Total over " + std::to_string(parts.size()) + " processes\n" +
         Section(total, terminal_width, max_rows);
  out += "\n" + RankTable(parts, terminal_width);
  return out;
}

uint64_t SyncCallNs(const Summary& s) {
  uint64_t ns = 0;
  for (const SummaryRow& r : s.host) {
    if (r.name.find("Synchronize") != std::string::npos) ns += r.stats.total();
  }
  return ns;
}

namespace {

// A line for each GPU that several processes of one host ran work on at the same time ("" if
// none): CUDA time-slices a GPU between processes (without MPS), so ranks that forgot to pick
// their own device (torch.cuda.set_device(local_rank)) share one (.carry/s17e/ddp_same_gpu.py
// on the H200: two DDP ranks on cuda:0, each 90% idle). Processes of one host share its clock;
// two runs one after the other on one GPU are no sharing.
std::string SharedGpuNotes(const std::vector<const Summary*>& processes) {
  std::map<std::pair<std::string, std::string>, std::vector<const Summary*>> users;  // host, GPU
  for (const Summary* s : processes) {
    for (const std::string& gpu : s->gpus) users[{s->hostname, gpu}].push_back(s);
  }
  std::string out;
  for (auto& [where, sharing] : users) {
    std::vector<uint32_t> list;  // the pids whose recordings overlap another's on this GPU
    for (const Summary* a : sharing) {
      if (std::any_of(sharing.begin(), sharing.end(), [&](const Summary* b) {
            return a != b && a->span.start_ns < b->span.end_ns && b->span.start_ns < a->span.end_ns;
          })) {
        list.push_back(a->pid);
      }
    }
    if (list.size() < 2) continue;
    std::sort(list.begin(), list.end());
    std::string names;
    for (size_t i = 0; i < list.size(); ++i) {
      names += (i == 0 ? "" : i + 1 == list.size() ? " and " : ", ") + std::to_string(list[i]);
    }
    out += "Processes " + names + (where.first.empty() ? "" : " on " + where.first) +
           " ran work on the same GPU (" + where.second +
           "): CUDA time-slices a GPU between processes, so each waits for the others' work; "
           "give each process its own GPU (torch.cuda.set_device(local_rank), "
           "CUDA_VISIBLE_DEVICES) unless they are meant to share it (MPS)\n";
  }
  return out;
}

}  // namespace

std::string RankTable(const std::vector<Summary>& parts, size_t terminal_width) {
  // With summary --findings every process has its findings: their host time lost and top
  // finding replace the time in sync calls and the top API, which only hint at them.
  bool findings = true;
  for (const Summary& p : parts) findings &= p.findings.has_value();
  std::vector<const Summary*> order;
  for (const Summary& p : parts) order.push_back(&p);
  // What a rank lost waiting: its host time lost, else its time in sync calls.
  std::vector<uint64_t> waited(parts.size());
  for (size_t i = 0; i < parts.size(); ++i) {
    waited[i] = findings ? parts[i].findings->host_lost_ns : SyncCallNs(parts[i]);
  }
  auto waited_of = [&](const Summary* s) { return waited[static_cast<size_t>(s - parts.data())]; };
  std::stable_sort(order.begin(), order.end(), [&](const Summary* a, const Summary* b) {
    if (a->gpu_busy_ns != b->gpu_busy_ns) return a->gpu_busy_ns > b->gpu_busy_ns;
    return waited_of(a) < waited_of(b);
  });
  std::vector<TableColumn> columns = {{"Rank", Align::kRight},
                                      {"PID", Align::kRight},
                                      {"Host", Align::kLeft, true, 8},
                                      {"GPU busy", Align::kRight}};
  if (!findings) columns.push_back({"Busy (%)", Align::kRight});
  if (findings) {
    // The host time lost says more than the time in CUDA APIs, and the top finding's names
    // need the width (the busy share goes into the busy time's cell).
    columns.push_back({"Host time lost", Align::kRight});
    columns.push_back({"Top finding", Align::kLeft});
    columns.push_back({"API → waiting for", Align::kLeft, true, 16, FitTopWhat});
  } else {
    columns.push_back({"In CUDA APIs", Align::kRight});
    columns.push_back({"In sync calls", Align::kRight});
    columns.push_back({"Top API (host time)", Align::kLeft, true, 16});
  }
  std::vector<std::vector<std::string>> rows;
  for (const Summary* s : order) {
    const double trace = static_cast<double>(s->trace_ns);
    const std::string busy = FormatDuration(static_cast<double>(s->gpu_busy_ns));
    const std::string share = FormatPercent(static_cast<double>(s->gpu_busy_ns), trace);
    std::vector<std::string> row = {s->rank ? std::to_string(*s->rank) : "-",
                                    std::to_string(s->pid), s->hostname};
    if (findings) {
      row.push_back(busy + " (" + share + ")");
    } else {
      row.push_back(busy);
      row.push_back(share);
    }
    if (findings) {
      row.push_back(FormatDuration(static_cast<double>(waited_of(s))));
      row.push_back(TopRuleCell(*s->findings));
      row.push_back(TopWhatCell(*s->findings));
    } else {
      row.push_back(FormatDuration(static_cast<double>(s->host_api_ns)));
      row.push_back(FormatDuration(static_cast<double>(waited_of(s))));
      row.push_back(s->host.empty() ? "" : s->host.front().name);
    }
    rows.push_back(std::move(row));
  }
  return std::string(
             "Per process, slowest first (longest GPU busy time; a rank that computes "
             "longest holds the others back in their ") +
         (findings ? "waits; host time lost and top finding as profview findings counts them)\n"
                   : "sync calls)\n") +
         RenderTable(columns, rows, terminal_width) + SharedGpuNotes(order);
}

std::string SummaryJson(const std::vector<Summary>& parts, const Summary& total) {
  JsonWriter j;
  j.BeginObject();
  SummaryFields(j, total);
  j.Key("processes").BeginArray();
  for (const Summary& p : parts) {
    j.BeginObject().Field("pid", p.pid);
    if (p.rank) j.Field("rank", *p.rank);
    j.Field("hostname", p.hostname).Field("file", p.path);
    j.Key("gpus").BeginArray();
    for (const std::string& gpu : p.gpus) j.String(gpu);
    j.EndArray();
    SummaryFields(j, p);
    if (p.findings) ProcessFindingsJson(j, *p.findings);
    j.EndObject();
  }
  j.EndArray();
  j.EndObject();
  return j.str();
}

std::string SummaryCsv(const std::vector<Summary>& parts, const Summary& total) {
  std::string out =
      CsvLine({"section", "pid", "name", "domain", "calls", "total_ns", "mean_ns", "std_ns",
               "min_ns", "max_ns", "bytes", "gpu_ns", "copy_kind", "src_kind", "dst_kind"});
  for (const Summary& p : parts) SummaryCsvRows(&out, std::to_string(p.pid), p);
  if (parts.size() > 1) SummaryCsvRows(&out, "all", total);
  return out;
}

}  // namespace libprof::analysis
