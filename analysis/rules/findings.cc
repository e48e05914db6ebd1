#include "analysis/rules/findings.h"

#include <algorithm>
#include <functional>
#include <optional>
#include <span>
#include <tuple>
#include <unordered_map>
#include <utility>

#include "analysis/rules/findings_digest.h"
#include "analysis/model/api_names.h"
#include "analysis/model/call_sites.h"
#include "analysis/rules/framework_hints.h"
#include "analysis/model/intervals.h"
#include "analysis/model/kernel_names.h"
#include "analysis/model/stream_deps.h"
#include "analysis/model/trace_index.h"
#include "analysis/model/units.h"

namespace libprof::analysis {
namespace {

// CUPTI puts host and device timestamps on one clock; they agree to a few microseconds. Device
// work that ends up to this long after a call returned still counts as waited for.
constexpr uint64_t kSkewNs = 2'000;

std::string Dur(uint64_t ns) { return FormatDuration(static_cast<double>(ns)); }

uint64_t Duration(uint64_t start, uint64_t end) { return end > start ? end - start : 0; }

// The result of resolving what a call waited for.
struct Wait {
  uint64_t blocked_ns = 0;
  uint64_t end_ns = 0;  // when the wait ended
  std::vector<Dependency> deps;
};

// Said after a start-up finding's explanation (MarkStartUp).
constexpr const char* kStartUpNote = " (during start-up: paid once)";

// The end of `index`'s last kernel or graph with a duration (0 if none), as the windowed read's
// plan takes it (window_facts.h).
uint64_t LastKernelEnd(const TraceIndex& index) {
  uint64_t end = 0;
  for (const DeviceOp& op : index.device_ops()) {
    if (op.end_ns > op.start_ns && op.runs_code()) end = std::max(end, op.end_ns);
  }
  return end;
}

// Said of a wait after which the process ran no kernel (a program's last wait for its results,
// as .carry/s17c/gemm_bound.py's torch.cuda.synchronize(): 313.52 ms of a GPU-bound loop, then
// a read of one value): it kept no work from running.
constexpr const char* kNothingAfter =
    "; no kernel ran after it, so it held no work back (a last wait for the results)";

class Analyzer {
 public:
  Analyzer(const RuleInput& input, const HostFindingsOut& out)
      : trace_(input.trace),
        index_(input.index),
        model_(input.model),
        options_(input.options),
        records_(input.trace.records),
        call_sites_(input.trace, input.options.call_sites),
        last_kernel_end_(input.last_kernel_end_ns ? *input.last_kernel_end_ns
                                                  : LastKernelEnd(input.index)),
        out_(&out) {}

  void Run() {
    Prepare();
    for (uint32_t i = 0; i < records_.api_calls.size(); ++i) {
      if (index_.Outermost(i) == i) {
        call_ = i;
        AnalyzeCall(i);
      }
    }
  }
  // The call being analysed (whose findings `found` is handed).
  uint32_t call() const { return call_; }
  // Call `i` (an outermost one) analysed again after Run, its findings handed to `out`.
  void Again(uint32_t i, const HostFindingsOut& out) {
    const HostFindingsOut* run = std::exchange(out_, &out);
    AnalyzeCall(i);
    out_ = run;
  }

 private:
  void Prepare() {
    if (prepared_) return;  // (HostCallFindings may run the calls again)
    prepared_ = true;
    const auto& units = model_.units();
    // Units by outermost launching call, in unit order: a counting sort into one array.
    std::vector<int64_t> owner(units.size(), -1);
    own_begin_.assign(records_.api_calls.size() + 1, 0);
    for (uint32_t u = 0; u < units.size(); ++u) {
      const int64_t call = index_.LaunchingCall(units[u].correlation_id);
      if (call < 0) continue;
      owner[u] = index_.Outermost(call);
      ++own_begin_[owner[u] + 1];
    }
    for (size_t i = 1; i < own_begin_.size(); ++i) own_begin_[i] += own_begin_[i - 1];
    own_units_.resize(own_begin_.back());
    std::vector<uint32_t> filled(own_begin_.begin(), own_begin_.end() - 1);
    for (uint32_t u = 0; u < units.size(); ++u) {
      if (owner[u] >= 0) own_units_[filled[owner[u]]++] = u;
    }
    syncs_.assign(records_.api_calls.size(), nullptr);
    for (const Synchronization& s : records_.synchronizations) {
      if (s.type == SyncType::kStreamWaitEvent) continue;
      const int64_t call = index_.LaunchingCall(s.correlation_id);
      if (call >= 0) syncs_[index_.Outermost(call)] = &s;
    }
    for (const NvtxEvent& e : records_.nvtx_events) {
      if (e.kind == NvtxKind::kMark) continue;
      ranges_[e.thread_id].push_back(&e);
      if (e.kind == NvtxKind::kStartEnd && e.end_thread_id != 0 && e.end_thread_id != e.thread_id) {
        ranges_[e.end_thread_id].push_back(&e);
      }
    }
    for (auto& [tid, list] : ranges_) {
      std::sort(list.begin(), list.end(), [](const NvtxEvent* a, const NvtxEvent* b) {
        if (a->start_ns != b->start_ns) return a->start_ns < b->start_ns;
        return a->end_ns > b->end_ns;  // the enclosing range first
      });
      std::vector<uint64_t>& max_end = range_max_end_[tid];
      max_end.reserve(list.size());
      for (const NvtxEvent* e : list) {
        max_end.push_back(std::max(max_end.empty() ? 0 : max_end.back(), e->end_ns));
      }
    }
  }

