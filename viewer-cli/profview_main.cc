// profview: the command line over profview_analysis. Only parses flags, calls the library and
// prints; every error becomes one line on stderr and a non-zero exit (1 bad input, 2 bad usage).
#include <CLI/CLI.hpp>
#include <exception>
#include <iostream>
#include <string>
#include <vector>

#include "proto/capture_kinds.h"
#include "analysis/commands.h"
#include "analysis/rules/rule_registry.h"
#include "analysis/reports/output_file.h"
#include "analysis/reports/table_renderer.h"
#include "analysis/model/ordered_pipeline.h"
#include "analysis/model/units.h"

namespace {

using libprof::analysis::CheckCommandOptions;
using libprof::analysis::CollectivesCommandOptions;
using libprof::analysis::CombineCommandOptions;
using libprof::analysis::CommandOptions;
using libprof::analysis::DiffCommandOptions;
using libprof::analysis::ExportCommandOptions;
using libprof::analysis::FindingsCommandOptions;
using libprof::analysis::MergeCommandOptions;
using libprof::analysis::OutputFormat;
using libprof::analysis::ReportCommandOptions;
using libprof::analysis::StacksCommandOptions;
using libprof::analysis::SummaryCommandOptions;

constexpr int kBadInput = 1;
constexpr int kBadUsage = 2;
constexpr int kCheckFailed = 1;  // profview check: an assertion does not hold

// Flags shared by every subcommand, bound to `options`; --from/--to arrive as text.
struct CommonFlags {
  std::string format = "table";
  std::string from, to;
  bool wide = false;
  std::vector<std::string> framework_paths;
  bool framework_paths_given = false;
};

void AddCommon(CLI::App* sub, CommandOptions* options, CommonFlags* flags) {
  sub->add_option("traces", options->files, "libprof trace files (one per process)")
      ->required()
      ->type_name("TRACE");
  sub->add_option("--format", flags->format, "output format: table (default), csv or json")
      ->check(CLI::IsMember({"table", "csv", "json"}));
  sub->add_option("--nvtx", options->filters.nvtx,
                  "only activity inside NVTX ranges with this name (\"name\" or \"domain:name\"): "
                  "API calls started inside the range on its thread and the device work they "
                  "issued; percentages are then of the ranges' total time")
      ->allow_extra_args(false)
      ->type_name("NAME");
  sub->add_option("--pid", options->filters.pids, "only these processes")
      ->delimiter(',')
      ->allow_extra_args(false);
  sub->add_option("--tid", options->filters.tids,
                  "only these host threads and the device work they issued")
      ->delimiter(',')
      ->allow_extra_args(false);
  sub->add_option("--from", flags->from,
                  "start of the time window, from the recording start (e.g. 1.5s, 200ms, 20us, "
                  "1500 = ns); records starting before it are left out")
      ->type_name("TIME");
  sub->add_option("--to", flags->to, "end of the time window, from the recording start")
      ->type_name("TIME");
  sub->add_flag("--wide", flags->wide,
                "tables as wide as their content, with full kernel and API names (JSON and CSV "
                "always have them); by default tables fit the terminal ($COLUMNS) and abbreviate "
                "names: argument lists elided, namespaces kept");
  sub->add_option("--framework-path", flags->framework_paths,
                  "Python frames whose file path contains PART are framework code, passed over "
                  "when naming a call site (repeatable; replaces the default: /site-packages/, "
                  "/dist-packages/, /lib/python3, <frozen ; \"\" makes every frame the user's)")
      ->type_name("PART")
      ->allow_extra_args(false)
      ->each([flags](const std::string&) { flags->framework_paths_given = true; });
}

// Turns the text flags into options; false with a message on a bad value.
// `--partial` (described by `help`) and the `-o FILE` it writes to.
void AddPartialFlags(CLI::App* sub, bool* partial, std::string* output, const std::string& help) {
  sub->add_flag("--partial", *partial, help);
  sub->add_option("-o,--output", *output,
                  "with --partial: the file to write (- for stdout); replaced if it exists")
      ->type_name("FILE");
}

// `--rows N`: the rows each summary table shows.
void AddRowsFlag(CLI::App* sub, size_t* rows) {
  sub->add_option("--rows", *rows,
                  "rows per table, the most time first (default " +
                      std::to_string(libprof::analysis::kSummaryTableRows) +
                      "; 0: all); a line says what the others took. JSON and CSV list every row")
      ->type_name("N");
}

bool Finish(const CommonFlags& flags, CommandOptions* options, std::string* error) {
  options->format = flags.format == "csv"    ? OutputFormat::kCsv
                    : flags.format == "json" ? OutputFormat::kJson
                                             : OutputFormat::kTable;
  for (auto [text, target, flag] : {std::tuple{&flags.from, &options->filters.from_ns, "--from"},
                                    std::tuple{&flags.to, &options->filters.to_ns, "--to"}}) {
    if (text->empty()) continue;
    auto parsed = libprof::analysis::ParseDuration(*text);
    if (!parsed) {
      *error = std::string(flag) + ": " + parsed.error();
      return false;
    }
    *target = *parsed;
  }
  options->terminal_width =
      flags.wide ? libprof::analysis::kUnlimitedWidth : libprof::analysis::TerminalWidth();
  if (flags.framework_paths_given) options->call_sites.framework_paths = flags.framework_paths;
  return true;
}

constexpr const char* kSummaryHelp =
    "Summarise host API calls, device activity, memory copies and NVTX ranges per name, like "
    "CUDA.jl's CUDA.@profile. Several files (one per process) are summarised per process and in "
    "total.";

constexpr const char* kCombineHelp =
    "Combine partial summaries (profview summary --partial -o FILE, one per group of trace "
    "files) into the summary of all their files: the same tables, CSV or JSON as `profview "
    "summary` over those files in name order, byte for byte. Partial findings (profview findings "
    "--partial -o FILE) combine the same way into what `profview findings` prints. Options and "
    "filters come from the partials, which must all be of one kind and made with the same ones.";

constexpr const char* kSummaryDefinitions =
    "Definitions:\n"
    "  Time (%): a row's total time divided by the profiled wall time (the recording, or the "
    "window selected by --from/--to/--nvtx).\n"
    "  \"calling CUDA APIs took\": the union over all threads of the intervals of the API calls "
    "in the host table: wall time during which at least one thread was inside a CUDA call. "
    "Nested driver calls and overlapping threads are counted once; per-row totals are sums.\n"
    "  \"GPU was busy\": the union of all kernel, copy, memset and graph intervals on every "
    "device and stream (overlaps counted once).\n"
    "  Time distribution: mean ± standard deviation (min ‥ max) per call.\n"
    "  Hidden by default (--raw shows them): driver calls made inside runtime calls, internal "
    "launches, and noisy queries (cuGetProcAddress, cuKernelGetName, capture-info and error "
    "queries, attribute and version getters).\n"
    "  NVTX GPU time: device time of the work whose launching API call started inside the range "
    "on the range's thread.";

// Before and after the rules, which come from the registry (rule_registry.h).
constexpr const char* kFindingsHelpIntro =
    "Explain why host time was spent waiting, and on what. Rules (stable ids): ";
constexpr const char* kFindingsHelpOutro =
    " (see viewer-cli/USAGE.md). Start-up is reported once, first; then host time lost, GPU idle "
    "time (in the steady state, after start-up) and pattern savings each get their own headline "
    "and table. Findings with the same rule, API and blamed work are grouped and sorted by time "
    "lost; --all lists each one. Host findings paid once (start-up's work, and waits inside an "
    "autotuner, torch.compile's compilation or a CUDA library's set-up, told from their call "
    "stacks) are marked and "
    "listed last; the GPU rules leave out the idle gaps during that one-time work.";

// After the rules' list in the footer.
constexpr const char* kFindingsDefinitions =
    "Idle time (GPU rules) by cause, for the thread that issued the operation ending each idle "
    "gap: launch = from the start of the call that issued that operation until it started, or "
    "while the thread was in another call that issued device work; sync = while the thread was "
    "in a synchronising call (cudaDeviceSynchronize..., cudaMalloc/cudaFree..., a synchronous or "
    "pageable copy, a synchronous memset), or when that call issued the operation; host "
    "function = after that call returned, the operation waited in its stream behind a host "
    "function (cudaLaunchHostFunc, cudaStreamAddCallback; or an event recorded after one); memory "
    "wait = the same behind a wait on a memory value (cuStreamWaitValue32/64, cuStreamBatchMemOp); "
    "other GPU = the same behind cudaStreamWaitEvent on an event recorded on another GPU while "
    "its work there still ran; in "
    "graph = after a graph's launch call returned, between the nodes of that running graph (a "
    "host node), or before a node the device launched (each iteration of a conditional node's "
    "body); other = the rest (outside CUDA calls, in calls that issue no work, or no "
    "issuing call in the trace). "
    "Launch-bound: launch holds half the idle time and kernels average less than the calls that "
    "launched them.\n"
    "Stream order: a call follows earlier work on its stream; the legacy default stream and "
    "blocking streams (including per-thread default streams) follow each other's earlier work; "
    "non-blocking streams follow only their own; cudaStreamWaitEvent adds the event's stream. "
    "A call's waits and own cost never add up to more than its host time.";

constexpr const char* kStreamsHelp =
    "Per device and stream: kernels, copies by direction (HtoD, DtoH, DtoD, other), memsets "
    "and graph launches with their counts, the stream's busy time and share of the trace, and "
    "its kind (legacy-default, per-thread-default, blocking, non-blocking). Then per device the "
    "copy/compute overlap.";

constexpr const char* kStreamsDefinitions =
    "Definitions (half-open intervals [start, end) in ns, clipped to the analysed time):\n"
    "  Busy: the union of the stream's kernel, copy, memset and graph intervals; Busy (%) is "
    "of the trace time.\n"
    "  K: the union of the device's kernel intervals (\"kernels ran\").\n"
    "  Two or more kernels in flight: time where a sweep over kernel starts (+1) and ends (-1) "
    "counts at least 2.\n"
    "  Copy time C_d: the union of the device's copies of direction d (\"all copies\": every "
    "direction).\n"
    "  With kernels running: |C_d ∩ K|.\n"
    "  Queued: a kernel is queued from the start of the API call that launched it (joined by "
    "correlation id) to its own start.\n"
    "  Alone, kernel queued elsewhere (could have overlapped): |∪_c (c ∩ Q(c)) \\ K| over the "
    "copies c of direction d, Q(c) being the union of the queued intervals of the device's "
    "kernels on streams other than c's.\n"
    "  Percentages in the overlap table are of the row's copy time. Graph launches count in "
    "their stream's row but in no overlap figure.";

constexpr const char* kMemoryHelp =
    "From the allocation records: allocations and frees per API (cudaMalloc, cudaMallocAsync, "
    "cudaMallocHost, cudaMallocManaged, cudaFree..., driver calls by name) and memory kind with "
    "bytes and host time, device memory in use per device (peak, when, by which call), and "
    "allocation churn (the same size allocated and freed repeatedly); allocations that failed "
    "for want of memory, with the memory in use then; and, when recorded (LIBPROF_TRACE uvm), "
    "what unified memory did: migrations by direction, GPU page-fault groups per kernel, CPU "
    "page faults per allocation, thrashing, throttling and remote maps.";

constexpr const char* kMemoryDefinitions =
    "Definitions:\n"
    "  API: the outermost API call with the record's correlation id ((unknown) when absent).\n"
    "  Calls, Host time, Mean: the distinct API calls of the row and their summed and mean "
    "duration (cudaFree/cudaFreeHost waits for the device are included here).\n"
    "  Device memory in use: per device, in record time order, the running sum of device-kind "
    "allocations minus each free's matching live allocation (same address); a free with no "
    "live allocation is unmatched and subtracts nothing. Peak: its maximum; At: when first "
    "reached, from the trace start; By: the allocating call (correlation id, thread); In "
    "NVTX: the ranges open on that thread when it started (shown when there are some).\n"
    "  Implicit syncs: calls of an API that synchronises the device as a side effect "
    "(cudaMalloc, cudaFree, cudaMallocHost, ...) that found earlier device work running and "
    "waited for it, with the summed wait (from the call's start to the end of the last such "
    "work, capped at the call's end; work ending > 2 us after the call returned is not "
    "counted).\n"
    "  Churn pair: an allocation (any kind) later freed at the same address. Pairs are grouped "
    "by allocating API and size; groups with 2 or more pairs are listed, most pairs first (at "
    "most 10). Host time: both calls of every pair.\n"
    "  Failed allocations: outermost allocating calls (cudaMalloc*, cuMemAlloc*, cuMemCreate, "
    "...) that returned out of memory (error 2), with each device's memory in use at their start.\n"
    "  Unified memory: migrations per direction (host → device, device → host, device → "
    "device) with bytes, Time (union of their spans) and bandwidth; GPU page-fault groups "
    "attributed to the kernel running on the faulting device when the group started (the "
    "latest started if several; [between kernels] if none), with the migrations to that device "
    "during those launches and the allocation the first faulting address lies in (and its call "
    "site when stacks were recorded); CPU page faults by the allocation they hit, with the "
    "migrations to the host during them.\n"
    "  --timeline: per device, each interval between two changes of the memory in use (at most "
    "40 rows per device in the table, longer timelines coarsened to their maximum; CSV and JSON "
    "keep every step).\n"
    "  Records are not clipped by --from/--to beyond what the filters remove.";

constexpr const char* kStacksHelp =
    "The distinct call stacks one API was called from, with call counts and host time (total, "
    "mean, max), most expensive first; the call site (first frame outside CUDA's libraries) is "
    "marked with an arrow. Needs stacks recorded by libprof (LIBPROF_BACKTRACE=blocking, the "
    "default, covers copies, memsets, synchronisations, frees and allocations; all covers every "
    "call).";

constexpr const char* kExportHelp =
    "Write the traces as a timeline in the Chrome Trace Event Format (JSON), to open in "
    "ui.perfetto.dev (\"Open trace file\") or chrome://tracing: per process, host threads with "
    "their API calls and NVTX ranges, one track per GPU stream with kernels, copies and memsets, "
    "flow arrows from each API call to the work it launched, and findings (blocked calls, GPU "
    "idle gaps) marked in red. Events are written as they are produced; the file appears under "
    "its name only once complete. --from/--to/--nvtx/--pid/--tid select what is exported. "
    "--format sqlite writes the whole traces as a SQLite database instead, for SQL or "
    "pandas (import libprof): a table per record kind, names resolved, indexed on correlation "
    "ids.";

constexpr const char* kExportDefinitions =
    "Timeline:\n"
    "  Times are microseconds (three decimals: nanoseconds kept) from the earliest recording "
    "start of the given traces; traces of different hosts are aligned on wall-clock time.\n"
    "  Categories: cuda_runtime, cuda_driver (API calls), nvtx, kernel, memcpy, memset, graph, "
    "launch and wait (flow arrows), finding (calls with a finding, and their instants).\n"
    "  A call with findings carries args findings (the rules) and one explanation per rule, a "
    "blocked one also blocked_ns and waited_for; an instant per finding (\"cudaMemcpyAsync "
    "blocked 4.93 ms waiting for ...\") and a wait arrow from each blamed operation.\n"
    "  Slices that partly overlap on one thread or stream go to an extra \"(overlapping N)\" "
    "track.";

constexpr const char* kCollectivesHelp =
    "NCCL collectives, from NCCL's own NVTX ranges and their payloads (communicator, message "
    "size, reduction, root): per operation and communicator size, the calls, bytes, device time "
    "and the algorithm and bus bandwidths of nccl-tests. Given the traces of several ranks, "
    "each instance is matched across the ranks (communicator and sequence number), the ranks' "
    "clocks are aligned on the instants they leave a collective together, each rank's time is "
    "split into waiting for the last rank and transferring, and the late ranks are named.";

constexpr const char* kCollectivesDefinitions =
    "Definitions:\n"
    "  Time: of the device work launched inside the NCCL range (first start to last end); the "
    "range's host time when none was recorded.\n"
    "  Bytes: nccl-tests' size S: the message for AllReduce, Broadcast, Reduce, Send/Recv; the "
    "whole buffer (ranks x message) for AllGather, ReduceScatter, AlltoAll, Gather, Scatter.\n"
    "  algbw = S / time; busbw = algbw x 2(n-1)/n (AllReduce), (n-1)/n (AllGather, "
    "ReduceScatter, AlltoAll), 1 (the others): nccl-tests' PERFORMANCE.md.\n"
    "  Arrival: when a rank's device work of the instance started; wait = latest arrival - "
    "own arrival; transfer = own end - latest arrival (aligned clocks).\n"
    "  Offset: subtracted from the rank's times to put them on the reference rank's clock "
    "(median of end differences); residual: distance of aligned ends from each instance's mean "
    "end.";

constexpr const char* kReportHelp =
    "Write the traces as one self-contained HTML page to look at in any browser, offline (no "
    "network, no server, no script needed): the headline (trace span, host time in CUDA calls, "
    "GPU busy, dropped records), the top findings with their call sites, a timeline with one "
    "lane per host thread and per GPU stream and blocked calls marked with an arrow to the work "
    "they waited for, detail views around the top findings, GPU utilisation and device memory "
    "in use over time, copy bandwidth by kind and the summary tables; with several processes, "
    "an overview per rank. The file appears under its name only once complete. "
    "--from/--to/--nvtx/--pid/--tid select what is shown.";

constexpr const char* kReportDefinitions =
    "Report:\n"
    "  Names and numbers are those of profview summary, findings (grouped, as without --all) "
    "and memory; times count from the recording start.\n"
    "  Timeline lanes with more than 400 slices in view are drawn per pixel: bar height = share "
    "of the pixel's time the lane was busy, colour = the kind of work that took most of it; "
    "slices at least 3 pixels wide are still drawn one by one. The page's size so grows with "
    "lanes, not with records.\n"
    "  Copy bandwidth limits: device-to-device copies against half the device memory's "
    "theoretical bandwidth (trace header); host and peer links are not recorded, so no limit is "
    "drawn for them.";

constexpr const char* kMergeHelp =
    "Merge trace files (one per process, or already merged) into one multi-process trace file, "
    "which every subcommand reads like the separate files: all headers, then every chunk "
    "with its process index. Chunks are copied as they are (nothing is lost, memory stays "
    "bounded by one chunk). A directory stands for the *.pb files in it, by name; an input is "
    "never overwritten.";

constexpr const char* kDiffHelp =
    "Compare two runs: what got slower, and why. BASE and NEW are each a trace file or a "
    "directory of per-process traces (or give several with --base/--new); processes are paired "
    "by rank when every trace carries one, else by order. Compares the wall, CUDA API and GPU "
    "busy time, every API call, GPU operation (kernels, copies by kind and direction, memsets) "
    "and NVTX range by name (calls, total and mean time, bytes, bandwidth) and the findings, "
    "biggest changes first. When both runs repeat an NVTX range (a training step) the figures "
    "are per iteration, inside that range, so that a run with more steps is not slower.";

constexpr const char* kDiffDefinitions =
    "Definitions:\n"
    "  Iteration range: --nvtx NAME, else the top-level NVTX range (outermost on its thread) "
    "with the most instances in BASE that both runs repeat at least twice; --per-run compares "
    "whole runs. Per iteration: only activity inside the range counts, and totals are divided "
    "by the instances per process. Warm-up: in a one-process run, the leading iterations that "
    "each took over 3x the median are left out (unless over half would be; --keep-warm-up "
    "keeps them).\n"
    "  Noise: a change is significant when |new - base| > max(threshold x base, the spread of "
    "either run), and for a row's total or a finding's time lost at least --min-share of the "
    "base wall time (per iteration: of the time in the range). Spread of a row's total: the std of its calls x sqrt(calls per iteration, or "
    "per run); of a mean per call: the std of the calls; of the iteration: the interquartile "
    "range of its durations (the other overall figures: that range relative to the median). "
    "Verdict: slower/faster (significant), ~ (within noise), new/gone (in one run only).\n"
    "  Findings are matched by rule, API (or device), first blamed work, detail and call site; "
    "their change is in time lost.\n"
    "  Exit code: 0 when compared (whatever changed), 2 for unusable input.";

constexpr const char* kCheckHelp =
    "Assertions on one run, for CI: --max/--min METRIC=VALUE and --max-regression [METRIC=]PCT "
    "against --baseline, from flags or a TOML file (--config). Prints each assertion with its "
    "measured value; exit 0 when all hold, 1 when any fails, 2 for a usage or input error. "
    "--junit FILE writes JUnit XML (one test per assertion).";

constexpr const char* kCheckDefinitions =
    "Metrics:\n"
    "  a rule id (see profview findings --help): its findings, as a count (0, 3), time lost "
    "(2ms) or share of the wall time (1%).\n"
    "  wall, host-api, gpu-busy: the wall time, CUDA API time, GPU busy time (a duration; "
    "host-api and gpu-busy also a % of the wall time). iteration: the median iteration.\n"
    "  KIND:NAME[:STAT]: summary rows. KIND api, kernel, memcpy, memset, graph, nvtx; STAT calls, "
    "total (default), mean, min, max, std, bytes, bandwidth (GB/s), gpu (nvtx). Kernels match "
    "by full or function name (nrm2_kernel), copies/memsets by part of their name "
    "(memcpy:pageable); several matching rows count together.\n"
    "  /step after a value: per iteration of the NVTX range (--nvtx, else the most repeated "
    "top-level range), counting only activity inside it.\n"
    "  --max-regression [METRIC=]PCT: the change from --baseline, per iteration when both runs "
    "repeat the range (as profview diff); fails when the metric grew by more than PCT and beyond "
    "the runs' own spread. Default metric: iteration, else wall.\n"
    "Config (TOML): nvtx = \"step\", baseline = \"path\" (relative to the file), "
    "max-regression = \"5%\" or a [max-regression] table, [max] and [min] tables of "
    "METRIC = VALUE.";

}  // namespace

