// Partial summaries: what `profview summary --partial` writes for some of a job's traces and
// `profview combine` merges, so that the map step (one worker per group of files) and the
// reduce step of a many-rank analysis give what `summary` over all the files prints.
//
// Layer: analysis/metrics/. Serialises summary.h's structs; no analysis of its own.
//
// A partial holds each process's Summary as exact integers (Stats' sums and log-bucketed
// histogram), the pieces of the unions its total needs on each possible timebase
// (summary_combiner.h's CombinedState), the options and filters it was made with, the pids and
// --tid threads its files had, and its warnings. Combining partials gives a partial again
// (`combine --partial`), so a reduce can be a tree; the unions of many ranks overlap, so a
// combination is smaller than its inputs.
// Format: one JSON object, {"format": "libprof-summary-partial", "version": 4, ...}, the union
// pieces as base64 varints; a reader refuses any other format or version rather than guess
// (version 1 kept each process's unions, version 2 wrote the pieces as JSON numbers, version 3
// had no --findings).
#pragma once

#include <cstdint>
#include <expected>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "proto/trace_model.h"
#include "analysis/metrics/summary.h"
#include "analysis/metrics/summary_combiner.h"
#include "analysis/model/filters.h"

namespace libprof::analysis {

inline constexpr std::string_view kSummaryPartialFormat = "libprof-summary-partial";
// 6: a process's top finding says its one-time work (top_one_time).
// 7: a process's GPUs (gpus: the UUIDs of the devices it ran work on) and its recording's span.
inline constexpr uint32_t kSummaryPartialVersion = 7;

struct SummaryPartial {
  SummaryOptions options;
  FilterOptions filters;
  std::vector<std::string> files;  // the trace files it covers, in the order read
  CombinedState state;             // the summarised processes and their unions
  std::vector<uint32_t> pids_seen;     // every process of the files, for --pid's check
  std::vector<uint32_t> threads_seen;  // --tid threads active in the time window
  struct Warning {
    std::string file;
    std::string text;
  };
  std::vector<Warning> warnings;
};

std::string SummaryPartialJson(const SummaryPartial& partial);

// Parses what SummaryPartialJson wrote. Errors name `name` (the partial's file): not JSON,
// another format or version, a missing or mistyped field, numbers that cannot come from a
// summary.
std::expected<SummaryPartial, std::string> ParseSummaryPartial(std::string_view text,
                                                               const std::string& name);

// Combines partial summaries one at a time, so that a reader can free each after Add.
class PartialsCombiner {
 public:
  // Errors: options or filters other than the first partial's; a trace file already in an
  // earlier partial. `name` names the partial in them.
  std::expected<void, std::string> Add(SummaryPartial partial, const std::string& name);
  bool empty() const { return !any_; }
  // `combine --partial`: everything added, as one partial.
  SummaryPartial TakePartial();
  // The report that `summary` prints over all their files (processes in trace path order), or
  // the filters' errors; the traces' warnings are appended to *warnings, by file.
  std::expected<SummaryReport, std::string> Finish(std::vector<std::string>* warnings);

 private:
  bool any_ = false;
  SummaryPartial meta_;  // options, filters, files, pids, threads and warnings; no state
  std::string first_name_;
  std::unordered_map<std::string, std::string> source_of_;  // trace file -> its partial's name
  SummaryCombiner combiner_;
};

}  // namespace libprof::analysis