  std::vector<std::string> NvtxStack(uint32_t tid, uint64_t t) const {
    std::vector<std::string> stack;
    auto it = ranges_.find(tid);
    if (it == ranges_.end()) return stack;
    const std::vector<const NvtxEvent*>& list = it->second;
    const std::vector<uint64_t>& max_end = range_max_end_.at(tid);
    // Walk back from the last range started at or before t, and stop where no earlier range
    // reaches t (max_end is the running maximum of end times): a scan of the ranges that are
    // open at t and their earlier siblings only, not of the whole thread's history.
    auto first_after = std::upper_bound(list.begin(), list.end(), t,
                                        [](uint64_t time, const NvtxEvent* e) {
                                          return time < e->start_ns;
                                        });
    for (size_t i = first_after - list.begin(); i-- > 0 && max_end[i] >= t;) {
      if (t <= list[i]->end_ns) stack.push_back(index_.NvtxName(*list[i]));
    }
    std::reverse(stack.begin(), stack.end());  // outermost first
    return stack;
  }

  // What `deps` made call `call` wait. `tolerant` (synchronising calls): deps that ended well
  // after the call returned are dropped as not waited for. Otherwise (copies, memsets) such a
  // dep means the call returned before its predecessors finished: it did not block on them.
  Wait Resolve(const ApiCall& call, std::vector<Dependency> deps, bool tolerant) const {
    const auto& units = model_.units();
    Wait wait;
    const uint64_t limit = call.end_ns + kSkewNs;
    if (tolerant) {
      std::erase_if(deps, [&](const Dependency& d) { return units[d.unit].end_ns > limit; });
    } else if (std::any_of(deps.begin(), deps.end(),
                           [&](const Dependency& d) { return units[d.unit].end_ns > limit; })) {
      return wait;
    }
    if (deps.empty()) return wait;
    uint64_t last = 0;
    for (const Dependency& d : deps) last = std::max(last, units[d.unit].end_ns);
    wait.end_ns = std::min(last, call.end_ns);
    wait.blocked_ns = Duration(call.start_ns, wait.end_ns);
    wait.deps = std::move(deps);
    return wait;
  }

  // How long unit `u`'s operations ran inside [from, to): the union of their pieces there.
  uint64_t OverlapOf(uint32_t u, uint64_t from, uint64_t to) const {
    const WorkUnit& unit = model_.units()[u];
    const auto& ops = index_.device_ops();
    if (unit.ops.size() == 1) {  // almost every unit: no list to merge
      const DeviceOp& op = ops[unit.ops.front()];
      return Duration(std::max(op.start_ns, from), std::min(op.end_ns, to));
    }
    std::vector<Interval> pieces;
    for (uint32_t o : unit.ops) {
      pieces.push_back({std::max(ops[o].start_ns, from), std::min(ops[o].end_ns, to)});
    }
    return UnionLength(std::move(pieces));
  }

  Blamed MakeBlamed(uint32_t u, const std::string& via, uint64_t from, uint64_t to,
                    uint64_t call_start) const {
    Blamed b = NameBlamed(u, via, call_start);
    b.overlap_ns = OverlapOf(u, from, to);
    return b;
  }

  // A Blamed for unit `u` without its overlap_ns: what it is, its stream and how long before
  // `call_start` it was issued.
  Blamed NameBlamed(uint32_t u, const std::string& via, uint64_t call_start) const {
    const WorkUnit& unit = model_.units()[u];
    const DeviceOp& first = index_.device_ops()[unit.ops.front()];
    Blamed b;
    if (unit.ops.size() > 1 || (first.graph_id != 0 && first.kind == DeviceOpKind::kKernel)) {
      b.kind = "graph";
      b.name = first.graph_id != 0 ? "[graph " + std::to_string(first.graph_id) + "]"
                                   : "[" + std::to_string(unit.ops.size()) + " operations]";
    } else {
      b.kind = ToString(first.kind);
      b.name = index_.OpName(first);
    }
    b.correlation_id = unit.correlation_id;
    b.stream_id = first.stream_id;
    b.launched_before_ns = Duration(unit.issue_ns, call_start);
    b.via = via;
    return b;
  }

