#include "analysis/metrics/streams.h"

#include <algorithm>
#include <map>
#include <optional>
#include <string>
#include <unordered_set>
#include <utility>

#include "analysis/model/trace_index.h"

namespace libprof::analysis {
namespace {

uint64_t Length(const std::vector<Interval>& merged) {
  uint64_t total = 0;
  for (const Interval& i : merged) total += i.length();
  return total;
}

// Per device: the raw intervals the overlap figures are computed from.
struct DeviceWork {
  std::vector<Interval> kernels;
  std::vector<std::pair<uint32_t, Interval>> queued;  // (stream, [issue, start)) per kernel
  // (stream, interval) per copy, by direction.
  std::array<std::vector<std::pair<uint32_t, Interval>>, kCopyDirections> copies;
};

// The union of the queued intervals of kernels on streams other than `stream`.
std::vector<Interval> QueuedElsewhere(const DeviceWork& work, uint32_t stream) {
  std::vector<Interval> q;
  for (const auto& [s, i] : work.queued) {
    if (s != stream) q.push_back(i);
  }
  return MergeIntervals(std::move(q));
}

CopyOverlap Overlap(const std::vector<std::pair<uint32_t, Interval>>& copies,
                    const std::vector<Interval>& kernels, const DeviceWork& work,
                    std::map<uint32_t, std::vector<Interval>>* queued_cache) {
  CopyOverlap o;
  std::vector<Interval> all;
  std::vector<Interval> while_queued;
  for (const auto& [stream, c] : copies) {
    all.push_back(c);
    auto it = queued_cache->find(stream);
    if (it == queued_cache->end()) {
      it = queued_cache->emplace(stream, QueuedElsewhere(work, stream)).first;
    }
    for (const Interval& part : Intersect({c}, it->second)) while_queued.push_back(part);
  }
  const std::vector<Interval> merged = MergeIntervals(std::move(all));
  o.copy_ns = Length(merged);
  o.with_kernel_ns = Length(Intersect(merged, kernels));
  o.could_overlap_ns = Length(Subtract(MergeIntervals(std::move(while_queued)), kernels));
  return o;
}

}  // namespace

const char* ToString(CopyDirection d) {
  switch (d) {
    case CopyDirection::kHtoD:
      return "HtoD";
    case CopyDirection::kDtoH:
      return "DtoH";
    case CopyDirection::kDtoD:
      return "DtoD";
    case CopyDirection::kOther:
      return "other";
  }
  return "other";
}

CopyDirection DirectionOf(CopyKind kind) {
  switch (kind) {
    case CopyKind::kHtoD:
      return CopyDirection::kHtoD;
    case CopyKind::kDtoH:
      return CopyDirection::kDtoH;
    case CopyKind::kDtoD:
      return CopyDirection::kDtoD;
    default:
      return CopyDirection::kOther;
  }
}

std::vector<Interval> Subtract(const std::vector<Interval>& a, const std::vector<Interval>& b) {
  std::vector<Interval> out;
  size_t j = 0;
  for (Interval i : a) {
    while (j < b.size() && b[j].end_ns <= i.start_ns) ++j;
    uint64_t cursor = i.start_ns;
    for (size_t k = j; k < b.size() && b[k].start_ns < i.end_ns; ++k) {
      if (b[k].start_ns > cursor) out.push_back({cursor, b[k].start_ns});
      cursor = std::max(cursor, b[k].end_ns);
    }
    if (cursor < i.end_ns) out.push_back({cursor, i.end_ns});
  }
  return out;
}

uint64_t CoveredAtLeast(std::vector<Interval> intervals, int k) {
  // Sweep line: +1 at each start, -1 at each end; ends sort before starts at the same instant,
  // so touching intervals do not count as concurrent.
  std::vector<std::pair<uint64_t, int>> events;
  events.reserve(intervals.size() * 2);
  for (const Interval& i : intervals) {
    if (i.end_ns <= i.start_ns) continue;
    events.push_back({i.start_ns, +1});
    events.push_back({i.end_ns, -1});
  }
  std::sort(events.begin(), events.end());
  uint64_t total = 0;
  int depth = 0;
  uint64_t last = 0;
  for (const auto& [t, delta] : events) {
    if (depth >= k) total += t - last;
    depth += delta;
    last = t;
  }
  return total;
}

namespace {

std::string Gpu(uint32_t device) { return "GPU " + std::to_string(device); }

// Where a copy reads and writes: a peer copy names both devices; a device-to-device copy stays on
// its device; host and array memory count as "host" (arrays live on the device: named so).
void CountLink(const Memcpy& m, uint64_t ns,
               std::map<std::pair<std::string, std::string>, CopyLink>* links,
               std::map<uint32_t, DeviceCopies>* devices) {
  std::string from, to;
  std::optional<uint32_t> src, dst;
  switch (m.copy_kind) {
    case CopyKind::kHtoD: case CopyKind::kHtoA:
      from = "host", dst = m.device_id;
      break;
    case CopyKind::kDtoH: case CopyKind::kAtoH:
      src = m.device_id, to = "host";
      break;
    case CopyKind::kPtoP:
      src = m.src_device_id, dst = m.dst_device_id;
      break;
    case CopyKind::kHtoH:
      from = "host", to = "host";
      break;
    default:  // DtoD and the array kinds on one device
      src = m.device_id, dst = m.device_id;
      break;
  }
  if (src) from = Gpu(*src);
  if (dst) to = Gpu(*dst);
  CopyLink& link = (*links)[{from, to}];
  link.from = from, link.to = to;
  ++link.count;
  link.bytes += m.bytes;
  link.total_ns += ns;
  for (auto [device, into] : {std::pair{src, false}, std::pair{dst, true}}) {
    if (!device || (into && src == dst)) continue;  // a copy within one device counts once
    DeviceCopies& d = (*devices)[*device];
    d.device_id = *device;
    ++d.count;
    d.total_ns += ns;
    (into ? d.bytes_in : d.bytes_out) += m.bytes;
    if (src == dst) d.bytes_in += m.bytes;
  }
}

}  // namespace

namespace {

// Stream classes from `classifier` and `per_thread` (StreamModel's rules, without its units).
StreamsReport Analyze(const ProcessTrace& trace, const TraceIndex& index,
                      const StreamClassifier& classifier,
                      const std::unordered_set<uint32_t>& per_thread) {
  StreamsReport report;
  report.pid = trace.header.pid;
  report.file = trace.path;
  report.trace_ns = trace.window_ns();
  const std::vector<Interval> windows = MergeIntervals(trace.windows);
  const TraceRecords& r = trace.records;

  std::unordered_set<uint32_t> recorded;
  for (const StreamInfo& s : r.streams) recorded.insert(s.stream_id);

  // Clips [start, end) to the analysed time; the pieces may be several with --nvtx windows.
  auto clip = [&](uint64_t start, uint64_t end) { return Intersect({{start, end}}, windows); };

  std::map<std::pair<uint32_t, uint32_t>, StreamStats> streams;  // (device, stream)
  std::map<std::pair<uint32_t, uint32_t>, std::vector<Interval>> busy;
  std::map<uint32_t, DeviceWork> devices;
  std::map<std::pair<std::string, std::string>, CopyLink> links;
  std::map<uint32_t, DeviceCopies> device_copies;
  for (const DeviceOp& op : index.device_ops()) {
    const std::vector<Interval> pieces = clip(op.start_ns, op.end_ns);
    if (pieces.empty() && op.duration() > 0) continue;  // outside the analysed time
    const uint64_t clipped = Length(pieces);
    const auto key = std::make_pair(op.device_id, op.stream_id);
    StreamStats& s = streams[key];
    s.device_id = op.device_id;
    s.stream_id = op.stream_id;
    std::vector<Interval>& b = busy[key];
    b.insert(b.end(), pieces.begin(), pieces.end());
    DeviceWork& work = devices[op.device_id];
    OpTally* tally = nullptr;
    switch (op.kind) {
      case DeviceOpKind::kKernel: {
        tally = &s.kernels;
        work.kernels.insert(work.kernels.end(), pieces.begin(), pieces.end());
        const int64_t call = index.LaunchingCall(op.correlation_id);
        if (call >= 0) {
          for (const Interval& q : clip(r.api_calls[call].start_ns, op.start_ns)) {
            work.queued.push_back({op.stream_id, q});
          }
        }
        break;
      }
      case DeviceOpKind::kMemcpy: {
        CountLink(r.memcpys[op.record], clipped, &links, &device_copies);
        const CopyDirection d = DirectionOf(r.memcpys[op.record].copy_kind);
        tally = &s.copies[static_cast<size_t>(d)];
        for (const Interval& p : pieces) {
          work.copies[static_cast<size_t>(d)].push_back({op.stream_id, p});
        }
        break;
      }
      case DeviceOpKind::kMemset:
        tally = &s.memsets;
        break;
      case DeviceOpKind::kGraph:
        tally = &s.graphs;
        break;
    }
    ++tally->count;
    tally->total_ns += clipped;
  }

  for (auto& [key, s] : streams) {
    s.klass = classifier.Classify(s.stream_id, per_thread.contains(s.stream_id));
    s.from_record = recorded.contains(s.stream_id);
    s.busy_ns = UnionLength(busy[key]);
    report.streams.push_back(s);
  }

  for (auto& [device_id, work] : devices) {
    DeviceOverlap d;
    d.device_id = device_id;
    const std::vector<Interval> kernels = MergeIntervals(work.kernels);
    d.kernel_ns = Length(kernels);
    d.multi_kernel_ns = CoveredAtLeast(work.kernels, 2);
    std::map<uint32_t, std::vector<Interval>> queued_cache;
    std::vector<std::pair<uint32_t, Interval>> all_copies;
    for (size_t i = 0; i < kCopyDirections; ++i) {
      d.by_direction[i] = Overlap(work.copies[i], kernels, work, &queued_cache);
      all_copies.insert(all_copies.end(), work.copies[i].begin(), work.copies[i].end());
    }
    d.all = Overlap(all_copies, kernels, work, &queued_cache);
    report.devices.push_back(d);
  }
  for (auto& [key, link] : links) report.links.push_back(std::move(link));
  for (auto& [id, d] : device_copies) report.device_copies.push_back(d);
  return report;
}

void AddTally(const OpTally& from, OpTally* to) {
  to->count += from.count;
  to->total_ns += from.total_ns;
}

void AddOverlap(const CopyOverlap& from, CopyOverlap* to) {
  to->copy_ns += from.copy_ns;
  to->with_kernel_ns += from.with_kernel_ns;
  to->could_overlap_ns += from.could_overlap_ns;
}

}  // namespace

StreamsReport AnalyzeStreams(const ProcessTrace& trace) {
  const TraceIndex index(trace);
  return Analyze(trace, index, StreamClassifier(trace.records), PerThreadStreams(index));
}

void StreamsAccumulator::Add(const ProcessTrace& window) {
  const TraceIndex index(window);
  const std::unordered_set<uint32_t> per_thread = PerThreadStreams(index);
  // The classes are decided in Finish, from the whole process.
  const StreamsReport part = Analyze(window, index, StreamClassifier(window.records), per_thread);
  per_thread_.insert(per_thread.begin(), per_thread.end());
  for (const StreamStats& s : part.streams) {
    StreamStats& to = streams_[{s.device_id, s.stream_id}];
    to.device_id = s.device_id;
    to.stream_id = s.stream_id;
    AddTally(s.kernels, &to.kernels);
    for (size_t i = 0; i < kCopyDirections; ++i) AddTally(s.copies[i], &to.copies[i]);
    AddTally(s.memsets, &to.memsets);
    AddTally(s.graphs, &to.graphs);
    to.busy_ns += s.busy_ns;
  }
  for (const DeviceOverlap& d : part.devices) {
    DeviceOverlap& to = devices_[d.device_id];
    to.device_id = d.device_id;
    to.kernel_ns += d.kernel_ns;
    to.multi_kernel_ns += d.multi_kernel_ns;
    for (size_t i = 0; i < kCopyDirections; ++i) AddOverlap(d.by_direction[i], &to.by_direction[i]);
    AddOverlap(d.all, &to.all);
  }
  for (const CopyLink& l : part.links) {
    CopyLink& to = links_[{l.from, l.to}];
    to.from = l.from;
    to.to = l.to;
    to.count += l.count;
    to.bytes += l.bytes;
    to.total_ns += l.total_ns;
  }
  for (const DeviceCopies& d : part.device_copies) {
    DeviceCopies& to = device_copies_[d.device_id];
    to.device_id = d.device_id;
    to.count += d.count;
    to.bytes_in += d.bytes_in;
    to.bytes_out += d.bytes_out;
    to.total_ns += d.total_ns;
  }
}

StreamsReport StreamsAccumulator::Finish(const ProcessTrace& whole) const {
  StreamsReport report;
  report.pid = whole.header.pid;
  report.file = whole.path;
  report.trace_ns = whole.window_ns();
  const StreamClassifier classifier(whole.records);
  std::unordered_set<uint32_t> recorded;
  for (const StreamInfo& s : whole.records.streams) recorded.insert(s.stream_id);
  for (const auto& [key, s] : streams_) {
    StreamStats out = s;
    out.klass = classifier.Classify(s.stream_id, per_thread_.contains(s.stream_id));
    out.from_record = recorded.contains(s.stream_id);
    report.streams.push_back(out);
  }
  for (const auto& [id, d] : devices_) report.devices.push_back(d);
  for (const auto& [key, l] : links_) report.links.push_back(l);
  for (const auto& [id, d] : device_copies_) report.device_copies.push_back(d);
  return report;
}

}  // namespace libprof::analysis
