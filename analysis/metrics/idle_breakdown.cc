#include "analysis/metrics/idle_breakdown.h"

#include <algorithm>
#include <map>
#include <optional>
#include <span>
#include <unordered_map>

#include "analysis/metrics/stream_blockers.h"
#include "analysis/model/api_names.h"

namespace libprof::analysis {
namespace {

// A call that held the host until the device had done something: it synchronises (explicitly,
// implicitly or through a SYNCHRONIZATION record), or it issued a copy or memset that blocks the
// host (synchronous, or with pageable or managed host memory: the rule of findings.h).
// `issued`: the call's operations (TraceIndex::OpsOf).
bool BlocksHost(const TraceIndex& index, const ApiCall& call, bool has_sync_record,
                std::span<const uint32_t> issued) {
  const ApiTraits& traits = index.Traits(call);
  if (has_sync_record || traits.explicit_sync != SyncScope::kNone || traits.implicit_sync) {
    return true;
  }
  const TraceRecords& r = index.records();
  for (uint32_t o : issued) {
    const DeviceOp& op = index.device_ops()[o];
    if (op.kind == DeviceOpKind::kMemcpy) {
      const Memcpy& m = r.memcpys[op.record];
      auto host_bound = [](MemoryKind k) {
        return k == MemoryKind::kPageable || k == MemoryKind::kManaged;
      };
      // (A copy between GPUs staged through host memory holds the host as a pageable one does.)
      if (!m.async || host_bound(m.src_kind) || host_bound(m.dst_kind) || IsStagedPeerPiece(m)) {
        return true;
      }
    } else if (op.kind == DeviceOpKind::kMemset && !r.memsets[op.record].async) {
      return true;
    }
  }
  return false;
}

// One thread's top-level calls, by start, and the running maximum of their end times: `at(k)`
// gives the k-th.
struct KeptThreadCalls {  // of earlier windows and this one, for a gap that began earlier
  std::vector<HostCall> calls;
  std::vector<uint64_t> max_end;
  const std::vector<uint64_t>& max_end_list() const { return max_end; }
  size_t size() const { return calls.size(); }
  HostCall at(size_t k) const { return calls[k]; }
};
struct WindowThreadCalls {  // of this window (TraceIndex::TopLevelCalls)
  const TraceRecords* records = nullptr;
  const std::vector<CallClass>* classes = nullptr;
  const TraceIndex::ThreadCalls* thread = nullptr;
  const std::vector<uint64_t>& max_end_list() const { return thread->max_end; }
  size_t size() const { return thread->calls.size(); }
  HostCall at(size_t k) const {
    const uint32_t i = thread->calls[k];
    const ApiCall& c = records->api_calls[i];
    return {c.start_ns, c.end_ns, c.thread_id, c.name_id, (*classes)[i]};
  }
};

template <typename Calls, typename StartOf>
void SortByStart(Calls* t, StartOf start_of) {
  std::stable_sort(t->calls.begin(), t->calls.end(),
                   [&](const auto& a, const auto& b) { return start_of(a) < start_of(b); });
  uint64_t running = 0;
  t->max_end.clear();
  for (size_t k = 0; k < t->size(); ++k) {
    running = std::max(running, t->at(k).end_ns);
    t->max_end.push_back(running);
  }
}

IdleCause CauseOf(CallClass c) {
  return c == CallClass::kSync     ? IdleCause::kSync
         : c == CallClass::kLaunch ? IdleCause::kLaunch
                                   : IdleCause::kOther;
}

// Pieces of [from, to) by what the thread of `t` was doing: the earlier of two overlapping
// calls wins; time in calls that issue no work is kOther with the call, outside calls kOther
// alone.
template <typename Calls>
void Walk(const Calls* t, uint64_t from, uint64_t to, std::vector<IdlePiece>* out) {
  if (to <= from) return;
  uint64_t cursor = from;
  if (t != nullptr) {
    const std::vector<uint64_t>& max_end = t->max_end_list();
    size_t k = std::upper_bound(max_end.begin(), max_end.end(), from) - max_end.begin();
    for (; k < t->size(); ++k) {
      const HostCall c = t->at(k);
      if (c.start_ns >= to) break;
      const uint64_t s = std::max(cursor, c.start_ns);
      const uint64_t e = std::min(to, c.end_ns);
      if (e <= s) continue;
      if (s > cursor) out->push_back({{cursor, s}, IdleCause::kOther, -1});
      out->push_back({{s, e}, CauseOf(c.klass), c.name_id});
      cursor = e;
    }
  }
  if (cursor < to) out->push_back({{cursor, to}, IdleCause::kOther, -1});
}

// The class of each top-level call of the window (others: kOther).
std::vector<CallClass> ClassifyCalls(const TraceIndex& index) {
  const TraceRecords& r = index.records();
  std::unordered_map<uint64_t, bool> synced;  // correlation ids with a SYNCHRONIZATION record
  for (const Synchronization& s : r.synchronizations) {
    if (s.type != SyncType::kStreamWaitEvent) synced[s.correlation_id] = true;
  }
  std::vector<CallClass> classes(r.api_calls.size(), CallClass::kOther);
  for (uint32_t i = 0; i < r.api_calls.size(); ++i) {
    if (index.Outermost(i) != i) continue;
    const ApiCall& c = r.api_calls[i];
    const std::span<const uint32_t> issued = index.OpsOf(c.correlation_id);
    if (BlocksHost(index, c, synced.contains(c.correlation_id), issued)) {
      classes[i] = CallClass::kSync;
    } else if (!issued.empty()) {
      classes[i] = CallClass::kLaunch;
    }
  }
  return classes;
}

IdleCause CauseOf(StreamBlockers::Kind kind) {
  switch (kind) {
    case StreamBlockers::Kind::kMemoryWait:
      return IdleCause::kMemoryWait;
    case StreamBlockers::Kind::kOtherDevice:
      return IdleCause::kOtherDevice;
    case StreamBlockers::Kind::kHostFunction:
      break;
  }
  return IdleCause::kHostFunction;
}

}  // namespace

std::vector<DeviceIdle> ClassifyIdle(const TraceIndex& index) {
  IdleTimeline timeline;
  std::vector<DeviceIdle> out = timeline.Add(index);
  std::erase_if(out, [](const DeviceIdle& d) { return d.busy.empty(); });
  return out;
}

std::vector<DeviceIdle> IdleTimeline::Add(const TraceIndex& index) {
  kept_.swap(next_kept_);
  next_kept_.clear();
  const auto& ops = index.device_ops();
  const TraceRecords& r = index.records();
  const std::vector<CallClass> classes = ClassifyCalls(index);
  const StreamBlockers blockers(index, windowed_ ? &blockers_ : nullptr);
  auto in_window = [&](uint32_t tid) -> std::optional<WindowThreadCalls> {
    const TraceIndex::ThreadCalls* t = index.TopLevelCalls(tid);
    if (t == nullptr) return std::nullopt;
    return WindowThreadCalls{&r, &classes, t};
  };
  // Whether an operation issued by the same call as `op` started before `t`.
  auto started_before = [&](const DeviceOp& op, uint64_t t) {
    for (uint32_t o : index.OpsOf(op.correlation_id)) {
      if (ops[o].start_ns < t) return true;
    }
    return false;
  };
  auto host_call = [&](uint32_t i) {
    const ApiCall& c = r.api_calls[i];
    return HostCall{c.start_ns, c.end_ns, c.thread_id, c.name_id, classes[i]};
  };
  // The calls of `tid` in the kept windows, and those of this one that start before `to`, for
  // a gap that began earlier and is walked up to `to`: Walk stops at the first call that starts
  // at `to` or later, so the window's later calls (by start: most of them) are not copied.
  auto spanning = [&](uint32_t tid, uint64_t to) {
    KeptThreadCalls t;
    for (const HostCall& c : kept_) {
      if (c.thread_id == tid) t.calls.push_back(c);
    }
    if (const auto own = in_window(tid)) {
      for (size_t k = 0; k < own->size() && own->at(k).start_ns < to; ++k) {
        t.calls.push_back(own->at(k));
      }
    }
    SortByStart(&t, [](const HostCall& c) { return c.start_ns; });
    return t;
  };
  // Appends the pieces of `whole` that operation `next` ended; `crosses`: the gap began in an
  // earlier window.
  auto classify = [&](const Interval& whole, const DeviceOp& next, bool crosses,
                      std::vector<IdlePiece>* out) {
    // A graph node with no correlation id was launched by the device inside a graph already
    // running: a conditional node's body (each IF/WHILE iteration starts it anew) or a graph
    // launched from the device. Its predecessor in the graph ran before the gap.
    if (next.correlation_id == 0 && next.graph_id != 0) {
      out->push_back({whole, IdleCause::kInGraph, -1});
      return;
    }
    const int64_t found = index.LaunchingCall(next.correlation_id);
    if (found < 0) {
      out->push_back({whole, IdleCause::kOther, -1});
      return;
    }
    const HostCall l = host_call(index.Outermost(static_cast<size_t>(found)));
    // Behind a host function, a memory wait or another device's work (StreamBlockers), or
    // inside a CUDA graph launch already running (an earlier node of it started before the gap;
    // it has passed whatever its stream held before it): from the issuing call's return on, the
    // operation waited for that, not for the host.
    Interval gap = whole;
    const bool in_graph = next.graph_id != 0 && started_before(next, whole.start_ns);
    std::optional<StreamBlockers::Blocker> blocker =
        in_graph ? std::nullopt : blockers.Behind(next);
    // Another device's work that ended before the gap began held nothing.
    if (blocker && blocker->kind == StreamBlockers::Kind::kOtherDevice &&
        blocker->until_ns <= whole.start_ns) {
      blocker.reset();
    }
    // What held the operation after the call's return (read here, once, while `blocker` is
    // known to be set: GCC cannot tell further down).
    const bool held = blocker.has_value() || in_graph;
    const IdleCause held_by = in_graph  ? IdleCause::kInGraph
                              : blocker ? CauseOf(blocker->kind)
                                        : IdleCause::kOther;
    const int64_t held_name = in_graph  ? static_cast<int64_t>(l.name_id)
                              : blocker ? static_cast<int64_t>(blocker->name_id)
                                        : int64_t{-1};
    if (held) gap.end_ns = std::clamp(l.end_ns, whole.start_ns, whole.end_ns);
    const uint64_t cut = std::clamp(l.start_ns, gap.start_ns, gap.end_ns);
    if (crosses) {
      const KeptThreadCalls t = spanning(l.thread_id, cut);
      Walk(&t, gap.start_ns, cut, out);
    } else {
      const auto own = in_window(l.thread_id);
      Walk(own ? &*own : nullptr, gap.start_ns, cut, out);
    }
    if (cut < gap.end_ns) {
      const IdleCause cause = l.klass == CallClass::kSync ? IdleCause::kSync : IdleCause::kLaunch;
      out->push_back({{cut, gap.end_ns}, cause, l.name_id});
    }
    if (gap.end_ns < whole.end_ns) {
      out->push_back({{gap.end_ns, whole.end_ns}, held_by, held_name});
    }
  };

  std::map<uint32_t, std::vector<uint32_t>> by_device;  // ops, by start
  {
    // A device's ops come in runs: its list is looked up once per run, not per op.
    uint32_t last_device = 0;
    std::vector<uint32_t>* list = nullptr;
    for (uint32_t o = 0; o < ops.size(); ++o) {
      if (list == nullptr || ops[o].device_id != last_device) {
        last_device = ops[o].device_id;
        list = &by_device[last_device];
      }
      list->push_back(o);
    }
  }
  std::vector<DeviceIdle> out;
  for (const auto& [device, list] : by_device) {
    DeviceIdle d;
    d.device_id = device;
    d.ops = list;
    // The ops are by start: merged as they come (MergeIntervals' result, without a list of all).
    for (uint32_t o : list) {
      const DeviceOp& op = ops[o];
      if (op.end_ns <= op.start_ns) continue;
      if (!d.busy.empty() && op.start_ns <= d.busy.back().end_ns) {
        d.busy.back().end_ns = std::max(d.busy.back().end_ns, op.end_ns);
      } else {
        d.busy.push_back({op.start_ns, op.end_ns});
      }
    }
    if (d.busy.empty()) {
      out.push_back(std::move(d));
      continue;
    }
    d.active = {d.busy.front().start_ns, d.busy.back().end_ns};
    auto earlier = devices_.find(device);
    const bool crosses =
        earlier != devices_.end() && earlier->second.busy_end_ns < d.busy.front().start_ns;
    if (crosses) {
      // The gap from the device's last busy period in an earlier window.
      d.gaps.push_back({earlier->second.busy_end_ns, d.busy.front().start_ns});
      d.earlier = earlier->second.last;
    }
    const std::vector<Interval> inside = Gaps(d.busy);
    d.gaps.insert(d.gaps.end(), inside.begin(), inside.end());
    size_t cursor = 0;
    for (size_t k = 0; k < d.gaps.size(); ++k) {
      const Interval& g = d.gaps[k];
      // The busy period after the gap starts with an operation that starts at its end.
      while (cursor < list.size() && ops[list[cursor]].start_ns < g.end_ns) ++cursor;
      const uint32_t next = cursor < list.size() ? list[cursor] : list.back();
      d.next_op.push_back(next);
      classify(g, ops[next], k == 0 && crosses, &d.pieces);
    }
    // What a gap after this window needs of it.
    Device& state = devices_[device];
    state.busy_end_ns = d.busy.back().end_ns;
    state.last = {};
    for (uint32_t o : list) {
      if (ops[o].end_ns != state.busy_end_ns) continue;
      state.last = {true, ops[o].start_ns, ops[o].end_ns, ops[o].correlation_id,
                    index.OpName(ops[o])};
    }
    out.push_back(std::move(d));
  }
  if (!windowed_) return out;
  // Keep the calls that a gap still open may span: those ending after the earliest busy end
  // of a device with operations to come.
  uint64_t open_from = UINT64_MAX;
  for (const auto& [device, state] : devices_) {
    auto last = last_end_.find(device);
    if (last != last_end_.end() && last->second <= state.busy_end_ns) continue;
    open_from = std::min(open_from, state.busy_end_ns);
  }
  next_kept_.clear();
  for (const HostCall& c : kept_) {
    if (c.end_ns > open_from) next_kept_.push_back(c);
  }
  for (uint32_t i = 0; i < r.api_calls.size(); ++i) {
    if (index.Outermost(i) == i && r.api_calls[i].end_ns > open_from) {
      next_kept_.push_back(host_call(i));
    }
  }
  return out;
}

IdleTotals SumIdle(std::span<const IdlePiece> pieces, uint64_t from_ns, uint64_t to_ns) {
  IdleTotals totals;
  auto it = std::upper_bound(pieces.begin(), pieces.end(), from_ns,
                             [](uint64_t t, const IdlePiece& p) { return t < p.span.end_ns; });
  for (; it != pieces.end() && it->span.start_ns < to_ns; ++it) {
    totals.Add(it->cause, OverlapLength(it->span.start_ns, it->span.end_ns, from_ns, to_ns));
  }
  return totals;
}

void IdleTotals::Add(IdleCause cause, uint64_t ns) {
  switch (cause) {
    case IdleCause::kLaunch:
      launch_ns += ns;
      break;
    case IdleCause::kSync:
      sync_ns += ns;
      break;
    case IdleCause::kOther:
      other_ns += ns;
      break;
    case IdleCause::kHostFunction:
      host_function_ns += ns;
      break;
    case IdleCause::kInGraph:
      in_graph_ns += ns;
      break;
    case IdleCause::kMemoryWait:
      memory_wait_ns += ns;
      break;
    case IdleCause::kOtherDevice:
      other_device_ns += ns;
      break;
  }
}

void IdleTotals::Add(const IdleTotals& other) {
  launch_ns += other.launch_ns;
  sync_ns += other.sync_ns;
  other_ns += other.other_ns;
  host_function_ns += other.host_function_ns;
  in_graph_ns += other.in_graph_ns;
  memory_wait_ns += other.memory_wait_ns;
  other_device_ns += other.other_device_ns;
}

DeviceIdle From(DeviceIdle d, const std::vector<DeviceOp>& ops, uint64_t from_ns) {
  if (from_ns <= d.active.start_ns) return d;
  d.active = {std::min(from_ns, d.active.end_ns), d.active.end_ns};
  CutBefore(&d, ops, from_ns);
  return d;
}

void CutBefore(DeviceIdle* d, const std::vector<DeviceOp>& ops, uint64_t from_ns) {
  // In place: a device's lists are as long as its operations.
  std::erase_if(d->ops, [&](uint32_t op) { return ops[op].start_ns < from_ns; });
  size_t kept = 0;
  for (size_t i = 0; i < d->busy.size(); ++i) {
    const Interval b = d->busy[i];
    if (b.end_ns > from_ns) d->busy[kept++] = {std::max(b.start_ns, from_ns), b.end_ns};
  }
  d->busy.resize(kept);
  kept = 0;
  for (size_t k = 0; k < d->gaps.size(); ++k) {
    const Interval g = d->gaps[k];
    if (g.end_ns <= from_ns) continue;
    d->gaps[kept] = {std::max(g.start_ns, from_ns), g.end_ns};
    d->next_op[kept++] = d->next_op[k];
  }
  d->gaps.resize(kept);
  d->next_op.resize(kept);
  kept = 0;
  for (size_t i = 0; i < d->pieces.size(); ++i) {
    IdlePiece p = d->pieces[i];
    if (p.span.end_ns <= from_ns) continue;
    p.span.start_ns = std::max(p.span.start_ns, from_ns);
    d->pieces[kept++] = p;
  }
  d->pieces.resize(kept);
}

DeviceIdle WithoutIdleIn(DeviceIdle d, const std::vector<Interval>& holes) {
  if (holes.empty()) return d;
  const std::vector<IdlePiece> pieces = std::move(d.pieces);
  DeviceIdle out = std::move(d);
  out.pieces.clear();
  auto hole = holes.begin();
  for (const IdlePiece& p : pieces) {
    uint64_t at = p.span.start_ns;
    while (hole != holes.end() && hole->end_ns <= at) ++hole;
    for (auto h = hole; h != holes.end() && h->start_ns < p.span.end_ns; ++h) {
      if (h->start_ns > at) {
        IdlePiece kept = p;
        kept.span = {at, h->start_ns};
        out.pieces.push_back(kept);
      }
      at = std::max(at, h->end_ns);
    }
    if (at < p.span.end_ns) {
      IdlePiece kept = p;
      kept.span = {at, p.span.end_ns};
      out.pieces.push_back(kept);
    }
  }
  return out;
}

}  // namespace libprof::analysis
