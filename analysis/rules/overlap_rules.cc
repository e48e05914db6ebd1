#include "analysis/rules/overlap_rules.h"

#include <algorithm>
#include <map>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "analysis/model/api_names.h"
#include "analysis/model/intervals.h"
#include "analysis/model/units.h"
#include "analysis/rules/framework_hints.h"

namespace libprof::analysis {
namespace {

// Host and device timestamps share a clock to within a few µs (findings.cc's kSkewNs).
constexpr uint64_t kSkewNs = 2'000;

std::string Dur(uint64_t ns) { return FormatDuration(static_cast<double>(ns)); }

// What the copies and kernels of one device and cause add up to, in one window.
struct Serialised {
  uint32_t stream_id = 0;
  uint64_t copies = 0, kernels = 0;
  std::vector<Interval> copy_spans, kernel_spans;
  uint64_t pairs_ns = 0;  // pageable: the sum of min(copy, kernel) over the pairs
  uint64_t first_ns = UINT64_MAX, last_ns = 0;
  void Add(const DeviceOp& op, bool copy) {
    (copy ? copies : kernels) += 1;
    (copy ? copy_spans : kernel_spans).push_back({op.start_ns, op.end_ns});
    first_ns = std::min(first_ns, op.start_ns);
    last_ns = std::max(last_ns, op.end_ns);
  }
  // Into the sums of the windows so far.
  void AddTo(OverlapAccumulator::Sums* s) const {
    s->copies += copies;
    s->kernels += kernels;
    s->copy_ns += UnionLength(copy_spans);
    s->kernel_ns += UnionLength(kernel_spans);
    s->pairs_ns += pairs_ns;
    s->first_ns = std::min(s->first_ns, first_ns);
    s->last_ns = std::max(s->last_ns, last_ns);
  }
};

// The pageable copies whose call held the host, each with its thread's top-level calls
// (TraceIndex::TopLevelCalls, by start) and the call's place there: f(copy, calls, position).
// The place is found by lookup, filled for the threads of such copies (a scan per copy made the
// pass quadratic: 1.9 s of 9 at 10M records).
template <typename F>
void ForEachHeldPageableCopy(const TraceIndex& index, F&& f) {
  const TraceRecords& r = index.records();
  std::vector<uint32_t> place;
  std::unordered_set<uint32_t> placed_threads;
  for (const DeviceOp& copy : index.device_ops()) {
    if (copy.kind != DeviceOpKind::kMemcpy || !IsPageableCopy(r.memcpys[copy.record])) continue;
    const int64_t found = index.LaunchingCall(copy.correlation_id);
    if (found < 0) continue;
    const uint32_t l = index.Outermost(static_cast<size_t>(found));
    const ApiCall& call = r.api_calls[l];
    if (call.end_ns + kSkewNs < copy.end_ns) continue;  // returned before the copy was done
    const std::vector<uint32_t>& calls = index.TopLevelCalls(call.thread_id)->calls;
    if (placed_threads.insert(call.thread_id).second) {
      place.resize(r.api_calls.size());
      for (uint32_t k = 0; k < calls.size(); ++k) place[calls[k]] = k;
    }
    f(copy, calls, calls.begin() + place[l]);
  }
}

// Whether `op` is paid once: it starts in start-up after the first kernel (a warm-up, module
// loading) or overlaps one-time work (sorted spans). Work before the first kernel is the
// program's (its first uploads), as for the host rules.
bool PaidOnce(const DeviceOp& op, const StartUp& bounds) {
  if (bounds.known && op.start_ns >= bounds.first_op_ns && op.start_ns < bounds.end_ns) {
    return true;
  }
  const auto after = std::upper_bound(
      bounds.one_time.begin(), bounds.one_time.end(), op.start_ns,
      [](uint64_t t, const StartUp::OneTimeSpan& s) { return t < s.span.start_ns; });
  // The span starting last at or before the op, or the first after it if the op reaches it.
  if (after != bounds.one_time.begin() && (after - 1)->span.end_ns > op.start_ns) return true;
  return after != bounds.one_time.end() && after->span.start_ns < op.end_ns;
}

class OverlapRules {
 public:
  OverlapRules(const TraceIndex& index, const StreamModel& model, const StartUp& bounds,
               std::map<std::pair<uint32_t, uint32_t>, OverlapAccumulator::Sums>* legacy,
               std::map<uint32_t, OverlapAccumulator::Sums>* pageable,
               std::map<std::pair<uint32_t, uint32_t>, OverlapAccumulator::TwoWaySums>* two_way)
      : index_(index),
        model_(model),
        bounds_(bounds),
        legacy_sums_(*legacy),
        pageable_sums_(*pageable),
        two_way_sums_(*two_way) {}