int main(int argc, char** argv) {
  libprof::analysis::LimitMallocArenas();  // findings analyse windows on several threads
  // Hidden, for collect.sh: the words LIBPROF_TRACE accepts, one a line (the list lives in
  // proto/capture_kinds.h, so that the launcher does not keep a copy).
  if (argc == 2 && std::string(argv[1]) == "--list-trace-kinds") {
    std::cout << libprof::CaptureKindWords("\n") << "\n";
    return 0;
  }
  CLI::App app{"profview: analyse libprof traces (CUDA API calls, GPU activity, NVTX ranges)",
               "profview"};
  app.require_subcommand(1);
  app.set_help_all_flag("--help-all", "help for every subcommand");

  SummaryCommandOptions summary;
  CommonFlags summary_flags;
  CLI::App* summary_cmd = app.add_subcommand("summary", kSummaryHelp);
  summary_cmd->footer(kSummaryDefinitions);
  AddCommon(summary_cmd, &summary, &summary_flags);
  summary_cmd->add_flag("--raw", summary.raw, "show nested, internal and noisy API calls too");
  AddRowsFlag(summary_cmd, &summary.table_rows);
  std::string summary_by = "api";
  summary_cmd
      ->add_option("--by", summary_by,
                   "host rows per API (default), or per API and call site (caller): the "
                   "first function outside CUDA's libraries and the CUDA library the call came "
                   "through, from the call stacks libprof recorded (LIBPROF_BACKTRACE)")
      ->check(CLI::IsMember({"api", "caller"}))
      ->type_name("api|caller");
  summary_cmd->add_flag("--findings", summary.findings,
                        "also find each process's findings (as profview findings with its "
                        "default thresholds: a second, slower read of the traces) and put its "
                        "host time lost and top finding in the per-process table");
  bool summary_partial = false;
  AddPartialFlags(summary_cmd, &summary_partial, &summary.partial_output,
                  "write a partial summary (-o FILE) for `profview combine` instead of the "
                  "tables: the map step of a many-rank analysis");

  CombineCommandOptions combine;
  std::string combine_format = "table";
  CLI::App* combine_cmd = app.add_subcommand("combine", kCombineHelp);
  combine_cmd->add_option("partials", combine.files,
                          "partial summaries (summary --partial) or findings (findings --partial)")
      ->required()
      ->type_name("PARTIAL");
  combine_cmd->add_option("--format", combine_format, "output format: table (default), csv or json")
      ->check(CLI::IsMember({"table", "csv", "json"}));
  AddRowsFlag(combine_cmd, &combine.table_rows);
  bool combine_partial = false;
  AddPartialFlags(combine_cmd, &combine_partial, &combine.partial_output,
                  "write the combination as one partial (-o FILE) instead of the tables: a "
                  "step of a tree of reduces");

  FindingsCommandOptions findings;
  CommonFlags findings_flags;
  std::string min_wait = "20us", gap = "500ms";
  double util_percent = 50, idle_percent = 50;
  CLI::App* findings_cmd = app.add_subcommand(
      "findings", kFindingsHelpIntro + libprof::analysis::RuleNames(", ") + kFindingsHelpOutro);
  findings_cmd->footer(libprof::analysis::RulesHelp() + kFindingsDefinitions);
  AddCommon(findings_cmd, &findings, &findings_flags);
  findings_cmd->add_flag("--all", findings.all, "one row per finding instead of grouped rows");
  bool findings_partial = false;
  AddPartialFlags(findings_cmd, &findings_partial, &findings.partial_output,
                  "write partial findings (-o FILE) for `profview combine` instead of the "
                  "tables: the map step of a many-rank analysis");
  findings_cmd
      ->add_option("--min-wait", min_wait,
                   "report waits and synchronous costs of at least this long (default "
                   "20us)")
      ->type_name("TIME");
  findings_cmd
      ->add_option("--gap-threshold", gap,
                   "gpu-idle-gaps: report GPU idle gaps of at least this long (default "
                   "500ms, as nsys's gpu_gaps)")
      ->type_name("TIME");
  findings_cmd->add_option("--util-chunks", findings.thresholds.util_chunks,
                           "gpu-low-utilization: number of equal chunks of each GPU's steady "
                           "state (default 30)");
  findings_cmd->add_option("--util-threshold", util_percent,
                           "gpu-low-utilization: report chunks busy less than this percentage "
                           "(default 50)");
  findings_cmd->add_option("--idle-share", idle_percent,
                           "gpu-idle-breakdown: report a GPU idle at least this percentage of "
                           "its steady state (default 50)");
  findings_cmd->add_option("--churn-min-pairs", findings.thresholds.churn_min_pairs,
                           "alloc-churn: report allocation/free pairs of one size repeated at "
                           "least this often (default 5)");
  findings_cmd
      ->add_option("--sync-memcpy-min-h2d", findings.thresholds.sync_memcpy_min_h2d_bytes,
                   "sync-memcpy: host-to-device copies up to this many bytes are not "
                   "reported (default 65536)")
      ->type_name("BYTES");

  CommandOptions trace;
  CommonFlags trace_flags;
  CLI::App* trace_cmd = app.add_subcommand(
      "trace",
      "List API calls, device operations and NVTX ranges in time order, like CUDA.@profile "
      "trace=true: ID (correlation id), start (from the recording start), duration, thread or "
      "GPU, name and details. Host rows are indented by their enclosing NVTX ranges.");
  AddCommon(trace_cmd, &trace, &trace_flags);
  trace_cmd->add_flag("--raw", trace.raw, "show nested, internal and noisy API calls too");

  CommandOptions streams;
  CommonFlags streams_flags;
  CLI::App* streams_cmd = app.add_subcommand("streams", kStreamsHelp);
  streams_cmd->footer(kStreamsDefinitions);
  AddCommon(streams_cmd, &streams, &streams_flags);

  libprof::analysis::MemoryCommandOptions memory;
  CommonFlags memory_flags;
  CLI::App* memory_cmd = app.add_subcommand("memory", kMemoryHelp);
  memory_cmd->footer(kMemoryDefinitions);
  AddCommon(memory_cmd, &memory, &memory_flags);
  memory_cmd->add_flag("--timeline", memory.timeline,
                       "device memory in use over time per device (intervals), and the "
                       "allocations that failed, instead of the usual tables");

  StacksCommandOptions stacks;
  CommonFlags stacks_flags;
  CLI::App* stacks_cmd = app.add_subcommand("stacks", kStacksHelp);
  AddCommon(stacks_cmd, &stacks, &stacks_flags);
  stacks_cmd->add_option("--api", stacks.api, "the API whose call stacks to list, e.g. "
                                              "cudaMemcpyAsync")
      ->required()
      ->type_name("NAME");

  ExportCommandOptions export_options;
  CommonFlags export_flags;
  std::string export_min_wait = "20us";
  CLI::App* export_cmd = app.add_subcommand("export", kExportHelp);
  export_cmd->footer(kExportDefinitions);
  AddCommon(export_cmd, &export_options, &export_flags);
  export_cmd->remove_option(export_cmd->get_option("--format"));  // not table/csv/json
  std::string export_format = "json";
  export_cmd
      ->add_option("--format", export_format,
                   "json (default): the Chrome Trace Event timeline; sqlite: the whole traces "
                   "as a SQLite database, a table per record kind (columns and example queries "
                   "in viewer-cli/USAGE.md)")
      ->check(CLI::IsMember({"json", "sqlite"}));
  export_cmd
      ->add_option("-o,--output", export_options.output,
                   "the file to write (- for stdout, JSON only); a JSON timeline replaces an "
                   "existing file, a database only with --force")
      ->required()
      ->type_name("FILE");
  export_cmd->add_flag("-f,--force", export_options.overwrite,
                       "sqlite: replace an existing output file (never an input)");
  export_cmd->add_flag("--raw", export_options.raw,
                       "show nested, internal and noisy API calls too");
  export_cmd
      ->add_option("--min-wait", export_min_wait,
                   "mark waits and synchronous costs of at least this long (default 20us, as "
                   "findings)")
      ->type_name("TIME");

  CollectivesCommandOptions collectives;
  CommonFlags collectives_flags;
  std::string min_late = "20us";
  CLI::App* collectives_cmd = app.add_subcommand("collectives", kCollectivesHelp);
  collectives_cmd->footer(kCollectivesDefinitions);
  AddCommon(collectives_cmd, &collectives, &collectives_flags);
  collectives_cmd
      ->add_option("--min-wait", min_late,
                   "a rank that arrived last by less than this is not counted late (default "
                   "20us, as findings)")
      ->type_name("TIME");
  collectives_cmd->add_option("--top", collectives.top,
                              "late instances listed, longest wait first (default 10)");

  ReportCommandOptions report;
  CommonFlags report_flags;
  std::string report_min_wait = "20us", report_gap = "500ms";
  CLI::App* report_cmd = app.add_subcommand("report", kReportHelp);
  report_cmd->footer(kReportDefinitions);
  AddCommon(report_cmd, &report, &report_flags);
  report_cmd->remove_option(report_cmd->get_option("--format"));  // always HTML
  report_cmd->remove_option(report_cmd->get_option("--wide"));    // a page shows whole names
  report_cmd
      ->add_option("-o,--output", report.output,
                   "the HTML file to write; replaced if it exists")
      ->required()
      ->type_name("FILE");
  report_cmd->add_flag("--raw", report.raw, "show nested, internal and noisy API calls too");
  report_cmd
      ->add_option("--min-wait", report_min_wait,
                   "findings: report waits and synchronous costs of at least this long (default "
                   "20us, as findings)")
      ->type_name("TIME");
  report_cmd
      ->add_option("--gap-threshold", report_gap,
                   "findings: GPU idle gaps of at least this long (default 500ms, as findings)")
      ->type_name("TIME");

  MergeCommandOptions merge;
  CLI::App* merge_cmd = app.add_subcommand("merge", kMergeHelp);
  merge_cmd->add_option("-o,--output", merge.output, "the merged trace file to write")
      ->required()
      ->type_name("FILE");
  merge_cmd->add_option("traces", merge.inputs, "trace files and directories")
      ->required()
      ->type_name("TRACE|DIR");
  merge_cmd->add_flag("-f,--force", merge.merge.overwrite,
                      "replace the output file if it exists (never an input)");
  merge_cmd->add_flag("--allow-truncated", merge.merge.allow_truncated,
                      "merge the complete chunks of a file cut short (a crashed process) "
                      "instead of refusing it");

  // Ctrl-C during an export leaves no temporary file behind.
  libprof::analysis::RemoveOutputTemporariesOnSignal();

  DiffCommandOptions diff;
  std::string diff_format = "table";
  std::string diff_threshold = "5%";
  std::string diff_min_share = "0.1%";
  std::string diff_min_wait = "20us";
  bool diff_no_findings = false;
  bool diff_wide = false;
  std::vector<std::string> diff_runs;
  CLI::App* diff_cmd = app.add_subcommand("diff", kDiffHelp);
  diff_cmd->footer(kDiffDefinitions);
  diff_cmd->add_option("runs", diff_runs, "BASE NEW: a trace file or directory for each run")
      ->expected(0, 2)
      ->type_name("BASE NEW");
  diff_cmd->add_option("--base", diff.base, "a trace file or directory of the base run (repeat)")
      ->type_name("TRACE");
  diff_cmd->add_option("--new", diff.next, "a trace file or directory of the new run (repeat)")
      ->type_name("TRACE");
  diff_cmd->add_option("--format", diff_format, "output format: table (default), csv or json")
      ->check(CLI::IsMember({"table", "csv", "json"}));
  diff_cmd
      ->add_option("--nvtx", diff.nvtx,
                   "the NVTX range that is one iteration (\"name\" or \"domain:name\"); default: "
                   "the most repeated top-level range both runs have")
      ->type_name("NAME");
  diff_cmd->add_flag("--wide", diff_wide,
                     "tables as wide as their content, with full kernel and API names");
  diff_cmd->add_flag("--per-run", diff.per_run,
                     "compare whole runs even when they repeat an NVTX range");
  diff_cmd->add_flag("--keep-warm-up", diff.keep_warm_up,
                     "per iteration: keep the first iterations that took over 3x the median "
                     "(left out by default as warm-up)");
  diff_cmd
      ->add_option("--threshold", diff_threshold,
                   "changes below this share of the base figure are noise (default 5%)")
      ->type_name("PERCENT");
  diff_cmd
      ->add_option("--min-share", diff_min_share,
                   "changes of a row's total below this share of the base wall time (per "
                   "iteration: time in the range) are noise (default 0.1%)")
      ->type_name("PERCENT");
  diff_cmd->add_flag("--no-findings", diff_no_findings,
                     "do not compare findings (they read each trace twice more, in windows; the rest streams)");
  diff_cmd
      ->add_option("--min-wait", diff_min_wait,
                   "findings: waits and synchronous costs of at least this long (default 20us)")
      ->type_name("TIME");

  CheckCommandOptions check;
  std::string check_min_wait = "20us";
  CLI::App* check_cmd = app.add_subcommand("check", kCheckHelp);
  check_cmd->footer(kCheckDefinitions);
  check_cmd->add_option("traces", check.files, "the run: trace files or directories")
      ->required()
      ->type_name("TRACE");
  check_cmd->add_option("--max", check.max, "METRIC=VALUE that must not be exceeded (repeat)")
      ->allow_extra_args(false)
      ->type_name("METRIC=VALUE");
  check_cmd->add_option("--min", check.min, "METRIC=VALUE that must be reached (repeat)")
      ->allow_extra_args(false)
      ->type_name("METRIC=VALUE");
  check_cmd
      ->add_option("--max-regression", check.max_regression,
                   "[METRIC=]PCT: largest growth allowed from the baseline (repeat)")
      ->allow_extra_args(false)
      ->type_name("[METRIC=]PCT");
  check_cmd->add_option("--baseline", check.baseline,
                        "trace file or directory of the run to compare with (repeat)")
      ->allow_extra_args(false)
      ->type_name("TRACE");
  check_cmd->add_option("--config", check.config, "a TOML file of assertions")
      ->type_name("FILE");
  check_cmd
      ->add_option("--nvtx", check.nvtx,
                   "the NVTX range that is one iteration, for /step and regressions")
      ->type_name("NAME");
  check_cmd->add_flag("--keep-warm-up", check.keep_warm_up,
                      "per step and in regressions: keep the first iterations that took over 3x "
                      "the median (left out by default as warm-up, as diff does)");
  check_cmd->add_flag("--keep-one-time", check.keep_one_time,
                      "rules: also count findings in one-time work (autotuning, torch.compile; "
                      "left out by default: paid once, not the program's code)");
  check_cmd->add_option("--junit", check.junit, "also write JUnit XML to FILE")
      ->type_name("FILE");
  check_cmd
      ->add_option("--min-wait", check_min_wait,
                   "findings: waits and synchronous costs of at least this long (default 20us)")
      ->type_name("TIME");

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);  // --help
    std::cerr << "profview: " << e.what() << " (see profview --help)\n";
    return kBadUsage;
  }

  try {
    std::vector<std::string> warnings;
    std::expected<std::string, std::string> result;
    std::string error;
    if (check_cmd->parsed()) {
      auto min_wait_ns = libprof::analysis::ParseDuration(check_min_wait);
      if (!min_wait_ns) {
        std::cerr << "profview: --min-wait: " << min_wait_ns.error() << "\n";
        return kBadUsage;
      }
      check.thresholds.min_wait_ns = *min_wait_ns;
      check.terminal_width = libprof::analysis::TerminalWidth();
      auto checked = libprof::analysis::RunCheck(check, &warnings);
      for (const std::string& w : warnings) std::cerr << "profview: warning: " << w << "\n";
      if (!checked) {
        std::cerr << "profview: " << checked.error() << "\n";
        return kBadUsage;
      }
      std::cout << checked->text;
      std::cout.flush();
      if (!std::cout) return kBadUsage;
      return checked->passed ? 0 : kCheckFailed;
    }
    if (diff_cmd->parsed()) {
      // Errors of diff (and check) exit 2, as a CI step expects: 1 is kept for "it got worse".
      if (!diff_runs.empty()) {
        if (diff_runs.size() != 2 || !diff.base.empty() || !diff.next.empty()) {
          std::cerr << "profview: diff takes BASE NEW, or --base and --new (see profview diff "
                       "--help)\n";
          return kBadUsage;
        }
        diff.base = {diff_runs[0]};
        diff.next = {diff_runs[1]};
      }
      if (diff.base.empty() || diff.next.empty()) {
        std::cerr << "profview: diff needs a base and a new run (BASE NEW, or --base and --new)\n";
        return kBadUsage;
      }
      auto threshold = libprof::analysis::ParsePercent(diff_threshold);
      if (!threshold) {
        std::cerr << "profview: --threshold: " << threshold.error() << "\n";
        return kBadUsage;
      }
      auto min_wait_ns = libprof::analysis::ParseDuration(diff_min_wait);
      if (!min_wait_ns) {
        std::cerr << "profview: --min-wait: " << min_wait_ns.error() << "\n";
        return kBadUsage;
      }
      auto min_share = libprof::analysis::ParsePercent(diff_min_share);
      if (!min_share) {
        std::cerr << "profview: --min-share: " << min_share.error() << "\n";
        return kBadUsage;
      }
      diff.threshold = *threshold;
      diff.min_share = *min_share;
      diff.thresholds.min_wait_ns = *min_wait_ns;
      diff.findings = !diff_no_findings;
      diff.format = diff_format == "csv"    ? OutputFormat::kCsv
                    : diff_format == "json" ? OutputFormat::kJson
                                            : OutputFormat::kTable;
      diff.terminal_width = diff_wide ? libprof::analysis::kUnlimitedWidth
                                      : libprof::analysis::TerminalWidth();
      auto diffed = libprof::analysis::RunDiff(diff, &warnings);
      for (const std::string& w : warnings) std::cerr << "profview: warning: " << w << "\n";
      if (!diffed) {
        std::cerr << "profview: " << diffed.error() << "\n";
        return kBadUsage;
      }
      std::cout << *diffed;
      std::cout.flush();
      return std::cout ? 0 : kBadUsage;
    }
    if (summary_cmd->parsed()) {
      if (!Finish(summary_flags, &summary, &error)) {
        std::cerr << "profview: " << error << "\n";
        return kBadUsage;
      }
      summary.by_caller = summary_by == "caller";
      if (summary_partial != !summary.partial_output.empty()) {
        std::cerr << "profview: --partial and -o go together (summary --partial -o FILE)\n";
        return kBadUsage;
      }
      result = libprof::analysis::RunSummary(summary, &warnings);
    } else if (combine_cmd->parsed()) {
      CommonFlags flags;
      flags.format = combine_format;
      Finish(flags, &combine, &error);  // no time flags: cannot fail
      if (combine_partial != !combine.partial_output.empty()) {
        std::cerr << "profview: --partial and -o go together (combine --partial -o FILE)\n";
        return kBadUsage;
      }
      result = libprof::analysis::RunCombine(combine, &warnings);
    } else if (findings_cmd->parsed()) {
      if (!Finish(findings_flags, &findings, &error)) {
        std::cerr << "profview: " << error << "\n";
        return kBadUsage;
      }
      for (auto [text, target, flag] :
           {std::tuple{&min_wait, &findings.thresholds.min_wait_ns, "--min-wait"},
            std::tuple{&gap, &findings.thresholds.gap_threshold_ns, "--gap-threshold"}}) {
        auto parsed = libprof::analysis::ParseDuration(*text);
        if (!parsed) {
          std::cerr << "profview: " << flag << ": " << parsed.error() << "\n";
          return kBadUsage;
        }
        *target = *parsed;
      }
      findings.thresholds.util_threshold = util_percent / 100.0;
      findings.thresholds.idle_share = idle_percent / 100.0;
      if (findings_partial != !findings.partial_output.empty()) {
        std::cerr << "profview: --partial and -o go together (findings --partial -o FILE)\n";
        return kBadUsage;
      }
      if (findings_partial && findings.all) {
        std::cerr << "profview: --partial keeps grouped findings; --all lists every one: use one "
                     "or the other\n";
        return kBadUsage;
      }
      result = libprof::analysis::RunFindings(findings, &warnings);
    } else if (streams_cmd->parsed()) {
      if (!Finish(streams_flags, &streams, &error)) {
        std::cerr << "profview: " << error << "\n";
        return kBadUsage;
      }
      result = libprof::analysis::RunStreams(streams, &warnings);
    } else if (memory_cmd->parsed()) {
      if (!Finish(memory_flags, &memory, &error)) {
        std::cerr << "profview: " << error << "\n";
        return kBadUsage;
      }
      result = libprof::analysis::RunMemory(memory, &warnings);
    } else if (stacks_cmd->parsed()) {
      if (!Finish(stacks_flags, &stacks, &error)) {
        std::cerr << "profview: " << error << "\n";
        return kBadUsage;
      }
      result = libprof::analysis::RunStacks(stacks, &warnings);
    } else if (export_cmd->parsed()) {
      if (!Finish(export_flags, &export_options, &error)) {
        std::cerr << "profview: " << error << "\n";
        return kBadUsage;
      }
      auto min_wait_ns = libprof::analysis::ParseDuration(export_min_wait);
      if (!min_wait_ns) {
        std::cerr << "profview: --min-wait: " << min_wait_ns.error() << "\n";
        return kBadUsage;
      }
      export_options.thresholds.min_wait_ns = *min_wait_ns;
      if (export_format == "sqlite") {
        // Selecting is SQL's job there: the timeline's flags are refused, not ignored.
        if (export_options.filters.active() || export_options.raw ||
            export_cmd->get_option("--min-wait")->count() > 0) {
          std::cerr << "profview: --format sqlite exports whole traces: --pid, --tid, --from, "
                       "--to, --nvtx, --raw and --min-wait apply to the JSON timeline only "
                       "(select in SQL instead)\n";
          return kBadUsage;
        }
        if (export_options.output == "-") {
          std::cerr << "profview: --format sqlite writes a file: give its name with -o FILE\n";
          return kBadUsage;
        }
        export_options.export_format = libprof::analysis::ExportFormat::kSqlite;
      }
      export_options.standard_output = &std::cout;
      result = libprof::analysis::RunExport(export_options, &warnings);
    } else if (collectives_cmd->parsed()) {
      if (!Finish(collectives_flags, &collectives, &error)) {
        std::cerr << "profview: " << error << "\n";
        return kBadUsage;
      }
      auto min_late_ns = libprof::analysis::ParseDuration(min_late);
      if (!min_late_ns) {
        std::cerr << "profview: --min-wait: " << min_late_ns.error() << "\n";
        return kBadUsage;
      }
      collectives.min_late_ns = *min_late_ns;
      result = libprof::analysis::RunCollectives(collectives, &warnings);
    } else if (report_cmd->parsed()) {
      if (!Finish(report_flags, &report, &error)) {
        std::cerr << "profview: " << error << "\n";
        return kBadUsage;
      }
      for (auto [text, target, flag] :
           {std::tuple{&report_min_wait, &report.thresholds.min_wait_ns, "--min-wait"},
            std::tuple{&report_gap, &report.thresholds.gap_threshold_ns, "--gap-threshold"}}) {
        auto parsed = libprof::analysis::ParseDuration(*text);
        if (!parsed) {
          std::cerr << "profview: " << flag << ": " << parsed.error() << "\n";
          return kBadUsage;
        }
        *target = *parsed;
      }
      result = libprof::analysis::RunReport(report, &warnings);
    } else if (merge_cmd->parsed()) {
      merge.terminal_width = libprof::analysis::TerminalWidth();
      result = libprof::analysis::RunMerge(merge, &warnings);
    } else {
      if (!Finish(trace_flags, &trace, &error)) {
        std::cerr << "profview: " << error << "\n";
        return kBadUsage;
      }
      result = libprof::analysis::RunTrace(trace, &warnings);
    }
    for (const std::string& w : warnings) std::cerr << "profview: warning: " << w << "\n";
    if (!result) {
      std::cerr << "profview: " << result.error() << "\n";
      return kBadInput;
    }
    std::cout << *result;
    std::cout.flush();
    return std::cout ? 0 : kBadInput;
  } catch (const std::exception& e) {
    std::cerr << "profview: internal error: " << e.what() << "\n";
    return kBadInput;
  }
}
