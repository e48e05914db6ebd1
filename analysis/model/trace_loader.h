// Loads libprof trace files into memory, one ProcessTrace per recorded process, for analysis.
//
// Layer: analysis/model/. Reads through proto/trace_reader.h (libprotobuf); knows
// nothing of CUDA. A file cut short is loaded up to its last complete chunk with a warning; a
// missing, foreign or corrupt file is an error, returned, never thrown.
#pragma once

#include <cstdint>
#include <expected>
#include <optional>
#include <string>
#include <vector>

#include "proto/trace_model.h"
#include "analysis/model/intervals.h"

namespace libprof::analysis {

struct ProcessTrace {
  std::string path;  // the file it came from
  TraceHeader header;
  TraceRecords records;              // every chunk of this process, in file order
  std::vector<std::string> strings;  // id -> string
  bool truncated = false;
  uint64_t chunks = 0;
  // The time being analysed: the whole recording by default (see SetDefaultWindow), narrowed by
  // --from/--to, or the union of the --nvtx ranges. Percentages are of its total length.
  std::vector<Interval> windows;
  // The recording's start (the first window's start before any filter): times that profview
  // prints relative to the trace (findings' host_start_ns, trace listing) count from here.
  uint64_t origin_ns = 0;

  const std::string& Str(uint32_t id) const;
  uint64_t start_ns() const { return windows.empty() ? 0 : windows.front().start_ns; }
  uint64_t end_ns() const { return windows.empty() ? 0 : windows.back().end_ns; }
  uint64_t window_ns() const;  // union length of `windows`
};

// Sets `windows` to the recording: from the header's start_time_ns (or the earliest record if the
// header has none or a later one) to RunEnd's end_time_ns (or the latest record end if later or
// absent). Records with no timestamps (start and end 0) are ignored. Empty trace: [start, start).
void SetDefaultWindow(ProcessTrace* trace);

// SetDefaultWindow in parts, for analyses that stream: CoverRecords widens [*lo, *hi] (start with
// lo = UINT64_MAX, hi = 0) to every timed record of a batch; RecordingWindow then gives the window
// from the header's start, that span and the RunEnd record.
void CoverRecords(const TraceRecords& records, uint64_t* lo, uint64_t* hi);
// The same for one record's times (none: both 0), for a reader that looks at each record anyway.
void Cover(uint64_t start, uint64_t end, uint64_t* lo, uint64_t* hi);
Interval RecordingWindow(uint64_t header_start_ns, uint64_t lo, uint64_t hi,
                         const std::optional<RunEnd>& run_end);

// Reads every process of `path`. Warnings (truncation, dropped records) are appended to
// *warnings as one line each, without a "profview:" prefix.
std::expected<std::vector<ProcessTrace>, std::string> LoadTraceFile(
    const std::string& path, std::vector<std::string>* warnings);

// LoadTraceFile for each path, concatenated in argument order; a directory stands for the *.pb
// files in it, sorted by name (proto/trace_inputs.h ExpandTraceInputs). Stops at the first
// error.
std::expected<std::vector<ProcessTrace>, std::string> LoadTraces(
    const std::vector<std::string>& paths, std::vector<std::string>* warnings);

// The readers' warnings: a file cut inside a chunk; records dropped during capture; a
// recording with no RunEnd in a file that is not cut (the process ended without libprof's exit
// handler: os._exit, SIGKILL, abort, a crash), so its last flush intervals were never written.
std::string TruncationWarning(const std::string& path, uint64_t chunks_read);
std::string DroppedWarning(const std::string& path, uint32_t pid, uint64_t dropped);
std::string NoEndWarning(const std::string& path, const TraceHeader& header);
// What NoEndWarning says of the recording, for other reports (the HTML report's headline): "the
// recording has no end record: ... was never written".
std::string NoEndSentence(const TraceHeader& header);
// Whether `records`, read whole from a file that is not cut, lack their RunEnd.
inline bool HasNoEnd(const TraceRecords& records, bool truncated) {
  return !truncated && !records.run_end;
}
// The warnings of one process's records once read: dropped records, and NoEndWarning unless
// the file was cut (TruncationWarning says that already).
void AddRecordingWarnings(const std::string& path, const TraceHeader& header,
                          const TraceRecords& records, bool truncated,
                          std::vector<std::string>* warnings);

// How far (trace time) behind the newest record a record may still arrive in this trace's file:
// two of its flush intervals (LIBPROF_FLUSH_INTERVAL_MS in its header, else libprof's default
// 1 s), the bound libprof's own nesting tracker uses (libprof/recorder.cc): libprof hands over
// every buffer at each flush. A real two-thread PyTorch trace had chunks reaching 0.6 s behind
// the one before. Used by the streamed summary and the windowed reads (trace_windows.h).
uint64_t ArrivalHorizon(const TraceHeader& header);

// Records lost during capture: the larger of RunEnd's count and the sum of drop reports.
uint64_t DroppedRecords(const TraceRecords& records);

}  // namespace libprof::analysis
