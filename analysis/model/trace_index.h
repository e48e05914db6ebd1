// Joins the records of one process for the analyses: device operations in one list, API calls
// with their nesting resolved, and lookups by correlation id (device work -> launching call).
//
// Layer: analysis/model/. Built once per (filtered) ProcessTrace; holds pointers
// into it, so the ProcessTrace must outlive the index and stay unmodified.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "proto/trace_model.h"
#include "analysis/model/api_names.h"
#include "analysis/model/device_ops.h"
#include "analysis/model/id_table.h"
#include "analysis/model/trace_loader.h"

namespace libprof::analysis {

class TraceIndex {
 public:
  explicit TraceIndex(const ProcessTrace& trace);

  const ProcessTrace& trace() const { return *trace_; }
  const TraceRecords& records() const { return trace_->records; }

  // Every device operation (device_ops.h), sorted by start time.
  const std::vector<DeviceOp>& device_ops() const { return ops_; }

  // True when API call `i` runs inside another call of the same thread: the recorded `nested`
  // flag, or its interval lies within an enclosing call's (NestingRule::kAnyCall).
  bool IsNested(size_t api_index) const { return nested_[api_index]; }
  // The outermost call enclosing API call `i` on its thread (`i` itself when it is top-level).
  uint32_t Outermost(size_t api_index) const { return outermost_[api_index]; }

  // A thread's top-level calls (Outermost(i) == i) by start, file order among equal starts, and
  // the running maximum of their end times along that list (to find the calls open at a time).
  // Sorted once here for the analyses that walk a thread's calls (idle causes, overlap rules).
  struct ThreadCalls {
    std::vector<uint32_t> calls;
    std::vector<uint64_t> max_end;
  };
  const ThreadCalls* TopLevelCalls(uint32_t thread_id) const;  // nullptr: no call on it

  // The API call that issued correlation id `corr` (LaunchesRather: the first unnested one, so
  // the runtime call when a runtime call and its nested driver call share it). -1 when the
  // trace has no such call.
  int64_t LaunchingCall(uint64_t corr) const;

  // Indices into device_ops() of the work issued by correlation id `corr`, in start order
  // (empty if none).
  std::span<const uint32_t> OpsOf(uint64_t corr) const;

  const std::string& ApiName(const ApiCall& call) const { return trace_->Str(call.name_id); }
  // api_names.h's answers for the call's name, computed once per name.
  const ApiTraits& Traits(const ApiCall& call) const { return traits_[call.name_id]; }
  // The full readable name of `op`: a demangled kernel name, "[copy pageable to device memory]",
  // "[set device memory]", "[graph 3]". `op` must be an element of device_ops().
  const std::string& OpName(const DeviceOp& op) const;
  // "[copy pageable to device memory]" for memory kinds (also used for copy tables).
  static std::string CopyName(MemoryKind src, MemoryKind dst, CopyKind kind);
  static std::string SetName(MemoryKind kind);

  // NVTX: the readable name of a range ("message" or "domain: message") and its domain name.
  std::string NvtxName(const NvtxEvent& event) const;
  const std::string& NvtxDomainName(uint32_t domain_id) const;

 private:
  const ProcessTrace* trace_;
  std::vector<DeviceOp> ops_;
  std::vector<bool> nested_;
  std::vector<uint32_t> outermost_;
  std::unordered_map<uint32_t, ThreadCalls> top_level_;  // by thread id
  // LaunchingCall's answers (a hash map here was a heap node per call: at 10M records, hundreds
  // of MB and seconds of findings' time).
  IdTable call_by_corr_;
  // OpsOf's answers: op indices sorted by correlation id, and those ids alongside (two flat
  // arrays, 12 bytes per op, rather than a vector per id).
  std::vector<uint32_t> ops_by_corr_;
  std::vector<uint64_t> ops_corr_;
  IdTable run_by_corr_;  // id -> position of its first op in ops_by_corr_
  // OpName's answers: per kind (DeviceOpKind), per record of that kind, into names_.
  std::array<std::vector<const std::string*>, kDeviceOpKinds> kind_names_;
  std::unordered_map<std::string, std::unique_ptr<std::string>> names_;
  std::unordered_map<uint32_t, uint32_t> domain_names_;  // domain id -> string id
  std::vector<ApiTraits> traits_;  // by name id: every API call's name
};

}  // namespace libprof::analysis
