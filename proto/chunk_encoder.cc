// Encodes model records into Chunk messages with protozero: the per-list deltas and the interning
// here, each kind's own fields in proto/record_encoders.h. Proto3 leaves default values out, so
// every field is written only when it differs from 0 / false / "": that, the deltas and the
// interning are what keep a launch-loop record near 14 bytes (measured by
// tests/proto/trace_writer_test.cc, LaunchLoopIsCompact).
#include "proto/chunk_encoder.h"

#include <protozero/pbf_writer.hpp>

#include "proto/proto3_writer.h"
#include "proto/record_encoders.h"
#include "proto/trace_wire.h"

namespace libprof {
namespace {

void EncodeShape(uint32_t id, const KernelShape& shape, std::string* out) {
  namespace f = wire::kernel_shape;
  Proto3Writer w(out);
  w.Uint(f::kId, id);
  w.Uint(f::kNameId, shape.name_id);
  w.Uint(f::kDemangledNameId, shape.demangled_name_id);
  w.Xyz(f::kGrid, shape.grid);
  w.Xyz(f::kBlock, shape.block);
  w.Uint(f::kRegistersPerThread, shape.registers_per_thread);
  w.Uint(f::kStaticSharedMemoryBytes, shape.static_shared_memory_bytes);
  w.Uint(f::kDynamicSharedMemoryBytes, shape.dynamic_shared_memory_bytes);
  w.Uint(f::kLocalMemoryPerThreadBytes, shape.local_memory_per_thread_bytes);
  w.Uint(f::kDeviceId, shape.device_id);
  w.Uint(f::kContextId, shape.context_id);
  w.Xyz(f::kCluster, shape.cluster);
  w.Uint(f::kSharedMemoryConfigBytes, shape.shared_memory_config_bytes);
}

void HashCombine(size_t* seed, uint64_t value) {
  *seed ^= std::hash<uint64_t>{}(value) + 0x9e3779b97f4a7c15ULL + (*seed << 6) + (*seed >> 2);
}

}  // namespace

size_t TraceWriter::ChunkEncoder::ShapeHash::operator()(const KernelShape& s) const {
  size_t seed = 0;
  for (uint64_t v :
       {uint64_t{s.name_id}, uint64_t{s.demangled_name_id}, uint64_t{s.grid[0]},
        uint64_t{s.grid[1]}, uint64_t{s.grid[2]}, uint64_t{s.block[0]}, uint64_t{s.block[1]},
        uint64_t{s.block[2]}, uint64_t{s.cluster[0]}, uint64_t{s.cluster[1]},
        uint64_t{s.cluster[2]}, uint64_t{s.registers_per_thread},
        uint64_t{s.static_shared_memory_bytes}, uint64_t{s.dynamic_shared_memory_bytes},
        uint64_t{s.local_memory_per_thread_bytes}, uint64_t{s.shared_memory_config_bytes},
        uint64_t{s.device_id}, uint64_t{s.context_id}}) {
    HashCombine(&seed, v);
  }
  return seed;
}

TraceWriter::ChunkEncoder::ChunkEncoder(size_t reserve_bytes) {
  // The chunk is closed once it passes chunk_bytes; room for one more record and the
  // definitions avoids regrowing the buffer at every chunk.
  body_.reserve(reserve_bytes + reserve_bytes / 8);
}

int64_t TraceWriter::ChunkEncoder::StartDelta(size_t list, uint64_t start_ns) {
  if (!has_base_) {
    // The chunk's first timed record defines the base, so its own delta is 0.
    has_base_ = true;
    base_time_ns_ = start_ns;
    previous_start_.fill(start_ns);
  }
  // Unsigned difference cast to signed: exact modulo 2^64, so any pair of times round-trips.
  const int64_t delta = static_cast<int64_t>(start_ns - previous_start_[list]);
  previous_start_[list] = start_ns;
  return delta;
}

int64_t TraceWriter::ChunkEncoder::CorrelationDelta(size_t list, uint64_t correlation_id) {
  const int64_t delta = static_cast<int64_t>(correlation_id - previous_correlation_[list]);
  previous_correlation_[list] = correlation_id;
  return delta;
}

uint32_t TraceWriter::ChunkEncoder::ThreadIndex(uint32_t tid) {
  auto [it, inserted] = thread_index_.try_emplace(tid, static_cast<uint32_t>(thread_index_.size()));
  if (inserted) new_threads_.push_back(tid);
  return it->second;
}

uint32_t TraceWriter::ChunkEncoder::ShapeId(const KernelShape& shape) {
  auto [it, inserted] = shape_ids_.try_emplace(shape, static_cast<uint32_t>(shape_ids_.size()));
  if (inserted) new_shapes_.emplace_back(it->second, &it->first);
  return it->second;
}

void TraceWriter::ChunkEncoder::NoteApiName(ApiDomain domain, uint32_t callback_id,
                                            uint32_t name_id) {
  // The name is a function of (domain, callback id); the first one seen is the one written.
  const uint64_t key = wire::ApiNameKey(domain, callback_id);
  if (api_names_.try_emplace(key, name_id).second) new_api_names_.emplace_back(key, name_id);
}

void TraceWriter::ChunkEncoder::CommitRecord(uint32_t field) {
  protozero::pbf_writer(body_).add_message(field, scratch_);
}

// A kind's view of the chunk: its own list's delta state and the per-file interning.
class TraceWriter::ChunkEncoder::ListContext {
 public:
  ListContext(ChunkEncoder* encoder, size_t list) : encoder_(encoder), list_(list) {}
  int64_t StartDelta(uint64_t start_ns) { return encoder_->StartDelta(list_, start_ns); }
  int64_t CorrelationDelta(uint64_t id) { return encoder_->CorrelationDelta(list_, id); }
  // A time written relative to the chunk's base rather than to the list's previous record; the
  // first timed record of a chunk still defines the base.
  int64_t BaseDelta(uint64_t time_ns) {
    if (!encoder_->has_base_) encoder_->StartDelta(list_, time_ns);
    return static_cast<int64_t>(time_ns - encoder_->base_time_ns_);
  }
  uint32_t ThreadIndex(uint32_t tid) { return encoder_->ThreadIndex(tid); }
  uint32_t ShapeId(const KernelShape& shape) { return encoder_->ShapeId(shape); }
  void NoteApiName(ApiDomain domain, uint32_t callback_id, uint32_t name_id) {
    encoder_->NoteApiName(domain, callback_id, name_id);
  }

