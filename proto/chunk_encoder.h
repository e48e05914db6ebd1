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

class TraceWriter::ChunkEncoder {
 public:
  explicit ChunkEncoder(size_t reserve_bytes);

  // Appends one record of a kind of proto/record_kinds.h: its own fields come from its Encode
  // (proto/record_encoders.h), the list state from here.
  template <typename Record>
  void Add(const Record& record);
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
  class ListContext;  // what a kind's Encode may ask of the chunk (chunk_encoder.cc)
  struct ShapeHash {
    size_t operator()(const KernelShape& shape) const;
  };

  int64_t StartDelta(size_t list, uint64_t start_ns);  // list: RecordKind<T>::kIndex
  int64_t CorrelationDelta(size_t list, uint64_t correlation_id);
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
  // Per list; a list without times or correlation ids leaves its entries unused.
  std::array<uint64_t, kRecordKindCount> previous_start_{};
  std::array<uint64_t, kRecordKindCount> previous_correlation_{};

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
