#include "analysis/reports/trace_listing.h"

#include <algorithm>
#include <array>
#include <set>
#include <tuple>
#include <unordered_map>

#include "analysis/model/api_names.h"
#include "analysis/model/call_sites.h"
#include "analysis/reports/formats.h"
#include "analysis/model/kernel_names.h"
#include "analysis/reports/table_renderer.h"
#include "analysis/model/trace_index.h"
#include "analysis/model/units.h"

namespace libprof::analysis {
namespace {

uint64_t Duration(uint64_t start, uint64_t end) { return end > start ? end - start : 0; }

std::string Triple(const std::array<uint32_t, 3>& v) {
  return "(" + std::to_string(v[0]) + "," + std::to_string(v[1]) + "," + std::to_string(v[2]) + ")";
}

// Sort rank among rows starting at the same time: ranges open first, then host, then device.
int Rank(const std::string& kind) {
  if (kind == "nvtx" || kind == "mark") return 0;
  if (kind == "api") return 1;
  return 2;
}

// A copy or set whose end the reader moved back to its stream's next operation: what CUPTI
// said, so that the listing hides nothing (proto/stream_order_repair.h).
template <typename T>
std::string RepairedEnd(const T& record) {
  if (record.cupti_end_ns == 0) return "";
  const double late_ns = static_cast<double>(record.cupti_end_ns - record.start_ns);
  return ", CUPTI's end (" + FormatDuration(late_ns) +
         " after its start) fell after the stream's next operation started";
}

// Stream first: it is what a reader scans for, and the table may cut the end of the cell.
std::string OpDetails(const TraceIndex& index, const DeviceOp& op) {
  const TraceRecords& r = index.records();
  std::string d = "stream " + std::to_string(op.stream_id);
  if (op.graph_id != 0) d += ", graph " + std::to_string(op.graph_id);
  switch (op.kind) {
    case DeviceOpKind::kKernel: {
      const KernelShape& s = r.kernels[op.record].shape;
      d += ", grid " + Triple(s.grid) + " block " + Triple(s.block) + ", " +
           std::to_string(s.registers_per_thread) + " regs, " +
           FormatBytes(uint64_t{s.static_shared_memory_bytes} + s.dynamic_shared_memory_bytes) +
           " shared";
      if (s.cluster[0] != 0) d += ", cluster " + Triple(s.cluster);
      break;
    }
    case DeviceOpKind::kMemcpy: {
      const Memcpy& m = r.memcpys[op.record];
      d += ", " + FormatBytes(m.bytes) + " " + ToString(m.copy_kind) + " " + ToString(m.src_kind) +
           "→" + ToString(m.dst_kind) + (m.async ? ", async" : ", sync");
      d += RepairedEnd(m);
      break;
    }
    case DeviceOpKind::kMemset: {
      const Memset& m = r.memsets[op.record];
      d += ", " + FormatBytes(m.bytes) + " " + ToString(m.memory_kind) +
           (m.async ? ", async" : ", sync");
      d += RepairedEnd(m);
      break;
    }
    case DeviceOpKind::kGraph:
      d += ", whole graph";
      break;
  }
  return d;
}

}  // namespace

std::vector<ListingRow> TraceRows(const ProcessTrace& trace, bool raw) {
  const TraceIndex index(trace);
  const CallSites call_sites(trace);
  const TraceRecords& r = trace.records;
  const uint64_t origin = trace.origin_ns;
  auto rel = [&](uint64_t t) { return Duration(origin, t); };
  std::vector<ListingRow> rows;

  // NVTX nesting per thread, by sweeping ranges in start order with the set of open ranges'
  // ends: a range's depth is the number of ranges open when it starts, an API call's the
  // number open at its start.
  std::unordered_map<uint32_t, std::vector<const NvtxEvent*>> ranges;
  for (const NvtxEvent& e : r.nvtx_events) {
    if (e.kind != NvtxKind::kMark) ranges[e.thread_id].push_back(&e);
  }
  std::unordered_map<const NvtxEvent*, uint32_t> range_depth;
  for (auto& [tid, list] : ranges) {
    std::sort(list.begin(), list.end(), [](const NvtxEvent* a, const NvtxEvent* b) {
      return std::tie(a->start_ns, b->end_ns) < std::tie(b->start_ns, a->end_ns);
    });
    std::multiset<uint64_t> open;
    for (const NvtxEvent* e : list) {
      open.erase(open.begin(), open.upper_bound(e->start_ns));
      range_depth[e] = static_cast<uint32_t>(open.size());
      open.insert(e->end_ns);
    }
  }
  std::unordered_map<uint32_t, std::vector<uint32_t>> calls_by_thread;
  for (uint32_t i = 0; i < r.api_calls.size(); ++i)
    calls_by_thread[r.api_calls[i].thread_id].push_back(i);
  std::vector<uint32_t> call_depth(r.api_calls.size(), 0);
  for (auto& [tid, calls] : calls_by_thread) {
    auto it = ranges.find(tid);
    if (it == ranges.end()) continue;
    std::sort(calls.begin(), calls.end(), [&](uint32_t a, uint32_t b) {
      return r.api_calls[a].start_ns < r.api_calls[b].start_ns;
    });
    std::multiset<uint64_t> open;
    size_t next = 0;
    for (uint32_t i : calls) {
      const uint64_t t = r.api_calls[i].start_ns;
      while (next < it->second.size() && it->second[next]->start_ns <= t)
        open.insert(it->second[next++]->end_ns);
      open.erase(open.begin(), open.upper_bound(t));
      call_depth[i] = static_cast<uint32_t>(open.size());
    }
  }

  for (const NvtxEvent& e : r.nvtx_events) {
    ListingRow row;
    row.kind = e.kind == NvtxKind::kMark ? "mark" : "nvtx";
    row.start_ns = rel(e.start_ns);
    row.duration_ns = Duration(e.start_ns, e.end_ns);
    row.thread_id = e.thread_id;
    row.name = trace.Str(e.message_id);
    const std::string& domain = index.NvtxDomainName(e.domain_id);
    row.details = std::string(ToString(e.kind)) + (domain.empty() ? "" : ", domain " + domain);
    if (e.kind == NvtxKind::kStartEnd && e.end_thread_id != 0 && e.end_thread_id != e.thread_id) {
      row.details += ", ended on thread " + std::to_string(e.end_thread_id);
    }
    if (e.open) row.details += ", still open when recording ended";
    row.depth = e.kind == NvtxKind::kMark ? 0 : range_depth[&e];
    row.pid = trace.header.pid;
    rows.push_back(std::move(row));
  }
  for (size_t i = 0; i < r.api_calls.size(); ++i) {
    const ApiCall& c = r.api_calls[i];
    const std::string& name = index.ApiName(c);
    const bool nested = index.IsNested(i);
    if (!raw && (nested || IsNoiseCall(name, c, r.contexts) ||
                 c.domain == ApiDomain::kInternalLaunch)) {
      continue;
    }
    ListingRow row;
    row.id = c.correlation_id;
    row.kind = "api";
    row.start_ns = rel(c.start_ns);
    row.duration_ns = Duration(c.start_ns, c.end_ns);
    row.thread_id = c.thread_id;
    row.name = name;
    row.details = c.domain == ApiDomain::kRuntime ? "" : ToString(c.domain);
    if (c.return_value != 0) {
      row.details += (row.details.empty() ? "" : ", ") + std::string("returned ") +
                     std::to_string(c.return_value);
    }
    if (c.stack_id != 0) {
      row.call_site = call_sites.Of(c.stack_id).Text();
      if (!row.call_site.empty()) {
        row.details += (row.details.empty() ? "from " : ", from ") + row.call_site;
      }
    }
    row.depth = call_depth[i] + (nested ? 1 : 0);
    row.pid = trace.header.pid;
    rows.push_back(std::move(row));
  }
  for (const DeviceOp& op : index.device_ops()) {
    ListingRow row;
    row.id = op.correlation_id;
    row.kind = ToString(op.kind);
    row.start_ns = rel(op.start_ns);
    row.duration_ns = op.duration();
    row.device_id = op.device_id;
    row.stream_id = op.stream_id;
    row.name = index.OpName(op);
    row.details = OpDetails(index, op);
    if (op.kind == DeviceOpKind::kMemcpy || op.kind == DeviceOpKind::kMemset) row.bytes = op.bytes;
    row.pid = trace.header.pid;
    rows.push_back(std::move(row));
  }
  std::stable_sort(rows.begin(), rows.end(), [](const ListingRow& a, const ListingRow& b) {
    const int ra = Rank(a.kind), rb = Rank(b.kind);
    // Longer first among equal starts: an enclosing range or call before what it contains.
    return std::tie(a.start_ns, ra, b.duration_ns, a.depth) <
           std::tie(b.start_ns, rb, a.duration_ns, b.depth);
  });
  return rows;
}

namespace {

// A Name cell cut to `width`: its indentation and marker kept, the name abbreviated.
std::string FitIndentedName(const std::string& text, size_t width) {
  size_t prefix = text.find_first_not_of(' ');
  if (prefix == std::string::npos) return Truncate(text, width);
  for (std::string_view marker : {"▼ ", "◆ "}) {
    if (text.compare(prefix, marker.size(), marker) == 0) prefix += marker.size();
  }
  const std::string head = text.substr(0, prefix);
  const size_t head_width = DisplayWidth(head);
  if (head_width + 4 > width) return Truncate(text, width);
  return head + FitName(text.substr(prefix), width - head_width);
}

}  // namespace

std::string TraceTable(const std::vector<ListingRow>& rows, size_t terminal_width) {
  if (rows.empty()) return "No activity was recorded.\n";
  std::vector<TableColumn> columns = {{"ID", Align::kRight},
                                      {"Start", Align::kRight},
                                      {"Time", Align::kRight},
                                      {"Thread", Align::kRight},
                                      {"Name", Align::kLeft, true, 16, FitIndentedName},
                                      {"Details", Align::kLeft, true, 12}};
  std::vector<std::vector<std::string>> table;
  for (const ListingRow& row : rows) {
    std::string where = row.thread_id ? std::to_string(*row.thread_id)
                                      : "GPU " + std::to_string(row.device_id.value_or(0));
    std::string name = std::string(2 * row.depth, ' ');
    if (row.kind == "nvtx") name += "▼ ";
    if (row.kind == "mark") name += "◆ ";
    name += row.name;
    table.push_back({row.id ? std::to_string(row.id) : "",
                     FormatDuration(static_cast<double>(row.start_ns)),
                     row.kind == "mark" ? "" : FormatDuration(static_cast<double>(row.duration_ns)),
                     where, name, row.details});
  }
  return RenderTable(columns, table, terminal_width);
}

std::string TraceCsv(const std::vector<ListingRow>& rows) {
  std::string out = CsvLine({"pid", "id", "start_ns", "duration_ns", "kind", "thread_id",
                             "device_id", "stream_id", "depth", "bytes", "name", "details"});
  auto opt = [](const auto& v) { return v ? std::to_string(*v) : std::string(); };
  for (const ListingRow& row : rows) {
    out += CsvLine({std::to_string(row.pid), std::to_string(row.id), std::to_string(row.start_ns),
                    std::to_string(row.duration_ns), row.kind, opt(row.thread_id),
                    opt(row.device_id), opt(row.stream_id), std::to_string(row.depth),
                    opt(row.bytes), row.name, row.details});
  }
  return out;
}

std::string TraceJson(const std::vector<ListingRow>& rows) {
  JsonWriter j;
  j.BeginObject().Key("events").BeginArray();
  for (const ListingRow& row : rows) {
    j.BeginObject()
        .Field("pid", row.pid)
        .Field("id", row.id)
        .Field("start_ns", row.start_ns)
        .Field("duration_ns", row.duration_ns)
        .Field("kind", row.kind);
    if (row.thread_id) j.Field("thread_id", *row.thread_id);
    if (row.device_id) j.Field("device_id", *row.device_id);
    if (row.stream_id) j.Field("stream_id", *row.stream_id);
    j.Field("name", row.name).Field("details", row.details).Field("depth", row.depth);
    if (row.bytes) j.Field("bytes", *row.bytes);
    if (!row.call_site.empty()) j.Field("call_site", row.call_site);
    j.EndObject();
  }
  j.EndArray().EndObject();
  return j.str();
}

}  // namespace libprof::analysis
