#include "analysis/rules/overlap_rules.h"

#include <algorithm>
#include <map>
#include <unordered_map>
#include <unordered_set>

#include "analysis/model/api_names.h"
#include "analysis/model/intervals.h"
#include "analysis/model/units.h"

namespace libprof::analysis {
namespace {

// Host and device timestamps share a clock to within a few µs (findings.cc's kSkewNs).
constexpr uint64_t kSkewNs = 2'000;

std::string Dur(uint64_t ns) { return FormatDuration(static_cast<double>(ns)); }

// Copies up to this size are left out: they take a few µs, mostly latency (a 4-byte result
// read back after every kernel), and overlapping them would save nothing worth a change. The
// size sync-memcpy uses for small host-to-device copies (64 KiB, Nsight Systems' rule).
constexpr uint64_t kSmallCopyBytes = 64 * 1024;

bool IsHostCopy(const Memcpy& m) {
  return (m.copy_kind == CopyKind::kHtoD || m.copy_kind == CopyKind::kDtoH) &&
         m.bytes > kSmallCopyBytes;
}

bool IsPageableCopy(const Memcpy& m) {
  return IsHostCopy(m) &&
         ((m.copy_kind == CopyKind::kHtoD && m.src_kind == MemoryKind::kPageable) ||
          (m.copy_kind == CopyKind::kDtoH && m.dst_kind == MemoryKind::kPageable));
}

// What the copies and kernels of one device and cause add up to.
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
};

class OverlapRules {
 public:
  OverlapRules(const ProcessTrace& trace, const TraceIndex& index, const StreamModel& model,
               const FindingsOptions& options, std::vector<Finding>* out)
      : trace_(trace), index_(index), model_(model), options_(options), out_(*out) {}

  void Run() {
    const auto& ops = index_.device_ops();
    const TraceRecords& r = index_.records();
    std::map<std::pair<uint32_t, uint32_t>, Serialised> legacy;  // (device, stream)
    std::map<uint32_t, std::vector<Interval>> kernels;           // device -> all kernels
    for (const DeviceOp& op : ops) {
      if (op.kind == DeviceOpKind::kKernel)
        kernels[op.device_id].push_back({op.start_ns, op.end_ns});
      if (model_.ClassOf(op.stream_id) != StreamClass::kLegacyNull) continue;
      if (op.kind == DeviceOpKind::kKernel) {
        legacy[{op.device_id, op.stream_id}].Add(op, false);
      } else if (op.kind == DeviceOpKind::kMemcpy && IsHostCopy(r.memcpys[op.record])) {
        legacy[{op.device_id, op.stream_id}].Add(op, true);
      }
    }
    for (auto& [key, s] : legacy) {
      if (s.copies == 0 || s.kernels == 0) continue;
      s.stream_id = key.second;
      const std::vector<Interval> c = MergeIntervals(s.copy_spans);
      const uint64_t copy_ns = UnionLength(c);
      const uint64_t kernel_ns = UnionLength(s.kernel_spans);
      uint64_t already = 0;
      for (const Interval& i : Intersect(c, MergeIntervals(kernels[key.first]))) {
        already += i.length();
      }
      const uint64_t bound = std::min(copy_ns, kernel_ns);
      Report(key.first, s, "legacy-default-stream", bound > already ? bound - already : 0, copy_ns,
             kernel_ns);
    }
    Pageable();
  }

 private:
  // Pageable copies whose call held the host, each paired with the kernel its thread launched
  // next when that kernel did not have to follow the copy.
  void Pageable() {
    const auto& ops = index_.device_ops();
    const TraceRecords& r = index_.records();
    // Each top-level call's place in its thread's list (TraceIndex::TopLevelCalls, by start),
    // filled for the threads of pageable copies: found by lookup, not by a scan per copy (a scan
    // made the pass quadratic: 1.9 s of 9 at 10M records).
    std::vector<uint32_t> place;
    std::unordered_set<uint32_t> placed_threads;
    std::map<uint32_t, Serialised> by_device;
    for (const DeviceOp& copy : ops) {
      if (copy.kind != DeviceOpKind::kMemcpy || !IsPageableCopy(r.memcpys[copy.record])) continue;
      const int64_t found = index_.LaunchingCall(copy.correlation_id);
      if (found < 0) continue;
      const uint32_t l = index_.Outermost(static_cast<size_t>(found));
      const ApiCall& call = r.api_calls[l];
      if (call.end_ns + kSkewNs < copy.end_ns) continue;  // returned before the copy was done
      const std::vector<uint32_t>& calls = index_.TopLevelCalls(call.thread_id)->calls;
      if (placed_threads.insert(call.thread_id).second) {
        place.resize(r.api_calls.size());
        for (uint32_t k = 0; k < calls.size(); ++k) place[calls[k]] = k;
      }
      auto pos = calls.begin() + place[l];
      const DeviceOp* kernel = NextKernel(pos, calls.end(), copy);
      if (kernel == nullptr) continue;
      Serialised& s = by_device[copy.device_id];
      s.Add(copy, true);
      s.Add(*kernel, false);
      s.pairs_ns += std::min(copy.duration(), kernel->duration());
    }
    for (auto& [device, s] : by_device) {
      Report(device, s, "pageable-memory", s.pairs_ns, UnionLength(s.copy_spans),
             UnionLength(s.kernel_spans));
    }
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

  void Report(uint32_t device, const Serialised& s, const std::string& cause, uint64_t possible,
              uint64_t copy_ns, uint64_t kernel_ns) {
    if (possible < options_.min_wait_ns) return;
    Finding f;
    f.rule = RuleId::kNoOverlapDefaultStream;
    f.file = trace_.path;
    f.pid = trace_.header.pid;
    f.device_id = device;
    f.host_start_ns = s.first_ns > trace_.origin_ns ? s.first_ns - trace_.origin_ns : 0;
    f.host_duration_ns = s.last_ns - s.first_ns;
    f.blocked_ns = possible;
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
    } else {
      f.explanation =
          work + " on " + gpu +
          " were serialised by pageable host memory: each copy held the host until it was done "
          "(the driver stages pageable memory), so the kernel its thread launched next, on "
          "another stream, could only start afterwards. With pinned host memory "
          "(cudaMallocHost, cudaHostRegister) cudaMemcpyAsync returns at once and up to " +
          Dur(possible) + " could have overlapped (per pair, the shorter of copy and kernel)";
    }
    out_.push_back(std::move(f));
  }

  const ProcessTrace& trace_;
  const TraceIndex& index_;
  const StreamModel& model_;
  const FindingsOptions& options_;
  std::vector<Finding>& out_;
};

}  // namespace

void FindOverlapFindings(const RuleInput& input, std::vector<Finding>* out) {
  OverlapRules(input.trace, input.index, input.model, input.options, out).Run();
}

}  // namespace libprof::analysis
