#include "analysis/metrics/idle_breakdown.h"

#include <algorithm>
#include <map>
#include <span>
#include <unordered_map>

#include "analysis/model/api_names.h"

namespace libprof::analysis {
namespace {

// What a top-level call meant for the device while it ran.
enum class CallClass : uint8_t { kLaunch, kSync, kOther };

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
      if (!m.async || host_bound(m.src_kind) || host_bound(m.dst_kind)) return true;
    } else if (op.kind == DeviceOpKind::kMemset && !r.memsets[op.record].async) {
      return true;
    }
  }
  return false;
}

class Classifier {
 public:
  explicit Classifier(const TraceIndex& index) : index_(index) {
    const TraceRecords& r = index.records();
    std::unordered_map<uint64_t, bool> synced;  // correlation ids with a SYNCHRONIZATION record
    for (const Synchronization& s : r.synchronizations) {
      if (s.type != SyncType::kStreamWaitEvent) synced[s.correlation_id] = true;
    }
    classes_.assign(r.api_calls.size(), CallClass::kOther);
    for (uint32_t i = 0; i < r.api_calls.size(); ++i) {
      if (index.Outermost(i) != i) continue;
      const ApiCall& c = r.api_calls[i];
      const std::span<const uint32_t> issued = index.OpsOf(c.correlation_id);
      if (BlocksHost(index, c, synced.contains(c.correlation_id), issued)) {
        classes_[i] = CallClass::kSync;
      } else if (!issued.empty()) {
        classes_[i] = CallClass::kLaunch;
      }
    }
  }

  // Appends the pieces of gap [a, b) that operation `next` ended.
  void Classify(const Interval& gap, const DeviceOp& next, std::vector<IdlePiece>* out) const {
    const int64_t found = index_.LaunchingCall(next.correlation_id);
    if (found < 0) {
      out->push_back({gap, IdleCause::kOther, -1});
      return;
    }
    const uint32_t launcher = index_.Outermost(static_cast<size_t>(found));
    const ApiCall& l = index_.records().api_calls[launcher];
    const uint64_t cut = std::clamp(l.start_ns, gap.start_ns, gap.end_ns);
    Walk(l.thread_id, gap.start_ns, cut, out);
    if (cut < gap.end_ns) {
      const IdleCause cause =
          classes_[launcher] == CallClass::kSync ? IdleCause::kSync : IdleCause::kLaunch;
      out->push_back({{cut, gap.end_ns}, cause, launcher});
    }
  }

 private:
  // Pieces of [from, to) by what thread `tid` was doing: the earlier of two overlapping calls
  // wins; time in calls that issue no work is kOther with the call, outside calls kOther alone.
  void Walk(uint32_t tid, uint64_t from, uint64_t to, std::vector<IdlePiece>* out) const {
    if (to <= from) return;
    uint64_t cursor = from;
    if (const TraceIndex::ThreadCalls* thread = index_.TopLevelCalls(tid)) {
      const TraceIndex::ThreadCalls& t = *thread;
      const auto& calls = index_.records().api_calls;
      size_t k = std::upper_bound(t.max_end.begin(), t.max_end.end(), from) - t.max_end.begin();
      for (; k < t.calls.size() && calls[t.calls[k]].start_ns < to; ++k) {
        const uint32_t i = t.calls[k];
        const uint64_t s = std::max(cursor, calls[i].start_ns);
        const uint64_t e = std::min(to, calls[i].end_ns);
        if (e <= s) continue;
        if (s > cursor) out->push_back({{cursor, s}, IdleCause::kOther, -1});
        const IdleCause cause = classes_[i] == CallClass::kSync     ? IdleCause::kSync
                                : classes_[i] == CallClass::kLaunch ? IdleCause::kLaunch
                                                                    : IdleCause::kOther;
        out->push_back({{s, e}, cause, i});
        cursor = e;
      }
    }
    if (cursor < to) out->push_back({{cursor, to}, IdleCause::kOther, -1});
  }

