// The findings rule no-overlap-default-stream: copies and kernels that could not overlap because
// of how they were issued, per device (host copies of more than 64 KiB; smaller ones are mostly
// latency):
//   legacy-default-stream  host copies (HtoD, DtoH) and kernels on the legacy default stream:
//                          it runs everything issued to it in order and waits for (and holds
//                          back) every blocking stream, so its copies and kernels never overlap;
//   pageable-memory        a copy from or to pageable host memory held the host until it was
//                          done (the driver stages it), and the next call of that thread that
//                          issued work launched a kernel on the device that did not have to
//                          follow the copy (another stream, no event or legacy-stream link):
//                          with pinned memory the kernel could have started during the copy.
// Copies and kernels paid once do not count (start_up.h): none that starts in start-up after
// the first kernel (a compiler's warm-up, module loading) or during one-time work (a cuFFT
// plan's 6.65 MiB of tables uploaded inside torch.fft's first call, 18 ms, once).
// Time that could have overlapped (blocked_ns), an upper bound:
//   legacy: min(|C|, |K|) - |C ∩ K_all|, C and K the unions of the stream's copies and kernels,
//           K_all every kernel of the device (what the copies already overlapped elsewhere);
//           C only the copies between the stream's first and last kernel: one before the first
//           or after the last can overlap none of its kernels (a model's weights uploaded
//           before the loop, a result read back after it);
//   pageable: the sum over (copy, kernel) pairs of the shorter of the two durations.
// And the rule two-way-copies-one-stream, per stream: a device-to-host copy (pinned, more than
// 64 KiB) queued behind a host-to-device one on its stream (issued before that one ended, with
// no other work of the stream between them). A stream runs its work one at a time, while the
// GPU's copy engines move data both ways at once; a download does not need the upload just
// before it (it would read back what was just written), so on two streams the pair could
// overlap. An upload queued behind a download is often the next step's input written into the
// buffer just read (stream_overlap_serial.pb: an in-place pipeline of one buffer): not counted.
// Time that could overlap: per pair, the time the download waited for the upload, at most its
// length, summed, and at most the shorter direction's copy time (each direction's copies still
// run one after another), and at most the time of the pairs in which no kernel ran on the
// device (kernels running meanwhile set the pace: on an H200, 50 steps of a 64 MiB upload and
// download each beside heavy compute gained nothing on two streams, beside light compute
// 55 ms); an upper bound (other copies sharing the link give less). Paid-once copies do not
// count, as above.
//
// Layer: analysis/rules/, rules; run from the rule registry. Built on TraceIndex
// and StreamModel; pure computation.
#pragma once

#include <algorithm>
#include <cstdint>
#include <map>
#include <utility>
#include <vector>

#include "analysis/metrics/start_up.h"
#include "analysis/model/stream_deps.h"
#include "analysis/model/trace_index.h"
#include "analysis/rules/findings.h"

namespace libprof::analysis {

// The rules' pass, registered in rule_registry.cc: appends at most one finding per device and
// cause, then one per stream with copies queued both ways, when its time is >=
// options.min_wait_ns.
void FindOverlapFindings(const RuleInput& input, std::vector<Finding>* out);

// The rule over a one-process trace read in windows (trace_windows.h), which Add takes in
// window order: unions of copies and kernels add up over windows (no operation crosses a cut),
// a legacy copy waits for its stream's next kernel, the pairs are made inside a window.
// FindOverlapFindings is one Add.
class OverlapAccumulator {
 public:
  // `bounds`: start-up's and the one-time work's, as StartUpScan gives them.
  explicit OverlapAccumulator(const StartUp& bounds) : bounds_(bounds) {}
  void Add(const TraceIndex& window, const StreamModel& model);
  void Finish(const ProcessTrace& whole, const FindingsOptions& options,
              std::vector<Finding>* out) const;

  // legacy: a copy after the stream's latest kernel so far, counted if another kernel follows;
  // `already_ns` its overlap with the device's kernels on other streams.
  struct PendingCopy {
    Interval span;
    uint64_t already_ns = 0;
  };
  struct Sums {
    uint32_t stream_id = 0;
    uint64_t copies = 0, kernels = 0;
    uint64_t copy_ns = 0, kernel_ns = 0;  // unions (a legacy stream's copies never overlap)
    uint64_t already_ns = 0;              // legacy: copies overlapping any kernel of the device
    uint64_t pairs_ns = 0;                // pageable: the sum of min(copy, kernel) over the pairs
    uint64_t first_ns = UINT64_MAX, last_ns = 0;
    bool kernel_seen = false;             // legacy: the stream ran a kernel (windows in order)
    std::vector<PendingCopy> pending;     // legacy
  };
  // two-way-copies-one-stream, per (device, stream).
  struct TwoWaySums {
    uint64_t pairs = 0, copies = 0, copy_ns = 0, htod_bytes = 0, dtoh_bytes = 0;
    uint64_t htod_ns = 0, dtoh_ns = 0;  // of copy_ns
    uint64_t waits_ns = 0;              // per pair, the time the second waited, at most its length
    // Per pair, the time from the upload's start to the download's end in which no kernel ran
    // on the device: while kernels run, they set the pace, and copies finishing sooner gain
    // nothing.
    uint64_t alone_ns = 0;
    uint64_t saving_ns() const { return std::min({waits_ns, htod_ns, dtoh_ns, alone_ns}); }
    uint64_t first_ns = UINT64_MAX, last_ns = 0;
  };

 private:
  StartUp bounds_;
  std::map<std::pair<uint32_t, uint32_t>, Sums> legacy_;  // (device, stream)
  std::map<uint32_t, Sums> pageable_;                     // device
  std::map<std::pair<uint32_t, uint32_t>, TwoWaySums> two_way_;  // (device, stream)
};

// The threads of `window` with a pageable copy that would be paired with the next call of its
// thread and none in the window can say (the window ends first): its pair may lie in a later
// window, unless the thread makes no later call.
std::vector<uint32_t> ThreadsWhosePageablePairLeavesWindow(const TraceIndex& window);

}  // namespace libprof::analysis