  void Run() {
    const auto& ops = index_.device_ops();
    const TraceRecords& r = index_.records();
    // The legacy stream's kernels (unions per window) and copies, in start order: a copy counts
    // once a kernel of its stream follows it, and only after the stream's first kernel, since
    // one before the first or after the last kernel can overlap none of them (a model's
    // weights uploaded before its first step). Windows come in order, so the copies since the
    // latest kernel wait in the sums for the next window's.
    std::map<std::pair<uint32_t, uint32_t>, Serialised> legacy_kernels;  // (device, stream)
    for (const DeviceOp& op : ops) {
      if (model_.ClassOf(op.stream_id) != StreamClass::kLegacyNull || PaidOnce(op, bounds_)) {
        continue;
      }
      const std::pair<uint32_t, uint32_t> key{op.device_id, op.stream_id};
      if (op.kind == DeviceOpKind::kKernel) {
        legacy_kernels[key].Add(op, false);
        OverlapAccumulator::Sums& sums = legacy_sums_[key];
        sums.kernel_seen = true;
        for (const OverlapAccumulator::PendingCopy& copy : sums.pending) {
          ++sums.copies;
          sums.copy_ns += copy.span.length();
          sums.already_ns += copy.already_ns;
          sums.first_ns = std::min(sums.first_ns, copy.span.start_ns);
          sums.last_ns = std::max(sums.last_ns, copy.span.end_ns);
        }
        sums.pending.clear();
      } else if (op.kind == DeviceOpKind::kMemcpy && IsHostCopy(r.memcpys[op.record])) {
        OverlapAccumulator::Sums& sums = legacy_sums_[key];
        if (!sums.kernel_seen) continue;
        sums.pending.push_back(
            {{op.start_ns, op.end_ns},
             CoveredLength(MergedKernels(op.device_id), op.start_ns, op.end_ns)});
      }
    }
    for (auto& [key, s] : legacy_kernels) {
      OverlapAccumulator::Sums& sums = legacy_sums_[key];
      sums.stream_id = key.second;
      s.AddTo(&sums);
    }
    Pageable();
    TwoWay();
  }

