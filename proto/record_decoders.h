// The model form of each record kind of proto/record_kinds.h read back from parsed trace.proto
// messages: one Decode per kind for its own fields, and the context a kind's decoder may use
// (its list's deltas, the thread and table lookups of its process, where to say what is wrong).
// Every index read from the file is checked before use: a hostile or corrupt file yields a
// problem description, never a crash.
//
// Layer: proto/, reader side; libprotobuf. Internal to chunk_decoder.cc.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

#include "proto/chunk_decoder.h"
#include "proto/trace.pb.h"
#include "proto/trace_model.h"
#include "proto/trace_wire.h"

namespace libprof::decoding {

// Enum values beyond the model's range (a newer writer) read as the enum's 0 ("unknown").
template <typename Enum>
inline Enum ToEnum(int value, Enum last) {
  return value >= 0 && value <= static_cast<int>(last) ? static_cast<Enum>(value) : Enum{};
}

// ApiCall.domain: 0 means RUNTIME there (see chunk_encoder.cc); 1 is RUNTIME too.
inline ApiDomain ApiCallDomain(int wire_value) {
  if (wire_value == 0) return ApiDomain::kRuntime;
  return ToEnum(wire_value, ApiDomain::kInternalLaunch);
}

template <typename Repeated>
inline std::array<uint32_t, 3> Xyz(const Repeated& values) {
  std::array<uint32_t, 3> xyz{};
  std::copy_n(values.begin(), std::min<int>(values.size(), 3), xyz.begin());
  return xyz;
}

inline DeviceInfo DecodeDevice(const trace::Device& d) {
  DeviceInfo device;
  device.id = d.id();
  device.name = d.name();
  device.uuid = d.uuid();
  device.sm_count = d.sm_count();
  device.global_memory_bytes = d.global_memory_bytes();
  device.compute_capability_major = d.compute_capability_major();
  device.compute_capability_minor = d.compute_capability_minor();
  device.pci_bus_id = d.pci_bus_id();
  device.core_clock_khz = d.core_clock_khz();
  device.memory_clock_khz = d.memory_clock_khz();
  device.memory_bus_width_bits = d.memory_bus_width_bits();
  device.max_threads_per_block = d.max_threads_per_block();
  device.l2_cache_bytes = d.l2_cache_bytes();
  return device;
}

// Resolves the deltas of one repeated list: starts from Chunk.base_time_ns, correlations from 0.
class ListDeltas {
 public:
  explicit ListDeltas(uint64_t base_time_ns) : start_(base_time_ns) {}
  // Unsigned wrap-around mirrors the writer's modulo-2^64 differences (and keeps hostile deltas
  // from being undefined behaviour).
  uint64_t Start(int64_t delta) { return start_ += static_cast<uint64_t>(delta); }
  uint64_t Correlation(int64_t delta) { return correlation_ += static_cast<uint64_t>(delta); }

 private:
  uint64_t start_;
  uint64_t correlation_ = 0;
};

// Checks and resolves thread indices, remembering the first bad one.
class Threads {
 public:
  explicit Threads(const std::vector<uint32_t>& ids) : ids_(ids) {}
  uint32_t Id(uint32_t index) {
    if (index < ids_.size()) return ids_[index];
    if (!has_bad_) bad_ = index;
    has_bad_ = true;
    return 0;
  }
  bool has_bad() const { return has_bad_; }
  uint32_t bad() const { return bad_; }

