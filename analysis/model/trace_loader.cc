#include "analysis/model/trace_loader.h"

#include <algorithm>
#include <cstdlib>
#include <limits>

#include "analysis/model/units.h"
#include "proto/trace_inputs.h"
#include "proto/trace_reader.h"

namespace libprof::analysis {
namespace {

// Gives each list of `records` room for `scale` times its records.
void ReserveScaled(double scale, TraceRecords* records) {
  ForEachList(*records, [&]<typename T>(std::vector<T>& list) {
    list.reserve(static_cast<size_t>(scale * static_cast<double>(list.size())));
  });
}

}  // namespace

const std::string& ProcessTrace::Str(uint32_t id) const {
  static const std::string* empty = new std::string;
  return id < strings.size() ? strings[id] : *empty;
}

uint64_t ProcessTrace::window_ns() const {
  uint64_t total = 0;
  for (const Interval& w : windows) total += w.length();  // kept disjoint by their producers
  return total;
}

uint64_t DroppedRecords(const TraceRecords& records) {
  uint64_t reported = 0;
  for (const DropReport& d : records.drops) reported += d.count;
  return std::max(reported, records.run_end ? records.run_end->records_dropped : 0);
}

void Cover(uint64_t start, uint64_t end, uint64_t* lo, uint64_t* hi) {
  if (start == 0 && end == 0) return;
  *lo = std::min(*lo, start);
  *hi = std::max(*hi, std::max(start, end));
}

void CoverRecords(const TraceRecords& r, uint64_t* lo, uint64_t* hi) {
  // Every timed kind with a time of its own (a CUDA event's device time is not the host's).
  ForEachList(r, [&]<typename T>(const std::vector<T>& list) {
    if constexpr (kIsTimed<T> && kHasTime<T>) {
      for (const T& x : list) Cover(StartNs(x), EndNs(x), lo, hi);
    }
  });
}

Interval RecordingWindow(uint64_t header_start_ns, uint64_t lo, uint64_t hi,
                         const std::optional<RunEnd>& run_end) {
  uint64_t start = lo;
  if (header_start_ns != 0 && header_start_ns <= lo) start = header_start_ns;
  if (lo > hi) {  // no timed record
    start = header_start_ns;
    hi = header_start_ns;
  }
  uint64_t end = hi;
  if (run_end && run_end->end_time_ns >= hi && run_end->end_time_ns >= start) {
    end = run_end->end_time_ns;
  }
  return Interval{start, std::max(start, end)};
}

void SetDefaultWindow(ProcessTrace* trace) {
  uint64_t lo = std::numeric_limits<uint64_t>::max();
  uint64_t hi = 0;
  CoverRecords(trace->records, &lo, &hi);
  trace->windows = {RecordingWindow(trace->header.start_time_ns, lo, hi, trace->records.run_end)};
  trace->origin_ns = trace->windows.front().start_ns;
}

std::string TruncationWarning(const std::string& path, uint64_t chunks_read) {
  return path +
         ": the file ends inside a chunk (the process did not finish writing it); analysing "
         "the " +
         std::to_string(chunks_read) + " complete chunk(s) before it";
}

std::string DroppedWarning(const std::string& path, uint32_t pid, uint64_t dropped) {
  return path + ": " + std::to_string(dropped) + " record(s) were dropped during capture (pid " +
         std::to_string(pid) + "); totals are lower bounds";
}

std::string NoEndSentence(const TraceHeader& header) {
  // libprof writes API calls two flush intervals after they return (recorder.cc: a driver call
  // may still be nested in a runtime call) and device records as CUPTI hands them over, which
  // a busy GPU delays further: a PyTorch loop ended by os._exit after 3.5 s of work kept 550
  // of its 1,250 steps (about 2 s lost at the default 1 s interval; viewer-cli/USAGE.md).
  return "recording has no end record: the process ended without libprof's exit handler "
         "(os._exit, SIGKILL, abort or a crash), so what it did in about its last " +
         FormatDuration(static_cast<double>(ArrivalHorizon(header))) +
         " (two flush intervals), or longer where the GPU was busy, was never written";
}

std::string NoEndWarning(const std::string& path, const TraceHeader& header) {
  return path + ": pid " + std::to_string(header.pid) + "'s " + NoEndSentence(header) +
         "; totals are lower bounds";
}

void AddRecordingWarnings(const std::string& path, const TraceHeader& header,
                          const TraceRecords& records, bool truncated,
                          std::vector<std::string>* warnings) {
  if (const uint64_t dropped = DroppedRecords(records); dropped > 0) {
    warnings->push_back(DroppedWarning(path, header.pid, dropped));
  }
  if (HasNoEnd(records, truncated)) warnings->push_back(NoEndWarning(path, header));
}

uint64_t ArrivalHorizon(const TraceHeader& header) {
  uint64_t interval_ms = 1000;  // libprof's default (libprof/settings.h)
  auto it = header.settings.find("LIBPROF_FLUSH_INTERVAL_MS");
  if (it != header.settings.end()) {
    char* end = nullptr;
    const unsigned long long ms = std::strtoull(it->second.c_str(), &end, 10);
    if (end != it->second.c_str() && ms > 0 && ms < 3'600'000) interval_ms = ms;
  }
  return 2 * interval_ms * 1'000'000;
}

std::expected<std::vector<ProcessTrace>, std::string> LoadTraceFile(
    const std::string& path, std::vector<std::string>* warnings) {
  auto opened = TraceReader::Open(path);
  if (!opened) return std::unexpected(opened.error());
  TraceReader& reader = **opened;
  std::vector<ProcessTrace> processes(reader.headers().size());
  for (size_t i = 0; i < processes.size(); ++i) {
    processes[i].path = path;
    processes[i].header = reader.headers()[i];
  }
  // Each chunk is decoded straight into its process's lists (not decoded, then appended: that
  // copy and its page faults were a third of the load at 10M records).
  std::vector<TraceRecords*> into;
  for (ProcessTrace& p : processes) into.push_back(&p.records);
  uint32_t index = 0;
  bool reserved = false;
  while (reader.AppendNext(into, &index)) {
    ++processes[index].chunks;
    // Once a 64th of the file is in, its lists are given room for the whole file at the rate
    // seen so far (and a tenth more): the rest is decoded in place rather than copied at each
    // doubling, and pages of room never used are never touched. Not near the end of the file,
    // where it would only copy.
    if (!reserved && reader.bytes_read() * 64 >= reader.file_size()) {
      reserved = true;
      if (reader.bytes_read() * 4 <= reader.file_size()) {
        const double scale = 1.1 * static_cast<double>(reader.file_size()) /
                             static_cast<double>(reader.bytes_read());
        for (TraceRecords* records : into) ReserveScaled(scale, records);
      }
    }
  }
  if (!reader.error().empty()) return std::unexpected(reader.error());
  for (size_t i = 0; i < processes.size(); ++i) {
    processes[i].strings = reader.strings(static_cast<uint32_t>(i));
    processes[i].truncated = reader.truncated();
    SetDefaultWindow(&processes[i]);
  }
  if (reader.truncated()) warnings->push_back(TruncationWarning(path, reader.chunks_read()));
  for (const ProcessTrace& p : processes) {
    AddRecordingWarnings(path, p.header, p.records, reader.truncated(), warnings);
  }
  return processes;
}

std::expected<std::vector<ProcessTrace>, std::string> LoadTraces(
    const std::vector<std::string>& paths, std::vector<std::string>* warnings) {
  auto files = ExpandTraceInputs(paths);
  if (!files) return std::unexpected(files.error());
  std::vector<ProcessTrace> all;
  for (const std::string& path : *files) {
    auto loaded = LoadTraceFile(path, warnings);
    if (!loaded) return std::unexpected(loaded.error());
    for (ProcessTrace& p : *loaded) all.push_back(std::move(p));
  }
  return all;
}

}  // namespace libprof::analysis