 private:
  ChunkEncoder* encoder_;
  size_t list_;
};

template <typename Record>
void TraceWriter::ChunkEncoder::Add(const Record& record) {
  ListContext context(this, RecordKind<Record>::kIndex);
  scratch_.clear();
  Encode(record, context, &scratch_);
  CommitRecord(RecordKind<Record>::kChunkField);
}

#define LIBPROF_INSTANTIATE_ADD(Type, list, field, role) \
  template void TraceWriter::ChunkEncoder::Add(const Type& record);
LIBPROF_RECORD_KINDS(LIBPROF_INSTANTIATE_ADD)
#undef LIBPROF_INSTANTIATE_ADD

void TraceWriter::ChunkEncoder::AddRuntimeVersion(uint32_t cuda_runtime_version) {
  scratch_.clear();
  Proto3Writer(&scratch_).Uint(wire::runtime_info::kCudaRuntimeVersion, cuda_runtime_version);
  CommitRecord(wire::chunk::kRuntimeInfos);
}

void TraceWriter::ChunkEncoder::SetRunEnd(const RunEnd& run_end) { run_end_ = run_end; }

const std::string& TraceWriter::ChunkEncoder::Close(const StringInterner& strings,
                                                    uint64_t sequence, uint32_t process_index) {
  Proto3Writer chunk(&body_);
  // Definitions go after the records that use them: protobuf parsers collect a repeated field's
  // elements wherever they appear, and only now do we know which definitions this chunk needs.
  new_strings_.clear();
  strings.CollectFrom(string_watermark_, &new_strings_);
  for (const auto& [id, value] : new_strings_) {
    scratch_.clear();
    Proto3Writer w(&scratch_);
    w.Uint(wire::interned_string::kId, id);
    w.String(wire::interned_string::kValue, value);
    CommitRecord(wire::chunk::kStrings);
  }
  if (!new_strings_.empty()) string_watermark_ = new_strings_.back().first + 1;
  if (!new_threads_.empty()) {
    chunk.writer().add_packed_uint32(wire::chunk::kThreads, new_threads_.begin(),
                                     new_threads_.end());
  }
  for (const auto& [key, name_id] : new_api_names_) {
    scratch_.clear();
    Proto3Writer w(&scratch_);
    w.Uint(wire::api_name::kDomain, key >> 32);
    w.Uint(wire::api_name::kCallbackId, key & 0xFFFFFFFFu);
    w.Uint(wire::api_name::kNameId, name_id);
    CommitRecord(wire::chunk::kApiNames);
  }
  for (const auto& [id, shape] : new_shapes_) {
    scratch_.clear();
    EncodeShape(id, *shape, &scratch_);
    CommitRecord(wire::chunk::kKernelShapes);
  }
  if (run_end_) {
    namespace f = wire::run_end;
    scratch_.clear();
    Proto3Writer w(&scratch_);
    w.Uint(f::kEndTimeNs, run_end_->end_time_ns);
    w.String(f::kReason, run_end_->reason);
    w.Uint(f::kRecordsWritten, run_end_->records_written);
    w.Uint(f::kRecordsDropped, run_end_->records_dropped);
    w.Uint(f::kChunksWritten, run_end_->chunks_written);
    CommitRecord(wire::chunk::kRunEnd);
  }
  chunk.Uint(wire::chunk::kBaseTimeNs, base_time_ns_);
  chunk.Uint(wire::chunk::kSequence, sequence);
  chunk.Uint(wire::chunk::kProcessIndex, process_index);
  return body_;
}

void TraceWriter::ChunkEncoder::StartNextChunk() {
  body_.clear();
  run_end_.reset();
  has_base_ = false;
  base_time_ns_ = 0;
  previous_start_.fill(0);
  previous_correlation_.fill(0);
  new_threads_.clear();
  new_api_names_.clear();
  new_shapes_.clear();
  new_strings_.clear();
}

}  // namespace libprof