 private:
  const std::vector<uint32_t>& ids_;
  bool has_bad_ = false;
  uint32_t bad_ = 0;
};

// What a kind's decoder may ask of the chunk: its own list's deltas, the thread ids and tables
// the chunk's definitions extended, and where to say what is wrong.
class ListContext {
 public:
  ListContext(uint64_t base_time_ns, const ProcessTables& state, Threads* threads,
              std::string* problem)
      : deltas(base_time_ns),
        state(state),
        threads(*threads),
        base_time_ns(base_time_ns),
        problem(*problem) {}
  ListDeltas deltas;
  const ProcessTables& state;
  Threads& threads;
  const uint64_t base_time_ns;
  std::string& problem;
};

// One Decode per kind of proto/record_kinds.h: its own fields. Returns false (with
// c.problem set) only where a kind refers to a table entry that must exist.

inline void Decode(const trace::ApiCall& c, ListContext& ctx, ApiCall* call) {
  call->domain = ApiCallDomain(c.domain());
  call->callback_id = c.callback_id();
  // A call without an ApiName entry keeps name id 0 (""): the name is unknown, not wrong.
  auto name = ctx.state.api_names.find(wire::ApiNameKey(call->domain, c.callback_id()));
  if (name != ctx.state.api_names.end()) call->name_id = name->second;
  call->start_ns = ctx.deltas.Start(c.start_delta_ns());
  call->end_ns = call->start_ns + c.duration_ns();
  call->correlation_id = ctx.deltas.Correlation(c.correlation_delta());
  call->thread_id = ctx.threads.Id(c.thread_index());
  call->return_value = c.return_value();
  call->nested = c.nested();
  call->stack_id = c.stack_id();
  call->stream_id = c.stream_id_plus_one() == 0 ? kNoStream : c.stream_id_plus_one() - 1;
}

inline bool Decode(const trace::Kernel& k, ListContext& ctx, Kernel* kernel) {
  const auto& shapes = ctx.state.shapes;
  if (k.shape_id() >= shapes.size() || !shapes[k.shape_id()]) {
    ctx.problem = "refers to undefined kernel shape " + std::to_string(k.shape_id());
    return false;
  }
  kernel->shape = *shapes[k.shape_id()];
  kernel->start_ns = ctx.deltas.Start(k.start_delta_ns());
  kernel->end_ns = kernel->start_ns + k.duration_ns();
  kernel->correlation_id = ctx.deltas.Correlation(k.correlation_delta());
  kernel->stream_id = k.stream_id();
  kernel->graph_id = k.graph_id();
  kernel->graph_node_id = k.graph_node_id();
  kernel->device_launched = k.device_launched();
  return true;
}

inline void Decode(const trace::Memcpy& m, ListContext& ctx, Memcpy* copy) {
  copy->copy_kind = ToEnum(m.copy_kind(), CopyKind::kPtoP);
  copy->src_kind = ToEnum(m.src_kind(), MemoryKind::kManagedStatic);
  copy->dst_kind = ToEnum(m.dst_kind(), MemoryKind::kManagedStatic);
  copy->bytes = m.bytes();
  copy->async = m.async();
  copy->start_ns = ctx.deltas.Start(m.start_delta_ns());
  copy->end_ns = copy->start_ns + m.duration_ns();
  copy->correlation_id = ctx.deltas.Correlation(m.correlation_delta());
  copy->device_id = m.device_id();
  copy->context_id = m.context_id();
  copy->stream_id = m.stream_id();
  copy->graph_id = m.graph_id();
  copy->graph_node_id = m.graph_node_id();
  copy->src_device_id = m.src_device_id();
  copy->dst_device_id = m.dst_device_id();
}

inline void Decode(const trace::Memset& m, ListContext& ctx, Memset* set) {
  set->memory_kind = ToEnum(m.memory_kind(), MemoryKind::kManagedStatic);
  set->bytes = m.bytes();
  set->value = m.value();
  set->async = m.async();
  set->start_ns = ctx.deltas.Start(m.start_delta_ns());
  set->end_ns = set->start_ns + m.duration_ns();
  set->correlation_id = ctx.deltas.Correlation(m.correlation_delta());
  set->device_id = m.device_id();
  set->context_id = m.context_id();
  set->stream_id = m.stream_id();
  set->graph_id = m.graph_id();
}

inline void Decode(const trace::Synchronization& s, ListContext& ctx, Synchronization* sync) {
  sync->type = ToEnum(s.type(), SyncType::kContextSynchronize);
  sync->start_ns = ctx.deltas.Start(s.start_delta_ns());
  sync->end_ns = sync->start_ns + s.duration_ns();
  sync->correlation_id = ctx.deltas.Correlation(s.correlation_delta());
  sync->context_id = s.context_id();
  sync->stream_id = s.stream_id();
  sync->event_id = s.event_id();
  sync->event_sync_id = s.event_sync_id();
  sync->return_value = s.return_value();
}

inline void Decode(const trace::NvtxEvent& e, ListContext& ctx, NvtxEvent* event) {
  event->kind = ToEnum(e.kind(), NvtxKind::kMark);
  event->start_ns = ctx.deltas.Start(e.start_delta_ns());
  event->end_ns = event->start_ns + e.duration_ns();
  event->thread_id = ctx.threads.Id(e.thread_index());
  event->end_thread_id = ctx.threads.Id(e.end_thread_index());
  event->domain_id = e.domain_id();
  event->message_id = e.message_id();
  event->category = e.category();
  event->color_argb = e.color_argb();
  event->has_color = e.has_color();
  event->depth = e.depth();
  event->open = e.open();
  event->range_id = e.range_id();
  event->payloads.clear();
  for (const trace::NvtxPayload& p : e.payloads()) {
    event->payloads.push_back(NvtxPayload{.schema_id = p.schema_id(), .data = p.data()});
  }
}

inline void Decode(const trace::MemoryOp& m, ListContext& ctx, MemoryOp* op) {
  op->operation = ToEnum(m.operation(), MemoryOperation::kRelease);
  op->memory_kind = ToEnum(m.memory_kind(), MemoryKind::kManagedStatic);
  op->address = m.address();
  op->bytes = m.bytes();
  op->time_ns = ctx.deltas.Start(m.start_delta_ns());
  op->correlation_id = ctx.deltas.Correlation(m.correlation_delta());
  op->device_id = m.device_id();
  op->context_id = m.context_id();
  op->stream_id = m.stream_id();
  op->async = m.async();
  op->pool_address = m.pool_address();
  op->pool_type = m.pool_type();
  op->pool_release_threshold = m.pool_release_threshold();
  op->pool_bytes = m.pool_bytes();
  op->pool_used_bytes = m.pool_used_bytes();
}

inline void Decode(const trace::CudaEvent& e, ListContext& ctx, CudaEvent* event) {
  event->event_id = e.event_id();
  event->sync_id = e.sync_id();
  event->correlation_id = ctx.deltas.Correlation(e.correlation_delta());
  event->context_id = e.context_id();
  event->stream_id = e.stream_id();
  event->device_id = e.device_id();
  if (e.has_device_timestamp_delta_ns()) {
    event->device_timestamp_ns =
        ctx.base_time_ns + static_cast<uint64_t>(e.device_timestamp_delta_ns());
  }
}

inline void Decode(const trace::Overhead& o, ListContext& ctx, Overhead* overhead) {
  overhead->overhead_kind = o.overhead_kind();
  overhead->name_id = o.name_id();
  overhead->start_ns = ctx.deltas.Start(o.start_delta_ns());
  overhead->end_ns = overhead->start_ns + o.duration_ns();
  overhead->thread_id = ctx.threads.Id(o.thread_index());
}

inline void Decode(const trace::GraphTrace& g, ListContext& ctx, GraphTrace* graph) {
  graph->graph_id = g.graph_id();
  graph->start_ns = ctx.deltas.Start(g.start_delta_ns());
  graph->end_ns = graph->start_ns + g.duration_ns();
  graph->correlation_id = ctx.deltas.Correlation(g.correlation_delta());
  graph->device_id = g.device_id();
  graph->stream_id = g.stream_id();
}

inline void Decode(const trace::DropReport& d, ListContext&, DropReport* drop) {
  *drop = {.source = d.source(), .count = d.count(), .at_ns = d.at_ns()};
}

// Stacks are plain lists of ids resolved by the analysis, which sees the whole trace (older
// traces wrote them at the end of the recording, after the calls that refer to them).
inline void Decode(const trace::StackModule& m, ListContext&, StackModule* module) {
  *module = {
      .id = m.id(), .path_id = m.path_id(), .build_id = m.build_id(), .executable = m.executable()};
}

inline void Decode(const trace::StackFrame& f, ListContext&, StackFrame* frame) {
  *frame = {.id = f.id(),
            .address = f.address(),
            .module_id = f.module_id(),
            .module_offset = f.module_offset(),
            .function_id = f.function_id(),
            .function_offset = f.function_offset()};
}

inline void Decode(const trace::CallStack& s, ListContext&, CallStack* stack) {
  *stack = CallStack{};
  stack->id = s.id();
  stack->frame_ids.assign(s.frame_ids().begin(), s.frame_ids().end());
  for (const trace::PythonFrame& p : s.python_frames()) {
    stack->python_frames.push_back(
        {.file_id = p.file_id(), .line = p.line(), .function_id = p.function_id()});
  }
}

inline void Decode(const trace::Device& d, ListContext&, DeviceInfo* device) {
  *device = DecodeDevice(d);
}

inline void Decode(const trace::Context& c, ListContext&, ContextInfo* context) {
  *context = {.context_id = c.context_id(),
              .device_id = c.device_id(),
              .null_stream_id = c.null_stream_id(),
              .compute_api = c.compute_api(),
              .created_ns = c.created_ns(),
              .created_thread_id = c.created_thread_id()};
}

inline void Decode(const trace::Stream& s, ListContext& ctx, StreamInfo* stream) {
  stream->stream_id = s.stream_id();
  stream->context_id = s.context_id();
  stream->device_id = s.device_id();
  stream->type = ToEnum(s.type(), StreamType::kNull);
  stream->priority = s.priority();
  stream->correlation_id = ctx.deltas.Correlation(s.correlation_delta());
}

inline void Decode(const trace::NvtxDomain& d, ListContext&, NvtxDomain* domain) {
  *domain = {.id = d.id(), .name_id = d.name_id()};
}

// The counter kind is kept as written, known or not: the analysis skips a newer writer's kinds
// with a warning instead of this reader refusing the file.
inline void Decode(const trace::UnifiedMemoryCounter& u, ListContext& ctx,
                   UnifiedMemoryCounter* counter) {
  counter->counter_kind = static_cast<UvmCounterKind>(u.counter_kind());
  counter->value = u.value();
  counter->start_ns = ctx.deltas.Start(u.start_delta_ns());
  counter->end_ns = counter->start_ns + u.duration_ns();
  counter->address = u.address();
  counter->src_device_id = u.src_device_id();
  counter->dst_device_id = u.dst_device_id();
  counter->flags = u.flags();
}

inline void Decode(const trace::NvtxPayloadSchema& s, ListContext&, NvtxPayloadSchema* schema) {
  *schema = {.domain_id = s.domain_id(),
             .schema_id = s.schema_id(),
             .name_id = s.name_id(),
             .schema_type = s.schema_type(),
             .flags = s.flags(),
             .static_size_bytes = s.static_size_bytes(),
             .is_enum = s.is_enum()};
  for (const trace::NvtxPayloadEntry& e : s.entries()) {
    schema->entries.push_back({.flags = e.flags(),
                               .type = e.type(),
                               .name_id = e.name_id(),
                               .array_length = e.array_length(),
                               .offset_bytes = e.offset_bytes(),
                               .size_bytes = e.size_bytes()});
  }
  for (const trace::NvtxPayloadEnumValue& v : s.enum_values()) {
    schema->enum_values.push_back(
        {.name_id = v.name_id(), .value = v.value(), .is_flag = v.is_flag()});
  }
}

}  // namespace libprof::decoding
