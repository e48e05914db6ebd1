// TraceWriter: frames the header and the chunks of ChunkEncoder as fields 1 and 2 of TraceFile
// and hands them to the sink. It runs inside other people's processes, so no exception leaves a
// public function: any failure (sink error, bad_alloc) sets failed_ and writing stops for good,
// leaving a file that reads up to its last complete chunk.
//
// The destructor writes nothing: it may run during static destruction of the host process.
// Callers end a trace with Finish (or at least Flush).
#include "proto/trace_writer.h"

#include <protozero/varint.hpp>

#include "proto/chunk_encoder.h"
#include "proto/proto3_writer.h"
#include "proto/record_encoders.h"
#include "proto/trace_wire.h"

namespace libprof {
namespace {

void EncodeHeader(const TraceHeader& h, std::string* out) {
  namespace f = wire::header;
  Proto3Writer w(out);
  // The two fields every reader checks come first and always.
  w.AnyString(f::kFormat, kTraceFormat);
  w.writer().add_uint32(f::kSchemaVersion, kSchemaVersion);
  w.String(f::kLibprofVersion, h.libprof_version);
  w.Uint(f::kPid, h.pid);
  w.Uint(f::kParentPid, h.parent_pid);
  w.String(f::kHostname, h.hostname);
  for (const std::string& arg : h.command_line) w.AnyString(f::kCommandLine, arg);  // "" too
  w.Uint(f::kStartWallTimeNs, h.start_wall_time_ns);
  w.Uint(f::kTimebase, static_cast<uint32_t>(h.timebase));
  w.Int64(f::kWallClockOffsetNs, h.wall_clock_offset_ns);
  w.Uint(f::kStartTimeNs, h.start_time_ns);
  w.Uint(f::kCudaDriverVersion, h.cuda_driver_version);
  w.Uint(f::kCudaRuntimeVersion, h.cuda_runtime_version);
  w.Uint(f::kCuptiVersion, h.cupti_version);
  w.String(f::kCuptiPath, h.cupti_path);
  std::string scratch;
  for (const DeviceInfo& device : h.devices) {
    scratch.clear();
    EncodeDevice(device, &scratch);
    w.writer().add_message(f::kDevices, scratch);
  }
  for (const auto& [key, value] : h.settings) {
    // A map entry is a message {1: key, 2: value}; protobuf writes both even when empty.
    scratch.clear();
    Proto3Writer entry(&scratch);
    entry.AnyString(f::kMapKey, key);
    entry.AnyString(f::kMapValue, value);
    w.writer().add_message(f::kSettings, scratch);
  }
  w.String(f::kCaptureStatus, h.capture_status);
  if (h.rank) w.writer().add_uint32(f::kRank, *h.rank);  // rank 0 too: presence is the point
  w.String(f::kRankSource, h.rank_source);
}

// Writes `body` as one length-delimited field of TraceFile: tag, varint length, bytes.
bool WriteField(ByteSink* sink, uint32_t field, const std::string& body, uint64_t* bytes_written) {
  char prefix[2 * protozero::max_varint_length];
  char* end = prefix;
  end += protozero::add_varint_to_buffer(end, uint64_t{field} << 3 | 2);  // wire type 2
  end += protozero::add_varint_to_buffer(end, body.size());
  if (!sink->Write(prefix, end - prefix) || !sink->Write(body.data(), body.size())) return false;
  *bytes_written += (end - prefix) + body.size();
  return true;
}

// Runs `add` (an encoder call) unless writing has failed; any exception marks the writer failed.
// `timed` counts the record in records_written.
template <typename AddFn>
void Guarded(bool* failed, uint64_t* records, bool timed, AddFn add) {
  if (*failed) return;
  try {
    add();
    if (timed) ++*records;
  } catch (...) {
    *failed = true;
  }
}

}  // namespace

TraceWriter::TraceWriter(ByteSink* sink, Options options, StringInterner* strings)
    : sink_(sink), options_(options) {
  try {
    if (strings == nullptr) {
      owned_strings_ = std::make_unique<StringInterner>();
      strings = owned_strings_.get();
    }
    strings_ = strings;
    chunk_ = std::make_unique<ChunkEncoder>(options_.chunk_bytes);
  } catch (...) {
    failed_ = true;
  }
}

TraceWriter::~TraceWriter() = default;

bool TraceWriter::WriteHeader(const TraceHeader& header) {
  if (failed_) return false;
  try {
    std::string body;
    EncodeHeader(header, &body);
    if (!WriteField(sink_, wire::trace_file::kHeader, body, &bytes_written_)) failed_ = true;
  } catch (...) {
    failed_ = true;
  }
  return !failed_;
}

template <RecordKindType Record>
void TraceWriter::Add(const Record& record) {
  // Timed kinds are what TraceRecords::RecordCount counts.
  Guarded(&failed_, &records_written_, kIsTimed<Record>, [&] { chunk_->Add(record); });
  MaybeFlush();
}

#define LIBPROF_INSTANTIATE_ADD(Type, list, field, role) \
  template void TraceWriter::Add(const Type& record);
LIBPROF_RECORD_KINDS(LIBPROF_INSTANTIATE_ADD)
#undef LIBPROF_INSTANTIATE_ADD

void TraceWriter::SetRuntimeVersion(uint32_t cuda_runtime_version) {
  Guarded(&failed_, &records_written_, false,
          [&] { chunk_->AddRuntimeVersion(cuda_runtime_version); });
}

void TraceWriter::AddAll(const TraceRecords& records) {
  // Definitions first (devices, contexts, streams, domains), so that a tool rewriting a trace
  // keeps them ahead of the records that refer to them; then the rest in list order.
  auto add_all = [this](const auto& list) {
    for (const auto& r : list) Add(r);
  };
  ForEachList(records, [&]<typename T>(const std::vector<T>& list) {
    if constexpr (kIsDefinition<T>) add_all(list);
  });
  if (records.cuda_runtime_version != 0) SetRuntimeVersion(records.cuda_runtime_version);
  ForEachList(records, [&]<typename T>(const std::vector<T>& list) {
    if constexpr (!kIsDefinition<T>) add_all(list);
  });
  // Into the current chunk, without flushing: Finish is what ends a file.
  if (records.run_end) {
    Guarded(&failed_, &records_written_, false, [&] { chunk_->SetRunEnd(*records.run_end); });
  }
}

bool TraceWriter::Finish(const RunEnd& run_end) {
  Guarded(&failed_, &records_written_, false, [&] { chunk_->SetRunEnd(run_end); });
  return Flush();
}

bool TraceWriter::Flush() {
  if (failed_) return false;
  if (chunk_->empty()) return true;
  try {
    const std::string& body = chunk_->Close(*strings_, chunks_written_, options_.process_index);
    if (!WriteField(sink_, wire::trace_file::kChunk, body, &bytes_written_)) {
      failed_ = true;
      return false;
    }
    ++chunks_written_;
    chunk_->StartNextChunk();
  } catch (...) {
    failed_ = true;
  }
  return !failed_;
}

void TraceWriter::MaybeFlush() {
  if (!failed_ && chunk_->size() >= options_.chunk_bytes) Flush();
}

}  // namespace libprof
