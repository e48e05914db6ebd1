// The NVTX payloads of one process decoded by their schemas (proto/nvtx_payload.h): the lookup
// of a schema by (domain, id) over the trace's NvtxPayloadSchema records, and one warning per
// schema whose payloads cannot be decoded (unknown schema, size that disagrees), never more.
//
// Layer: analysis/model/. Holds pointers into the ProcessTrace, which must outlive it.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "proto/nvtx_payload.h"
#include "analysis/model/trace_loader.h"

namespace libprof::analysis {

class PayloadDecoder {
 public:
  explicit PayloadDecoder(const ProcessTrace& trace);

  // Every payload of `event`, decoded or kept raw with the reason.
  std::vector<nvtx_payload::DecodedPayload> Decode(const NvtxEvent& event);

  // One line per schema whose payloads stayed raw: "process 12 (a.pb): 3 NVTX payloads of
  // schema 16777221 not decoded: size 12, schema 16777221 says 24".
  std::vector<std::string> Warnings() const;

 private:
  const ProcessTrace* trace_;
  std::map<std::pair<uint32_t, uint64_t>, const NvtxPayloadSchema*> schemas_;
  struct Problem {
    std::string text;
    uint64_t count = 0;
  };
  std::map<uint64_t, Problem> problems_;  // by schema id
};

}  // namespace libprof::analysis