  const TraceIndex& index_;
  std::vector<CallClass> classes_;  // per API call; top-level calls only are classified
};

}  // namespace

const char* ToString(IdleCause cause) {
  switch (cause) {
    case IdleCause::kLaunch:
      return "launch";
    case IdleCause::kSync:
      return "sync";
    case IdleCause::kOther:
      break;
  }
  return "other";
}

std::vector<DeviceIdle> ClassifyIdle(const TraceIndex& index) {
  const auto& ops = index.device_ops();
  std::map<uint32_t, std::vector<uint32_t>> by_device;  // ops, by start
  for (uint32_t o = 0; o < ops.size(); ++o) by_device[ops[o].device_id].push_back(o);
  const Classifier classifier(index);
  std::vector<DeviceIdle> out;
  for (auto& [device, list] : by_device) {
    DeviceIdle d;
    d.device_id = device;
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
    if (d.busy.empty()) continue;
    d.ops = std::move(list);
    d.active = {d.busy.front().start_ns, d.busy.back().end_ns};
    d.gaps = Gaps(d.busy);
    size_t cursor = 0;
    for (const Interval& g : d.gaps) {
      // The busy period after the gap starts with an operation that starts at its end.
      while (cursor < d.ops.size() && ops[d.ops[cursor]].start_ns < g.end_ns) ++cursor;
      const uint32_t next = cursor < d.ops.size() ? d.ops[cursor] : d.ops.back();
      d.next_op.push_back(next);
      classifier.Classify(g, ops[next], &d.pieces);
    }
    out.push_back(std::move(d));
  }
  return out;
}

IdleTotals SumIdle(std::span<const IdlePiece> pieces, uint64_t from_ns, uint64_t to_ns) {
  IdleTotals totals;
  auto it = std::upper_bound(pieces.begin(), pieces.end(), from_ns,
                             [](uint64_t t, const IdlePiece& p) { return t < p.span.end_ns; });
  for (; it != pieces.end() && it->span.start_ns < to_ns; ++it) {
    const uint64_t length = OverlapLength(it->span.start_ns, it->span.end_ns, from_ns, to_ns);
    switch (it->cause) {
      case IdleCause::kLaunch:
        totals.launch_ns += length;
        break;
      case IdleCause::kSync:
        totals.sync_ns += length;
        break;
      case IdleCause::kOther:
        totals.other_ns += length;
        break;
    }
  }
  return totals;
}

DeviceIdle From(DeviceIdle d, const std::vector<DeviceOp>& ops, uint64_t from_ns) {
  if (from_ns <= d.active.start_ns) return d;
  // In place: a device's lists are as long as its operations.
  d.active = {std::min(from_ns, d.active.end_ns), d.active.end_ns};
  std::erase_if(d.ops, [&](uint32_t op) { return ops[op].start_ns < from_ns; });
  size_t kept = 0;
  for (size_t i = 0; i < d.busy.size(); ++i) {
    const Interval b = d.busy[i];
    if (b.end_ns > from_ns) d.busy[kept++] = {std::max(b.start_ns, from_ns), b.end_ns};
  }
  d.busy.resize(kept);
  kept = 0;
  for (size_t k = 0; k < d.gaps.size(); ++k) {
    const Interval g = d.gaps[k];
    if (g.end_ns <= from_ns) continue;
    d.gaps[kept] = {std::max(g.start_ns, from_ns), g.end_ns};
    d.next_op[kept++] = d.next_op[k];
  }
  d.gaps.resize(kept);
  d.next_op.resize(kept);
  kept = 0;
  for (size_t i = 0; i < d.pieces.size(); ++i) {
    IdlePiece p = d.pieces[i];
    if (p.span.end_ns <= from_ns) continue;
    p.span.start_ns = std::max(p.span.start_ns, from_ns);
    d.pieces[kept++] = p;
  }
  d.pieces.resize(kept);
  return d;
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
