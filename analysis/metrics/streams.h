// `profview streams`: what each stream ran (kernels, copies by direction, memsets), how busy it
// was and of which kind it is, and per device how much copy and compute overlapped, how much
// kernels ran concurrently, and how much copy time ran alone while kernels sat queued on other
// streams (overlap that the issue order or stream layout gave away).
//
// Layer: analysis/metrics/. Built on TraceIndex and stream_deps.h's stream classes;
// pure interval arithmetic, no formatting.
#pragma once

#include <array>
#include <map>
#include <unordered_set>
#include <utility>
#include <cstdint>
#include <string>
#include <vector>

#include "analysis/model/intervals.h"
#include "analysis/model/stream_deps.h"
#include "analysis/model/trace_loader.h"

namespace libprof::analysis {

// Copy directions reported separately; every other CopyKind (arrays, HtoH, peer) is kOther.
enum class CopyDirection : uint8_t { kHtoD, kDtoH, kDtoD, kOther };
inline constexpr size_t kCopyDirections = 4;
const char* ToString(CopyDirection d);  // "HtoD", "DtoH", "DtoD", "other"
CopyDirection DirectionOf(CopyKind kind);

// Count and summed duration (ns, clipped to the analysed time) of one kind of operation.
struct OpTally {
  uint64_t count = 0;
  uint64_t total_ns = 0;
};

struct StreamStats {
  uint32_t device_id = 0;
  uint32_t stream_id = 0;
  StreamClass klass = StreamClass::kBlocking;
  bool from_record = false;  // the class comes from a STREAM record (else from CONTEXT/API names)
  OpTally kernels;
  std::array<OpTally, kCopyDirections> copies;  // by CopyDirection
  OpTally memsets;
  OpTally graphs;        // whole-graph launches (GraphTrace)
  uint64_t busy_ns = 0;  // union of all the stream's operation intervals
};

struct CopyOverlap {
  uint64_t copy_ns = 0;           // union of the copies of this direction
  uint64_t with_kernel_ns = 0;    // ... while at least one kernel ran
  uint64_t could_overlap_ns = 0;  // ... while no kernel ran but one was queued on another stream
};

struct DeviceOverlap {
  uint32_t device_id = 0;
  uint64_t kernel_ns = 0;        // union of the device's kernels
  uint64_t multi_kernel_ns = 0;  // time with two or more kernels in flight
  std::array<CopyOverlap, kCopyDirections> by_direction;
  CopyOverlap all;  // every copy direction together (each instant counted once)
};

// The copies between two places (a device, or "host" memory), whatever their stream: peer copies
// (cudaMemcpyPeer*, copies between two devices' memory) keep both devices. Bandwidth: bytes over
// the copies' summed duration.
struct CopyLink {
  std::string from;  // "host", "GPU 0"
  std::string to;
  uint64_t count = 0;
  uint64_t bytes = 0;
  uint64_t total_ns = 0;  // summed duration, clipped to the analysed time
};

// Per device: every copy that involved it (as source or destination).
struct DeviceCopies {
  uint32_t device_id = 0;
  uint64_t count = 0;
  uint64_t bytes_in = 0;   // copied into its memory
  uint64_t bytes_out = 0;  // copied out of it
  uint64_t total_ns = 0;
};

struct StreamsReport {
  uint32_t pid = 0;
  std::string file;
  uint64_t trace_ns = 0;               // the analysed time (window_ns)
  std::vector<StreamStats> streams;    // by device, then stream id
  std::vector<DeviceOverlap> devices;  // by device id; devices with device work only
  std::vector<CopyLink> links;         // by source, then destination
  std::vector<DeviceCopies> device_copies;  // by device id; devices with copies only
};

// Analyses one (filtered) process. Every interval is clipped to trace.windows. Definitions:
// - kernel K runs in [start, end); it is queued in [issue, start), issue being the start of the
//   API call that launched it (joined by correlation id; no queued time when that call is
//   missing);
// - with_kernel_ns = |C_d ∩ K| where C_d is the union of the copies of direction d and K the
//   union of all kernels of the device;
// - multi_kernel_ns = time where a sweep over kernel starts/ends counts two or more kernels;
// - could_overlap_ns = |(∪_c (c ∩ Q_not(stream(c)))) \ K| over the copies c of direction d,
//   Q_not(s) being the union of the queued intervals of the device's kernels on streams ≠ s.
// Graph launches count in their stream's row and busy time but in no overlap figure.
StreamsReport AnalyzeStreams(const ProcessTrace& trace);

// AnalyzeStreams of a process read in windows (model/trace_windows.h): every figure above adds
// up over windows that no operation or queued time crosses, so the windows' reports are summed;
// each stream's class and whether a STREAM record named it are decided once, from the whole
// process (its definitions and every window's per-thread evidence), as AnalyzeStreams decides
// them over the whole trace.
class StreamsAccumulator {
 public:
  void Add(const ProcessTrace& window);
  // `whole`: the process without its timed records (WindowedRead::whole).
  StreamsReport Finish(const ProcessTrace& whole) const;

 private:
  std::map<std::pair<uint32_t, uint32_t>, StreamStats> streams_;  // (device, stream)
  std::map<uint32_t, DeviceOverlap> devices_;
  std::map<std::pair<std::string, std::string>, CopyLink> links_;
  std::map<uint32_t, DeviceCopies> device_copies_;
  std::unordered_set<uint32_t> per_thread_;
};

// The parts of `a` not in `b` (both sorted and disjoint, as MergeIntervals returns them).
std::vector<Interval> Subtract(const std::vector<Interval>& a, const std::vector<Interval>& b);

// Time covered by at least `k` of `intervals` (any order; overlaps count with multiplicity).
uint64_t CoveredAtLeast(std::vector<Interval> intervals, int k);

}  // namespace libprof::analysis
