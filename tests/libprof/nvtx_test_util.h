// Helpers shared by the NVTX tests: draining a recorder and reading its strings back.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "libprof/nvtx/nvtx_recorder.h"

namespace libprof::nvtx_test {

struct Drained {
  std::vector<NvtxEvent> events;
  std::vector<NvtxDomain> domains;
  std::vector<NvtxPayloadSchema> schemas;
};

// The trace's string table that a recorder drains into, as the capture context holds it in
// libprof: one per recorder (a recorder at a reused address keeps the table, which is harmless:
// interning is by content).
inline StringInterner& TraceStrings(NvtxRecorder& recorder) {
  static std::map<const NvtxRecorder*, std::unique_ptr<StringInterner>> tables;
  auto& table = tables[&recorder];
  if (!table) table = std::make_unique<StringInterner>();
  return *table;
}

inline Drained DrainAll(NvtxRecorder& recorder, bool final = false, uint64_t now_ns = 0) {
  Drained out;
  recorder.Drain(TraceStrings(recorder), &out.events, &out.domains, &out.schemas, final, now_ns);
  return out;
}

// The text of string `id` of the recorder's trace table ("" for an unknown id).
inline std::string Text(NvtxRecorder& recorder, uint32_t id) {
  std::vector<std::pair<uint32_t, std::string>> strings;
  TraceStrings(recorder).CollectFrom(id, &strings);
  return strings.empty() ? std::string() : strings.front().second;
}

// The events whose message is `text`.
inline std::vector<NvtxEvent> WithText(NvtxRecorder& recorder, const std::vector<NvtxEvent>& events,
                                       const std::string& text) {
  std::vector<NvtxEvent> out;
  for (const NvtxEvent& event : events) {
    if (Text(recorder, event.message_id) == text) out.push_back(event);
  }
  return out;
}

}  // namespace libprof::nvtx_test