  // The units `wait` waited on, largest overlap first, at most kMaxBlamed; the first `named`
  // of them only (a finding not wanted whole needs its first: its group's key).
  void SetBlamed(Finding* f, const Wait& wait, const ApiCall& call,
                 size_t named = kMaxBlamed) const {
    // Ranked by their sort keys alone, then named: a wait on many units keeps kMaxBlamed of
    // them, and naming the rest (strings each) was most of the host rules' time. std::sort sees
    // the same keys in the same order as when it sorted whole Blamed values: the same result.
    struct Ranked {
      uint64_t overlap_ns;
      uint64_t correlation_id;
      uint32_t stream_id;
      uint32_t unit;
      Via via;
    };
    const auto& units = model_.units();
    std::vector<Ranked> ranked;
    ranked.reserve(wait.deps.size());
    for (const Dependency& d : wait.deps) {
      const uint64_t overlap = OverlapOf(d.unit, call.start_ns, wait.end_ns);
      if (overlap == 0) continue;
      const WorkUnit& unit = units[d.unit];
      ranked.push_back({overlap, unit.correlation_id,
                        index_.device_ops()[unit.ops.front()].stream_id, d.unit, d.via});
    }
    std::sort(ranked.begin(), ranked.end(), [](const Ranked& a, const Ranked& b) {
      return std::tie(b.overlap_ns, a.correlation_id, a.stream_id) <
             std::tie(a.overlap_ns, b.correlation_id, b.stream_id);
    });
    if (ranked.size() > kMaxBlamed) {
      f->blamed_omitted = ranked.size() - kMaxBlamed;
      ranked.resize(kMaxBlamed);
    }
    if (ranked.size() > named) ranked.resize(named);
    f->blamed.clear();
    f->blamed.reserve(ranked.size());
    for (const Ranked& r : ranked) {
      Blamed b = NameBlamed(r.unit, ToString(r.via), call.start_ns);
      b.overlap_ns = r.overlap_ns;
      f->blamed.push_back(std::move(b));
    }
  }

  static std::string BlameText(const Finding& f) {
    if (f.blamed.empty()) return "earlier device work";
    const Blamed& b = f.blamed.front();
    const std::string name = b.kind == "kernel" ? AbbreviateName(b.name, kProseNameChars) : b.name;
    std::string text = name + " (corr " + std::to_string(b.correlation_id) + ", launched " +
                       Dur(b.launched_before_ns) + " earlier";
    if (b.via == "legacy-default-stream") {
      text += ", on stream " + std::to_string(b.stream_id) + " via the legacy default stream";
    } else if (b.via == "event") {
      text += ", on stream " + std::to_string(b.stream_id) + " via an event wait";
    } else if (b.via == "device" && f.stream_id != b.stream_id) {
      text += ", on stream " + std::to_string(b.stream_id);
    }
    text += ")";
    const uint64_t more = f.blamed.size() - 1 + f.blamed_omitted;
    if (more > 0) text += " and " + std::to_string(more) + " more";
    return text;
  }

  // A finding of call `i` with the fields every sink reads (its group's key among them); Hand
  // adds the rest when it is wanted whole.
  Finding Base(RuleId rule, uint32_t i) const {
    const ApiCall& c = records_.api_calls[i];
    Finding f;
    f.rule = rule;
    f.api = index_.ApiName(c);
    f.pid = trace_.header.pid;
    f.thread_id = c.thread_id;
    f.correlation_id = c.correlation_id;
    f.host_start_ns = Duration(trace_.origin_ns, c.start_ns);
    f.host_duration_ns = Duration(c.start_ns, c.end_ns);
    if (c.stack_id != 0) {
      const CallSite& site = call_sites_.Of(c.stack_id);
      f.call_site = site.Chain(f.api);
      f.call_site_line = site.caller_line;
      f.one_time = site.one_time;
      // A library's set-up made again and again is the program's cost, not paid once.
      if (OneTimeWorkRecurs(out_->start_up, f.one_time)) {
        f.one_time = OneTimeWork::kNone;
      }
    }
    return f;
  }

