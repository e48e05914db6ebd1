// TraceWriter::ChunkEncoder: turns model records into the wire form of one Chunk at a time,
// holding the per-file interning state (threads, API names, kernel shapes, string watermark) and
// the per-list delta state of the chunk under construction.
//
// Layer: proto/, writer side; protozero only (no libprotobuf: this is linked into libprof.so).
// Internal to TraceWriter; not thread-safe.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "proto/trace_model.h"
#include "proto/trace_writer.h"

namespace libprof {

// Appends the wire form of a Device message (shared by Header.devices and Chunk.devices).
void EncodeDevice(const DeviceInfo& device, std::string* out);

class TraceWriter::ChunkEncoder {
 public:
  explicit ChunkEncoder(size_t reserve_bytes);

  void Add(const ApiCall& record);
  void Add(const Kernel& record);
  void Add(const Memcpy& record);
  void Add(const Memset& record);
  void Add(const Synchronization& record);
  void Add(const NvtxEvent& record);
  void Add(const NvtxDomain& record);
  void Add(const MemoryOp& record);
  void Add(const StreamInfo& record);
  void Add(const ContextInfo& record);
  void Add(const CudaEvent& record);
  void Add(const Overhead& record);
  void Add(const DeviceInfo& record);
  void Add(const GraphTrace& record);
  void Add(const DropReport& record);
  void Add(const StackModule& record);
  void Add(const StackFrame& record);
  void Add(const CallStack& record);
  void AddRuntimeVersion(uint32_t cuda_runtime_version);
  void SetRunEnd(const RunEnd& run_end);  // replaces an earlier one of the same chunk

  bool empty() const { return body_.empty() && !run_end_; }
  size_t size() const { return body_.size(); }  // encoded records so far, definitions excluded

  // Appends the definitions this chunk needs (strings with ids from the watermark on, new
  // threads, API names, kernel shapes) and the chunk's own fields; returns the complete Chunk
  // message bytes, valid until StartNextChunk().
  const std::string& Close(const StringInterner& strings, uint64_t sequence,
                           uint32_t process_index);
  // Empties the chunk; the per-file interning state carries over.
  void StartNextChunk();

 private:
  // The repeated lists whose records carry delta-encoded start times and/or correlation ids.
  enum List {
    kApi,
    kKernel,
    kMemcpy,
    kMemset,
    kSync,
    kNvtx,
    kMemoryOp,
    kStream,
    kCudaEvent,
    kOverhead,
    kGraph,
    kListCount
  };
  struct ShapeHash {
    size_t operator()(const KernelShape& shape) const;
  };

  int64_t StartDelta(List list, uint64_t start_ns);
  int64_t CorrelationDelta(List list, uint64_t correlation_id);
  uint32_t ThreadIndex(uint32_t tid);
  uint32_t ShapeId(const KernelShape& shape);
  void NoteApiName(ApiDomain domain, uint32_t callback_id, uint32_t name_id);
  // Appends scratch_ to the chunk as one length-delimited field (even when empty: an all-default
  // record is still a record).
  void CommitRecord(uint32_t field);

  std::string body_;
  std::string scratch_;
  std::optional<RunEnd> run_end_;
  bool has_base_ = false;
  uint64_t base_time_ns_ = 0;
  std::array<uint64_t, kListCount> previous_start_{};
  std::array<uint64_t, kListCount> previous_correlation_{};

  // Per file.
  uint32_t string_watermark_ = 1;  // id 0 ("") is implicit, never written
  std::unordered_map<uint32_t, uint32_t> thread_index_;
  std::unordered_map<uint64_t, uint32_t> api_names_;  // (domain << 32 | callback id) -> name id
  std::unordered_map<KernelShape, uint32_t, ShapeHash> shape_ids_;

  // Defined by this chunk, written at Close.
  std::vector<uint32_t> new_threads_;
  std::vector<std::pair<uint64_t, uint32_t>> new_api_names_;
  std::vector<std::pair<uint32_t, const KernelShape*>> new_shapes_;
  std::vector<std::pair<uint32_t, std::string>> new_strings_;
};

}  // namespace libprof
