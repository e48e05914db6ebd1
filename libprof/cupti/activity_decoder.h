// Turns CUPTI activity records into libprof's model records (proto/trace_model.h).
//
// Layer: libprof/cupti/, the CUPTI boundary: everything after Decode() is plain C++. It reads
// each record only as far as the running CUPTI's RecordLayout allows, interns strings through
// the shared StringInterner and caches what repeats (API names, kernel names), so the per-record
// cost is a switch and a few copies. It never logs and never throws; kinds it does not know are
// counted and skipped.
#pragma once

#include <cupti.h>

#include <cstdint>
#include <string>
#include <unordered_map>

#include "libprof/cupti/api_names.h"
#include "libprof/cupti/cupti_api.h"
#include "libprof/cupti/kernel_names.h"
#include "libprof/cupti/record_layout.h"
#include "proto/trace_model.h"
#include "proto/trace_writer.h"

namespace libprof {

struct DecodeStats {
  uint64_t decoded = 0;        // records turned into a model record
  uint64_t unknown_kinds = 0;  // records of kinds the decoder skips
  uint32_t last_unknown_kind = 0;
  uint64_t failed = 0;  // records lost to an exception (out of memory)
};

// One instance per recording, used from one thread (the writer thread).
class ActivityDecoder {
 public:
  // Production: names from cuptiGetCallbackName, layout from the loaded CUPTI.
  ActivityDecoder(const CuptiApi& api, StringInterner& strings);
  // Tests: any layout and any source of callback names.
  ActivityDecoder(const RecordLayout& layout, StringInterner& strings, ApiNameLookup names);

  // Appends the model record for `record` to the matching list of *out; false if the kind is
  // not decoded. Takes ownership of the heap strings CUPTI hands to the client
  // (Device5.name, Overhead3.overheadData): it free()s them and clears the pointer in the record,
  // so call it once per record (a second call on the same record is harmless).
  bool Decode(const CUpti_Activity* record, TraceRecords* out);

  // Appends an API call that came from callbacks instead of a record (ContextCreatingCalls),
  // named as a record of its domain and callback id would be.
  void AddApiCall(ApiCall call, TraceRecords* out);

  const DecodeStats& stats() const { return stats_; }

 private:
  void DecodeApi(const CUpti_ActivityAPI& r, TraceRecords* out);
  void DecodeKernel(const CUpti_ActivityKernel10& r, TraceRecords* out);
  void DecodeMemcpy(const CUpti_ActivityMemcpy6& r, TraceRecords* out);
  void DecodePeerMemcpy(const CUpti_ActivityMemcpyPtoP4& r, TraceRecords* out);
  void DecodeMemset(const CUpti_ActivityMemset4& r, TraceRecords* out);
  void DecodeSynchronization(const CUpti_ActivitySynchronization2& r, TraceRecords* out);
  void DecodeCudaEvent(const CUpti_ActivityCudaEvent2& r, TraceRecords* out);
  void DecodeStream(const CUpti_ActivityStream& r, TraceRecords* out);
  void DecodeContext(const CUpti_ActivityContext3& r, TraceRecords* out);
  void DecodeDevice(CUpti_ActivityDevice5& r, TraceRecords* out);
  void DecodeMemory(const CUpti_ActivityMemory4& r, TraceRecords* out);
  void DecodeOverhead(CUpti_ActivityOverhead3& r, TraceRecords* out);
  void DecodeGraphTrace(const CUpti_ActivityGraphTrace2& r, TraceRecords* out);
  void DecodeUnifiedMemory(const CUpti_ActivityUnifiedMemoryCounter3& r, TraceRecords* out);
  uint32_t OverheadNameId(uint32_t overhead_kind);

  RecordLayout layout_;
  StringInterner& strings_;
  ApiNameCache api_names_;
  KernelNameCache kernel_names_;
  std::unordered_map<uint32_t, uint32_t> overhead_names_;  // overhead kind -> name id
  // Context id -> device id, from CONTEXT records: STREAM records name no device.
  std::unordered_map<uint32_t, uint32_t> context_devices_;
  DecodeStats stats_;
};

// The readable name of a CUpti_ActivityOverheadKind value ("activity buffer request", ...), or
// nullptr for a value this build does not know.
const char* OverheadKindName(uint32_t overhead_kind);

}  // namespace libprof