  // Hands `f` (a finding of call `i`) on, marked when it is start-up's own work; if it is wanted
  // whole, with its file, NVTX ranges, call stack and `write_text(&f)`'s explanation first. Most
  // findings are only counted (findings_digest.h prints each group's worst): their text was
  // most of the host rules' time.
  template <typename WriteText>
  void Hand(Finding&& f, uint32_t i, WriteText&& write_text) const {
    f.in_start_up = IsPaidInStartUp(out_->start_up, f);
    if (!out_->wants_text || out_->wants_text(f)) {
      const ApiCall& c = records_.api_calls[i];
      f.file = trace_.path;
      f.nvtx = NvtxStack(c.thread_id, c.start_ns);
      if (c.stack_id != 0) {
        f.caller = call_sites_.Of(c.stack_id).caller;
        for (const FrameView& frame : call_sites_.Frames(c.stack_id)) {
          f.stack.push_back(
              {frame.function, frame.module, frame.module_offset, frame.file, frame.line});
        }
      }
      write_text(&f);
      // One-time work says what it is instead: a tuner's synchronisations are not the
      // program's, whatever line called into the framework.
      if (f.one_time != OneTimeWork::kNone) {
        f.explanation += OneTimeWorkNote(f.one_time);
      } else {
        f.explanation += FrameworkHint(f);
        if (f.in_start_up) f.explanation += kStartUpNote;
      }
    }
    out_->found(std::move(f));
  }