 private:
  // Downloads queued behind an upload on their stream (so no copy is in two pairs). A pair
  // never spans a cut: the download was issued before the upload ended, and a cut falls where
  // nothing was issued and not yet done.
  void TwoWay() {
    const auto& ops = index_.device_ops();
    const TraceRecords& r = index_.records();
    std::map<std::pair<uint32_t, uint32_t>, uint32_t> last;  // (device, stream): its latest op
    for (uint32_t i = 0; i < ops.size(); ++i) {
      const DeviceOp& b = ops[i];
      const std::pair<uint32_t, uint32_t> key{b.device_id, b.stream_id};
      auto [it, first] = last.try_emplace(key, i);
      if (first) continue;
      const DeviceOp& a = ops[std::exchange(it->second, i)];
      if (a.kind != DeviceOpKind::kMemcpy || b.kind != DeviceOpKind::kMemcpy) continue;
      const Memcpy& ma = r.memcpys[a.record];
      const Memcpy& mb = r.memcpys[b.record];
      if (ma.copy_kind != CopyKind::kHtoD || mb.copy_kind != CopyKind::kDtoH || !IsHostCopy(ma) ||
          !IsHostCopy(mb) || IsPageableCopy(ma) || IsPageableCopy(mb) || PaidOnce(a, bounds_) ||
          PaidOnce(b, bounds_)) {
        continue;
      }
      const int64_t call = index_.LaunchingCall(b.correlation_id);
      if (call < 0) continue;
      const uint64_t issued = r.api_calls[static_cast<size_t>(call)].start_ns;
      if (issued >= a.end_ns) continue;  // not queued: the first was done when it came
      OverlapAccumulator::TwoWaySums& s = two_way_sums_[key];
      ++s.pairs;
      s.waits_ns += std::min(a.end_ns - std::max(issued, a.start_ns), b.duration());
      s.alone_ns +=
          (b.end_ns - a.start_ns) - CoveredLength(MergedKernels(a.device_id), a.start_ns, b.end_ns);
      for (const auto& [op, m] : {std::pair{&a, &ma}, {&b, &mb}}) {
        ++s.copies;
        s.copy_ns += op->duration();
        const bool htod = m->copy_kind == CopyKind::kHtoD;
        (htod ? s.htod_bytes : s.dtoh_bytes) += m->bytes;
        (htod ? s.htod_ns : s.dtoh_ns) += op->duration();
        s.first_ns = std::min(s.first_ns, op->start_ns);
        s.last_ns = std::max(s.last_ns, op->end_ns);
      }
    }
  }

  // The kernels of `device` in this window, merged: made when first asked for (only devices
  // with a legacy copy or a two-way pair need them), for the legacy copies and the pairs alike.
  const std::vector<Interval>& MergedKernels(uint32_t device) {
    auto [it, added] = merged_kernels_.try_emplace(device);
    if (added) {
      std::vector<Interval> spans;
      for (const DeviceOp& op : index_.device_ops()) {
        if (op.kind == DeviceOpKind::kKernel && op.device_id == device) {
          spans.push_back({op.start_ns, op.end_ns});
        }
      }
      it->second = MergeIntervals(std::move(spans));
    }
    return it->second;
  }

  // Pageable copies whose call held the host, each paired with the kernel its thread launched
  // next when that kernel did not have to follow the copy.
  void Pageable() {
    std::map<uint32_t, Serialised> by_device;
    ForEachHeldPageableCopy(
        index_,
        [&](const DeviceOp& copy, const std::vector<uint32_t>& calls,
            std::vector<uint32_t>::const_iterator pos) {
          if (PaidOnce(copy, bounds_)) return;
          const DeviceOp* kernel = NextKernel(pos, calls.end(), copy);
          if (kernel == nullptr) return;
          Serialised& s = by_device[copy.device_id];
          s.Add(copy, true);
          s.Add(*kernel, false);
          s.pairs_ns += std::min(copy.duration(), kernel->duration());
        });
    for (auto& [device, s] : by_device) s.AddTo(&pageable_sums_[device]);
  }

  // The kernel on `copy`'s device that the first work-issuing call after *pos launched, when
  // no synchronising call came between and the kernel did not have to follow the copy.
  const DeviceOp* NextKernel(std::vector<uint32_t>::const_iterator pos,
                             std::vector<uint32_t>::const_iterator end,
                             const DeviceOp& copy) const {
    const TraceRecords& r = index_.records();
    for (auto it = pos + 1; it != end; ++it) {
      const ApiCall& c = r.api_calls[*it];
      const auto issued = index_.OpsOf(c.correlation_id);
      const ApiTraits& traits = index_.Traits(c);
      if (issued.empty()) {
        if (traits.explicit_sync != SyncScope::kNone || traits.implicit_sync) return nullptr;
        continue;
      }
      for (uint32_t o : issued) {
        const DeviceOp& k = index_.device_ops()[o];
        if (k.kind != DeviceOpKind::kKernel || k.device_id != copy.device_id) continue;
        if (k.stream_id == copy.stream_id) return nullptr;
        // Did stream semantics (legacy stream, event waits) make it follow the copy anyway?
        const int64_t copy_unit = model_.UnitOf(copy.correlation_id);
        for (const Dependency& d :
             model_.PendingOnStream(k.stream_id, c.start_ns, c.correlation_id, copy.start_ns)) {
          if (static_cast<int64_t>(d.unit) == copy_unit) return nullptr;
        }
        return &k;
      }
      return nullptr;  // the next work was not a kernel on this device
    }
    return nullptr;
  }

