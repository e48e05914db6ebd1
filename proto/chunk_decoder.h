// Turns parsed trace.proto messages (libprotobuf generated code) back into the model: resolves
// per-list deltas into absolute times and ids, thread indices into OS thread ids, shape ids into
// KernelShape values and ApiCall names through the ApiName table, while growing the per-process
// tables that later chunks refer to.
//
// Layer: proto/, reader side; libprotobuf. Internal to TraceReader.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "proto/trace.pb.h"
#include "proto/trace_model.h"

namespace libprof {

// What the chunks of one process have defined so far.
struct ProcessTables {
  std::vector<std::string> strings{""};
  std::vector<uint32_t> defined;  // string ids defined since the owner last cleared it
  std::vector<uint32_t> thread_ids;                  // by thread index
  std::unordered_map<uint64_t, uint32_t> api_names;  // (domain << 32 | callback id) -> name id
  std::vector<std::optional<KernelShape>> shapes;    // by shape id
};

// Copies a parsed Header. Does not validate format or schema version.
TraceHeader DecodeHeader(const trace::Header& header);

// Adds `chunk`'s definitions (strings, threads, API names, kernel shapes) to *state, each string
// id it defines also to state->defined. false with *problem set on an id out of sequence.
bool AddDefinitions(const trace::Chunk& chunk, ProcessTables* state, std::string* problem);
// Whether `chunk` adds to the tables its records are decoded with (threads, API names, shapes).
bool DefinesDecodingTables(const trace::Chunk& chunk);
// A copy of the tables records are decoded with, without the strings (no record needs them):
// what a chunk decoded on another thread reads while later chunks' definitions are added.
ProcessTables DecodingTables(const ProcessTables& state);
// Appends `chunk`'s records to *out's lists (and its run_end and runtime version, as
// AppendChunk), decoded against `tables`, which already hold the chunk's definitions
// (AddDefinitions). Changes nothing else: chunks may be decoded at once on several threads. On
// invalid content returns false and sets *problem to a phrase such as "refers to undefined
// kernel shape 7".
bool DecodeRecordLists(const trace::Chunk& chunk, const ProcessTables& tables, TraceRecords* out,
                       std::string* problem);

// AddDefinitions to *state, then DecodeRecordLists with it: the chunk's records appended to the
// lists of *out (which may hold earlier chunks' records), its process_index and sequence left
// alone; run_end and the runtime version replace *out's when the chunk has them (as
// AppendRecords does). The lists grow geometrically. On false, *out may hold part of the
// chunk's records and *state part of its definitions.
bool AppendChunk(const trace::Chunk& chunk, ProcessTables* state, TraceRecords* out,
                 std::string* problem);

// Decodes only the NVTX events and domains of a serialized chunk (and the strings and thread ids
// they refer to), skipping every other list unparsed: a cheap first look at a trace's NVTX
// ranges. Sets out->process_index. API names and kernel shapes are not read, so `state` serves
// NVTX-only decoding alone. Returns false with *problem set on damage it meets.
bool DecodeNvtxChunk(std::string_view bytes, ProcessTables* state, TraceRecords* out,
                     std::string* problem);

}  // namespace libprof
