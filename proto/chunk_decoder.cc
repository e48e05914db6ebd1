// Decodes parsed Header and Chunk messages into the trace model. Every index read from the file
// is checked before use: a hostile or corrupt file yields a problem description, never a crash
// or an allocation larger than the chunk that asked for it.
#include "proto/chunk_decoder.h"

#include <algorithm>
#include <protozero/pbf_reader.hpp>
#include <type_traits>

#include "proto/record_decoders.h"
#include "proto/stream_order_repair.h"
#include "proto/trace_wire.h"

namespace libprof {
namespace {

using decoding::DecodeDevice;
using decoding::ListContext;
using decoding::Threads;
using decoding::ToEnum;
using decoding::Xyz;

// The one loop over a list, for every kind: each list has its own deltas.
template <typename Wire, typename Model>
bool DecodeList(const google::protobuf::RepeatedPtrField<Wire>& in, ListContext ctx,
                std::vector<Model>* out) {
  // Geometric growth where the list holds earlier chunks' records: AppendChunk decodes a whole
  // trace into one list chunk by chunk, and an exact reserve there would copy the list at every
  // chunk. An empty list gets exactly its chunk's room: Next's lists are reused chunk after
  // chunk, and the prefetcher's chunks in flight held twice the room they needed (56 MB of the
  // 10M synthetic trace's windowed findings, heaptrack).
  const size_t needed = out->size() + static_cast<size_t>(in.size());
  if (needed > out->capacity()) {
    out->reserve(out->empty() ? needed : std::max(needed, 2 * out->capacity()));
  }
  for (const Wire& record : in) {
    Model& model = out->emplace_back();
    if constexpr (std::is_same_v<decltype(Decode(record, ctx, &model)), bool>) {
      if (!Decode(record, ctx, &model)) return false;
    } else {
      Decode(record, ctx, &model);
    }
  }
  return true;
}

void DecodeChunkFields(const trace::Chunk& chunk, TraceRecords* out) {
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
    state->defined.push_back(s.id());
  }
  state->thread_ids.insert(state->thread_ids.end(), chunk.threads().begin(), chunk.threads().end());
  for (const trace::ApiName& name : chunk.api_names()) {
    const ApiDomain domain = ToEnum(name.domain(), ApiDomain::kInternalLaunch);
    state->api_names[wire::ApiNameKey(domain, name.callback_id())] = name.name_id();
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

bool DefinesDecodingTables(const trace::Chunk& chunk) {
  return chunk.threads_size() > 0 || chunk.api_names_size() > 0 || chunk.kernel_shapes_size() > 0;
}

ProcessTables DecodingTables(const ProcessTables& state) {
  ProcessTables tables;
  tables.thread_ids = state.thread_ids;
  tables.api_names = state.api_names;
  tables.shapes = state.shapes;
  return tables;
}

bool AppendChunk(const trace::Chunk& chunk, ProcessTables* state, TraceRecords* out,
                 std::string* problem) {
  return AddDefinitions(chunk, state, problem) && DecodeRecordLists(chunk, *state, out, problem);
}

bool DecodeRecordLists(const trace::Chunk& chunk, const ProcessTables& tables, TraceRecords* out,
                       std::string* problem) {
  Threads threads(tables.thread_ids);
  const ListSizes first = SizesOf(*out);
  // Every list of proto/record_kinds.h; a list's name there is also its name in Chunk.
#define LIBPROF_DECODE_LIST(Type, list, field, role)                                          \
  if (!DecodeList(chunk.list(), ListContext(chunk.base_time_ns(), tables, &threads, problem), \
                  &out->list)) {                                                              \
    return false;                                                                             \
  }
  LIBPROF_RECORD_KINDS(LIBPROF_DECODE_LIST)
#undef LIBPROF_DECODE_LIST
  DecodeChunkFields(chunk, out);
  if (threads.has_bad()) {
    *problem = "refers to undefined thread index " + std::to_string(threads.bad());
    return false;
  }
  RepairStreamOrder(out, first);
  return true;
}

bool DecodeNvtxChunk(std::string_view bytes, ProcessTables* state, TraceRecords* out,
                     std::string* problem) {
  // Chunk field numbers of proto/trace.proto (trace_wire_test checks them against it).
  using wire::chunk::kBaseTimeNs, wire::chunk::kProcessIndex, wire::chunk::kStrings,
      wire::chunk::kThreads;
  namespace interned = wire::interned_string;
  constexpr uint32_t kNvtxEvents = RecordKind<NvtxEvent>::kChunkField,
                     kNvtxDomains = RecordKind<NvtxDomain>::kChunkField;
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
      } else if (chunk.tag() == kBaseTimeNs && varint) {
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
          if (string.tag() == interned::kId && string.wire_type() == pbf_wire_type::varint) {
            entry.first = string.get_uint32();
          } else if (string.tag() == interned::kValue &&
                     string.wire_type() == pbf_wire_type::length_delimited) {
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
        protozero::pbf_reader d = chunk.get_message();  // NvtxDomain {1: id, 2: name_id}
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
    state->defined.push_back(id);
  }
  state->thread_ids.insert(state->thread_ids.end(), threads.begin(), threads.end());
  Threads thread_ids(state->thread_ids);
  ListContext context(base_time_ns, *state, &thread_ids, problem);
  trace::NvtxEvent parsed;
  out->nvtx_events.reserve(events.size());
  for (std::string_view e : events) {
    if (!parsed.ParseFromArray(e.data(), static_cast<int>(e.size()))) {
      *problem = "is corrupt";
      return false;
    }
    Decode(parsed, context, &out->nvtx_events.emplace_back());
  }
  if (thread_ids.has_bad()) {
    *problem = "refers to undefined thread index " + std::to_string(thread_ids.bad());
    return false;
  }
  return true;
}

}  // namespace libprof