  const TraceIndex& index_;
  const StreamModel& model_;
  const StartUp& bounds_;
  std::map<std::pair<uint32_t, uint32_t>, OverlapAccumulator::Sums>& legacy_sums_;
  std::map<uint32_t, OverlapAccumulator::Sums>& pageable_sums_;
  std::map<std::pair<uint32_t, uint32_t>, OverlapAccumulator::TwoWaySums>& two_way_sums_;
  std::map<uint32_t, std::vector<Interval>> merged_kernels_;  // MergedKernels'
};

// A finding of `rule` on `device` spanning the operations from first_ns to last_ns, saving
// `saving`.
Finding DeviceFinding(const ProcessTrace& trace, RuleId rule, uint32_t device, uint64_t first_ns,
                      uint64_t last_ns, uint64_t saving) {
  Finding f;
  f.rule = rule;
  f.file = trace.path;
  f.pid = trace.header.pid;
  f.device_id = device;
  f.host_start_ns = first_ns > trace.origin_ns ? first_ns - trace.origin_ns : 0;
  f.host_duration_ns = last_ns - first_ns;
  f.blocked_ns = saving;
  return f;
}

void Report(const ProcessTrace& trace, const FindingsOptions& options, uint32_t device,
            const OverlapAccumulator::Sums& s, const std::string& cause, uint64_t possible,
            std::vector<Finding>* out) {
  if (possible < options.min_wait_ns) return;
  const uint64_t copy_ns = s.copy_ns, kernel_ns = s.kernel_ns;
  Finding f = DeviceFinding(trace, RuleId::kNoOverlapDefaultStream, device, s.first_ns, s.last_ns,
                            possible);
  OverlapDetails details;
  details.serialised_by = cause;
  details.copies = s.copies;
  details.copy_ns = copy_ns;
  details.kernels = s.kernels;
  details.kernel_ns = kernel_ns;
  f.details = std::move(details);
  const std::string gpu = "GPU " + std::to_string(device);
  auto count = [](uint64_t n, const char* one, const char* many) {
    return std::to_string(n) + " " + (n == 1 ? one : many);
  };
  const std::string work = count(s.copies, "host copy", "host copies") + " (" + Dur(copy_ns) +
                           ") and " + count(s.kernels, "kernel", "kernels") + " (" +
                           Dur(kernel_ns) + ")";
  if (cause == "legacy-default-stream") {
    f.stream_id = s.stream_id;
    f.explanation =
        work + " ran one after another on the legacy default stream (stream " +
        std::to_string(s.stream_id) + ") of " + gpu +
        ": that stream runs its work in issue order and waits for every blocking stream, so "
        "its copies and kernels never overlap. Issuing independent pieces (chunks) to "
        "non-blocking streams (cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking)), with "
        "pinned host memory, would let up to " +
        Dur(possible) + " overlap (the shorter of copy and kernel time, less what already did)";
    if (RecordedInPyTorch(trace)) f.explanation += PyTorchSideStreamHint();
  } else {
    f.explanation =
        work + " on " + gpu +
        " were serialised by pageable host memory: each copy held the host until it was done "
        "(the driver stages pageable memory), so the kernel its thread launched next, on "
        "another stream, could only start afterwards. With pinned host memory "
        "(cudaMallocHost, cudaHostRegister) cudaMemcpyAsync returns at once and up to " +
        Dur(possible) + " could have overlapped (per pair, the shorter of copy and kernel)";
  }
  out->push_back(std::move(f));
}

void ReportTwoWay(const ProcessTrace& trace, const FindingsOptions& options, uint32_t device,
                  uint32_t stream, const OverlapAccumulator::TwoWaySums& s,
                  std::vector<Finding>* out) {
  const uint64_t saving = s.saving_ns();
  if (saving < options.min_wait_ns) return;
  Finding f =
      DeviceFinding(trace, RuleId::kTwoWayCopiesOneStream, device, s.first_ns, s.last_ns, saving);
  f.stream_id = stream;
  f.details = TwoWayCopiesDetails{.pairs = s.pairs,
                                  .copies = s.copies,
                                  .copy_ns = s.copy_ns,
                                  .htod_bytes = s.htod_bytes,
                                  .dtoh_bytes = s.dtoh_bytes};
  f.explanation =
      "On stream " + std::to_string(stream) + " of GPU " + std::to_string(device) + ", " +
      std::to_string(s.pairs) + (s.pairs == 1 ? " time" : " times") +
      " a device-to-host copy was queued behind a host-to-device copy with no other work "
      "between (" +
      std::to_string(s.copies) + " copies, " + Dur(s.copy_ns) + ": " + FormatBytes(s.htod_bytes) +
      " up, " + FormatBytes(s.dtoh_bytes) +
      " down): a stream runs its work one at a time, while the GPU's copy engines move data "
      "both ways at once, and a download does not need the upload just before it. Issued to "
      "two streams (downloads on a second non-blocking stream, after an event recorded where "
      "the data they read is ready; pinned memory), up to " +
      Dur(saving) +
      " could overlap (per pair, the time the download waited for the upload, at most its "
      "length; in all, at most the shorter direction's time, and at most the pairs' time in "
      "which no kernel ran: kernels running meanwhile set the pace)";
  out->push_back(std::move(f));
}

}  // namespace

void OverlapAccumulator::Add(const TraceIndex& window, const StreamModel& model) {
  OverlapRules(window, model, bounds_, &legacy_, &pageable_, &two_way_).Run();
}

void OverlapAccumulator::Finish(const ProcessTrace& whole, const FindingsOptions& options,
                                std::vector<Finding>* out) const {
  for (const auto& [key, s] : legacy_) {
    if (s.copies == 0 || s.kernels == 0) continue;
    const uint64_t bound = std::min(s.copy_ns, s.kernel_ns);
    Report(whole, options, key.first, s, "legacy-default-stream",
           bound > s.already_ns ? bound - s.already_ns : 0, out);
  }
  for (const auto& [device, s] : pageable_) {
    Report(whole, options, device, s, "pageable-memory", s.pairs_ns, out);
  }
  for (const auto& [key, s] : two_way_) ReportTwoWay(whole, options, key.first, key.second, s, out);
}

std::vector<uint32_t> ThreadsWhosePageablePairLeavesWindow(const TraceIndex& window) {
  std::vector<uint32_t> threads;
  const TraceRecords& r = window.records();
  ForEachHeldPageableCopy(window,
                          [&](const DeviceOp&, const std::vector<uint32_t>& calls,
                              std::vector<uint32_t>::const_iterator pos) {
                            // NextKernel decides at the first call that issued work or
                            // synchronised; with none after *pos it runs off the window.
                            for (auto it = pos + 1; it != calls.end(); ++it) {
                              const ApiCall& c = r.api_calls[*it];
                              const ApiTraits& traits = window.Traits(c);
                              if (!window.OpsOf(c.correlation_id).empty() ||
                                  traits.explicit_sync != SyncScope::kNone ||
                                  traits.implicit_sync) {
                                return;
                              }
                            }
                            const uint32_t thread = r.api_calls[*pos].thread_id;
                            if (std::find(threads.begin(), threads.end(), thread) == threads.end()) {
                              threads.push_back(thread);
                            }
                          });
  return threads;
}

void FindOverlapFindings(const RuleInput& input, std::vector<Finding>* out) {
  StartUpScan scan;  // (as FindGpuFindings: one window, the whole trace)
  scan.Add(input.index);
  OverlapAccumulator overlap(scan.Bounds(input.trace.origin_ns));
  overlap.Add(input.index, input.model);
  overlap.Finish(input.trace, input.options, out);
}

}  // namespace libprof::analysis
