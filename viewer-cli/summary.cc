#include "viewer-cli/summary.h"

#include <algorithm>
#include <map>
#include <memory>
#include <tuple>
#include <unordered_map>

#include "viewer-cli/api_names.h"
#include "viewer-cli/call_sites.h"
#include "viewer-cli/trace_index.h"

namespace libprof::viewer {
namespace {

void SortRows(std::vector<SummaryRow>* rows) {
  std::sort(rows->begin(), rows->end(), [](const SummaryRow& a, const SummaryRow& b) {
    if (a.stats.total() != b.stats.total()) return a.stats.total() > b.stats.total();
    return std::tie(a.name, a.domain) < std::tie(b.name, b.domain);
  });
}

uint64_t Duration(uint64_t start, uint64_t end) { return end > start ? end - start : 0; }

Interval Shifted(uint64_t start, uint64_t end, int64_t offset) {
  return {static_cast<uint64_t>(static_cast<int64_t>(start) + offset),
          static_cast<uint64_t>(static_cast<int64_t>(end) + offset)};
}

std::vector<SummaryRow> HostRows(const ProcessTrace& trace, const TraceIndex& index,
                                 const SummaryOptions& options, Summary* summary,
                                 std::vector<Interval>* intervals) {
  // By name id, and with --by caller by call site too (index into `sites`, in the high half).
  std::unordered_map<uint64_t, SummaryRow> rows;
  std::unique_ptr<CallSites> call_sites;
  std::unordered_map<uint32_t, uint64_t> site_of_stack;  // stack id -> index into `sites`
  std::vector<std::string> sites{""};
  if (options.by_caller) call_sites = std::make_unique<CallSites>(trace);
  const auto& calls = trace.records.api_calls;
  for (size_t i = 0; i < calls.size(); ++i) {
    const ApiCall& c = calls[i];
    const std::string& name = trace.Str(c.name_id);
    const bool nested = index.IsNested(i);
    const bool hidden =
        !options.raw && (nested || IsNoiseApi(name) || c.domain == ApiDomain::kInternalLaunch);
    if (hidden) {
      if (nested) {
        ++summary->hidden_nested_calls;
      } else {
        ++summary->hidden_calls;
        summary->hidden_ns += Duration(c.start_ns, c.end_ns);
      }
      continue;
    }
    uint64_t site = 0;
    if (call_sites && c.stack_id != 0) {
      auto [it, inserted] = site_of_stack.try_emplace(c.stack_id, sites.size());
      if (inserted) sites.push_back(call_sites->Of(c.stack_id).Text());
      site = it->second;
    }
    SummaryRow& row = rows[site << 32 | c.name_id];
    if (row.name.empty()) {
      row.name = name.empty() ? "[unnamed API " + std::to_string(c.callback_id) + "]" : name;
      if (!sites[site].empty()) row.name += " ← " + sites[site];
      row.kind = "api";
    }
    row.stats.Add(Duration(c.start_ns, c.end_ns));
    intervals->push_back({c.start_ns, c.end_ns});
  }
  std::vector<SummaryRow> out;
  for (auto& [id, row] : rows) out.push_back(std::move(row));
  // Distinct name ids can carry the same name (merged traces); fold them.
  std::sort(out.begin(), out.end(),
            [](const SummaryRow& a, const SummaryRow& b) { return a.name < b.name; });
  std::vector<SummaryRow> folded;
  for (SummaryRow& row : out) {
    if (!folded.empty() && folded.back().name == row.name) {
      folded.back().stats.Merge(row.stats);
    } else {
      folded.push_back(std::move(row));
    }
  }
  SortRows(&folded);
  return folded;
}

std::vector<SummaryRow> DeviceRows(const TraceIndex& index, std::vector<Interval>* intervals) {
  std::map<std::string, SummaryRow> rows;
  for (const DeviceOp& op : index.device_ops()) {
    const std::string& name = index.OpName(op);
    SummaryRow& row = rows[name];
    if (row.name.empty()) {
      row.name = name;
      row.kind = ToString(op.kind);
      row.has_bytes = op.kind == DeviceOpKind::kMemcpy || op.kind == DeviceOpKind::kMemset;
    }
    row.stats.Add(op.duration());
    row.bytes += op.bytes;
    intervals->push_back({op.start_ns, op.end_ns});
  }
  std::vector<SummaryRow> out;
  for (auto& [name, row] : rows) out.push_back(std::move(row));
  SortRows(&out);
  return out;
}

std::vector<CopyRow> CopyRows(const TraceRecords& records) {
  std::map<std::tuple<CopyKind, MemoryKind, MemoryKind>, CopyRow> rows;
  for (const Memcpy& m : records.memcpys) {
    CopyRow& row = rows[{m.copy_kind, m.src_kind, m.dst_kind}];
    row.copy_kind = m.copy_kind;
    row.src_kind = m.src_kind;
    row.dst_kind = m.dst_kind;
    ++row.count;
    row.bytes += m.bytes;
    row.total_ns += Duration(m.start_ns, m.end_ns);
  }
  std::vector<CopyRow> out;
  for (auto& [key, row] : rows) out.push_back(row);
  std::stable_sort(out.begin(), out.end(),
                   [](const CopyRow& a, const CopyRow& b) { return a.total_ns > b.total_ns; });
  return out;
}

// Device time of the work each thread launched, by launch time, for the GPU projection of NVTX
// ranges: per thread, calls sorted by start with a running sum of their device time.
struct LaunchTimeline {
  std::vector<uint64_t> starts;
  std::vector<uint64_t> prefix;  // prefix[i] = device time of calls [0, i)
  uint64_t Between(uint64_t from, uint64_t to) const {
    const size_t a = std::lower_bound(starts.begin(), starts.end(), from) - starts.begin();
    const size_t b = std::upper_bound(starts.begin(), starts.end(), to) - starts.begin();
    return b > a ? prefix[b] - prefix[a] : 0;
  }
};

std::vector<SummaryRow> NvtxRows(const ProcessTrace& trace, const TraceIndex& index) {
  const TraceRecords& r = trace.records;
  std::unordered_map<int64_t, uint64_t> device_by_call;
  for (const DeviceOp& op : index.device_ops()) {
    const int64_t call = index.LaunchingCall(op.correlation_id);
    if (call >= 0) device_by_call[call] += op.duration();
  }
  std::unordered_map<uint32_t, std::vector<std::pair<uint64_t, uint64_t>>> per_thread;
  for (auto [call, ns] : device_by_call) {
    const ApiCall& c = r.api_calls[call];
    per_thread[c.thread_id].push_back({c.start_ns, ns});
  }
  std::unordered_map<uint32_t, LaunchTimeline> timelines;
  for (auto& [tid, list] : per_thread) {
    std::sort(list.begin(), list.end());
    LaunchTimeline& t = timelines[tid];
    t.prefix.push_back(0);
    for (auto [start, ns] : list) {
      t.starts.push_back(start);
      t.prefix.push_back(t.prefix.back() + ns);
    }
  }
  auto launched = [&](uint32_t tid, uint64_t from, uint64_t to) -> uint64_t {
    auto it = timelines.find(tid);
    return it == timelines.end() ? 0 : it->second.Between(from, to);
  };

  std::map<std::pair<std::string, std::string>, SummaryRow> rows;  // (domain, message)
  for (const NvtxEvent& e : r.nvtx_events) {
    if (e.kind == NvtxKind::kMark) continue;
    const std::string& domain = index.NvtxDomainName(e.domain_id);
    const std::string& message = trace.Str(e.message_id);
    SummaryRow& row = rows[{domain, message}];
    if (row.kind.empty()) {
      row.kind = "nvtx";
      row.name = message;
      row.domain = domain;
    }
    row.stats.Add(Duration(e.start_ns, e.end_ns));
    row.gpu_ns += launched(e.thread_id, e.start_ns, e.end_ns);
    if (e.kind == NvtxKind::kStartEnd && e.end_thread_id != 0 && e.end_thread_id != e.thread_id) {
      row.gpu_ns += launched(e.end_thread_id, e.start_ns, e.end_ns);
    }
  }
  std::vector<SummaryRow> out;
  for (auto& [key, row] : rows) out.push_back(std::move(row));
  SortRows(&out);
  return out;
}

std::vector<Interval> ShiftAll(std::vector<Interval> list, int64_t offset) {
  for (Interval& i : list) i = Shifted(i.start_ns, i.end_ns, offset);
  return list;
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

}  // namespace

Summary Summarize(const ProcessTrace& trace, const SummaryOptions& options,
                  int64_t time_offset_ns) {
  const TraceIndex index(trace);
  Summary s;
  s.path = trace.path;
  s.pid = trace.header.pid;
  s.hostname = trace.header.hostname;
  s.trace_ns = trace.window_ns();
  s.events = trace.records.RecordCount();
  s.dropped_records = DroppedRecords(trace.records);

  std::vector<Interval> host;
  s.host = HostRows(trace, index, options, &s, &host);
  std::vector<Interval> device;
  s.device = DeviceRows(index, &device);
  s.copies = CopyRows(trace.records);
  s.nvtx = NvtxRows(trace, index);

  const std::vector<Interval> host_merged = MergeIntervals(std::move(host));
  const std::vector<Interval> device_merged = MergeIntervals(std::move(device));
  s.windows = ShiftAll(trace.windows, time_offset_ns);
  // Keep only what lies in the window, so that totals clip the same way.
  const std::vector<Interval> windows = MergeIntervals(trace.windows);
  s.host_intervals = ShiftAll(Intersect(host_merged, windows), time_offset_ns);
  s.device_intervals = ShiftAll(Intersect(device_merged, windows), time_offset_ns);
  s.host_api_ns = 0;
  for (const Interval& i : s.host_intervals) s.host_api_ns += i.length();
  s.gpu_busy_ns = 0;
  for (const Interval& i : s.device_intervals) s.gpu_busy_ns += i.length();
  return s;
}

std::vector<int64_t> TimeOffsets(const std::vector<ProcessTrace>& traces) {
  bool same_clock = true;
  for (const ProcessTrace& t : traces) {
    same_clock &= t.header.hostname == traces.front().header.hostname &&
                  t.header.timebase == traces.front().header.timebase;
  }
  std::vector<int64_t> offsets;
  for (const ProcessTrace& t : traces)
    offsets.push_back(same_clock ? 0 : t.header.wall_clock_offset_ns);
  return offsets;
}

Summary CombineSummaries(const std::vector<Summary>& parts) {
  Summary total;
  total.processes = static_cast<uint32_t>(parts.size());
  std::map<std::string, SummaryRow> host, device;
  std::map<std::pair<std::string, std::string>, SummaryRow> nvtx;
  std::map<std::tuple<CopyKind, MemoryKind, MemoryKind>, CopyRow> copies;
  std::vector<Interval> windows, host_iv, device_iv;
  for (const Summary& p : parts) {
    total.events += p.events;
    total.dropped_records += p.dropped_records;
    total.hidden_calls += p.hidden_calls;
    total.hidden_ns += p.hidden_ns;
    total.hidden_nested_calls += p.hidden_nested_calls;
    MergeRows(p.host, &host, &ByName);
    MergeRows(p.device, &device, &ByName);
    MergeRows(p.nvtx, &nvtx, &ByDomainName);
    for (const CopyRow& c : p.copies) {
      CopyRow& row = copies[{c.copy_kind, c.src_kind, c.dst_kind}];
      row.copy_kind = c.copy_kind;
      row.src_kind = c.src_kind;
      row.dst_kind = c.dst_kind;
      row.count += c.count;
      row.bytes += c.bytes;
      row.total_ns += c.total_ns;
    }
    windows.insert(windows.end(), p.windows.begin(), p.windows.end());
    host_iv.insert(host_iv.end(), p.host_intervals.begin(), p.host_intervals.end());
    device_iv.insert(device_iv.end(), p.device_intervals.begin(), p.device_intervals.end());
  }
  for (auto& [k, row] : host) total.host.push_back(row);
  for (auto& [k, row] : device) total.device.push_back(row);
  for (auto& [k, row] : nvtx) total.nvtx.push_back(row);
  for (auto& [k, row] : copies) total.copies.push_back(row);
  SortRows(&total.host);
  SortRows(&total.device);
  SortRows(&total.nvtx);
  std::stable_sort(total.copies.begin(), total.copies.end(),
                   [](const CopyRow& a, const CopyRow& b) { return a.total_ns > b.total_ns; });
  total.windows = MergeIntervals(std::move(windows));
  total.host_intervals = MergeIntervals(std::move(host_iv));
  total.device_intervals = MergeIntervals(std::move(device_iv));
  for (const Interval& w : total.windows) total.trace_ns += w.length();
  for (const Interval& i : total.host_intervals) total.host_api_ns += i.length();
  for (const Interval& i : total.device_intervals) total.gpu_busy_ns += i.length();
  return total;
}

}  // namespace libprof::viewer
