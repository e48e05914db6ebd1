#include "tests/analysis/trace_builder.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <map>
#include <utility>
#include <vector>

namespace libprof::analysis::testing {

TraceBuilder::TraceBuilder(uint32_t pid) {
  header_.pid = pid;
  header_.hostname = "testhost";
  header_.libprof_version = "test";
  header_.timebase = Timebase::kClockMonotonic;
  header_.start_time_ns = kT0;
  header_.command_line = {"./synthetic"};
}

uint64_t TraceBuilder::Api(std::string_view name, double start_us, double end_us, uint32_t tid,
                           uint64_t corr, ApiDomain domain, bool nested) {
  if (corr == 0) corr = next_corr_;
  next_corr_ = std::max(next_corr_, corr + 1);
  // The wire format names calls by (domain, callback id): give each name its own id.
  auto [it, inserted] = callback_ids_.try_emplace({domain, std::string(name)},
                                                  static_cast<uint32_t>(callback_ids_.size() + 1));
  records_.api_calls.push_back(ApiCall{.domain = domain,
                                       .callback_id = it->second,
                                       .name_id = Intern(name),
                                       .start_ns = Us(start_us),
                                       .end_ns = Us(end_us),
                                       .correlation_id = corr,
                                       .thread_id = tid,
                                       .nested = nested});
  return corr;
}

Kernel& TraceBuilder::AddKernel(std::string_view name, double start_us, double end_us,
                                uint64_t corr, uint32_t stream, uint32_t context) {
  Kernel k;
  k.shape.name_id = Intern(name);
  k.shape.demangled_name_id = k.shape.name_id;
  k.shape.grid = {64, 1, 1};
  k.shape.block = {128, 1, 1};
  k.shape.registers_per_thread = 32;
  k.shape.static_shared_memory_bytes = 1024;
  k.shape.context_id = context;
  k.start_ns = Us(start_us);
  k.end_ns = Us(end_us);
  k.correlation_id = corr;
  k.stream_id = stream;
  records_.kernels.push_back(k);
  return records_.kernels.back();
}

Memcpy& TraceBuilder::AddMemcpy(CopyKind kind, MemoryKind src, MemoryKind dst, uint64_t bytes,
                                double start_us, double end_us, uint64_t corr, uint32_t stream,
                                bool async) {
  records_.memcpys.push_back(Memcpy{.copy_kind = kind,
                                    .src_kind = src,
                                    .dst_kind = dst,
                                    .bytes = bytes,
                                    .async = async,
                                    .start_ns = Us(start_us),
                                    .end_ns = Us(end_us),
                                    .correlation_id = corr,
                                    .context_id = 1,
                                    .stream_id = stream});
  return records_.memcpys.back();
}

Memset& TraceBuilder::AddMemset(MemoryKind kind, uint64_t bytes, double start_us, double end_us,
                                uint64_t corr, uint32_t stream, bool async) {
  records_.memsets.push_back(Memset{.memory_kind = kind,
                                    .bytes = bytes,
                                    .async = async,
                                    .start_ns = Us(start_us),
                                    .end_ns = Us(end_us),
                                    .correlation_id = corr,
                                    .context_id = 1,
                                    .stream_id = stream});
  return records_.memsets.back();
}

GraphTrace& TraceBuilder::AddGraph(uint32_t graph_id, double start_us, double end_us, uint64_t corr,
                                   uint32_t stream) {
  records_.graph_traces.push_back(GraphTrace{.graph_id = graph_id,
                                             .start_ns = Us(start_us),
                                             .end_ns = Us(end_us),
                                             .correlation_id = corr,
                                             .stream_id = stream});
  return records_.graph_traces.back();
}

void TraceBuilder::AddStream(uint32_t stream, StreamType type, uint32_t context) {
  records_.streams.push_back(StreamInfo{.stream_id = stream, .context_id = context, .type = type});
}

void TraceBuilder::AddContext(uint32_t context, uint32_t null_stream) {
  records_.contexts.push_back(ContextInfo{.context_id = context, .null_stream_id = null_stream});
}

Synchronization& TraceBuilder::AddSync(SyncType type, double start_us, double end_us, uint64_t corr,
                                       uint32_t stream, uint64_t event_sync_id) {
  records_.synchronizations.push_back(Synchronization{.type = type,
                                                      .start_ns = Us(start_us),
                                                      .end_ns = Us(end_us),
                                                      .correlation_id = corr,
                                                      .context_id = 1,
                                                      .stream_id = stream,
                                                      .event_sync_id = event_sync_id});
  return records_.synchronizations.back();
}

Overhead& TraceBuilder::AddOverhead(uint32_t kind, double start_us, double end_us, uint32_t tid) {
  records_.overheads.push_back(Overhead{.overhead_kind = kind,
                                        .name_id = Intern(kind == kLazyFunctionLoading
                                                              ? "lazy function loading"
                                                              : "overhead"),
                                        .start_ns = Us(start_us),
                                        .end_ns = Us(end_us),
                                        .thread_id = tid});
  return records_.overheads.back();
}

CudaEvent& TraceBuilder::AddEvent(uint32_t event_id, uint64_t sync_id, uint64_t corr,
                                  uint32_t stream) {
  records_.cuda_events.push_back(CudaEvent{.event_id = event_id,
                                           .sync_id = sync_id,
                                           .correlation_id = corr,
                                           .context_id = 1,
                                           .stream_id = stream});
  return records_.cuda_events.back();
}

NvtxEvent& TraceBuilder::AddRange(std::string_view message, double start_us, double end_us,
                                  uint32_t tid, NvtxKind kind, uint32_t depth,
                                  std::string_view domain) {
  NvtxEvent e;
  e.kind = kind;
  e.start_ns = Us(start_us);
  e.end_ns = Us(end_us);
  e.thread_id = tid;
  e.end_thread_id = kind == NvtxKind::kStartEnd ? tid : 0;
  e.message_id = Intern(message);
  e.depth = depth;
  if (!domain.empty()) {
    const uint32_t name_id = Intern(domain);
    uint32_t id = 0;
    for (const NvtxDomain& d : records_.nvtx_domains) {
      if (d.name_id == name_id) id = d.id;
    }
    if (id == 0) {
      id = static_cast<uint32_t>(records_.nvtx_domains.size() + 1);
      records_.nvtx_domains.push_back({.id = id, .name_id = name_id});
    }
    e.domain_id = id;
  }
  records_.nvtx_events.push_back(e);
  return records_.nvtx_events.back();
}

namespace {
// NCCL's static schema ids (src/include/nvtx.h): NVTX_PAYLOAD_SCHEMA_ID_STATIC_START + NVTX_SID_*.
constexpr uint64_t kNcclStatic = uint64_t{1} << 24;
constexpr uint64_t kNcclCommInitRank = kNcclStatic + 0, kNcclWithReduction = kNcclStatic + 5,
                   kNcclPlain = kNcclStatic + 4, kNcclRedOp = kNcclStatic + 24;
struct NcclWithReduction {
  uint64_t comm;
  uint64_t bytes;
  int32_t op;
};
struct NcclPlain {
  uint64_t comm;
  uint64_t bytes;
};
struct NcclCommInitRank {
  uint64_t comm;
  int32_t nranks, rank, device;
};
template <typename T>
NvtxPayload Payload(uint64_t schema, const T& value) {
  return {.schema_id = schema,
          .data = std::string(reinterpret_cast<const char*>(&value), sizeof(value))};
}
}  // namespace

void TraceBuilder::AddNcclSchemas() {
  if (nccl_schemas_) return;
  nccl_schemas_ = true;
  AddRange("(domain)", 0, 0, 1, NvtxKind::kMark, 0, "NCCL");  // creates the domain
  records_.nvtx_events.pop_back();
  const uint32_t domain = records_.nvtx_domains.back().id;
  auto entry = [&](uint64_t type, std::string_view name, uint64_t offset, uint64_t size) {
    return NvtxPayloadEntry{.type = type, .name_id = Intern(name), .offset_bytes = offset,
                            .size_bytes = size};
  };
  NvtxPayloadSchema redop{.domain_id = domain, .schema_id = kNcclRedOp, .static_size_bytes = 4,
                          .is_enum = true};
  for (auto [name, value] : {std::pair{"Sum", 0}, {"Product", 1}, {"Max", 2}, {"Min", 3}}) {
    redop.enum_values.push_back({.name_id = Intern(name), .value = uint64_t(value)});
  }
  records_.nvtx_payload_schemas.push_back(redop);
  records_.nvtx_payload_schemas.push_back(
      {.domain_id = domain, .schema_id = kNcclWithReduction, .schema_type = 1,
       .static_size_bytes = sizeof(NcclWithReduction),
       .entries = {entry(18, "NCCL communicator ID", 0, 8), entry(22, "Message size [bytes]", 8, 8),
                   entry(kNcclRedOp, "Reduction operation", 16, 4)}});
  records_.nvtx_payload_schemas.push_back(
      {.domain_id = domain, .schema_id = kNcclPlain, .schema_type = 1,
       .static_size_bytes = sizeof(NcclPlain),
       .entries = {entry(18, "NCCL communicator ID", 0, 8),
                   entry(22, "Message size [bytes]", 8, 8)}});
  records_.nvtx_payload_schemas.push_back(
      {.domain_id = domain, .schema_id = kNcclCommInitRank, .schema_type = 1,
       .static_size_bytes = sizeof(NcclCommInitRank),
       .entries = {entry(18, "NCCL communicator ID", 0, 8), entry(5, "No. of ranks", 8, 4),
                   entry(5, "Rank", 12, 4), entry(5, "CUDA device", 16, 4)}});
}

void TraceBuilder::NcclCommInit(uint64_t comm, int nranks, int rank, double start_us,
                                double end_us, uint32_t tid) {
  AddNcclSchemas();
  NvtxEvent& e = AddRange("ncclCommInitRankConfig", start_us, end_us, tid, NvtxKind::kPushPop, 0,
                          "NCCL");
  e.payloads.push_back(Payload(kNcclCommInitRank, NcclCommInitRank{comm, nranks, rank, 0}));
}

uint64_t TraceBuilder::NcclCollective(std::string_view op, uint64_t comm, uint64_t bytes,
                                      double host_start, double host_end, double k_start,
                                      double k_end, uint32_t stream, uint32_t tid) {
  AddNcclSchemas();
  NvtxEvent& e = AddRange("nccl" + std::string(op), host_start, host_end, tid,
                          NvtxKind::kPushPop, 0, "NCCL");
  if (op == "AllReduce" || op == "ReduceScatter" || op == "Reduce") {
    e.payloads.push_back(Payload(kNcclWithReduction, NcclWithReduction{comm, bytes, 0}));
  } else {
    e.payloads.push_back(Payload(kNcclPlain, NcclPlain{comm, bytes}));
  }
  // The launch inside the range, as ncclEnqueue makes it.
  const double mid = (host_start + host_end) / 2;
  return Launch("ncclDevKernel_" + std::string(op) + "_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)",
                mid, std::min(host_end, mid + 1), k_start, k_end, stream, tid, "cudaLaunchKernelExC");
}

uint64_t TraceBuilder::Launch(std::string_view kernel, double api_start, double api_end,
                              double k_start, double k_end, uint32_t stream, uint32_t tid,
                              std::string_view api) {
  const uint64_t corr = Api(api, api_start, api_end, tid);
  AddKernel(kernel, k_start, k_end, corr, stream);
  return corr;
}

ProcessTrace TraceBuilder::Build() const {
  ProcessTrace trace;
  trace.path = "memory";
  trace.header = header_;
  trace.records = records_;
  if (end_us_ > 0) trace.records.run_end = RunEnd{.end_time_ns = Us(end_us_), .reason = "exit"};
  std::vector<std::pair<uint32_t, std::string>> pairs;
  strings_->CollectFrom(0, &pairs);
  trace.strings.resize(strings_->size());
  for (auto& [id, value] : pairs) trace.strings[id] = value;
  SetDefaultWindow(&trace);
  return trace;
}

void TraceBuilder::Write(const std::string& path, size_t chunk_bytes) const {
  std::string error;
  auto sink = FileSink::Create(path, /*overwrite=*/true, &error);
  ASSERT_NE(sink, nullptr) << error;
  TraceWriter writer(sink.get(), TraceWriter::Options{.chunk_bytes = chunk_bytes}, strings_.get());
  ASSERT_TRUE(writer.WriteHeader(header_));
  writer.AddAll(records_);
  if (end_us_ > 0) {
    ASSERT_TRUE(writer.Finish(RunEnd{.end_time_ns = Us(end_us_), .reason = "exit"}));
  } else {
    ASSERT_TRUE(writer.Flush());
  }
}

void TraceBuilder::WriteFlushed(const std::string& path, double flush_us,
                                double device_lag_us) const {
  std::string error;
  auto sink = FileSink::Create(path, /*overwrite=*/true, &error);
  ASSERT_NE(sink, nullptr) << error;
  TraceWriter writer(sink.get(), TraceWriter::Options{}, strings_.get());
  ASSERT_TRUE(writer.WriteHeader(header_));
  // The flush (index) each timed record is delivered at.
  std::map<uint64_t, TraceRecords> flushes;
  const uint64_t flush_ns = std::max<uint64_t>(1, static_cast<uint64_t>(flush_us * 1000));
  const uint64_t lag_ns = static_cast<uint64_t>(device_lag_us * 1000);
  TraceRecords first;
  std::map<uint64_t, uint64_t> call_end;  // correlation id -> end of its call
  for (const ApiCall& c : records_.api_calls) call_end[c.correlation_id] = c.end_ns;
  ForEachList(records_, [&]<typename T>(const std::vector<T>& list) {
    for (const T& r : list) {
      if constexpr (kIsTimed<T> && kHasTime<T>) {
        const uint64_t delivered = EndNs(r) + (kIsDeviceOp<T> ? lag_ns : 0);
        ListOf<T>(flushes[delivered / flush_ns]).push_back(r);
      } else if constexpr (kIsTimed<T> && kHasCorrelation<T>) {
        // No time of its own (CUDA_EVENT): an activity record, delivered after its call.
        auto it = call_end.find(r.correlation_id);
        const uint64_t delivered = it == call_end.end() ? 0 : it->second + lag_ns;
        ListOf<T>(flushes[delivered / flush_ns]).push_back(r);
      } else if constexpr (kIsTimed<T>) {
        ListOf<T>(flushes[0]).push_back(r);  // no time of its own: with the first flush
      } else {
        ListOf<T>(first).push_back(r);
      }
    }
  });
  writer.AddAll(first);
  ASSERT_TRUE(writer.Flush());
  for (const auto& [index, records] : flushes) {
    writer.AddAll(records);
    ASSERT_TRUE(writer.Flush());
  }
  if (end_us_ > 0) {
    ASSERT_TRUE(writer.Finish(RunEnd{.end_time_ns = Us(end_us_), .reason = "exit"}));
  }
}

ProcessTrace TraceBuilder::RoundTrip(const std::string& path) const {
  Write(path);
  std::vector<std::string> warnings;
  auto loaded = LoadTraceFile(path, &warnings);
  if (!loaded) {
    ADD_FAILURE() << loaded.error();
    return Build();
  }
  EXPECT_EQ(loaded->size(), 1u);
  return std::move(loaded->front());
}

TempDir::TempDir() {
  static std::atomic<int> counter{0};
  path_ = std::filesystem::temp_directory_path() /
          ("profview_test_" + std::to_string(getpid()) + "_" + std::to_string(counter++));
  std::filesystem::create_directories(path_);
}

TempDir::~TempDir() {
  std::error_code ignored;
  std::filesystem::remove_all(path_, ignored);
}

void TraceBuilder::NumberCallsByStart() {
  std::vector<std::pair<uint64_t, uint64_t>> by_start;  // (start, corr)
  for (const ApiCall& c : records_.api_calls) by_start.push_back({c.start_ns, c.correlation_id});
  std::sort(by_start.begin(), by_start.end());
  std::map<uint64_t, uint64_t> renumbered;
  for (const auto& [start, corr] : by_start) renumbered.try_emplace(corr, renumbered.size() + 1);
  ForEachList(records_, [&]<typename T>(std::vector<T>& list) {
    if constexpr (kHasCorrelation<T>) {
      for (T& r : list) r.correlation_id = renumbered[r.correlation_id];
    }
  });
}

}  // namespace libprof::analysis::testing