  void AnalyzeCall(uint32_t i) {
    const ApiCall& call = records_.api_calls[i];
    if (call.end_ns <= call.start_ns) return;
    const std::string& name = index_.ApiName(call);
    const auto& ops = index_.device_ops();

    // The call's own device work and its first copy or memset.
    const DeviceOp* copy = nullptr;
    const DeviceOp* set = nullptr;
    uint64_t own_bytes = 0, own_device_ns = 0;
    std::vector<Interval> own_pieces;
    const std::span<const uint32_t> own(own_units_.data() + own_begin_[i],
                                        own_begin_[i + 1] - own_begin_[i]);
    {
      for (uint32_t u : own) {
        for (uint32_t o : model_.units()[u].ops) {
          const DeviceOp& op = ops[o];
          if (op.kind == DeviceOpKind::kMemcpy && copy == nullptr) copy = &op;
          if (op.kind == DeviceOpKind::kMemset && set == nullptr) set = &op;
          if (op.kind == DeviceOpKind::kMemcpy || op.kind == DeviceOpKind::kMemset) {
            own_bytes += op.bytes;
            own_pieces.push_back({op.start_ns, op.end_ns});
          }
        }
      }
    }
    // (Most calls launch kernels: no pieces, no union to build.)
    own_device_ns = own_pieces.empty()      ? 0
                    : own_pieces.size() == 1 ? Duration(own_pieces.front().start_ns,
                                                        own_pieces.front().end_ns)
                                             : UnionLength(std::move(own_pieces));
    const Memcpy* m = copy ? &records_.memcpys[copy->record] : nullptr;
    const Memset* s = set ? &records_.memsets[set->record] : nullptr;

    const Synchronization* sync_record = syncs_[i];
    const ApiTraits& traits = index_.Traits(call);
    SyncScope scope = traits.explicit_sync;
    if (sync_record != nullptr) {
      switch (sync_record->type) {
        case SyncType::kStreamSynchronize:
          scope = SyncScope::kStream;
          break;
        case SyncType::kEventSynchronize:
          scope = SyncScope::kEvent;
          break;
        case SyncType::kContextSynchronize:
          if (scope != SyncScope::kDevice) scope = SyncScope::kContext;
          break;
        default:
          break;
      }
    }

    // Stream, bytes and memory kinds of the call's copy or memset, for its findings.
    auto fill_copy = [&](Finding* f) {
      const DeviceOp& first = copy ? *copy : *set;
      f->stream_id = first.stream_id;
      CopyDetails d;
      d.bytes = own_bytes;
      if (m) {
        d.copy_kind = ToString(m->copy_kind);
        d.src_kind = ToString(m->src_kind);
        d.dst_kind = ToString(m->dst_kind);
      } else {
        d.dst_kind = ToString(s->memory_kind);
      }
      f->details = std::move(d);
    };
    Wait wait;
    // Shown in parentheses after the API name: the copy or memset, or what a synchronisation
    // waited on. Formatted when a finding first needs it (most calls have none).
    std::optional<std::string> details;
    auto Details = [&]() -> const std::string& {
      if (!details) {
        if (m != nullptr) {
          details = FormatBytes(own_bytes) + " " + ToString(m->src_kind) + "→" +
                    ToString(m->dst_kind);
        } else if (s != nullptr) {
          details = FormatBytes(own_bytes) + " " + ToString(s->memory_kind) + " memory";
        } else {
          details.emplace();
        }
      }
      return *details;
    };

    if (scope != SyncScope::kNone) {
      std::optional<uint32_t> stream;
      std::vector<Dependency> deps;
      bool resolved = false;
      if (scope == SyncScope::kStream && sync_record && sync_record->stream_id != kNoStream) {
        stream = sync_record->stream_id;
        deps = model_.PendingOnStream(*stream, call.start_ns, call.correlation_id, call.start_ns);
        details = "stream " + std::to_string(*stream);
        resolved = true;
      } else if (scope == SyncScope::kEvent && sync_record) {
        if (auto ev = model_.FindEvent(sync_record->event_sync_id, sync_record->event_id,
                                       call.start_ns)) {
          stream = ev->stream_id;
          deps = model_.PendingOnStream(ev->stream_id, ev->issue_ns, ev->correlation_id,
                                        call.start_ns);
          details = "event recorded on stream " + std::to_string(ev->stream_id);
          resolved = true;
        }
      }
      if (!resolved) {
        // Device or context synchronisation, or a stream/event we cannot identify: everything
        // that was running.
        deps = model_.PendingOnDevice(call.start_ns, call.correlation_id, call.start_ns);
      }
      wait = Resolve(call, std::move(deps), /*tolerant=*/true);
      if (wait.blocked_ns >= options_.min_wait_ns) {
        Finding f = Base(RuleId::kSyncApi, i);
        f.stream_id = stream;
        f.blocked_ns = wait.blocked_ns;
        SetBlamed(&f, wait, call, 1);
        Hand(std::move(f), i, [&](Finding* f) {
          SetBlamed(f, wait, call);
          f->explanation = name + (Details().empty() ? "" : " (" + Details() + ")") + " took " +
                           Dur(f->host_duration_ns) + " on the host: " + Dur(f->blocked_ns) +
                           " waiting for " + BlameText(*f) +
                           (call.end_ns >= last_kernel_end_ ? kNothingAfter : "");
        });
      } else {
        wait = {};
      }
    } else if (traits.implicit_sync) {
      wait =
          Resolve(call, model_.PendingOnDevice(call.start_ns, call.correlation_id, call.start_ns),
                  /*tolerant=*/true);
      if (wait.blocked_ns >= options_.min_wait_ns) {
        Finding f = Base(RuleId::kImplicitSync, i);
        f.blocked_ns = wait.blocked_ns;
        SetBlamed(&f, wait, call, 1);
        Hand(std::move(f), i, [&](Finding* f) {
          SetBlamed(f, wait, call);
          f->explanation = name + " took " + Dur(f->host_duration_ns) +
                           " on the host: " + Dur(f->blocked_ns) + " waiting for " +
                           BlameText(*f) + "; " + name + " synchronises the device";
        });
      } else {
        wait = {};
      }
    } else if (copy != nullptr || set != nullptr) {
      const DeviceOp& first = copy ? *copy : *set;
      const bool may_block =
          m ? (!m->async || m->src_kind == MemoryKind::kPageable ||
               m->dst_kind == MemoryKind::kPageable || m->src_kind == MemoryKind::kManaged ||
               m->dst_kind == MemoryKind::kManaged)
            : !s->async;
      if (may_block) {
        wait = Resolve(call,
                       model_.PendingOnStream(first.stream_id, call.start_ns, call.correlation_id,
                                              call.start_ns),
                       /*tolerant=*/false);
      }
      if (wait.blocked_ns >= options_.min_wait_ns) {
        Finding f = Base(RuleId::kBlockedOnPriorWork, i);
        fill_copy(&f);
        f.blocked_ns = wait.blocked_ns;
        SetBlamed(&f, wait, call, 1);
        Hand(std::move(f), i, [&](Finding* f) {
          SetBlamed(f, wait, call);
          f->explanation = name + (Details().empty() ? "" : " (" + Details() + ")") + " took " +
                           Dur(f->host_duration_ns) + " on the host: " + Dur(f->blocked_ns) +
                           " waiting for " + BlameText(*f) + " + " + Dur(own_device_ns) +
                           (copy ? " copying" : " setting memory");
        });
      } else {
        wait = {};
      }
    }

    // The call's own cost: its host time not spent waiting for earlier work.
    const uint64_t own_cost = Duration(call.start_ns + wait.blocked_ns, call.end_ns);
    auto own_finding = [&](RuleId rule) {
      Finding f = Base(rule, i);
      fill_copy(&f);
      f.blocked_ns = own_cost;
      for (uint32_t u : own) {
        Blamed b =
            MakeBlamed(u, "own", call.start_ns + wait.blocked_ns, call.end_ns, call.start_ns);
        b.launched_before_ns = 0;
        if (b.kind == "memcpy" || b.kind == "memset") f.blamed.push_back(std::move(b));
      }
      return f;
    };
    auto after_wait = [&]() -> std::string {
      return wait.blocked_ns > 0 ? ", after " + Dur(wait.blocked_ns) + " waiting for earlier work"
                                 : "";
    };
    if (m != nullptr) {
      const bool async = m->async || traits.async;
      const bool pageable =
          m->src_kind == MemoryKind::kPageable || m->dst_kind == MemoryKind::kPageable;
      if (async && pageable) {
        Hand(own_finding(RuleId::kPageableAsyncMemcpy), i, [&](Finding* f) {
          f->explanation = name + " (" + Details() +
                           ") is synchronous because the host memory is "
                           "pageable: " +
                           Dur(own_cost) + " of its " + Dur(f->host_duration_ns) +
                           " on the host went to the copy itself" + after_wait() +
                           "; pinned memory (cudaMallocHost, cudaHostRegister) lets it run "
                           "asynchronously";
        });
      } else if (IsStagedPeerPiece(*m)) {
        if (own_cost >= options_.min_wait_ns) StagedPeerCopy(i, m->bytes, own_cost, own_finding);
      } else if (!async && own_cost >= options_.min_wait_ns &&
                 !(m->copy_kind == CopyKind::kHtoD &&
                   own_bytes <= options_.sync_memcpy_min_h2d_bytes)) {
        Hand(own_finding(RuleId::kSyncMemcpy), i, [&](Finding* f) {
          f->explanation = name + " (" + Details() +
                           ") is a synchronous copy: it held the host for " + Dur(own_cost) +
                           after_wait() +
                           "; cudaMemcpyAsync on a stream (with pinned host memory) lets the "
                           "host continue";
        });
      }
    } else if (s != nullptr && !s->async && !traits.async && own_cost >= options_.min_wait_ns) {
      Hand(own_finding(RuleId::kSyncMemset), i, [&](Finding* f) {
        f->explanation = name + " (" + Details() +
                         ") is a synchronous memset: it held the host for " + Dur(own_cost) +
                         after_wait() + "; cudaMemsetAsync would not";
      });
    }
  }

