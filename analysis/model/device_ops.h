// The device-operation view: the work a process ran on the device (kernels, copies, sets, whole
// graph launches: the record kinds whose role is kDeviceOp in proto/record_kinds.h), each seen as
// one DeviceOp with the properties every such kind has. Everything in the analysis that needs
// "the device work" goes through this view (TraceIndex::device_ops() holds it sorted, streaming
// analyses call ForEachDeviceOp); only per-kind columns of a report read the record itself
// (TraceRecords list of the op's kind, at DeviceOp::record).
//
// Layer: analysis/model/. Depends on proto/ only.
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <vector>

#include "proto/trace_model.h"

namespace libprof::analysis {

enum class DeviceOpKind : uint8_t { kKernel, kMemcpy, kMemset, kGraph };
inline constexpr size_t kDeviceOpKinds = 4;  // DeviceOpKind's values, 0 to 3
const char* ToString(DeviceOpKind kind);  // "kernel", "memcpy", "memset", "graph"

// A copy between host and device of more than 64 KiB: smaller ones take a few µs, mostly
// latency (a 4-byte result read back after every kernel); the size sync-memcpy uses for small
// host-to-device copies (64 KiB, Nsight Systems' rule).
inline constexpr uint64_t kSmallCopyBytes = 64 * 1024;
// A piece of a copy between two GPUs that the driver staged through host memory (peer access
// not enabled, or not possible): CUPTI records a DtoH on the source GPU and an HtoD on the
// destination, both with device memory at each end, each with the whole copy's bytes and the
// time of its last piece only (22 µs of a 256 MiB copy that took 7.7 ms on an H200 pair, whose
// direct copy took 0.68 ms).
// (By kinds, for the summary's rows, which keep a copy's kinds without its record.)
inline bool IsStagedPeerPiece(CopyKind kind, MemoryKind src, MemoryKind dst) {
  return (kind == CopyKind::kHtoD || kind == CopyKind::kDtoH) && src == MemoryKind::kDevice &&
         dst == MemoryKind::kDevice;
}
inline bool IsStagedPeerPiece(const Memcpy& m) {
  return IsStagedPeerPiece(m.copy_kind, m.src_kind, m.dst_kind);
}
inline bool IsHostCopy(const Memcpy& m) {
  return (m.copy_kind == CopyKind::kHtoD || m.copy_kind == CopyKind::kDtoH) &&
         m.bytes > kSmallCopyBytes && !IsStagedPeerPiece(m);
}
// Such a copy from or to pageable host memory: the driver stages it, holding the host.
inline bool IsPageableCopy(const Memcpy& m) {
  return IsHostCopy(m) &&
         ((m.copy_kind == CopyKind::kHtoD && m.src_kind == MemoryKind::kPageable) ||
          (m.copy_kind == CopyKind::kDtoH && m.dst_kind == MemoryKind::kPageable));
}

// What each record kind of role kDeviceOp is as a device operation.
constexpr DeviceOpKind OpKindOf(const Kernel&) { return DeviceOpKind::kKernel; }
constexpr DeviceOpKind OpKindOf(const Memcpy&) { return DeviceOpKind::kMemcpy; }
constexpr DeviceOpKind OpKindOf(const Memset&) { return DeviceOpKind::kMemset; }
constexpr DeviceOpKind OpKindOf(const GraphTrace&) { return DeviceOpKind::kGraph; }

// A kernel, memcpy, memset or whole-graph launch (GraphTrace) on the device.
struct DeviceOp {
  DeviceOpKind kind = DeviceOpKind::kKernel;
  uint32_t record = 0;  // index into the records list of its kind
  uint64_t start_ns = 0;
  uint64_t end_ns = 0;
  uint64_t correlation_id = 0;
  uint32_t stream_id = 0;
  uint32_t context_id = 0;
  uint32_t device_id = 0;
  uint32_t graph_id = 0;
  uint64_t bytes = 0;  // memcpy/memset
  uint64_t duration() const { return end_ns > start_ns ? end_ns - start_ns : 0; }
  // A kernel or a whole CUDA graph (GRAPH_TRACE): the device running code, not moving or
  // setting memory.
  bool runs_code() const { return kind == DeviceOpKind::kKernel || kind == DeviceOpKind::kGraph; }
};

// The DeviceOp of record `x`, element `index` of its list.
template <typename T>
requires kIsDeviceOp<T> DeviceOp MakeDeviceOp(const T& x, uint32_t index) {
  static_assert(kHasTime<T> && kHasCorrelation<T> && kHasStream<T> && kHasDevice<T>,
                "a device operation has a time span, a correlation id, a stream and a device");
  DeviceOp op{.kind = OpKindOf(x),
              .record = index,
              .start_ns = StartNs(x),
              .end_ns = EndNs(x),
              .correlation_id = x.correlation_id,
              .stream_id = x.stream_id,
              .context_id = ContextId(x),
              .device_id = DeviceId(x)};
  if constexpr (requires { x.graph_id; }) op.graph_id = x.graph_id;
  if constexpr (kHasBytes<T>) op.bytes = x.bytes;
  return op;
}

// Calls f(op, record) for every device operation of `records`, kind by kind in the order of
// proto/record_kinds.h and in list order within a kind; `f` takes the record as `const auto&`.
template <typename F>
void ForEachDeviceOp(const TraceRecords& records, F&& f) {
  ForEachList(records, [&]<typename T>(const std::vector<T>& list) {
    if constexpr (kIsDeviceOp<T>) {
      for (uint32_t i = 0; i < list.size(); ++i) f(MakeDeviceOp(list[i], i), list[i]);
    }
  });
}

// How many device operations `records` holds.
size_t DeviceOpCount(const TraceRecords& records);

}  // namespace libprof::analysis
