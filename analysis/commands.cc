#include "analysis/commands.h"

#include <fstream>
#include <iterator>

#include "analysis/metrics/memory.h"
#include "analysis/metrics/memory_in_windows.h"
#include "analysis/metrics/memory_pools.h"
#include "analysis/metrics/memory_timeline.h"
#include "analysis/metrics/streams.h"
#include "analysis/metrics/summary.h"
#include "analysis/metrics/summary_partial.h"
#include "analysis/metrics/unified_memory.h"
#include "analysis/model/trace_windows.h"
#include "analysis/model/units.h"
#include "analysis/process_findings.h"
#include "analysis/process_loop.h"
#include "analysis/reports/collectives_report.h"
#include "analysis/reports/findings_report.h"
#include "analysis/reports/html_process_report.h"
#include "analysis/reports/html_report.h"
#include "analysis/reports/memory_pools_report.h"
#include "analysis/reports/memory_report.h"
#include "analysis/reports/memory_timeline_report.h"
#include "analysis/reports/output_file.h"
#include "analysis/reports/sqlite_export.h"
#include "analysis/reports/stacks_report.h"
#include "analysis/reports/streams_report.h"
#include "analysis/reports/summary_report.h"
#include "analysis/reports/table_renderer.h"
#include "analysis/reports/timeline_export.h"
#include "analysis/reports/trace_listing.h"
#include "analysis/reports/unified_memory_report.h"
#include "analysis/rules/cross_process_rules.h"
#include "analysis/rules/findings_partial.h"
#include "analysis/rules/windowed_findings.h"