  // staged-peer-copy: call `i` copied `bytes` between two GPUs through host memory, holding
  // the host `own_cost`. Its pieces name the GPUs: the DtoH's device is the source, the HtoD's
  // the destination; their times are their last pieces' only, so the call's time is the copy's.
  template <typename OwnFinding>
  void StagedPeerCopy(uint32_t i, uint64_t bytes, uint64_t own_cost, OwnFinding&& own_finding) {
    const ApiCall& call = records_.api_calls[i];
    std::optional<uint32_t> from, to;
    for (uint32_t o : index_.OpsOf(call.correlation_id)) {
      const DeviceOp& op = index_.device_ops()[o];
      if (op.kind != DeviceOpKind::kMemcpy) continue;
      const Memcpy& piece = records_.memcpys[op.record];
      if (!IsStagedPeerPiece(piece)) continue;
      (piece.copy_kind == CopyKind::kDtoH ? from : to) = op.device_id;
    }
    Finding found = own_finding(RuleId::kStagedPeerCopy);
    std::get<CopyDetails>(found.details).bytes = bytes;
    Hand(std::move(found), i, [&](Finding* f) {
      const auto gpu = [](std::optional<uint32_t> d) {
        return d ? "GPU " + std::to_string(*d) : std::string("another GPU");
      };
      f->explanation =
          index_.ApiName(call) + " (" + FormatBytes(bytes) + " " + gpu(from) + " → " + gpu(to) +
          ") went through host memory, because peer access between the two GPUs is not "
          "enabled (or not possible): the driver staged it in pieces and held the host for " +
          Dur(own_cost) +
          " (its copy records time only the last pieces, and the stream's next synchronisation "
          "waits for what is still in flight); cudaDeviceEnablePeerAccess from each GPU to the "
          "other, where cudaDeviceCanAccessPeer allows it, makes it a direct copy over NVLink "
          "or PCIe that does not hold the host";
    });
  }

