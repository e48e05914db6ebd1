// Summarises one process while its records stream in, chunk by chunk, in memory bounded by how
// far out of order the records arrive rather than by the size of the trace.
//
// Layer: analysis/metrics/. Behind summary.h: SummarizeFiles (trace files, two passes
// each) and Summarize (an in-memory ProcessTrace) both drive one of these, so there is one
// implementation of the numbers.
//
// Use: AddNvtx for every NVTX event (the first pass: TraceReader::NextNvtx), EndNvtx, then Add for
// every chunk (the second pass), then Finish. What is aggregated as records arrive:
// - rows per API name id, per device-work kind and name key, per copy kind; exact Stats;
// - the host and device unions (StreamingUnion), clipped to the analysed time;
// - nesting of API calls (ApiNesting), which decides which calls are hidden;
// - the NVTX GPU projection and the --tid/--nvtx filters' question "did a kept call issue this
//   device work" (CorrelationJoin + NvtxProjection), only when needed.
// Each bounded stage reports when records came too far out of order, and --from/--to assume
// that the recording starts at the header's start time; exact() says whether the result can be
// trusted, else the caller runs the passes again with Setup::bounded = false and the window that
// Finish found (Summary::windows).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "analysis/metrics/nvtx_projection.h"
#include "analysis/metrics/streaming_union.h"
#include "analysis/metrics/summary.h"
#include "analysis/model/filters.h"
#include "analysis/model/nvtx_selection.h"
#include "analysis/model/trace_index.h"   // DeviceOpKind
#include "analysis/model/trace_loader.h"  // ArrivalHorizon
#include "proto/api_nesting.h"
#include "proto/correlation_join.h"
#include "proto/trace_model.h"

namespace libprof::analysis {

// How much the bounded stages hold (tests make them tiny to exercise settling and re-reading).
struct StreamLimits {
  // Disjoint pieces each union holds before settling the oldest half: 1 MiB of intervals, and
  // enough to absorb a thread's calls arriving a whole CUPTI buffer (tens of thousands of
  // records) behind another thread's.
  size_t union_pieces = size_t{1} << 16;
  // Calls per thread held for nesting: a runtime call arrives after the driver calls nested in
  // it, of which there are a handful (libprof itself holds at most 16384, proto/api_nesting.h).
  size_t held_calls_per_thread = 1024;
  uint64_t op_lag = CorrelationJoin<int>::kOpLag;
  uint64_t max_span = CorrelationJoin<int>::kMaxSpan;
  // How far (trace time) behind the newest record a record may still arrive; unset: two of the
  // trace's flush intervals (LIBPROF_FLUSH_INTERVAL_MS in its header, else libprof's default
  // 1 s), the bound libprof's own nesting tracker uses (libprof/recorder.cc). A real two-thread
  // PyTorch trace had chunks reaching 0.6 s behind the one before.
  std::optional<uint64_t> horizon_ns;
};

// StreamLimits::horizon_ns for a trace with this header: trace_loader.h ArrivalHorizon.

class ProcessSummarizer {
 public:
  struct Setup {
    std::string path;
    TraceHeader header;
    SummaryOptions options;
    FilterOptions filters;  // pids are the caller's business
    // Bounded memory (settle what is old) or exact for any record order (hold everything).
    bool bounded = true;
    StreamLimits limits;
    // Keep the pieces of the host and device unions in the Summary, for a total over processes.
    bool keep_intervals = false;
    // The analysed time when it is known before reading: an in-memory trace's windows, or the
    // window a first run found. Otherwise it is the recording (the header's start to the last
    // record or RunEnd), narrowed by the filters.
    std::optional<std::vector<Interval>> windows;
    // The recording's window when a first run found it: --from/--to count from its start.
    // Unset: they count from the header's start time, which Finish checks.
    std::optional<Interval> recording;
  };

  explicit ProcessSummarizer(Setup setup);

  // First pass: the NVTX events of this process; `strings` is the process's string table.
  void AddNvtx(const std::vector<NvtxEvent>& events, const std::vector<NvtxDomain>& domains);
  // Ends the first pass: decides the ranges --nvtx selects and the NVTX rows.
  void EndNvtx(const std::vector<std::string>& strings);
  // With --nvtx: whether this process has a selected range (else it is left out).
  bool selected() const { return selected_; }

  // Second pass: one chunk of this process; `strings` its string table as read so far.
  void Add(const TraceRecords& chunk, const std::vector<std::string>& strings);
  Summary Finish(const std::vector<std::string>& strings);

  // After Finish: false when an assumption failed (see the header comment).
  bool exact() const { return exact_; }
  // After Finish: the recording's window (before any filter), for Setup::recording.
  const Interval& recording() const { return recording_; }
  // Threads of --tid that had API calls or NVTX events in the time window.
  const std::vector<uint32_t>& threads_seen() const { return threads_seen_; }

