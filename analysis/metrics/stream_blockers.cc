#include "analysis/metrics/stream_blockers.h"

#include <algorithm>

namespace libprof::analysis {

StreamBlockers::StreamBlockers(const TraceIndex& index, Carried* carried) {
  const TraceRecords& r = index.records();
  // Host functions (the outermost call names the stream; its nested driver call may too), and
  // the calls that begin or end a stream capture, by thread.
  std::vector<uint32_t> functions, bounds;
  for (uint32_t i = 0; i < r.api_calls.size(); ++i) {
    const ApiCall& c = r.api_calls[i];
    if (index.Outermost(i) != i) continue;
    if (c.stream_id != kNoStream) functions.push_back(i);
    if (index.Traits(c).capture != CaptureBound::kNone) bounds.push_back(i);
  }
  std::map<uint32_t, bool> capturing_here;
  std::map<uint32_t, bool>& capturing = carried != nullptr ? carried->capturing : capturing_here;
  if (!bounds.empty() || !functions.empty()) {
    // One sweep over both, in start order: a function is captured when its thread's last bound
    // before it began a capture.
    std::vector<uint32_t> calls = functions;
    calls.insert(calls.end(), bounds.begin(), bounds.end());
    std::stable_sort(calls.begin(), calls.end(), [&](uint32_t a, uint32_t b) {
      return r.api_calls[a].start_ns < r.api_calls[b].start_ns;
    });
    for (uint32_t i : calls) {
      const ApiCall& c = r.api_calls[i];
      const CaptureBound bound = index.Traits(c).capture;
      if (bound != CaptureBound::kNone) {
        capturing[c.thread_id] = bound == CaptureBound::kBegin;
      } else if (!capturing[c.thread_id]) {
        streams_[c.stream_id].blockers.push_back(
            {c.correlation_id, c.name_id,
             index.Traits(c).memory_wait ? Kind::kMemoryWait : Kind::kHostFunction});
      }
    }
  }
  if (carried != nullptr) {
    for (const auto& [stream, b] : carried->pending) streams_[stream].blockers.push_back(b);
  }
  const bool any_events = carried != nullptr && !carried->held_events.empty();
  const bool several_devices = SeveralDevices(index);
  if (streams_.empty() && !any_events && !several_devices) return;
  auto settle = [&] {
    for (auto& [id, s] : streams_) std::sort(s.blockers.begin(), s.blockers.end());
  };
  for (const DeviceOp& op : index.device_ops()) {
    streams_[op.stream_id].ops.push_back(op.correlation_id);
    context_of_.try_emplace(op.stream_id, op.context_id);
  }
  for (auto& [id, s] : streams_) std::sort(s.ops.begin(), s.ops.end());
  settle();
  // Recordings queued behind a host function hold the streams that wait on them.
  std::unordered_map<uint64_t, Blocker> held_here;
  std::unordered_map<uint64_t, Blocker>& held =
      carried != nullptr ? carried->held_events : held_here;
  for (const CudaEvent& e : r.cuda_events) {
    auto s = streams_.find(e.stream_id);
    if (s == streams_.end()) continue;
    if (const Blocker* b = BehindIn(s->second, e.correlation_id)) held[e.sync_id] = *b;
  }
  bool waits = false;
  for (const Synchronization& w : r.synchronizations) {
    if (w.type != SyncType::kStreamWaitEvent || w.stream_id == kNoStream) continue;
    auto h = held.find(w.event_sync_id);
    if (h == held.end()) continue;
    streams_[w.stream_id].blockers.push_back({w.correlation_id, h->second.name_id, h->second.kind});
    waits = true;
  }
  if (several_devices && AddOtherDeviceWaits(index)) waits = true;
  if (waits) settle();
  // The legacy-stream links (LinkedStreams).
  classifier_.emplace(r);
  for (const ContextInfo& ctx : r.contexts) legacy_of_context_[ctx.context_id] = ctx.null_stream_id;
  for (const StreamInfo& info : r.streams) context_of_.try_emplace(info.stream_id, info.context_id);
  if (carried == nullptr) return;
  // What the next window's operations may still wait behind: a stream's last blocker with no
  // operation issued after it.
  for (const auto& [id, s] : streams_) {
    if (s.blockers.empty()) continue;
    const Blocker& last = s.blockers.back();
    if (s.ops.empty() || s.ops.back() < last.correlation_id) {
      carried->pending[id] = last;
    } else {
      carried->pending.erase(id);
    }
  }
}

bool StreamBlockers::SeveralDevices(const TraceIndex& index) {
  const TraceRecords& r = index.records();
  if (r.synchronizations.empty() || r.cuda_events.empty()) return false;
  const uint32_t first = r.cuda_events.front().device_id;
  return std::any_of(r.contexts.begin(), r.contexts.end(),
                     [&](const ContextInfo& c) { return c.device_id != first; }) ||
         std::any_of(r.cuda_events.begin(), r.cuda_events.end(),
                     [&](const CudaEvent& e) { return e.device_id != first; });
}

bool StreamBlockers::AddOtherDeviceWaits(const TraceIndex& index) {
  const TraceRecords& r = index.records();
  std::unordered_map<uint64_t, const CudaEvent*> recording;  // by sync id
  for (const CudaEvent& e : r.cuda_events) {
    if (e.sync_id != 0) recording[e.sync_id] = &e;
  }
  std::unordered_map<uint32_t, uint32_t> device_of_context;
  for (const ContextInfo& c : r.contexts) device_of_context[c.context_id] = c.device_id;
  // The waits on a recording of another device (the waiting stream's device is its context's),
  // and the streams those recordings are on.
  std::vector<std::pair<const Synchronization*, const CudaEvent*>> crossing;
  std::unordered_map<uint32_t, std::vector<std::pair<uint64_t, uint64_t>>> ends;
  for (const Synchronization& w : r.synchronizations) {
    if (w.type != SyncType::kStreamWaitEvent || w.stream_id == kNoStream) continue;
    auto e = recording.find(w.event_sync_id);
    auto waiting = device_of_context.find(w.context_id);
    if (e == recording.end() || waiting == device_of_context.end()) continue;
    if (e->second->device_id == waiting->second) continue;
    crossing.push_back({&w, e->second});
    ends.try_emplace(e->second->stream_id);
  }
  if (crossing.empty()) return false;
  // Those streams' operations by correlation id, with their ends.
  for (const DeviceOp& op : index.device_ops()) {
    auto list = ends.find(op.stream_id);
    if (list != ends.end()) list->second.push_back({op.correlation_id, op.end_ns});
  }
  for (auto& [id, list] : ends) std::sort(list.begin(), list.end());
  bool added = false;
  for (const auto& [w, e] : crossing) {
    // The work the recording follows on its stream: the last operation issued before it.
    const auto& list = ends[e->stream_id];
    auto after = std::lower_bound(list.begin(), list.end(),
                                  std::pair<uint64_t, uint64_t>{e->correlation_id, 0});
    const int64_t call = index.LaunchingCall(w->correlation_id);
    if (after == list.begin() || call < 0) continue;
    streams_[w->stream_id].blockers.push_back(
        {w->correlation_id, r.api_calls[static_cast<size_t>(call)].name_id, Kind::kOtherDevice,
         std::prev(after)->second});
    added = true;
  }
  return added;
}

const StreamBlockers::Blocker* StreamBlockers::BehindIn(const Stream& s,
                                                        uint64_t correlation_id) const {
  auto b = std::lower_bound(s.blockers.begin(), s.blockers.end(),
                            Blocker{.correlation_id = correlation_id});
  if (b == s.blockers.begin()) return nullptr;
  --b;
  auto before = std::lower_bound(s.ops.begin(), s.ops.end(), correlation_id);
  if (before != s.ops.begin() && *std::prev(before) > b->correlation_id) return nullptr;
  return &*b;
}

std::vector<uint32_t> StreamBlockers::LinkedStreams(uint32_t stream, uint32_t context) const {
  std::vector<uint32_t> linked;
  auto legacy = legacy_of_context_.find(context);
  if (!classifier_ || legacy == legacy_of_context_.end()) return linked;
  auto links = [&](uint32_t id) {
    const StreamClass klass = classifier_->Classify(id, false);
    return klass == StreamClass::kBlocking || klass == StreamClass::kPerThread;
  };
  if (stream != legacy->second) {
    if (links(stream)) linked.push_back(legacy->second);
    return linked;
  }
  for (const auto& [id, s] : streams_) {
    auto ctx = context_of_.find(id);
    if (id != stream && !s.blockers.empty() && ctx != context_of_.end() && ctx->second == context &&
        links(id)) {
      linked.push_back(id);
    }
  }
  return linked;
}

std::optional<StreamBlockers::Blocker> StreamBlockers::Behind(const DeviceOp& op) const {
  if (streams_.empty()) return std::nullopt;
  auto own = streams_.find(op.stream_id);
  if (own == streams_.end()) return std::nullopt;
  const Blocker* best = BehindIn(own->second, op.correlation_id);
  // The operation before `op` on its own stream, by correlation id (0: none).
  const std::vector<uint64_t>& own_ops = own->second.ops;
  auto before = std::lower_bound(own_ops.begin(), own_ops.end(), op.correlation_id);
  const uint64_t own_before = before == own_ops.begin() ? 0 : *std::prev(before);
  for (uint32_t linked : LinkedStreams(op.stream_id, op.context_id)) {
    auto other = streams_.find(linked);
    if (other == streams_.end()) continue;
    const Blocker* b = BehindIn(other->second, op.correlation_id);
    if (b == nullptr || b->correlation_id < own_before) continue;
    if (best == nullptr || b->correlation_id > best->correlation_id) best = b;
  }
  if (best == nullptr) return std::nullopt;
  return *best;
}

}  // namespace libprof::analysis