namespace libprof::analysis {
namespace {

std::expected<std::vector<ProcessTrace>, std::string> Load(const CommandOptions& options,
                                                           std::vector<std::string>* warnings) {
  if (options.files.empty()) return std::unexpected("no trace file given");
  auto loaded = LoadTraces(options.files, warnings);
  if (!loaded) return std::unexpected(loaded.error());
  return ApplyFilters(std::move(*loaded), options.filters);
}

// The whole traces into a database: selecting and filtering is then SQL's job, so the filters
// and timeline options are refused rather than silently ignored.
std::expected<std::string, std::string> RunSqliteExport(const ExportCommandOptions& options,
                                                        std::vector<std::string>* warnings) {
  if (options.filters.active() || options.raw) {
    return std::unexpected(
        "--format sqlite exports whole traces: --pid, --tid, --from, --to, --nvtx and --raw "
        "apply to the JSON timeline only (select in SQL instead)");
  }
  if (options.files.empty()) return std::unexpected("no trace file given");
  auto files = ExpandTraceInputs(options.files);
  if (!files) return std::unexpected(files.error());
  auto stats = ExportSqlite(*files, options.output, {.overwrite = options.overwrite}, warnings);
  if (!stats) return std::unexpected(stats.error());
  return "Wrote " + std::to_string(stats->rows) + " rows of " + std::to_string(stats->processes) +
         (stats->processes == 1 ? " process" : " processes") + " to " + options.output +
         " (tables and example queries: profview export --help, viewer-cli/USAGE.md)\n";
}

// When the summary saw NCCL's ranges: "\n" and the collectives table, from a second read of the
// traces that have them (the summary streams its files; collectives need each process's index).
std::expected<std::string, std::string> CollectivesAppendix(const SummaryReport& report,
                                                            const CommandOptions& options) {
  bool nccl = false;
  for (const Summary& part : report.parts) {
    for (const SummaryRow& row : part.nvtx) nccl |= row.domain == "NCCL";
  }
  if (!nccl) return std::string();
  std::vector<ProcessCollectives> collectives;
  std::vector<std::string> said_already;  // the first read gave the file warnings
  auto done = ForEachProcess(options.files, options.filters, &said_already, [&](const ProcessTrace& t) {
    if (HasNcclRanges(t)) collectives.push_back(ExtractCollectives(TraceIndex(t)));
  });
  if (!done) return std::unexpected(done.error());
  const std::vector<CollectiveRow> rows = CollectiveTable(collectives);
  if (rows.empty()) return std::string();
  return "\n" + CollectiveRowsTable(rows, collectives.size(), options.terminal_width);
}

std::expected<std::string, std::string> FormatSummary(const SummaryReport& report,
                                                      const CommandOptions& options) {
  switch (options.format) {
    case OutputFormat::kCsv:
      return SummaryCsv(report.parts, report.total);
    case OutputFormat::kJson:
      return SummaryJson(report.parts, report.total);
    case OutputFormat::kTable:
      break;
  }
  return SummaryTable(report.parts, report.total, options.terminal_width, options.table_rows);
}

// A partial's `json` written to `output` ("-": returned), or a one-line report naming `what`
// ("a partial summary") of `processes` processes.
std::expected<std::string, std::string> WritePartialText(const std::string& json,
                                                         const std::string& output,
                                                         const std::string& what,
                                                         size_t processes) {
  if (output == "-") return json;
  auto file = OutputFile::Create(output);
  if (!file) return std::unexpected(file.error());
  (*file)->stream() << json;
  if (auto committed = (*file)->Commit(); !committed) return std::unexpected(committed.error());
  return "Wrote " + what + " of " + std::to_string(processes) +
         (processes == 1 ? " process" : " processes") + " to " + output +
         " (profview combine merges partials)\n";
}

std::expected<std::string, std::string> WritePartial(const SummaryPartial& partial,
                                                     const std::string& output) {
  return WritePartialText(SummaryPartialJson(partial), output, "a partial summary",
                          partial.state.parts.size());
}

std::expected<std::string, std::string> WritePartial(const FindingsPartial& partial,
                                                     const std::string& output) {
  return WritePartialText(FindingsPartialJson(partial), output, "partial findings",
                          partial.processes.size());
}

// The text of partial `path`, or why it cannot be read.
std::expected<std::string, std::string> ReadPartial(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::unexpected(path + ": cannot open the partial");
  std::string text{std::istreambuf_iterator<char>(in), {}};
  if (in.bad()) return std::unexpected(path + ": cannot read the partial");
  return text;
}

// Reads the partials one after another, parses each with `parse` and adds it to *combiner,
// freeing its text first: memory holds one partial's text and the combination.
template <class Parse, class Combiner>
std::expected<void, std::string> AddPartials(const std::vector<std::string>& files, Parse parse,
                                             Combiner* combiner) {
  for (const std::string& path : files) {
    auto text = ReadPartial(path);
    if (!text) return std::unexpected(text.error());
    auto partial = parse(*text, path);
    if (!partial) return std::unexpected(partial.error());
    std::string().swap(*text);
    if (auto added = combiner->Add(std::move(*partial), path); !added) {
      return std::unexpected(added.error());
    }
  }
  return {};
}

// `combine` over partial findings: what `findings` prints over their traces.
std::expected<std::string, std::string> CombineFindings(const CombineCommandOptions& options,
                                                        std::vector<std::string>* warnings) {
  auto parse = [&](const std::string& text,
                   const std::string& path) -> std::expected<FindingsPartial, std::string> {
    auto partial = ParseFindingsPartial(text, path);
    if (!partial && !IsFindingsPartial(text)) {
      return std::unexpected(path + ": not partial findings, as " + options.files.front() +
                             " is (one kind of partial at a time)");
    }
    return partial;
  };
  FindingsPartialsCombiner combiner;
  if (auto added = AddPartials(options.files, parse, &combiner); !added) {
    return std::unexpected(added.error());
  }
  if (!options.partial_output.empty()) {
    return WritePartial(combiner.TakePartial(), options.partial_output);
  }
  auto result = combiner.Finish(warnings);
  if (!result) return std::unexpected(result.error());
  const FindingsReportContext context{.all = false,
                                      .thresholds = result->thresholds,
                                      .trace_ns = result->trace_ns,
                                      .terminal_width = options.terminal_width};
  switch (options.format) {
    case OutputFormat::kCsv:
      return FindingsCsv(result->digest, context);
    case OutputFormat::kJson:
      return FindingsJson(result->digest, context);
    case OutputFormat::kTable:
      break;
  }
  return FindingsTable(result->digest, context);
}

// The partial summary of `options.files` written to options.partial_output (or returned).
std::expected<std::string, std::string> WriteSummaryPartial(const SummaryCommandOptions& options,
                                                            const SummaryOptions& summary,
                                                            std::vector<std::string>* warnings) {
  auto partial = SummarizeFilesPartial(options.files, options.filters, summary);
  if (!partial) return std::unexpected(partial.error());
  if (summary.findings) {
    auto found = AddProcessFindings(options.files, options.filters,
                                    {.call_sites = options.call_sites}, &partial->state.parts);
    if (!found) return std::unexpected(found.error());
  }
  // Printed now and kept in the partial, for combine to print again.
  for (const SummaryPartial::Warning& w : partial->warnings) warnings->push_back(w.text);
  return WritePartial(std::move(*partial), options.partial_output);
}

}  // namespace

std::expected<std::string, std::string> RunSummary(const SummaryCommandOptions& options,
                                                   std::vector<std::string>* warnings) {
  if (options.files.empty()) return std::unexpected("no trace file given");
  const SummaryOptions summary{.raw = options.raw,
                               .by_caller = options.by_caller,
                               .call_sites = options.call_sites,
                               .findings = options.findings};
  if (!options.partial_output.empty()) return WriteSummaryPartial(options, summary, warnings);
  // Streams the files rather than loading them (summary.h).
  auto report = SummarizeFiles(options.files, options.filters, summary, warnings);
  if (!report) return std::unexpected(report.error());
  if (summary.findings) {
    auto found = AddProcessFindings(options.files, options.filters,
                                    {.call_sites = options.call_sites}, &report->parts);
    if (!found) return std::unexpected(found.error());
    if (report->parts.size() == 1) report->total.findings = report->parts.front().findings;
  }
  auto text = FormatSummary(*report, options);
  if (!text || options.format != OutputFormat::kTable) return text;
  auto collectives = CollectivesAppendix(*report, options);
  if (!collectives) return std::unexpected(collectives.error());
  return *text + *collectives;
}

std::expected<std::string, std::string> RunCombine(const CombineCommandOptions& options,
                                                   std::vector<std::string>* warnings) {
  if (options.files.empty()) return std::unexpected("no partial summary given");
  // The first partial says which kind they all are.
  auto first = ReadPartial(options.files.front());
  if (!first) return std::unexpected(first.error());
  if (IsFindingsPartial(*first)) return CombineFindings(options, warnings);
  std::string().swap(*first);
  PartialsCombiner combiner;
  if (auto added = AddPartials(options.files, &ParseSummaryPartial, &combiner); !added) {
    return std::unexpected(added.error());
  }
  if (!options.partial_output.empty()) {
    return WritePartial(combiner.TakePartial(), options.partial_output);
  }
  auto report = combiner.Finish(warnings);
  if (!report) return std::unexpected(report.error());
  return FormatSummary(*report, options);
}

std::expected<std::string, std::string> RunFindings(const FindingsCommandOptions& options,
                                                    std::vector<std::string>* warnings) {
  if (options.thresholds.util_threshold < 0 || options.thresholds.util_threshold > 1) {
    return std::unexpected("--util-threshold must be a percentage between 0 and 100");
  }
  if (options.thresholds.idle_share < 0 || options.thresholds.idle_share > 1) {
    return std::unexpected("--idle-share must be a percentage between 0 and 100");
  }
  if (!options.partial_output.empty()) {
    FindingsOptions thresholds = options.thresholds;
    thresholds.call_sites = options.call_sites;
    auto partial = FindFindingsPartial(options.files, options.filters, thresholds);
    if (!partial) return std::unexpected(partial.error());
    // Printed now and kept in the partial, for combine to print again.
    for (const FindingsPartial::Warning& w : partial->warnings) warnings->push_back(w.text);
    return WritePartial(*partial, options.partial_output);
  }
  // Findings are grouped as soon as they are found (findings_digest.h).
  FindingsDigest findings(options.all);
  FindingsReportContext context{.all = options.all,
                                .thresholds = options.thresholds,
                                .terminal_width = options.terminal_width};
  // The cross-process rules need every process: a few numbers of each are kept
  // (cross_process_rules.h) and the rules run once all are read.
  CrossProcessInputs cross_process;
  FindingsOptions thresholds = options.thresholds;
  thresholds.call_sites = options.call_sites;
  auto whole = [&](const ProcessTrace& t) {
    cross_process.AddWhole(t, warnings);
    if (options.all) {
      findings.Add(FindFindings(t, thresholds));
    } else {
      // Grouped as they are found: the process's findings are never all held.
      findings.BeginProcess();
      StreamFindings(
          t, thresholds, [&](Finding&& f, uint64_t seq) { findings.Add(std::move(f), seq); },
          [&](const Finding& f, uint64_t seq) { return findings.WantsWhole(f, seq); });
    }
    context.trace_ns += t.window_ns();
  };
  // Each file in windows (bounded memory, windowed_findings.h), filtered there, else whole: the
  // same findings either way.
  auto windowed = [&](const std::string& path,
                      FilterMatches* matches) -> std::expected<bool, std::string> {
    auto plan = WindowedFindings::Plan(path, thresholds, options.filters);
    if (!plan) return std::unexpected(plan.error());
    if (!plan->exact()) return false;
    warnings->insert(warnings->end(), plan->warnings().begin(), plan->warnings().end());
    NoteMatches(plan->matches(), matches);
    if (!plan->kept()) return true;
    WindowedCrossProcessInputs process_inputs;
    if (options.all) {
      std::vector<std::pair<uint64_t, Finding>> found;  // --all lists them in order
      auto ran = plan->Run(
          [&](Finding&& f, uint64_t seq) {
            found.push_back({seq, std::move(f)});
          },
          {}, process_inputs.Hooks());
      if (!ran) return std::unexpected(ran.error());
      findings.Add(InFindOrder(std::move(found)));
    } else if (auto ran = plan->AddTo(&findings, process_inputs.Hooks()); !ran) {
      return std::unexpected(ran.error());
    }
    process_inputs.Finish(*plan, &cross_process);
    context.trace_ns += plan->whole().window_ns();
    return true;
  };
  auto done = ForEachFileInWindows(options.files, options.filters, warnings, windowed, whole);
  if (!done) return std::unexpected(done.error());
  AddCrossProcessFindings(cross_process, options.thresholds, &findings);
  switch (options.format) {
    case OutputFormat::kCsv:
      return FindingsCsv(findings, context);
    case OutputFormat::kJson:
      return FindingsJson(findings, context);
    case OutputFormat::kTable:
      break;
  }
  return FindingsTable(findings, context);
}

std::expected<std::string, std::string> RunTrace(const CommandOptions& options,
                                                 std::vector<std::string>* warnings) {
  auto traces = Load(options, warnings);
  if (!traces) return std::unexpected(traces.error());
  std::vector<ListingRow> all;
  std::string table;
  for (const ProcessTrace& t : *traces) {
    std::vector<ListingRow> rows = TraceRows(t, options.raw);
    if (options.format == OutputFormat::kTable) {
      if (traces->size() > 1) {
        table += "Process " + std::to_string(t.header.pid) +
                 (t.header.hostname.empty() ? "" : " on " + t.header.hostname) + " (" + t.path +
                 ")\n";
      }
      table += TraceTable(rows, options.terminal_width);
      if (traces->size() > 1) table += "\n";
    }
    all.insert(all.end(), rows.begin(), rows.end());
  }
  switch (options.format) {
    case OutputFormat::kCsv:
      return TraceCsv(all);
    case OutputFormat::kJson:
      return TraceJson(all);
    case OutputFormat::kTable:
      break;
  }
  return table;
}

std::expected<std::string, std::string> RunCollectives(const CollectivesCommandOptions& options,
                                                       std::vector<std::string>* warnings) {
  CollectivesReport report{.top = options.top};
  auto done = ForEachProcess(options.files, options.filters, warnings, [&](const ProcessTrace& t) {
    const TraceIndex index(t);
    report.processes.push_back(ExtractCollectives(index));
    for (const std::string& w : report.processes.back().warnings) warnings->push_back(w);
  });
  if (!done) return std::unexpected(done.error());
  report.table = CollectiveTable(report.processes);
  if (report.processes.size() > 1) {
    report.skew = AnalyzeRankSkew(report.processes, options.min_late_ns);
  }
  switch (options.format) {
    case OutputFormat::kJson:
      return CollectivesJson(report);
    case OutputFormat::kCsv:
      return std::unexpected("collectives: --format csv is not supported (table or json)");
    case OutputFormat::kTable:
      break;
  }
  return CollectivesTable(report, options.terminal_width);
}

std::expected<std::string, std::string> RunStreams(const CommandOptions& options,
                                                   std::vector<std::string>* warnings) {
  std::vector<StreamsReport> reports;
  auto whole = [&](const ProcessTrace& t) { reports.push_back(AnalyzeStreams(t)); };
  // Each file in windows (bounded memory), else (and with filters) whole: the same report
  // either way.
  auto windowed = [&](const std::string& path, FilterMatches*) -> std::expected<bool, std::string> {
    if (options.filters.active()) return false;
    StreamsAccumulator streams;
    auto read = ReadInWindows(path, {}, [&](const ProcessTrace& w) { streams.Add(w); });
    if (!read) return std::unexpected(read.error());
    if (!read->exact) return false;
    warnings->insert(warnings->end(), read->warnings.begin(), read->warnings.end());
    reports.push_back(streams.Finish(read->whole));
    return true;
  };
  auto done = ForEachFileInWindows(options.files, options.filters, warnings, windowed, whole);
  if (!done) return std::unexpected(done.error());
  switch (options.format) {
    case OutputFormat::kCsv:
      return StreamsCsv(reports);
    case OutputFormat::kJson:
      return StreamsJson(reports);
    case OutputFormat::kTable:
      break;
  }
  return StreamsTable(reports, options.terminal_width);
}

std::expected<std::string, std::string> RunMemory(const MemoryCommandOptions& options,
                                                  std::vector<std::string>* warnings) {
  std::vector<MemoryReport> reports;
  std::vector<UnifiedMemoryReport> unified;
  std::vector<MemoryTimeline> timelines;
  std::vector<MemoryPoolReport> pools;
  auto whole = [&](const ProcessTrace& t) {
    const TraceIndex index(t);
    timelines.push_back(BuildMemoryTimeline(t, index));
    if (options.timeline) return;
    const StreamModel model(index);
    reports.push_back(AnalyzeMemory(t, index, model));
    pools.push_back(AnalyzeMemoryPools(t));
    unified.push_back(AnalyzeUnifiedMemory(t, index));
    if (std::string w = UnknownUvmWarning(unified.back()); !w.empty()) {
      warnings->push_back(t.path + ": " + w);
    }
  };
  // Each file in windows (bounded memory, memory_in_windows.h), else (and with filters) whole:
  // the same report either way.
  auto windowed = [&](const std::string& path, FilterMatches*) -> std::expected<bool, std::string> {
    if (options.filters.active()) return false;
    auto read = AnalyzeMemoryInWindows(path, options.timeline);
    if (!read) return std::unexpected(read.error());
    if (!read->has_value()) return false;
    MemoryResults& m = **read;
    warnings->insert(warnings->end(), m.warnings.begin(), m.warnings.end());
    timelines.push_back(std::move(m.timeline));
    if (options.timeline) return true;
    reports.push_back(std::move(m.report));
    pools.push_back(std::move(m.pools));
    unified.push_back(std::move(m.unified));
    return true;
  };
  auto done = ForEachFileInWindows(options.files, options.filters, warnings, windowed, whole);
  if (!done) return std::unexpected(done.error());
  if (options.timeline) {
    switch (options.format) {
      case OutputFormat::kCsv:
        return MemoryTimelineCsv(timelines);
      case OutputFormat::kJson:
        return MemoryTimelineJson(timelines);
      case OutputFormat::kTable:
        break;
    }
    return MemoryTimelineTable(timelines, options.terminal_width);
  }
  switch (options.format) {
    case OutputFormat::kCsv: {
      std::string out = MemoryCsv(reports);
      for (const MemoryPoolReport& p : pools) out += MemoryPoolsCsvRows(p);
      for (const UnifiedMemoryReport& u : unified) out += UnifiedMemoryCsvRows(u);
      return out;
    }
    case OutputFormat::kJson:
      return MemoryJson(reports, &unified, &timelines, &pools);
    case OutputFormat::kTable:
      break;
  }
  std::string out = MemoryTable(reports, options.terminal_width);
  // Memory pools, failed allocations and unified memory, per process, only where there are some.
  for (size_t i = 0; i < reports.size(); ++i) {
    std::string extra = MemoryPoolsTable(pools[i], options.terminal_width) +
                        FailedAllocationsTable(timelines[i], options.terminal_width) +
                        UnifiedMemoryTable(unified[i], options.terminal_width);
    if (extra.empty()) continue;
    if (reports.size() > 1) {
      out += "Process " + std::to_string(reports[i].pid) + " (" + reports[i].file + ")\n";
    }
    out += extra;
  }
  return out;
}

std::expected<std::string, std::string> RunStacks(const StacksCommandOptions& options,
                                                  std::vector<std::string>* warnings) {
  auto traces = Load(options, warnings);
  if (!traces) return std::unexpected(traces.error());
  auto report = AnalyzeStacks(*traces, options.api, options.call_sites);
  if (!report) return std::unexpected(report.error());
  switch (options.format) {
    case OutputFormat::kCsv:
      return StacksCsv(*report);
    case OutputFormat::kJson:
      return StacksJson(*report);
    case OutputFormat::kTable:
      break;
  }
  return StacksTable(*report, options.terminal_width);
}

std::expected<std::string, std::string> RunExport(const ExportCommandOptions& options,
                                                  std::vector<std::string>* warnings) {
  if (options.output.empty())
    return std::unexpected("no output file given (-o FILE, or - for stdout)");
  if (options.export_format == ExportFormat::kSqlite) return RunSqliteExport(options, warnings);
  auto traces = Load(options, warnings);
  if (!traces) return std::unexpected(traces.error());
  ExportOptions export_options{.raw = options.raw, .findings = options.thresholds};
  export_options.findings.call_sites = options.call_sites;
  if (options.output == "-") {
    if (options.standard_output == nullptr) return std::unexpected("no output stream for -o -");
    auto stats = ExportTimeline(*traces, export_options, options.standard_output);
    if (!stats) return std::unexpected(stats.error());
    return std::string();
  }
  // Created before the export starts, so that an unwritable path fails at once.
  auto file = OutputFile::Create(options.output);
  if (!file) return std::unexpected(file.error());
  auto stats = ExportTimeline(*traces, export_options, &(*file)->stream());
  if (!stats) return std::unexpected(options.output + ": " + stats.error());
  if (auto committed = (*file)->Commit(); !committed) return std::unexpected(committed.error());
  return "Wrote " + std::to_string(stats->events) + " events of " +
         std::to_string(stats->processes) + (stats->processes == 1 ? " process" : " processes") +
         " to " + options.output + " (open it in ui.perfetto.dev or chrome://tracing)\n";
}

std::expected<std::string, std::string> RunReport(const ReportCommandOptions& options,
                                                  std::vector<std::string>* warnings) {
  if (options.output.empty()) return std::unexpected("no output file given (-o FILE)");
  if (options.output == "-") return std::unexpected("the report is a file: give -o FILE.html");
  // Created before the traces are read, so that an unwritable path fails at once; removed
  // (never renamed into place) when reading or writing fails.
  auto file = OutputFile::Create(options.output);
  if (!file) return std::unexpected(file.error());
  const HtmlReportOptions report_options{.raw = options.raw, .findings = options.thresholds};
  // One file at a time: in windows where they give the exact page (bounded memory,
  // html_process_report.h), else loaded whole (filters, several processes in a file).
  std::vector<HtmlProcessPart> parts;
  // A page of several processes from one file loads that file whole.
  auto files = ExpandTraceInputs(options.files);  // its errors: ForEachFileInWindows's
  const bool overview = files && files->size() > 1;
  auto windowed = [&](const std::string& path,
                      FilterMatches*) -> std::expected<bool, std::string> {
    if (options.filters.active()) return false;
    auto part = RenderProcessInWindows(path, parts.size(), report_options, overview);
    if (!part) return std::unexpected(part.error());
    if (!*part) return false;
    warnings->insert(warnings->end(), (*part)->warnings.begin(), (*part)->warnings.end());
    parts.push_back(std::move(**part));
    return true;
  };
  auto whole = [&](const ProcessTrace& t) {
    parts.push_back(RenderProcess(t, parts.size(), report_options));
  };
  auto read = ForEachFileInWindows(options.files, options.filters, warnings, windowed, whole);
  if (!read) return std::unexpected(read.error());
  auto stats = WriteHtmlReport(parts, &(*file)->stream());
  if (!stats) return std::unexpected(options.output + ": " + stats.error());
  if (auto committed = (*file)->Commit(); !committed) return std::unexpected(committed.error());
  return "Wrote the report of " + std::to_string(stats->processes) +
         (stats->processes == 1 ? " process" : " processes") + " (" +
         std::to_string(stats->findings) + (stats->findings == 1 ? " finding" : " findings") +
         ") to " + options.output + " (open it in a browser; it needs no network)\n";
}

std::expected<std::string, std::string> RunMerge(const MergeCommandOptions& options,
                                                 std::vector<std::string>* warnings) {
  auto inputs = ExpandTraceInputs(options.inputs);
  if (!inputs) return std::unexpected(inputs.error());
  auto report = MergeTraceFiles(*inputs, options.output, options.merge);
  if (!report) return std::unexpected(report.error());
  warnings->insert(warnings->end(), report->warnings.begin(), report->warnings.end());
  std::vector<std::vector<std::string>> rows;
  for (size_t i = 0; i < report->processes.size(); ++i) {
    const MergedProcess& p = report->processes[i];
    std::string command;
    for (const std::string& arg : p.header.command_line) {
      command += (command.empty() ? "" : " ") + arg;
    }
    rows.push_back({std::to_string(i), std::to_string(p.header.pid),
                    p.header.rank ? std::to_string(*p.header.rank) : "",
                    std::to_string(p.header.parent_pid), p.header.hostname,
                    std::to_string(p.chunks), p.source, command});
  }
  const std::vector<TableColumn> columns = {{"#", Align::kRight},
                                            {"PID", Align::kRight},
                                            {"Rank", Align::kRight},
                                            {"Parent", Align::kRight},
                                            {"Host", Align::kLeft, true, 8},
                                            {"Chunks", Align::kRight},
                                            {"From", Align::kLeft, true, 16},
                                            {"Command line", Align::kLeft, true, 16}};
  const size_t n = report->processes.size();
  return "Merged " + std::to_string(n) + (n == 1 ? " process" : " processes") + " from " +
         std::to_string(report->input_files) + (report->input_files == 1 ? " file" : " files") +
         " into " + options.output + " (" + std::to_string(report->chunks) +
         (report->chunks == 1 ? " chunk, " : " chunks, ") + FormatBytes(report->bytes_written) +
         ")\n" + RenderTable(columns, rows, options.terminal_width);
}

}  // namespace libprof::analysis