 private:
  // A kernel, copy, memset or graph launch reduced to what the summary needs.
  struct DeviceRecord {
    uint64_t start_ns = 0;
    uint64_t end_ns = 0;
    uint64_t bytes = 0;
    uint64_t seq = 0;       // arrival order, for ties
    uint32_t row = 0;       // index into device_rows_
    uint16_t copy_key = 0;  // memcpy: (kind, src, dst); else unused
    uint8_t kind = 0;       // DeviceOpKind; kOtherRecord: a record only counted in `events`
    bool repaired_end = false;  // CUPTI's end fell after its stream's next start (cupti_end_ns)
  };
  static constexpr uint8_t kOtherRecord = 0xFF;
  struct DeviceRow {
    uint8_t kind = 0;  // DeviceOpKind
    uint64_t key = 0;  // kernel: name ids; memcpy: copy key; memset: memory kind; graph: id
    Stats stats;
    uint64_t bytes = 0;
    // The first operation in start order (ties: kernels, copies, memsets, graphs; then file
    // order) names the row's kind when names collide.
    uint64_t first_start = UINT64_MAX;
    uint64_t first_seq = UINT64_MAX;
  };
  struct HostRow {
    Stats stats;
    uint64_t first_seq = UINT64_MAX;  // the first shown call: its callback id names an unnamed row
    uint32_t callback_id = 0;
    int8_t noise = -1;  // IsNoiseApi of the name, once known
  };
  // Unified-memory migrations of one direction: "[unified memory host → device]" device rows.
  struct UvmRow {
    Stats stats;
    uint64_t bytes = 0;
  };
  void AddUnifiedMemory(const std::vector<UnifiedMemoryCounter>& records);
  struct NvtxRow {
    uint32_t domain_id = 0;
    uint32_t message_id = 0;
    Stats stats;
  };

  bool InWindow(uint64_t t);
  bool ThreadKept(uint32_t thread_id) const;
  void SeeThread(uint32_t thread_id);
  void AddCall(const ApiCall& call);
  void CallDecided(const ApiCall& call, uint64_t seq, bool nested);
  // A device record kept by the time window: counted now, or held until its call is known.
  void AddDevice(uint64_t corr, DeviceRecord record);
  void CountOther(uint64_t corr, uint64_t time_ns);
  void EmitDevice(const DeviceRecord& record);
  uint32_t KernelRow(const Kernel& k);
  uint32_t Row(DeviceOpKind kind, uint64_t key);
  void AddDeviceRow(DeviceOpKind kind, uint64_t key);
  void AddRange(const NvtxEvent& e);
  bool IsNoise(HostRow* row, uint32_t name_id);
  std::vector<ContextInfo> contexts_;  // those with a creation time (few: one per device)

  Setup setup_;
  uint64_t horizon_ns_;
  bool window_filter_ = false;  // --from/--to
  bool corr_filter_ = false;    // --tid or --nvtx: device work follows its call
  uint64_t origin_ns_ = 0;
  std::map<std::string, UvmRow> uvm_rows_;  // by direction (unified_memory.h UvmDirection)
  std::vector<Interval> record_window_;  // --from/--to: records must start in it
  std::vector<Interval> clip_;           // the analysed time as assumed while reading
  bool clip_all_ = true;                 // no filter: nothing to clip
  uint64_t latest_kept_start_ = 0;       // --from/--to: checked against the recording's end
  bool kept_any_ = false;
  bool selected_ = true;
  NvtxSelection selection_;
  std::vector<NvtxEvent> selection_candidates_;  // --nvtx: ranges until the selection is known
  std::vector<NvtxDomain> domains_;
  std::unordered_map<uint64_t, uint32_t> nvtx_row_of_;  // (domain id << 32 | message id) -> row
  std::vector<NvtxRow> nvtx_rows_;
  NvtxProjection projection_;
  bool project_ = false;  // some range is on a thread: join device work to calls

  const std::vector<std::string>* strings_ = nullptr;
  uint64_t lo_ = UINT64_MAX, hi_ = 0;
  std::optional<RunEnd> run_end_;
  uint64_t drops_ = 0;
  std::map<uint32_t, std::string> device_uuids_;  // device id -> raw UUID, from its definition
  std::set<uint32_t> devices_with_work_;          // ids of the devices of kept operations
  uint32_t last_device_ = UINT32_MAX;             // (the last id added: ops come in runs)
  uint64_t repaired_ends_ = 0;
  uint64_t events_ = 0;
  uint64_t call_seq_ = 0;
  uint64_t device_seq_ = 0;
  std::vector<uint32_t> threads_seen_;

  // By name id; with --by caller by (stack id << 32 | name id), the stack's call site being
  // resolved at Finish from the stack tables, which libprof writes at the end of the run.
  std::unordered_map<uint64_t, HostRow> host_rows_;
  TraceRecords stack_tables_;  // --by caller: modules, frames and stacks (small: unique ones)
  uint64_t hidden_calls_ = 0, hidden_ns_ = 0, hidden_nested_calls_ = 0;
  std::vector<DeviceRow> device_rows_;
  std::unordered_map<uint64_t, uint32_t> kernel_rows_;  // (name id << 32 | demangled id)
  std::unordered_map<uint64_t, uint32_t> other_rows_;   // (kind << 56 | key)
  uint64_t last_kernel_key_ = UINT64_MAX;
  uint32_t last_kernel_row_ = 0;
  struct CopyTotals {
    uint64_t count = 0, bytes = 0, total_ns = 0;
  };
  std::unordered_map<uint16_t, CopyTotals> copies_;

  std::vector<Interval> host_pieces_, device_pieces_;
  StreamingUnion host_union_;
  StreamingUnion device_union_;
  ApiNesting nesting_;
  std::unique_ptr<CorrelationJoin<DeviceRecord>> join_;
  bool exact_ = true;
  Interval recording_;
};

}  // namespace libprof::analysis
