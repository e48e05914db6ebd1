#include "analysis/metrics/summary.h"

#include <algorithm>
#include <memory>
#include <optional>

#include "proto/chunk_prefetcher.h"
#include "proto/trace_inputs.h"
#include "proto/trace_reader.h"
#include "analysis/metrics/process_summarizer.h"
#include "analysis/metrics/summary_combiner.h"
#include "analysis/metrics/summary_partial.h"

namespace libprof::analysis {
namespace {

template <typename Key>
void MergeRows(const std::vector<SummaryRow>& from, std::map<Key, SummaryRow>* into,
               Key (*key)(const SummaryRow&)) {
  for (const SummaryRow& row : from) {
    auto [it, inserted] = into->try_emplace(key(row), row);
    if (inserted) continue;
    // Rows of different kinds under one name (rare): the smaller kind names the row, whatever
    // order the processes come in, so that combining partial summaries changes nothing.
    if (row.kind < it->second.kind) {
      it->second.kind = row.kind;
      it->second.has_bytes = row.has_bytes;
    }
    it->second.stats.Merge(row.stats);
    it->second.bytes += row.bytes;
    it->second.gpu_ns += row.gpu_ns;
  }
}

std::string ByName(const SummaryRow& row) { return row.name; }
std::pair<std::string, std::string> ByDomainName(const SummaryRow& row) {
  return {row.domain, row.name};
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
  // Second pass: everything, decoded a few chunks ahead on a second thread.
  ChunkPrefetcher chunks(*reader);
  while (chunks.Next(&chunk)) {
    if (ends != nullptr) {
      TraceRecords& end = (*ends)[chunk.process_index];
      end.drops.insert(end.drops.end(), chunk.drops.begin(), chunk.drops.end());
      if (chunk.run_end) end.run_end = chunk.run_end;
    }
    if (ProcessSummarizer* p = procs[chunk.process_index].get()) {
      p->Add(chunk, chunks.strings(chunk.process_index));
    }
  }
  if (!chunks.error().empty()) return std::unexpected(chunks.error());
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
    AddRecordingWarnings(path, headers[i], ends[i], reader.truncated(), warnings);
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

namespace {

// What SummarizeFiles and SummarizeFilesPartial share: every file read in turn, each part handed
// to `take` with its header as soon as its file is done.
template <typename Take>
std::expected<void, std::string> ForEachPart(const std::vector<std::string>& files,
                                             const FilterOptions& effective,
                                             const SummaryOptions& options,
                                             const StreamLimits* limits, bool keep_intervals,
                                             std::vector<uint32_t>* pids_seen,
                                             std::vector<uint32_t>* threads_seen,
                                             std::vector<std::string>* warnings, Take take) {
  for (const std::string& path : files) {
    auto file = SummarizeFile(path, effective, options, limits ? *limits : StreamLimits{},
                              keep_intervals, warnings);
    if (!file) return std::unexpected(file.error());
    pids_seen->insert(pids_seen->end(), file->pids.begin(), file->pids.end());
    threads_seen->insert(threads_seen->end(), file->threads_seen.begin(),
                         file->threads_seen.end());
    for (size_t i = 0; i < file->parts.size(); ++i) {
      take(path, std::move(file->parts[i]), std::move(file->headers[i]));
    }
  }
  return {};
}

// A window with from >= to is an error, reported (as ApplyFilters does) after the files are
// read; until then it is ignored.
bool BadWindow(const FilterOptions& filters) {
  return (filters.from_ns || filters.to_ns) &&
         filters.from_ns.value_or(0) >= filters.to_ns.value_or(UINT64_MAX);
}

FilterOptions EffectiveFilters(const FilterOptions& filters) {
  FilterOptions effective = filters;
  if (BadWindow(filters)) effective.from_ns = effective.to_ns = std::nullopt;
  return effective;
}

bool SameClock(const TraceHeader& a, const TraceHeader& b) {
  return a.hostname == b.hostname && a.timebase == b.timebase;
}

}  // namespace

std::expected<SummaryReport, std::string> SummarizeFiles(const std::vector<std::string>& paths,
                                                         const FilterOptions& filters,
                                                         const SummaryOptions& options,
                                                         std::vector<std::string>* warnings,
                                                         const StreamLimits* limits) {
  auto files = ExpandTraceInputs(paths);
  if (!files) return std::unexpected(files.error());
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
  // --nvtx may leave processes out, which can change the timebase: then the combiner keeps the
  // total on both until it knows.
  std::optional<bool> same_clock;
  if (filters.nvtx.empty()) {
    same_clock = std::all_of(selected.begin(), selected.end(), [&](const TraceHeader& h) {
      return SameClock(h, selected.front());
    });
  }
  SummaryCombiner combiner(same_clock);
  std::vector<uint32_t> pids_seen, threads_seen;
  auto done = ForEachPart(*files, EffectiveFilters(filters), options, limits, keep_intervals,
                          &pids_seen, &threads_seen, warnings,
                          [&](const std::string&, Summary part, TraceHeader header) {
                            combiner.Add(std::move(part), header);
                          });
  if (!done) return std::unexpected(done.error());
  auto matched = CheckFiltersMatched(filters, pids_seen, threads_seen, combiner.parts() > 0);
  if (!matched) return std::unexpected(matched.error());
  return combiner.Finish();
}

std::expected<SummaryPartial, std::string> SummarizeFilesPartial(
    const std::vector<std::string>& paths, const FilterOptions& filters,
    const SummaryOptions& options, const StreamLimits* limits) {
  auto files = ExpandTraceInputs(paths);
  if (!files) return std::unexpected(files.error());
  SummaryPartial partial;
  partial.options = options;
  partial.filters = filters;
  partial.files = *files;
  SummaryCombiner combiner;
  for (const std::string& path : *files) {
    std::vector<std::string> warnings;
    auto done = ForEachPart({path}, EffectiveFilters(filters), options, limits,
                            /*keep_intervals=*/true, &partial.pids_seen, &partial.threads_seen,
                            &warnings, [&](const std::string&, Summary part, TraceHeader header) {
                              combiner.Add(std::move(part), header);
                            });
    if (!done) return std::unexpected(done.error());
    for (std::string& w : warnings) partial.warnings.push_back({path, std::move(w)});
  }
  partial.state = combiner.TakeState();
  return partial;
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
  total_.repaired_ends += p.repaired_ends;
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