  const ProcessTrace& trace_;
  const TraceIndex& index_;
  const StreamModel& model_;
  const FindingsOptions& options_;
  const TraceRecords& records_;
  CallSites call_sites_;
  uint64_t last_kernel_end_;  // of the process's kernels and graphs (RuleInput's)
  // The units each outermost call launched: own_units_[own_begin_[call] .. own_begin_[call + 1]).
  std::vector<uint32_t> own_begin_;
  std::vector<uint32_t> own_units_;
  std::vector<const Synchronization*> syncs_;  // by outermost call: its record, or nullptr
  std::unordered_map<uint32_t, std::vector<const NvtxEvent*>> ranges_;  // thread -> ranges
  // thread -> running maximum of ranges_[thread][0..i]'s end times, to stop NvtxStack's scan.
  std::unordered_map<uint32_t, std::vector<uint64_t>> range_max_end_;
  const HostFindingsOut* out_;
  uint32_t call_ = 0;
  bool prepared_ = false;
};

}  // namespace

struct HostCallFindings::Parts {
  Parts(const RuleInput& input, const Finding* start_up) : analyzer(input, out) {
    out.start_up = start_up;
  }
  HostFindingsOut out;
  Analyzer analyzer;
};

HostCallFindings::HostCallFindings(const RuleInput& input, const Finding* start_up)
    : parts_(std::make_unique<Parts>(input, start_up)) {}

HostCallFindings::~HostCallFindings() = default;

std::vector<HostCallFindings::Found> HostCallFindings::Find(bool whole) {
  std::vector<Found> found;
  HostFindingsOut& out = parts_->out;
  const Analyzer& analyzer = parts_->analyzer;
  out.found = [&](Finding&& f) { found.push_back({std::move(f), analyzer.call()}); };
  if (!whole) out.wants_text = [](const Finding&) { return false; };
  parts_->analyzer.Run();
  out.found = nullptr;
  out.wants_text = nullptr;
  return found;
}

Finding HostCallFindings::Textless(const Finding& whole) {
  Finding f;
  f.rule = whole.rule;
  f.api = whole.api;
  f.pid = whole.pid;
  f.thread_id = whole.thread_id;
  f.correlation_id = whole.correlation_id;
  f.host_start_ns = whole.host_start_ns;
  f.host_duration_ns = whole.host_duration_ns;
  f.blocked_ns = whole.blocked_ns;
  f.stream_id = whole.stream_id;
  f.device_id = whole.device_id;
  // A wait names its first blamed unit only (SetBlamed(..., 1)); a call's own work all of it.
  const bool wait = whole.rule == RuleId::kSyncApi || whole.rule == RuleId::kImplicitSync ||
                    whole.rule == RuleId::kBlockedOnPriorWork;
  const size_t blamed = wait ? std::min<size_t>(whole.blamed.size(), 1) : whole.blamed.size();
  f.blamed.assign(whole.blamed.begin(), whole.blamed.begin() + blamed);
  f.blamed_omitted = whole.blamed_omitted;
  f.call_site = whole.call_site;
  f.call_site_line = whole.call_site_line;
  f.details = whole.details;
  f.in_start_up = whole.in_start_up;
  f.one_time = whole.one_time;
  return f;
}

Finding HostCallFindings::Whole(const Found& found) {
  std::optional<Finding> whole;
  HostFindingsOut again;
  again.start_up = parts_->out.start_up;
  again.found = [&](Finding&& f) {
    if (f.rule == found.finding.rule) whole = std::move(f);
  };
  again.wants_text = [&](const Finding& f) { return f.rule == found.finding.rule; };
  parts_->analyzer.Again(found.call, again);
  // (The same inputs give the same finding: a call has at most one of each rule.)
  return whole ? std::move(*whole) : found.finding;
}

void FindHostCallFindings(const RuleInput& input, const HostFindingsOut& out) {
  Analyzer(input, out).Run();
}

void FindHostCallFindings(const RuleInput& input, std::vector<Finding>* out) {
  HostFindingsOut host;
  host.found = [&](Finding&& f) { out->push_back(std::move(f)); };
  FindHostCallFindings(input, host);
}

// Host-time findings whose call ended within start-up (the start-up finding's window, if
// start-up was long enough to be one) are marked and say so, paid once, not the steady state's,
// when they are start-up's own work (module loading, context set-up, allocation: api_names.h
// StartUpWork) or lie in its warm-up. Other calls before the first kernel are not: a program
// may copy before it computes, and those copies (pageable_vs_pinned's) are its work. A warm-up
// runs after the first kernel with the GPU nearly idle until the steady state's code is loaded:
// its waits are the compiler's and autotuner's (cuDNN's benchmark mode synchronised 80 times in
// the 2 s warm-up of a conv net on an H200, each on a different candidate kernel), paid once.
bool OneTimeWorkRecurs(const Finding* start_up, OneTimeWork work) {
  const auto* details =
      start_up == nullptr ? nullptr : std::get_if<StartUpDetails>(&start_up->details);
  if (details == nullptr || work == OneTimeWork::kNone) return false;
  return work == OneTimeWork::kLibrarySetUp ? details->recurring_library_set_ups > 0
                                            : details->recurring_compilations > 0;
}

bool IsPaidInStartUp(const Finding* start_up, const Finding& f) {
  if (start_up == nullptr || TimeKindOf(Rule(f.rule).family) != TimeKind::kHost) return false;
  const uint64_t end = start_up->host_start_ns + start_up->host_duration_ns;
  if (f.host_start_ns + f.host_duration_ns > end) return false;
  const auto* details = std::get_if<StartUpDetails>(&start_up->details);
  const bool in_warm_up = details != nullptr && details->warm_up_ns > 0 &&
                          f.host_start_ns + details->warm_up_ns >= end;
  if (in_warm_up) return true;
  // The name's test last: it compares strings.
  return StartUpWorkOf(f.api) != StartUpWork::kNone;
}

void MarkStartUp(const Finding* start_up, Finding* f) {
  if (!IsPaidInStartUp(start_up, *f)) return;
  f->in_start_up = true;
  f->explanation += kStartUpNote;
}

namespace {
constexpr int kPassShift = kFindingsPassShift;
}  // namespace

void StreamFindings(const ProcessTrace& trace, const TraceIndex& index, const StreamModel& model,
                    const FindingsOptions& options, const FindingSink& sink,
                    const FindingFilter& wants_whole) {
  const RuleInput input{trace, index, model, options, std::nullopt};
  // Every pass but the host calls' first: their findings are few (a handful per device and
  // pattern), and the start-up finding among them marks host findings as they are found.
  const std::vector<RulePass> passes = RulePasses();
  std::vector<std::pair<uint64_t, Finding>> others;
  uint64_t host_pass = 0;
  for (uint64_t k = 0; k < passes.size(); ++k) {
    if (passes[k] == static_cast<RulePass>(FindHostCallFindings)) {
      host_pass = k;
      continue;
    }
    std::vector<Finding> found;
    passes[k](input, &found);
    for (uint64_t j = 0; j < found.size(); ++j) {
      others.push_back({(k << kPassShift) + j, std::move(found[j])});
    }
  }
  const Finding* start_up = nullptr;
  for (const auto& [seq, f] : others) {
    if (f.rule == RuleId::kStartUp) start_up = &f;
  }
  uint64_t next = host_pass << kPassShift;
  HostFindingsOut host;
  host.found = [&](Finding&& f) { sink(std::move(f), next++); };
  host.start_up = start_up;
  if (wants_whole) host.wants_text = [&](const Finding& f) { return wants_whole(f, next); };
  FindHostCallFindings(input, host);
  for (auto& [seq, f] : others) MarkStartUp(start_up, &f);
  for (auto& [seq, f] : others) sink(std::move(f), seq);
}

void StreamFindings(const ProcessTrace& trace, const FindingsOptions& options,
                    const FindingSink& sink, const FindingFilter& wants_whole) {
  const TraceIndex index(trace);
  const StreamModel model(index);
  StreamFindings(trace, index, model, options, sink, wants_whole);
}

std::vector<Finding> FindFindings(const ProcessTrace& trace, const FindingsOptions& options) {
  const TraceIndex index(trace);
  const StreamModel model(index);
  return FindFindings(trace, index, model, options);
}

std::vector<Finding> FindFindings(const ProcessTrace& trace, const TraceIndex& index,
                                  const StreamModel& model, const FindingsOptions& options) {
  std::vector<std::pair<uint64_t, Finding>> found;
  StreamFindings(trace, index, model, options,
                 [&](Finding&& f, uint64_t seq) { found.push_back({seq, std::move(f)}); });
  return InFindOrder(std::move(found));
}

std::vector<Finding> InFindOrder(std::vector<std::pair<uint64_t, Finding>> found) {
  std::sort(found.begin(), found.end(), [](const auto& a, const auto& b) {
    return std::tie(a.second.host_start_ns, a.second.correlation_id, a.first) <
           std::tie(b.second.host_start_ns, b.second.correlation_id, b.first);
  });
  std::vector<Finding> out;
  out.reserve(found.size());
  for (auto& [seq, f] : found) out.push_back(std::move(f));
  return out;
}

std::vector<FindingGroup> GroupFindings(const std::vector<Finding>& findings) {
  FindingsDigest digest;  // one grouping, the reports'
  for (const Finding& f : findings) digest.Add(f);
  return digest.Groups();
}

}  // namespace libprof::analysis
