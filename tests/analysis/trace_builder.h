// Builds synthetic libprof traces for the viewer tests: records with readable helpers, written
// to a real file with TraceWriter and read back with TraceReader (the whole path profview takes),
// or kept in memory.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <string_view>

#include "proto/trace_model.h"
#include "proto/trace_writer.h"
#include "analysis/model/trace_loader.h"

namespace libprof::analysis::testing {

// An arbitrary non-zero origin, so that relative times are visible: every helper takes times in
// microseconds from here.
inline constexpr uint64_t kT0 = 1'000'000'000'000;
inline constexpr uint64_t Us(double us) { return kT0 + static_cast<uint64_t>(us * 1000.0 + 0.5); }

class TraceBuilder {
 public:
  explicit TraceBuilder(uint32_t pid = 4242);

  TraceHeader& header() { return header_; }
  TraceRecords& records() { return records_; }
  uint32_t Intern(std::string_view s) { return strings_->Intern(s); }

  // Returned references stay valid only until the next record of the same kind is added.
  // An API call from `start_us` to `end_us` (µs after kT0); returns its correlation id (the next
  // free one unless given).
  uint64_t Api(std::string_view name, double start_us, double end_us, uint32_t tid = 1,
               uint64_t corr = 0, ApiDomain domain = ApiDomain::kRuntime, bool nested = false);
  Kernel& AddKernel(std::string_view name, double start_us, double end_us, uint64_t corr,
                    uint32_t stream, uint32_t context = 1);
  Memcpy& AddMemcpy(CopyKind kind, MemoryKind src, MemoryKind dst, uint64_t bytes, double start_us,
                    double end_us, uint64_t corr, uint32_t stream, bool async);
  Memset& AddMemset(MemoryKind kind, uint64_t bytes, double start_us, double end_us, uint64_t corr,
                    uint32_t stream, bool async);
  GraphTrace& AddGraph(uint32_t graph_id, double start_us, double end_us, uint64_t corr,
                       uint32_t stream);
  void AddStream(uint32_t stream, StreamType type, uint32_t context = 1);
  void AddContext(uint32_t context, uint32_t null_stream);
  Synchronization& AddSync(SyncType type, double start_us, double end_us, uint64_t corr,
                           uint32_t stream = kNoStream, uint64_t event_sync_id = 0);
  CudaEvent& AddEvent(uint32_t event_id, uint64_t sync_id, uint64_t corr, uint32_t stream);
  // A CUPTI overhead record (CUpti_ActivityOverheadKind value, e.g. kLazyFunctionLoading).
  Overhead& AddOverhead(uint32_t kind, double start_us, double end_us, uint32_t tid = 1);
  static constexpr uint32_t kRuntimeTriggeredModuleLoading = 4u << 16;
  static constexpr uint32_t kLazyFunctionLoading = 5u << 16;
  NvtxEvent& AddRange(std::string_view message, double start_us, double end_us, uint32_t tid = 1,
                      NvtxKind kind = NvtxKind::kPushPop, uint32_t depth = 0,
                      std::string_view domain = "");

  // NCCL's NVTX annotations as NCCL writes them (src/include/nvtx_payload_schemas.h): its
  // schemas in the "NCCL" domain (registered at the first use), a communicator's creation
  // (ncclCommInitRankConfig, payload at pop) and a collective whose range holds the launch of
  // its kernel `k_start`..`k_end` on `stream`. AllReduce, ReduceScatter and Reduce carry the
  // reduction (Sum); the others (comm, bytes). Returns the launch's correlation id.
  void NcclCommInit(uint64_t comm, int nranks, int rank, double start_us, double end_us,
                    uint32_t tid = 1);
  uint64_t NcclCollective(std::string_view op, uint64_t comm, uint64_t bytes, double host_start,
                          double host_end, double k_start, double k_end, uint32_t stream = 7,
                          uint32_t tid = 1);

  // Convenience: an API call that launched a kernel `launch` µs long, or a copy.
  uint64_t Launch(std::string_view kernel, double api_start, double api_end, double k_start,
                  double k_end, uint32_t stream, uint32_t tid = 1,
                  std::string_view api = "cudaLaunchKernel");

  // The recording's end (RunEnd); 0 leaves RunEnd out (as in a file cut short).
  void SetEnd(double end_us) { end_us_ = end_us; }
  // Renumbers the correlation ids (of calls and of everything naming them) in the order the
  // calls start, as CUDA numbers them: for builders that write one thread's calls after another.
  void NumberCallsByStart();

  // In memory, as LoadTraceFile would return it (window from header start to RunEnd).
  ProcessTrace Build() const;
  // Writes the trace to `path` with TraceWriter (chunks of `chunk_bytes`).
  void Write(const std::string& path, size_t chunk_bytes = 1 << 20) const;
  // Writes as libprof's flushes deliver records: every `flush_us`, the records that ended in
  // that stretch, device operations `device_lag_us` later (their activity buffer comes after
  // the calls' records; CUDA events, which have no time, with their calls' device work), each
  // flush its own chunks; definitions and untimed records first.
  void WriteFlushed(const std::string& path, double flush_us, double device_lag_us) const;
  // Write + LoadTraceFile; fails the test (ADD_FAILURE) on a load error.
  ProcessTrace RoundTrip(const std::string& path) const;

 private:
  TraceHeader header_;
  TraceRecords records_;
  std::unique_ptr<StringInterner> strings_ = std::make_unique<StringInterner>();  // movable
  std::map<std::pair<ApiDomain, std::string>, uint32_t> callback_ids_;
  uint64_t next_corr_ = 1;
  bool nccl_schemas_ = false;
  void AddNcclSchemas();
  double end_us_ = 0;
};

// A fresh directory for test files, removed on destruction.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  std::string Path(const std::string& name) const { return (path_ / name).string(); }

 private:
  std::filesystem::path path_;
};

}  // namespace libprof::analysis::testing
