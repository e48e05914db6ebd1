// Decodes parsed Header and Chunk messages into the trace model. Every index read from the file
// is checked before use: a hostile or corrupt file yields a problem description, never a crash
// or an allocation larger than the chunk that asked for it.
#include "proto/chunk_decoder.h"

#include <algorithm>
#include <protozero/pbf_reader.hpp>

namespace libprof {
namespace {

// Enum values beyond the model's range (a newer writer) read as the enum's 0 ("unknown").
template <typename Enum>
Enum ToEnum(int value, Enum last) {
  return value >= 0 && value <= static_cast<int>(last) ? static_cast<Enum>(value) : Enum{};
}

uint64_t ApiNameKey(ApiDomain domain, uint32_t callback_id) {
  return uint64_t{static_cast<uint8_t>(domain)} << 32 | callback_id;
}

// ApiCall.domain: 0 means RUNTIME there (see chunk_encoder.cc); 1 is RUNTIME too.
ApiDomain ApiCallDomain(int wire_value) {
  if (wire_value == 0) return ApiDomain::kRuntime;
  return ToEnum(wire_value, ApiDomain::kInternalLaunch);
}

template <typename Repeated>
std::array<uint32_t, 3> Xyz(const Repeated& values) {
  std::array<uint32_t, 3> xyz{};
  std::copy_n(values.begin(), std::min<int>(values.size(), 3), xyz.begin());
  return xyz;
}

DeviceInfo DecodeDevice(const trace::Device& d) {
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

bool AddDefinitions(const trace::Chunk& chunk, ProcessTables* state, std::string* problem) {
  // Ids are dense, so a chunk can extend a table by at most its own number of entries: this
  // bounds what a corrupt id can make us allocate.
  const size_t string_limit = state->strings.size() + chunk.strings_size();
  for (const trace::InternedString& s : chunk.strings()) {
    if (s.id() >= string_limit) {
      *problem = "defines string id " + std::to_string(s.id()) + " out of sequence";
      return false;
    }
    if (s.id() >= state->strings.size()) state->strings.resize(s.id() + 1);
    state->strings[s.id()] = s.value();
  }
  state->thread_ids.insert(state->thread_ids.end(), chunk.threads().begin(), chunk.threads().end());
  for (const trace::ApiName& name : chunk.api_names()) {
    const ApiDomain domain = ToEnum(name.domain(), ApiDomain::kInternalLaunch);
    state->api_names[ApiNameKey(domain, name.callback_id())] = name.name_id();
  }
  const size_t shape_limit = state->shapes.size() + chunk.kernel_shapes_size();
  for (const trace::KernelShape& s : chunk.kernel_shapes()) {
    if (s.id() >= shape_limit) {
      *problem = "defines kernel shape " + std::to_string(s.id()) + " out of sequence";
      return false;
    }
    KernelShape shape;
    shape.name_id = s.name_id();
    shape.demangled_name_id = s.demangled_name_id();
    shape.grid = Xyz(s.grid());
    shape.block = Xyz(s.block());
    shape.cluster = Xyz(s.cluster());
    shape.registers_per_thread = s.registers_per_thread();
    shape.static_shared_memory_bytes = s.static_shared_memory_bytes();
    shape.dynamic_shared_memory_bytes = s.dynamic_shared_memory_bytes();
    shape.local_memory_per_thread_bytes = s.local_memory_per_thread_bytes();
    shape.shared_memory_config_bytes = s.shared_memory_config_bytes();
    shape.device_id = s.device_id();
    shape.context_id = s.context_id();
    if (s.id() >= state->shapes.size()) state->shapes.resize(s.id() + 1);
    state->shapes[s.id()] = shape;
  }
  return true;
}

void DecodeApiCalls(const trace::Chunk& chunk, const ProcessTables& state, Threads* threads,
                    TraceRecords* out) {
  ListDeltas deltas(chunk.base_time_ns());
  out->api_calls.reserve(chunk.api_calls_size());
  for (const trace::ApiCall& c : chunk.api_calls()) {
    ApiCall& call = out->api_calls.emplace_back();
    call.domain = ApiCallDomain(c.domain());
    call.callback_id = c.callback_id();
    // A call without an ApiName entry keeps name id 0 (""): the name is unknown, not wrong.
    auto name = state.api_names.find(ApiNameKey(call.domain, c.callback_id()));
    if (name != state.api_names.end()) call.name_id = name->second;
    call.start_ns = deltas.Start(c.start_delta_ns());
    call.end_ns = call.start_ns + c.duration_ns();
    call.correlation_id = deltas.Correlation(c.correlation_delta());
    call.thread_id = threads->Id(c.thread_index());
    call.return_value = c.return_value();
    call.nested = c.nested();
    call.stack_id = c.stack_id();
  }
}

bool DecodeKernels(const trace::Chunk& chunk, const ProcessTables& state, TraceRecords* out,
                   std::string* problem) {
  ListDeltas deltas(chunk.base_time_ns());
  out->kernels.reserve(chunk.kernels_size());
  for (const trace::Kernel& k : chunk.kernels()) {
    if (k.shape_id() >= state.shapes.size() || !state.shapes[k.shape_id()]) {
      *problem = "refers to undefined kernel shape " + std::to_string(k.shape_id());
      return false;
    }
    Kernel& kernel = out->kernels.emplace_back();
    kernel.shape = *state.shapes[k.shape_id()];
    kernel.start_ns = deltas.Start(k.start_delta_ns());
    kernel.end_ns = kernel.start_ns + k.duration_ns();
    kernel.correlation_id = deltas.Correlation(k.correlation_delta());
    kernel.stream_id = k.stream_id();
    kernel.graph_id = k.graph_id();
    kernel.graph_node_id = k.graph_node_id();
    kernel.device_launched = k.device_launched();
  }
  return true;
}

void DecodeCopies(const trace::Chunk& chunk, TraceRecords* out) {
  ListDeltas memcpy_deltas(chunk.base_time_ns());
  out->memcpys.reserve(chunk.memcpys_size());
  for (const trace::Memcpy& m : chunk.memcpys()) {
    Memcpy& copy = out->memcpys.emplace_back();
    copy.copy_kind = ToEnum(m.copy_kind(), CopyKind::kPtoP);
    copy.src_kind = ToEnum(m.src_kind(), MemoryKind::kManagedStatic);
    copy.dst_kind = ToEnum(m.dst_kind(), MemoryKind::kManagedStatic);
    copy.bytes = m.bytes();
    copy.async = m.async();
    copy.start_ns = memcpy_deltas.Start(m.start_delta_ns());
    copy.end_ns = copy.start_ns + m.duration_ns();
    copy.correlation_id = memcpy_deltas.Correlation(m.correlation_delta());
    copy.device_id = m.device_id();
    copy.context_id = m.context_id();
    copy.stream_id = m.stream_id();
    copy.graph_id = m.graph_id();
    copy.graph_node_id = m.graph_node_id();
    copy.src_device_id = m.src_device_id();
    copy.dst_device_id = m.dst_device_id();
  }
  ListDeltas memset_deltas(chunk.base_time_ns());
  out->memsets.reserve(chunk.memsets_size());
  for (const trace::Memset& m : chunk.memsets()) {
    Memset& set = out->memsets.emplace_back();
    set.memory_kind = ToEnum(m.memory_kind(), MemoryKind::kManagedStatic);
    set.bytes = m.bytes();
    set.value = m.value();
    set.async = m.async();
    set.start_ns = memset_deltas.Start(m.start_delta_ns());
    set.end_ns = set.start_ns + m.duration_ns();
    set.correlation_id = memset_deltas.Correlation(m.correlation_delta());
    set.device_id = m.device_id();
    set.context_id = m.context_id();
    set.stream_id = m.stream_id();
    set.graph_id = m.graph_id();
  }
}

void DecodeSynchronizations(const trace::Chunk& chunk, TraceRecords* out) {
  ListDeltas deltas(chunk.base_time_ns());
  out->synchronizations.reserve(chunk.synchronizations_size());
  for (const trace::Synchronization& s : chunk.synchronizations()) {
    Synchronization& sync = out->synchronizations.emplace_back();
    sync.type = ToEnum(s.type(), SyncType::kContextSynchronize);
    sync.start_ns = deltas.Start(s.start_delta_ns());
    sync.end_ns = sync.start_ns + s.duration_ns();
    sync.correlation_id = deltas.Correlation(s.correlation_delta());
    sync.context_id = s.context_id();
    sync.stream_id = s.stream_id();
    sync.event_id = s.event_id();
    sync.event_sync_id = s.event_sync_id();
    sync.return_value = s.return_value();
  }
}

NvtxEvent DecodeNvtxEvent(const trace::NvtxEvent& e, ListDeltas* deltas, Threads* threads) {
  NvtxEvent event;
  event.kind = ToEnum(e.kind(), NvtxKind::kMark);
  event.start_ns = deltas->Start(e.start_delta_ns());
  event.end_ns = event.start_ns + e.duration_ns();
  event.thread_id = threads->Id(e.thread_index());
  event.end_thread_id = threads->Id(e.end_thread_index());
  event.domain_id = e.domain_id();
  event.message_id = e.message_id();
  event.category = e.category();
  event.color_argb = e.color_argb();
  event.has_color = e.has_color();
  event.depth = e.depth();
  event.open = e.open();
  event.range_id = e.range_id();
  return event;
}

void DecodeNvtx(const trace::Chunk& chunk, Threads* threads, TraceRecords* out) {
  ListDeltas deltas(chunk.base_time_ns());
  out->nvtx_events.reserve(chunk.nvtx_events_size());
  for (const trace::NvtxEvent& e : chunk.nvtx_events()) {
    out->nvtx_events.push_back(DecodeNvtxEvent(e, &deltas, threads));
  }
  for (const trace::NvtxDomain& d : chunk.nvtx_domains()) {
    out->nvtx_domains.push_back({.id = d.id(), .name_id = d.name_id()});
  }
}

void DecodeMemoryOps(const trace::Chunk& chunk, TraceRecords* out) {
  ListDeltas deltas(chunk.base_time_ns());
  out->memory_ops.reserve(chunk.memory_ops_size());
  for (const trace::MemoryOp& m : chunk.memory_ops()) {
    MemoryOp& op = out->memory_ops.emplace_back();
    op.operation = ToEnum(m.operation(), MemoryOperation::kRelease);
    op.memory_kind = ToEnum(m.memory_kind(), MemoryKind::kManagedStatic);
    op.address = m.address();
    op.bytes = m.bytes();
    op.time_ns = deltas.Start(m.start_delta_ns());
    op.correlation_id = deltas.Correlation(m.correlation_delta());
    op.device_id = m.device_id();
    op.context_id = m.context_id();
    op.stream_id = m.stream_id();
    op.async = m.async();
    op.pool_address = m.pool_address();
    op.pool_type = m.pool_type();
  }
}

void DecodeStreamsAndEvents(const trace::Chunk& chunk, TraceRecords* out) {
  ListDeltas stream_deltas(chunk.base_time_ns());
  for (const trace::Stream& s : chunk.streams()) {
    StreamInfo& stream = out->streams.emplace_back();
    stream.stream_id = s.stream_id();
    stream.context_id = s.context_id();
    stream.device_id = s.device_id();
    stream.type = ToEnum(s.type(), StreamType::kNull);
    stream.priority = s.priority();
    stream.correlation_id = stream_deltas.Correlation(s.correlation_delta());
  }
  for (const trace::Context& c : chunk.contexts()) {
    out->contexts.push_back({.context_id = c.context_id(),
                             .device_id = c.device_id(),
                             .null_stream_id = c.null_stream_id(),
                             .compute_api = c.compute_api()});
  }
  ListDeltas event_deltas(chunk.base_time_ns());
  out->cuda_events.reserve(chunk.cuda_events_size());
  for (const trace::CudaEvent& e : chunk.cuda_events()) {
    CudaEvent& event = out->cuda_events.emplace_back();
    event.event_id = e.event_id();
    event.sync_id = e.sync_id();
    event.correlation_id = event_deltas.Correlation(e.correlation_delta());
    event.context_id = e.context_id();
    event.stream_id = e.stream_id();
    event.device_id = e.device_id();
    if (e.has_device_timestamp_delta_ns()) {
      event.device_timestamp_ns =
          chunk.base_time_ns() + static_cast<uint64_t>(e.device_timestamp_delta_ns());
    }
  }
}

void DecodeOthers(const trace::Chunk& chunk, Threads* threads, TraceRecords* out) {
  ListDeltas overhead_deltas(chunk.base_time_ns());
  for (const trace::Overhead& o : chunk.overheads()) {
    Overhead& overhead = out->overheads.emplace_back();
    overhead.overhead_kind = o.overhead_kind();
    overhead.name_id = o.name_id();
    overhead.start_ns = overhead_deltas.Start(o.start_delta_ns());
    overhead.end_ns = overhead.start_ns + o.duration_ns();
    overhead.thread_id = threads->Id(o.thread_index());
  }
  ListDeltas graph_deltas(chunk.base_time_ns());
  for (const trace::GraphTrace& g : chunk.graph_traces()) {
    GraphTrace& graph = out->graph_traces.emplace_back();
    graph.graph_id = g.graph_id();
    graph.start_ns = graph_deltas.Start(g.start_delta_ns());
    graph.end_ns = graph.start_ns + g.duration_ns();
    graph.correlation_id = graph_deltas.Correlation(g.correlation_delta());
    graph.device_id = g.device_id();
    graph.stream_id = g.stream_id();
  }
  for (const trace::Device& d : chunk.devices()) out->devices.push_back(DecodeDevice(d));
  for (const trace::DropReport& d : chunk.drops()) {
    out->drops.push_back({.source = d.source(), .count = d.count(), .at_ns = d.at_ns()});
  }
  for (const trace::RuntimeInfo& info : chunk.runtime_infos()) {
    if (info.cuda_runtime_version() != 0) out->cuda_runtime_version = info.cuda_runtime_version();
  }
  if (chunk.has_run_end()) {
    const trace::RunEnd& e = chunk.run_end();
    out->run_end = RunEnd{.end_time_ns = e.end_time_ns(),
                          .reason = e.reason(),
                          .records_written = e.records_written(),
                          .records_dropped = e.records_dropped(),
                          .chunks_written = e.chunks_written()};
  }
}

}  // namespace

TraceHeader DecodeHeader(const trace::Header& h) {
  TraceHeader header;
  header.schema_version = h.schema_version();
  header.libprof_version = h.libprof_version();
  header.pid = h.pid();
  header.parent_pid = h.parent_pid();
  header.hostname = h.hostname();
  header.command_line.assign(h.command_line().begin(), h.command_line().end());
  header.start_wall_time_ns = h.start_wall_time_ns();
  header.timebase = ToEnum(h.timebase(), Timebase::kClockRealtime);
  header.wall_clock_offset_ns = h.wall_clock_offset_ns();
  header.start_time_ns = h.start_time_ns();
  header.cuda_driver_version = h.cuda_driver_version();
  header.cuda_runtime_version = h.cuda_runtime_version();
  header.cupti_version = h.cupti_version();
  header.cupti_path = h.cupti_path();
  for (const trace::Device& d : h.devices()) header.devices.push_back(DecodeDevice(d));
  for (const auto& [key, value] : h.settings()) header.settings.emplace(key, value);
  header.capture_status = h.capture_status();
  if (h.has_rank()) header.rank = h.rank();
  header.rank_source = h.rank_source();
  return header;
}

// Stacks are plain lists of ids resolved by the analysis, which sees the whole trace (they are
// written at the end of the recording, after the calls that refer to them).
void DecodeStacks(const trace::Chunk& chunk, TraceRecords* out) {
  for (const trace::StackModule& m : chunk.stack_modules()) {
    out->stack_modules.push_back({.id = m.id(),
                                  .path_id = m.path_id(),
                                  .build_id = m.build_id(),
                                  .executable = m.executable()});
  }
  for (const trace::StackFrame& f : chunk.stack_frames()) {
    out->stack_frames.push_back({.id = f.id(),
                                 .address = f.address(),
                                 .module_id = f.module_id(),
                                 .module_offset = f.module_offset(),
                                 .function_id = f.function_id(),
                                 .function_offset = f.function_offset()});
  }
  for (const trace::CallStack& s : chunk.call_stacks()) {
    out->call_stacks.push_back(
        {.id = s.id(), .frame_ids = {s.frame_ids().begin(), s.frame_ids().end()}});
  }
}

bool DecodeChunk(const trace::Chunk& chunk, ProcessTables* state, TraceRecords* out,
                 std::string* problem) {
  out->process_index = chunk.process_index();
  out->sequence = chunk.sequence();
  if (!AddDefinitions(chunk, state, problem)) return false;
  Threads threads(state->thread_ids);
  DecodeApiCalls(chunk, *state, &threads, out);
  if (!DecodeKernels(chunk, *state, out, problem)) return false;
  DecodeCopies(chunk, out);
  DecodeSynchronizations(chunk, out);
  DecodeNvtx(chunk, &threads, out);
  DecodeMemoryOps(chunk, out);
  DecodeStreamsAndEvents(chunk, out);
  DecodeOthers(chunk, &threads, out);
  DecodeStacks(chunk, out);
  if (threads.has_bad()) {
    *problem = "refers to undefined thread index " + std::to_string(threads.bad());
    return false;
  }
  return true;
}

bool DecodeNvtxChunk(std::string_view bytes, ProcessTables* state, TraceRecords* out,
                     std::string* problem) {
  // Chunk field numbers of proto/trace.proto.
  constexpr uint32_t kProcessIndex = 1, kBaseTime = 3, kStrings = 4, kThreads = 5, kNvtxEvents = 13,
                     kNvtxDomains = 20;
  std::vector<std::string_view> events;
  std::vector<std::pair<uint32_t, std::string_view>> strings;
  std::vector<uint32_t> threads;
  uint64_t base_time_ns = 0;
  try {
    // A known field with another wire type is an unknown field to protobuf, skipped: so here.
    using protozero::pbf_wire_type;
    protozero::pbf_reader chunk(bytes.data(), bytes.size());
    while (chunk.next()) {
      const pbf_wire_type type = chunk.wire_type();
      const bool varint = type == pbf_wire_type::varint;
      const bool message = type == pbf_wire_type::length_delimited;
      if (chunk.tag() == kProcessIndex && varint) {
        out->process_index = chunk.get_uint32();
      } else if (chunk.tag() == kBaseTime && varint) {
        base_time_ns = chunk.get_uint64();
      } else if (chunk.tag() == kThreads && (varint || message)) {
        // proto3 packs repeated scalars, but parsers accept both forms; so do we.
        if (message) {
          for (uint32_t id : chunk.get_packed_uint32()) threads.push_back(id);
        } else {
          threads.push_back(chunk.get_uint32());
        }
      } else if (chunk.tag() == kStrings && message) {  // the names of ranges and domains
        protozero::pbf_reader string = chunk.get_message();
        std::pair<uint32_t, std::string_view> entry;
        while (string.next()) {
          if (string.tag() == 1 && string.wire_type() == pbf_wire_type::varint) {
            entry.first = string.get_uint32();
          } else if (string.tag() == 2 && string.wire_type() == pbf_wire_type::length_delimited) {
            const protozero::data_view value = string.get_view();
            entry.second = std::string_view(value.data(), value.size());
          } else {
            string.skip();
          }
        }
        strings.push_back(entry);
      } else if (chunk.tag() == kNvtxEvents && message) {
        const protozero::data_view view = chunk.get_view();
        events.emplace_back(view.data(), view.size());
      } else if (chunk.tag() == kNvtxDomains && message) {
        protozero::pbf_reader d = chunk.get_message();
        NvtxDomain& domain = out->nvtx_domains.emplace_back();
        while (d.next()) {
          if (d.tag() == 1 && d.wire_type() == pbf_wire_type::varint) {
            domain.id = d.get_uint32();
          } else if (d.tag() == 2 && d.wire_type() == pbf_wire_type::varint) {
            domain.name_id = d.get_uint32();
          } else {
            d.skip();
          }
        }
      } else {
        chunk.skip();
      }
    }
  } catch (const protozero::exception&) {
    *problem = "is corrupt";
    return false;
  }
  // Definitions follow the records that use them in a chunk (chunk_encoder.cc): add them first,
  // with AddDefinitions' bound on string ids.
  const size_t string_limit = state->strings.size() + strings.size();
  for (const auto& [id, value] : strings) {
    if (id >= string_limit) {
      *problem = "defines string id " + std::to_string(id) + " out of sequence";
      return false;
    }
    if (id >= state->strings.size()) state->strings.resize(id + 1);
    state->strings[id] = value;
  }
  state->thread_ids.insert(state->thread_ids.end(), threads.begin(), threads.end());
  Threads thread_ids(state->thread_ids);
  ListDeltas deltas(base_time_ns);
  trace::NvtxEvent parsed;
  out->nvtx_events.reserve(events.size());
  for (std::string_view e : events) {
    if (!parsed.ParseFromArray(e.data(), static_cast<int>(e.size()))) {
      *problem = "is corrupt";
      return false;
    }
    out->nvtx_events.push_back(DecodeNvtxEvent(parsed, &deltas, &thread_ids));
  }
  if (thread_ids.has_bad()) {
    *problem = "refers to undefined thread index " + std::to_string(thread_ids.bad());
    return false;
  }
  return true;
}

}  // namespace libprof
