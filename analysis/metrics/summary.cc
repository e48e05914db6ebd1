#include "analysis/metrics/summary.h"

#include <algorithm>
#include <memory>
#include <optional>

#include "proto/trace_inputs.h"
#include "proto/trace_reader.h"
#include "analysis/metrics/process_summarizer.h"

namespace libprof::analysis {
namespace {

// Merges `part` (sorted, disjoint), shifted by `offset`, into `total` (sorted, disjoint),
// coalescing overlapping and touching pieces as MergeIntervals does.
void MergeShifted(const std::vector<Interval>& part, int64_t offset, std::vector<Interval>* total) {
  std::vector<Interval> out;
  out.reserve(total->size() + part.size());
  auto add = [&out](Interval i) {
    if (i.end_ns <= i.start_ns) return;
    if (!out.empty() && i.start_ns <= out.back().end_ns) {
      out.back().end_ns = std::max(out.back().end_ns, i.end_ns);
    } else {
      out.push_back(i);
    }
  };
  auto shifted = [offset](const Interval& i) {
    return Interval{static_cast<uint64_t>(static_cast<int64_t>(i.start_ns) + offset),
                    static_cast<uint64_t>(static_cast<int64_t>(i.end_ns) + offset)};
  };
  size_t a = 0, b = 0;
  while (a < total->size() || b < part.size()) {
    if (b == part.size() ||
        (a < total->size() && (*total)[a].start_ns <= shifted(part[b]).start_ns)) {
      add((*total)[a++]);
    } else {
      add(shifted(part[b++]));
    }
  }
  *total = std::move(out);
}

template <typename Key>
void MergeRows(const std::vector<SummaryRow>& from, std::map<Key, SummaryRow>* into,
               Key (*key)(const SummaryRow&)) {
  for (const SummaryRow& row : from) {
    auto [it, inserted] = into->try_emplace(key(row), row);
    if (inserted) continue;
    it->second.stats.Merge(row.stats);
    it->second.bytes += row.bytes;
    it->second.gpu_ns += row.gpu_ns;
  }
}

std::string ByName(const SummaryRow& row) { return row.name; }
std::pair<std::string, std::string> ByDomainName(const SummaryRow& row) {
  return {row.domain, row.name};
}

// Frees a part's interval lists once the total has them (assigning {} would keep the memory).
void DropIntervals(Summary* part) {
  std::vector<Interval>().swap(part->host_intervals);
  std::vector<Interval>().swap(part->device_intervals);
}

bool Contains(const std::vector<uint32_t>& list, uint32_t value) {
  return std::find(list.begin(), list.end(), value) != list.end();
}

ProcessSummarizer::Setup BoundedSetup(const std::string& path, const TraceHeader& header,
                                      const SummaryOptions& options, const FilterOptions& filters,
                                      const StreamLimits& limits, bool keep_intervals) {
  ProcessSummarizer::Setup setup;
  setup.path = path;
  setup.header = header;
  setup.options = options;
  setup.filters = filters;
  setup.limits = limits;
  setup.keep_intervals = keep_intervals;
  return setup;
}

// The processes of one file that the summary covers, with what the driver needs of each.
struct FileResult {
  std::vector<Summary> parts;
  std::vector<TraceHeader> headers;    // of `parts`
  std::vector<uint32_t> pids;          // every process of the file
  std::vector<uint32_t> threads_seen;  // --tid threads active in the time window
};

// Both passes over `path` for the processes in `setups` (null: not summarised). Returns the
// summarisers finished, or the first read error. `drops` (per process index) collects the
// dropped-record counts for the warning when given.
std::expected<std::vector<std::unique_ptr<ProcessSummarizer>>, std::string> ReadFile(
    const std::string& path, std::vector<std::optional<ProcessSummarizer::Setup>> setups,
    std::vector<Summary>* summaries, TraceReader* reader, std::vector<TraceRecords>* ends) {
  std::vector<std::unique_ptr<ProcessSummarizer>> procs(setups.size());
  for (size_t i = 0; i < setups.size(); ++i) {
    if (setups[i]) procs[i] = std::make_unique<ProcessSummarizer>(std::move(*setups[i]));
  }
  // First pass: the NVTX ranges (and domains), nothing else parsed.
  auto nvtx_reader = TraceReader::Open(path);
  if (!nvtx_reader) return std::unexpected(nvtx_reader.error());
  TraceRecords chunk;
  while ((*nvtx_reader)->NextNvtx(&chunk)) {
    if (ProcessSummarizer* p = procs[chunk.process_index].get()) {
      p->AddNvtx(chunk.nvtx_events, chunk.nvtx_domains);
    }
  }
  for (size_t i = 0; i < procs.size(); ++i) {
    if (procs[i]) procs[i]->EndNvtx((*nvtx_reader)->strings(static_cast<uint32_t>(i)));
  }
  // Second pass: everything.
  while (reader->Next(&chunk)) {
    if (ends != nullptr) {
      TraceRecords& end = (*ends)[chunk.process_index];
      end.drops.insert(end.drops.end(), chunk.drops.begin(), chunk.drops.end());
      if (chunk.run_end) end.run_end = chunk.run_end;
    }
    if (ProcessSummarizer* p = procs[chunk.process_index].get()) {
      p->Add(chunk, reader->strings(chunk.process_index));
    }
  }
  if (!reader->error().empty()) return std::unexpected(reader->error());
  // The main pass parses all that the first one did, so it meets any damage first; this is
  // only a safeguard.
  if (!(*nvtx_reader)->error().empty()) return std::unexpected((*nvtx_reader)->error());
  summaries->assign(procs.size(), Summary{});
  for (size_t i = 0; i < procs.size(); ++i) {
    if (procs[i]) (*summaries)[i] = procs[i]->Finish(reader->strings(static_cast<uint32_t>(i)));
  }
  return procs;
}

std::expected<FileResult, std::string> SummarizeFile(
    const std::string& path, const FilterOptions& filters, const SummaryOptions& options,
    const StreamLimits& limits, bool keep_intervals, std::vector<std::string>* warnings) {
  auto opened = TraceReader::Open(path);
  if (!opened) return std::unexpected(opened.error());
  TraceReader& reader = **opened;
  const std::vector<TraceHeader>& headers = reader.headers();
  FileResult result;
  std::vector<std::optional<ProcessSummarizer::Setup>> setups(headers.size());
  for (size_t i = 0; i < headers.size(); ++i) {
    result.pids.push_back(headers[i].pid);
    if (!filters.pids.empty() && !Contains(filters.pids, headers[i].pid)) continue;
    setups[i] = BoundedSetup(path, headers[i], options, filters, limits, keep_intervals);
  }
  std::vector<TraceRecords> ends(headers.size());
  std::vector<Summary> summaries;
  auto procs = ReadFile(path, setups, &summaries, &reader, &ends);
  if (!procs) return std::unexpected(procs.error());

  if (reader.truncated()) {
    warnings->push_back(path +
                        ": the file ends inside a chunk (the process did not finish "
                        "writing it); analysing the " +
                        std::to_string(reader.chunks_read()) + " complete chunk(s) before it");
  }
  for (size_t i = 0; i < headers.size(); ++i) {
    if (const uint64_t dropped = DroppedRecords(ends[i]); dropped > 0) {
      warnings->push_back(path + ": " + std::to_string(dropped) +
                          " record(s) were dropped during capture (pid " +
                          std::to_string(headers[i].pid) + "); totals are lower bounds");
    }
  }

  // Records too far out of order for the bounded stages, or a recording that does not start at
  // the header's start time under --from/--to: read those processes again, exactly.
  std::vector<std::optional<ProcessSummarizer::Setup>> again(headers.size());
  bool any_again = false;
  for (size_t i = 0; i < headers.size(); ++i) {
    if (!(*procs)[i] || (*procs)[i]->exact()) continue;
    again[i] = BoundedSetup(path, headers[i], options, filters, limits, keep_intervals);
    again[i]->bounded = false;
    again[i]->recording = (*procs)[i]->recording();
    any_again = true;
  }
  if (any_again) {
    auto reopened = TraceReader::Open(path);
    if (!reopened) return std::unexpected(reopened.error());
    std::vector<Summary> exact;
    auto procs_again = ReadFile(path, again, &exact, reopened->get(), nullptr);
    if (!procs_again) return std::unexpected(procs_again.error());
    for (size_t i = 0; i < headers.size(); ++i) {
      if (!(*procs_again)[i]) continue;
      summaries[i] = std::move(exact[i]);
      (*procs)[i] = std::move((*procs_again)[i]);
    }
  }
  for (size_t i = 0; i < headers.size(); ++i) {
    const ProcessSummarizer* p = (*procs)[i].get();
    if (p == nullptr) continue;
    for (uint32_t tid : p->threads_seen()) {
      if (!Contains(result.threads_seen, tid)) result.threads_seen.push_back(tid);
    }
    if (!p->selected()) continue;  // --nvtx selected no range of this process
    result.parts.push_back(std::move(summaries[i]));
    result.headers.push_back(headers[i]);
  }
  return result;
}

}  // namespace

void SortSummaryRows(std::vector<SummaryRow>* rows) {
  std::sort(rows->begin(), rows->end(), [](const SummaryRow& a, const SummaryRow& b) {
    if (a.stats.total() != b.stats.total()) return a.stats.total() > b.stats.total();
    return std::tie(a.name, a.domain) < std::tie(b.name, b.domain);
  });
}

std::expected<SummaryReport, std::string> SummarizeFiles(const std::vector<std::string>& paths,
                                                         const FilterOptions& filters,
                                                         const SummaryOptions& options,
                                                         std::vector<std::string>* warnings,
                                                         const StreamLimits* limits) {
  auto files = ExpandTraceInputs(paths);
  if (!files) return std::unexpected(files.error());
  // A window with from >= to is an error, reported (as ApplyFilters does) after the files are
  // read; until then it is ignored.
  FilterOptions effective = filters;
  const bool bad_window = (filters.from_ns || filters.to_ns) &&
                          filters.from_ns.value_or(0) >= filters.to_ns.value_or(UINT64_MAX);
  if (bad_window) effective.from_ns = effective.to_ns = std::nullopt;

  // The headers of every file first, to know whether a total is wanted and on which timebase,
  // so that each file's intervals join the total as soon as it is read. A file that cannot be
  // opened fails later, in its turn, as with loading.
  std::vector<TraceHeader> selected;
  for (const std::string& path : *files) {
    auto reader = TraceReader::Open(path);
    if (!reader) continue;
    for (const TraceHeader& h : (*reader)->headers()) {
      if (filters.pids.empty() || Contains(filters.pids, h.pid)) selected.push_back(h);
    }
  }
  const bool keep_intervals = selected.size() > 1;
  // --nvtx may leave processes out, which can change the timebase: then the total waits.
  const bool defer_total = !filters.nvtx.empty();
  std::vector<const TraceHeader*> selected_ptrs;
  for (const TraceHeader& h : selected) selected_ptrs.push_back(&h);
  const std::vector<int64_t> offsets = TimeOffsets(selected_ptrs);

  SummaryReport report;
  std::vector<TraceHeader> part_headers;
  SummaryTotal total;
  std::vector<uint32_t> pids_seen, threads_seen;
  for (const std::string& path : *files) {
    auto file = SummarizeFile(path, effective, options, limits ? *limits : StreamLimits{},
                              keep_intervals, warnings);
    if (!file) return std::unexpected(file.error());
    pids_seen.insert(pids_seen.end(), file->pids.begin(), file->pids.end());
    threads_seen.insert(threads_seen.end(), file->threads_seen.begin(), file->threads_seen.end());
    for (size_t i = 0; i < file->parts.size(); ++i) {
      Summary& part = file->parts[i];
      if (keep_intervals && !defer_total) {
        total.Add(part, offsets[report.parts.size()]);
        DropIntervals(&part);
      }
      report.parts.push_back(std::move(part));
      part_headers.push_back(std::move(file->headers[i]));
    }
  }

  for (uint32_t pid : filters.pids) {
    if (!Contains(pids_seen, pid)) {
      return std::unexpected("no process with pid " + std::to_string(pid) + " in the traces");
    }
  }
  if (bad_window) return std::unexpected("--from must be earlier than --to");
  for (uint32_t tid : filters.tids) {
    if (!Contains(threads_seen, tid)) {
      return std::unexpected("no activity of thread " + std::to_string(tid) + " in the traces");
    }
  }
  if (report.parts.empty()) {
    std::string names;
    for (const std::string& n : filters.nvtx) names += (names.empty() ? "'" : ", '") + n + "'";
    return std::unexpected("no NVTX range named " + names + " in the traces");
  }
  if (report.parts.size() == 1) {
    report.total = report.parts.front();
  } else {
    if (defer_total) {
      std::vector<const TraceHeader*> kept;
      for (const TraceHeader& h : part_headers) kept.push_back(&h);
      const std::vector<int64_t> kept_offsets = TimeOffsets(kept);
      for (size_t i = 0; i < report.parts.size(); ++i) {
        total.Add(report.parts[i], kept_offsets[i]);
        DropIntervals(&report.parts[i]);
      }
    }
    report.total = total.Finish();
  }
  return report;
}

Summary Summarize(const ProcessTrace& trace, const SummaryOptions& options,
                  int64_t time_offset_ns) {
  ProcessSummarizer::Setup setup;
  setup.path = trace.path;
  setup.header = trace.header;
  setup.options = options;
  setup.bounded = false;  // everything is in memory already
  setup.keep_intervals = true;
  setup.windows = trace.windows;
  ProcessSummarizer summarizer(std::move(setup));
  summarizer.AddNvtx(trace.records.nvtx_events, trace.records.nvtx_domains);
  summarizer.EndNvtx(trace.strings);
  summarizer.Add(trace.records, trace.strings);
  Summary s = summarizer.Finish(trace.strings);
  if (time_offset_ns != 0) {
    // The part alone, on the common timebase: what CombineSummaries expects.
    for (std::vector<Interval>* list : {&s.windows, &s.host_intervals, &s.device_intervals}) {
      std::vector<Interval> shifted;
      MergeShifted(*list, time_offset_ns, &shifted);
      *list = std::move(shifted);
    }
  }
  return s;
}

std::vector<int64_t> TimeOffsets(const std::vector<const TraceHeader*>& headers) {
  bool same_clock = true;
  for (const TraceHeader* h : headers) {
    same_clock &=
        h->hostname == headers.front()->hostname && h->timebase == headers.front()->timebase;
  }
  std::vector<int64_t> offsets;
  for (const TraceHeader* h : headers) offsets.push_back(same_clock ? 0 : h->wall_clock_offset_ns);
  return offsets;
}

std::vector<int64_t> TimeOffsets(const std::vector<ProcessTrace>& traces) {
  std::vector<const TraceHeader*> headers;
  for (const ProcessTrace& t : traces) headers.push_back(&t.header);
  return TimeOffsets(headers);
}

SummaryTotal::SummaryTotal() { total_.processes = 0; }

void SummaryTotal::Add(const Summary& p, int64_t time_offset_ns) {
  ++total_.processes;
  total_.events += p.events;
  total_.dropped_records += p.dropped_records;
  total_.hidden_calls += p.hidden_calls;
  total_.hidden_ns += p.hidden_ns;
  total_.hidden_nested_calls += p.hidden_nested_calls;
  MergeRows(p.host, &host_, &ByName);
  MergeRows(p.device, &device_, &ByName);
  MergeRows(p.nvtx, &nvtx_, &ByDomainName);
  for (const CopyRow& c : p.copies) {
    CopyRow& row = copies_[{c.copy_kind, c.src_kind, c.dst_kind}];
    row.copy_kind = c.copy_kind;
    row.src_kind = c.src_kind;
    row.dst_kind = c.dst_kind;
    row.count += c.count;
    row.bytes += c.bytes;
    row.total_ns += c.total_ns;
  }
  MergeShifted(p.windows, time_offset_ns, &total_.windows);
  MergeShifted(p.host_intervals, time_offset_ns, &total_.host_intervals);
  MergeShifted(p.device_intervals, time_offset_ns, &total_.device_intervals);
}

Summary SummaryTotal::Finish() {
  Summary total = std::move(total_);
  total_ = Summary{};
  total_.processes = 0;
  for (auto& [k, row] : host_) total.host.push_back(row);
  for (auto& [k, row] : device_) total.device.push_back(row);
  for (auto& [k, row] : nvtx_) total.nvtx.push_back(row);
  for (auto& [k, row] : copies_) total.copies.push_back(row);
  SortSummaryRows(&total.host);
  SortSummaryRows(&total.device);
  SortSummaryRows(&total.nvtx);
  std::stable_sort(total.copies.begin(), total.copies.end(),
                   [](const CopyRow& a, const CopyRow& b) { return a.total_ns > b.total_ns; });
  for (const Interval& w : total.windows) total.trace_ns += w.length();
  for (const Interval& i : total.host_intervals) total.host_api_ns += i.length();
  for (const Interval& i : total.device_intervals) total.gpu_busy_ns += i.length();
  return total;
}

Summary CombineSummaries(const std::vector<Summary>& parts) {
  SummaryTotal total;
  for (const Summary& p : parts) total.Add(p, 0);
  return total.Finish();
}

}  // namespace libprof::analysis
