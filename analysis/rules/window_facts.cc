#include "analysis/rules/window_facts.h"

#include <algorithm>

#include "analysis/model/collectives.h"
#include "analysis/rules/overlap_rules.h"

namespace libprof::analysis {

void CarriedEvents::Add(const TraceIndex& window) {
  const TraceRecords& r = window.records();
  if (r.cuda_events.empty()) return;
  for (const CudaEvent& e : r.cuda_events) {
    const int64_t call = window.LaunchingCall(e.correlation_id);
    if (call < 0) continue;  // StreamModel ignores it too
    const StreamModel::EarlierEvent earlier{
        e.event_id, e.sync_id, {e.stream_id, r.api_calls[call].start_ns, e.correlation_id}};
    auto [it, added] = latest_.try_emplace(e.event_id, earlier);
    if (!added && it->second.record.issue_ns <= earlier.record.issue_ns) it->second = earlier;
  }
  list_.clear();
  syncs_.clear();
  for (const auto& [id, e] : latest_) {
    list_.push_back(e);
    if (e.sync_id != 0) syncs_.insert(e.sync_id);
  }
}

void MissingStacks::Check(const TraceRecords& r) {
  std::unordered_set<uint32_t> named;
  for (const ApiCall& c : r.api_calls) {
    if (c.stack_id != 0) named.insert(c.stack_id);
  }
  if (named.empty()) return;
  std::unordered_map<uint32_t, const CallStack*> stack_of;
  for (const CallStack& s : r.call_stacks) stack_of[s.id] = &s;
  std::unordered_map<uint32_t, uint32_t> module_of;  // frame -> module
  for (const StackFrame& f : r.stack_frames) module_of[f.id] = f.module_id;
  std::unordered_set<uint32_t> have_modules;
  for (const StackModule& m : r.stack_modules) have_modules.insert(m.id);
  for (uint32_t id : named) {
    auto s = stack_of.find(id);
    if (s == stack_of.end()) {
      stacks.insert(id);
      continue;
    }
    for (uint32_t frame : s->second->frame_ids) {
      auto m = module_of.find(frame);
      if (m == module_of.end()) {
        frames.insert(frame);
      } else if (!have_modules.contains(m->second)) {
        modules.insert(m->second);
      }
    }
  }
}

bool MissingStacks::ReadLater(const TraceRecords& whole) const {
  for (const CallStack& s : whole.call_stacks) {
    if (stacks.contains(s.id)) return true;
  }
  for (const StackFrame& f : whole.stack_frames) {
    if (frames.contains(f.id)) return true;
  }
  for (const StackModule& m : whole.stack_modules) {
    if (modules.contains(m.id)) return true;
  }
  return false;
}

void PlanWindow::Learn() {
  const TraceRecords& r = trace.records;
  if (!r.unified_memory_counters.empty()) {
    why_inexact = "unified memory counters";
    return;
  }
  if (HasNcclRanges(trace)) {
    why_inexact = "NCCL ranges (collectives need the whole process)";
    return;
  }
  for (const NvtxEvent& e : r.nvtx_events) {
    if (e.kind != NvtxKind::kMark && e.start_ns < span.from_ns) late_nvtx.push_back(e);
  }
  index.emplace(trace);
  if (!PerThreadStreams(*index).empty()) {
    per_thread_streams = true;
    return;
  }
  // One pass over the operations (millions), with lookups per stream and device (a few) and
  // no heap work per operation: each stream's class as this window sees it (it depends on the
  // stream only), each stream's context as StreamModel takes it (its first unit's, a unit's
  // being its first operation's: OpsOf's first) until known, each device's busy span.
  const StreamClassifier classifier(r);
  std::unordered_map<uint32_t, size_t> place;  // stream -> its place in `streams`
  uint32_t last_stream = 0;
  size_t at = SIZE_MAX;  // last_stream's place
  const auto& ops = index->device_ops();
  for (const DeviceOp& op : ops) {
    if (at == SIZE_MAX || op.stream_id != last_stream) {
      last_stream = op.stream_id;
      auto [it, first] = place.try_emplace(op.stream_id, streams.size());
      if (first) streams.push_back({op.stream_id, classifier.Classify(op.stream_id, false), 0});
      at = it->second;
    }
    uint32_t& context = streams[at].context;
    if (context == 0) {
      context = op.correlation_id == 0 ? op.context_id
                                       : ops[index->OpsOf(op.correlation_id).front()].context_id;
    }
    if (op.end_ns > op.start_ns) {  // (MergeIntervals' pieces: empty ones add no busy time)
      auto [it, added] = busy.try_emplace(op.device_id, Interval{op.start_ns, op.end_ns});
      it->second.start_ns = std::min(it->second.start_ns, op.start_ns);
      it->second.end_ns = std::max(it->second.end_ns, op.end_ns);
      if (op.runs_code()) last_kernel_end = std::max(last_kernel_end, op.end_ns);
    }
  }
  for (const CudaEvent& e : r.cuda_events) {
    // A recording without its call (--from/--to may leave the call out) is unknown to
    // StreamModel here as in the whole trace: its call would share its window.
    if (e.sync_id == 0 || index->LaunchingCall(e.correlation_id) < 0) continue;
    recorded.insert(e.sync_id);
  }
  for (const Synchronization& s : r.synchronizations) {
    if (s.type != SyncType::kEventSynchronize && s.type != SyncType::kStreamWaitEvent) continue;
    if (s.event_sync_id != 0 && !recorded.contains(s.event_sync_id)) {
      named.push_back(s.event_sync_id);
    }
  }
  missing.Check(r);
  for (const ApiCall& c : r.api_calls) calling_threads.insert(c.thread_id);
  unpaired_threads = ThreadsWhosePageablePairLeavesWindow(*index);
  scan.Add(*index);
}

}  // namespace libprof::analysis
