// Partial summaries: what `profview summary --partial` writes for some of a job's traces and
// `profview combine` merges, so that the map step (one worker per group of files) and the
// reduce step of a many-rank analysis give what `summary` over all the files prints.
//
// Layer: analysis/metrics/. Serialises summary.h's structs; no analysis of its own.
//
// A partial holds each process's Summary as exact integers (Stats' sums, its log-bucketed
// histogram, the pieces of its host and device unions and its windows, unshifted) plus what
// the total needs from its header (hostname, timebase, wall-clock offset), the options and
// filters it was made with, the pids and --tid threads its files had, and its warnings.
// Format: one JSON object, {"format": "libprof-summary-partial", "version": 1, ...}; a reader
// refuses any other format or version rather than guess.
#pragma once

#include <cstdint>
#include <expected>
#include <string>
#include <string_view>
#include <vector>

#include "proto/trace_model.h"
#include "analysis/metrics/summary.h"
#include "analysis/model/filters.h"

namespace libprof::analysis {

inline constexpr std::string_view kSummaryPartialFormat = "libprof-summary-partial";
inline constexpr uint32_t kSummaryPartialVersion = 1;

struct SummaryPartial {
  SummaryOptions options;
  FilterOptions filters;
  std::vector<std::string> files;  // the trace files it covers, in the order read
  // One per summarised process, in file order; interval lists kept (unshifted).
  std::vector<Summary> parts;
  // Of `parts`: only hostname, timebase and wall_clock_offset_ns are kept (for TimeOffsets).
  std::vector<TraceHeader> headers;
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

}  // namespace libprof::analysis
