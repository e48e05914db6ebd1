#include "analysis/model/stream_deps.h"

#include <algorithm>
#include <tuple>
#include <unordered_set>

#include "analysis/model/api_names.h"
#include "analysis/model/nearly_sorted.h"

namespace libprof::analysis {
namespace {

// Cross-stream links are followed this deep (event wait of an event wait ...); deeper chains
// are rare and their work has long finished.
constexpr int kMaxDepth = 3;
// Earlier event waits examined per stream and query: bounds the cost on traces that wait on
// events in every iteration (older waits were satisfied long before).
constexpr size_t kMaxWaitsPerQuery = 64;

// `found` with only the first (most direct) link per unit, in its order. Without a hash set for
// the usual few links: these run for every synchronising call and blocking copy.
std::vector<Dependency> FirstPerUnit(std::vector<Dependency> found) {
  constexpr size_t kScanUpTo = 64;  // a scan of the kept links beats hashing below this
  std::vector<Dependency> out;
  out.reserve(found.size());
  if (found.size() <= kScanUpTo) {
    for (const Dependency& d : found) {
      if (std::none_of(out.begin(), out.end(), [&](const Dependency& o) { return o.unit == d.unit; }))
        out.push_back(d);
    }
    return out;
  }
  std::unordered_set<uint32_t> seen;
  for (const Dependency& d : found) {
    if (seen.insert(d.unit).second) out.push_back(d);
  }
  return out;
}

}  // namespace

const char* ToString(StreamClass c) {
  switch (c) {
    case StreamClass::kLegacyNull:
      return "legacy-default";
    case StreamClass::kBlocking:
      return "blocking";
    case StreamClass::kNonBlocking:
      return "non-blocking";
    case StreamClass::kPerThread:
      return "per-thread-default";
  }
  return "unknown";
}

const char* ToString(Via via) {
  switch (via) {
    case Via::kSameStream:
      return "stream";
    case Via::kLegacyStream:
      return "legacy-default-stream";
    case Via::kEventWait:
      return "event";
    case Via::kDevice:
      return "device";
  }
  return "unknown";
}

StreamModel::StreamModel(const TraceIndex& index, const Elsewhere& elsewhere)
    : index_(&index) {
  const TraceRecords& r = index.records();
  const auto& ops = index.device_ops();
  auto issue_of = [&](uint64_t corr, uint64_t fallback) {
    const int64_t call = index.LaunchingCall(corr);
    return call >= 0 ? r.api_calls[call].start_ns : fallback;
  };

  // Units: one per correlation id (ops without one stand alone).
  unit_by_corr_.ResetForIds(ops);
  units_.reserve(ops.size());
  for (uint32_t i = 0; i < ops.size(); ++i) {
    const DeviceOp& op = ops[i];
    uint32_t u;
    const int64_t existing = op.correlation_id != 0 ? unit_by_corr_.Find(op.correlation_id) : -1;
    if (existing < 0) {
      u = static_cast<uint32_t>(units_.size());
      WorkUnit unit;
      unit.correlation_id = op.correlation_id;
      unit.issue_ns = issue_of(op.correlation_id, op.start_ns);
      unit.start_ns = op.start_ns;
      unit.end_ns = op.end_ns;
      unit.context_id = op.context_id;
      units_.push_back(std::move(unit));
      if (op.correlation_id != 0) unit_by_corr_.Set(op.correlation_id, u);
    } else {
      u = static_cast<uint32_t>(existing);
    }
    WorkUnit& unit = units_[u];
    unit.ops.push_back(i);
    unit.start_ns = std::min(unit.start_ns, op.start_ns);
    unit.end_ns = std::max(unit.end_ns, op.end_ns);
    if (std::find(unit.streams.begin(), unit.streams.end(), op.stream_id) == unit.streams.end()) {
      unit.streams.push_back(op.stream_id);
      std::sort(unit.streams.begin(), unit.streams.end());
    }
  }

  for (const auto& [stream, context] : elsewhere.streams) streams_[stream].context_id = context;
  for (uint32_t u = 0; u < units_.size(); ++u) {
    for (uint32_t s : units_[u].streams) {
      StreamState& state = streams_[s];
      state.units.push_back(u);
      if (state.context_id == 0) state.context_id = units_[u].context_id;
    }
  }
  for (auto& [id, state] : streams_) {
    // Units come nearly in issue order (a stream runs its work in that order). The unit index
    // settles ties (units without a correlation id issued at one time), which std::sort left
    // in no particular order.
    StableSortNearlySorted(state.units.begin(), state.units.end(), [&](uint32_t a, uint32_t b) {
      return std::tie(units_[a].issue_ns, units_[a].correlation_id, a) <
             std::tie(units_[b].issue_ns, units_[b].correlation_id, b);
    });
    uint64_t running = 0;
    for (uint32_t u : state.units) {
      running = std::max(running, units_[u].end_ns);
      state.max_end.push_back(running);
    }
  }

  // Stream classes.
  per_thread_streams_ = PerThreadStreams(index);
  for (const StreamInfo& s : r.streams) {
    StreamState& state = streams_[s.stream_id];  // known even if it carried no work
    if (state.context_id == 0) state.context_id = s.context_id;
  }
  const StreamClassifier classifier(r);
  for (auto& [id, state] : streams_) {
    state.klass = classifier.Classify(id, per_thread_streams_.contains(id));
  }

  // Events and event waits.
  for (const EarlierEvent& e : elsewhere.events) {
    if (e.sync_id != 0) events_by_sync_[e.sync_id] = e.record;
    events_by_id_[e.event_id].push_back(e.record);
  }
  for (const CudaEvent& e : r.cuda_events) {
    const int64_t call = index.LaunchingCall(e.correlation_id);
    if (call < 0) continue;  // without the cudaEventRecord call we do not know when it was issued
    const EventRecord record{e.stream_id, r.api_calls[call].start_ns, e.correlation_id};
    if (e.sync_id != 0) events_by_sync_[e.sync_id] = record;
    events_by_id_[e.event_id].push_back(record);
  }
  for (auto& [id, list] : events_by_id_) {
    std::sort(list.begin(), list.end(),
              [](const EventRecord& a, const EventRecord& b) { return a.issue_ns < b.issue_ns; });
  }
  for (const Synchronization& s : r.synchronizations) {
    if (s.type != SyncType::kStreamWaitEvent || s.stream_id == kNoStream) continue;
    const uint64_t issue = issue_of(s.correlation_id, s.start_ns);
    auto event = FindEvent(s.event_sync_id, s.event_id, issue);
    if (!event) continue;
    streams_[s.stream_id].waits.push_back({issue, *event});
  }
  for (auto& [id, state] : streams_) {
    std::sort(state.waits.begin(), state.waits.end(),
              [](const auto& a, const auto& b) { return a.issue_ns < b.issue_ns; });
  }
}

std::unordered_set<uint32_t> PerThreadStreams(const TraceIndex& index) {
  std::unordered_set<uint32_t> streams;
  std::unordered_set<uint64_t> units;  // correlation ids whose first operation was counted
  for (const DeviceOp& op : index.device_ops()) {
    const int64_t call = index.LaunchingCall(op.correlation_id);
    if (call < 0 || !index.Traits(index.records().api_calls[call]).per_thread) continue;
    if (units.insert(op.correlation_id).second) streams.insert(op.stream_id);
  }
  return streams;
}

StreamClassifier::StreamClassifier(const TraceRecords& records) {
  for (const ContextInfo& c : records.contexts) {
    null_stream_of_context_[c.context_id] = c.null_stream_id;
    null_streams_.insert(c.null_stream_id);
  }
  for (const StreamInfo& s : records.streams) infos_[s.stream_id] = s;
}

StreamClass StreamClassifier::Classify(uint32_t id, bool per_thread_work) const {
  auto info = infos_.find(id);
  if (info != infos_.end() && info->second.type == StreamType::kNonBlocking) {
    return StreamClass::kNonBlocking;
  }
  if (info != infos_.end() && info->second.type == StreamType::kDefault) {
    return StreamClass::kBlocking;
  }
  if (info != infos_.end() && info->second.type == StreamType::kNull) {
    auto ctx = null_stream_of_context_.find(info->second.context_id);
    const bool other_than_context_null = ctx != null_stream_of_context_.end() && ctx->second != id;
    return (other_than_context_null || per_thread_work) ? StreamClass::kPerThread
                                                        : StreamClass::kLegacyNull;
  }
  if (null_streams_.contains(id)) return StreamClass::kLegacyNull;
  return per_thread_work ? StreamClass::kPerThread : StreamClass::kBlocking;
}

int64_t StreamModel::UnitOf(uint64_t corr) const {
  return corr == 0 ? -1 : unit_by_corr_.Find(corr);
}

StreamClass StreamModel::ClassOf(uint32_t stream_id) const {
  auto it = streams_.find(stream_id);
  return it == streams_.end() ? StreamClass::kBlocking : it->second.klass;
}

std::optional<StreamModel::EventRecord> StreamModel::FindEvent(uint64_t sync_id, uint32_t event_id,
                                                               uint64_t before_ns) const {
  if (sync_id != 0) {
    auto it = events_by_sync_.find(sync_id);
    if (it != events_by_sync_.end()) return it->second;
  }
  auto it = events_by_id_.find(event_id);
  if (it == events_by_id_.end()) return std::nullopt;
  const auto& list = it->second;
  auto pos = std::lower_bound(list.begin(), list.end(), before_ns,
                              [](const EventRecord& e, uint64_t t) { return e.issue_ns < t; });
  if (pos == list.begin()) return std::nullopt;
  return *std::prev(pos);
}

size_t StreamModel::IssuedBefore(const StreamState& state, uint64_t issue_ns, uint64_t corr) const {
  auto pos =
      std::lower_bound(state.units.begin(), state.units.end(), std::make_pair(issue_ns, corr),
                       [&](uint32_t u, const std::pair<uint64_t, uint64_t>& key) {
                         return std::make_pair(units_[u].issue_ns, units_[u].correlation_id) < key;
                       });
  return pos - state.units.begin();
}

void StreamModel::Scan(const StreamState& state, uint64_t issue_ns, uint64_t corr,
                       uint64_t after_ns, Via via, std::vector<Dependency>* out) const {
  // Units issued before (issue_ns, corr), newest first, while any could still be running.
  for (size_t i = IssuedBefore(state, issue_ns, corr); i-- > 0;) {
    if (state.max_end[i] <= after_ns) break;
    const uint32_t u = state.units[i];
    if (units_[u].correlation_id == corr && corr != 0) continue;
    if (units_[u].end_ns > after_ns) out->push_back({u, via});
  }
}

void StreamModel::Visit(uint32_t stream, uint64_t issue_ns, uint64_t corr, uint64_t after_ns,
                        Via via, int depth, std::vector<Dependency>* out) const {
  auto it = streams_.find(stream);
  if (it == streams_.end()) return;
  const StreamState& state = it->second;
  Scan(state, issue_ns, corr, after_ns, via, out);
  if (depth >= kMaxDepth) return;
  const Via implicit = via == Via::kSameStream ? Via::kLegacyStream : via;
  // Implicit synchronisation with the legacy NULL stream of the same context.
  if (state.klass != StreamClass::kNonBlocking) {
    for (const auto& [other_id, other] : streams_) {
      if (other_id == stream || other.klass == StreamClass::kNonBlocking) continue;
      if (state.context_id != 0 && other.context_id != 0 && other.context_id != state.context_id)
        continue;
      const bool legacy_pair =
          state.klass == StreamClass::kLegacyNull || other.klass == StreamClass::kLegacyNull;
      if (legacy_pair) Scan(other, issue_ns, corr, after_ns, implicit, out);
    }
  }
  // Event waits issued on this stream before the operation. A unit of this stream issued after a
  // wait that had already finished by `after_ns` proves that wait satisfied: stop there.
  uint64_t satisfied_before = 0;
  for (size_t i = IssuedBefore(state, issue_ns, corr); i-- > 0;) {
    const WorkUnit& u = units_[state.units[i]];
    if (u.end_ns <= after_ns) {
      satisfied_before = u.issue_ns;
      break;
    }
  }
  auto wait_end = std::lower_bound(state.waits.begin(), state.waits.end(), issue_ns,
                                   [](const auto& w, uint64_t t) { return w.issue_ns < t; });
  size_t examined = 0;
  for (auto w = wait_end; w != state.waits.begin() && examined < kMaxWaitsPerQuery; ++examined) {
    --w;
    if (w->issue_ns < satisfied_before) break;
    const Via event_via = via == Via::kDevice ? via : Via::kEventWait;
    Visit(w->event.stream_id, w->event.issue_ns, w->event.correlation_id, after_ns, event_via,
          depth + 1, out);
  }
}

std::vector<Dependency> StreamModel::PendingOnStream(uint32_t stream, uint64_t issue_ns,
                                                     uint64_t corr, uint64_t after_ns) const {
  std::vector<Dependency> found;
  Visit(stream, issue_ns, corr, after_ns, Via::kSameStream, 0, &found);
  return FirstPerUnit(std::move(found));
}

std::vector<Dependency> StreamModel::PendingOnDevice(uint64_t issue_ns, uint64_t corr,
                                                     uint64_t after_ns) const {
  std::vector<Dependency> found;
  for (const auto& [id, state] : streams_)
    Scan(state, issue_ns, corr, after_ns, Via::kDevice, &found);
  return FirstPerUnit(std::move(found));
}

}  // namespace libprof::analysis
