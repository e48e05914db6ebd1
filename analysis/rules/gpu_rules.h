// The device-side findings rules, on each device's steady state (from the end of start-up,
// analysis/metrics/start_up.h, which this pass reports once as the start-up rule):
// gpu-idle-gaps (a device idle between two operations for at least a threshold, Nsight Systems'
// gpu_gaps), gpu-low-utilization (chunks of the steady state busy less than a threshold, Nsight
// Systems' gpu_time_util; adjacent chunks without a kernel are one finding) and
// gpu-idle-breakdown (a device idle for a large share of its whole steady state), each with its
// idle time split by cause (idle_breakdown.h: launching, blocked in synchronising calls, other).
//
// The rules add up over time, given where start-up ends and each device's active span, so they
// are computed by GpuRulesAccumulator window by window (trace_windows.h: a one-process trace
// read in windows, each cut where no call or operation runs) or over one window, the whole
// trace: one implementation. Per device it keeps sums per utilization chunk and for the whole
// steady state, and the gap findings; the gap running over a cut is classified by IdleTimeline.
//
// Layer: analysis/rules/, rules; run from the rule registry. Pure computation.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "analysis/metrics/idle_breakdown.h"
#include "analysis/metrics/start_up.h"
#include "analysis/model/trace_index.h"
#include "analysis/rules/findings.h"

namespace libprof::analysis {

// The pass of the three rules, registered in rule_registry.cc: appends the GPU findings of the
// trace (per device) and its start-up finding to *out.
void FindGpuFindings(const RuleInput& input, std::vector<Finding>* out);

// Idle time of one cause by API name id (what "most in X" says), and how much of it was in
// calls.
struct IdleByApi {
  std::unordered_map<uint32_t, uint64_t> by_name_id;
  uint64_t in_calls_ns = 0;
  void Add(const IdlePiece& p, uint64_t length) {
    by_name_id[static_cast<uint32_t>(p.api_name)] += length;
    in_calls_ns += length;
  }
  void Merge(const IdleByApi& other);
};

class GpuRulesAccumulator {
 public:
  // `bounds`: StartUpScan::Bounds of the whole trace; `active`: per device with busy time, its
  // first operation's start to its last one's end over the whole trace.
  GpuRulesAccumulator(const FindingsOptions& options, const StartUp& bounds,
                      const std::map<uint32_t, Interval>& active);
  // One window, in time order: its index, IdleTimeline::Add's result for it, and the calls the
  // timeline kept from earlier windows (its earlier_calls() after that Add).
  void Add(const TraceIndex& window, std::vector<DeviceIdle> devices,
           const std::vector<HostCall>& earlier_calls);
  // The findings, per device by id (gaps, low utilization, breakdown), then start-up's (with
  // `start_up`, the bounds with StartUpTally's fill-in), as FindGpuFindings orders them.
  void Finish(const ProcessTrace& whole, const StartUp& start_up, std::vector<Finding>* out);

 private:
  struct Sums {
    uint64_t covered = 0;
    IdleTotals idle;
    // Left out of `idle`: gaps overlapping one-time work, and its kinds (OneTimeWorkBit's).
    uint64_t one_time_idle_ns = 0;
    uint32_t one_time_kinds = 0;
    uint64_t kernels = 0, kernel_ns = 0;
    // Of `idle`, the idle gaps' time in which the program made CUDA library plans or handles
    // again and again (StartUp::recurring_set_ups); only over the steady state (`whole`).
    uint64_t set_up_idle_ns = 0;
    // The same for the autotuner's or compiler's work that recurs (StartUp::recurring_compiles).
    uint64_t compile_idle_ns = 0;
    IdleByApi sync, other, host_functions, memory_waits;
    // Over the steady state only (`whole`): launch idle by the issuing call, and the copies.
    IdleByApi launches;
    uint64_t copies = 0, copy_bytes = 0, copy_ns = 0;
  };
  struct Device {
    Interval active;         // the whole trace's
    uint64_t active_busy_ns = 0;  // its busy time, start-up's included
    bool cut = false;        // start-up ends inside the active span: cut at from_ns
    uint64_t from_ns = 0;
    Interval steady;         // the active span from start-up's end
    std::vector<Sums> chunks;  // per utilization chunk of `steady`
    std::vector<uint64_t> chunk_from;  // where each chunk starts, then where the last ends
    Sums whole;                // over `steady`
    uint64_t launches = 0, launch_ns = 0;
    // Of those, the calls that ran while another thread's launch call ran (no call crosses a
    // window's cut, so a window's sweep is exact).
    uint64_t overlapped_launches = 0;
    // Of those, the calls that launched CUDA graphs, and the kernels their graphs ran: advice to
    // "use CUDA graphs" is wrong for a program whose launches already are graph launches.
    uint64_t graph_launches = 0, graph_kernels = 0;
    // Of the graphs' kernels, those the device launched (no correlation id): the bodies of
    // conditional nodes, started anew for each iteration.
    uint64_t device_launched_graph_kernels = 0;
    std::vector<Finding> gaps;
  };
  void AddDevice(const TraceIndex& window, DeviceIdle d, const std::vector<HostCall>& earlier_calls,
                 Device* device);
  void LowUtilization(const ProcessTrace& whole, uint32_t id, const Device& d,
                      std::vector<Finding>* out) const;
  void Breakdown(const ProcessTrace& whole, uint32_t id, const Device& d,
                 std::vector<Finding>* out) const;
  // The breakdown's verdict when the host spent most idle time issuing small copies; none
  // otherwise.
  static std::optional<std::string> SmallCopiesVerdict(const ProcessTrace& whole, const Device& d,
                                                       const IdleTotals& causes, uint64_t idle);
  // The verdict when launching and the host's own time together hold half the idle time.
  static std::string HostPaceVerdict(const ProcessTrace& whole, const Device& d,
                                     const IdleTotals& causes, uint64_t idle, uint64_t mean_kernel);
  void StartUpFinding(const ProcessTrace& whole, const StartUp& s,
                      std::vector<Finding>* out) const;

  const FindingsOptions& options_;
  StartUp bounds_;
  std::map<uint32_t, Device> devices_;
  uint64_t start_up_idle_ = 0;
  uint64_t one_time_idle_ = 0;  // over devices: Sums::one_time_idle_ns of their steady states
  uint32_t one_time_kinds_ = 0;
};

}  // namespace libprof::analysis
