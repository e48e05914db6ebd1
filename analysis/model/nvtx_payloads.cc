#include "analysis/model/nvtx_payloads.h"

namespace libprof::analysis {

PayloadDecoder::PayloadDecoder(const ProcessTrace& trace) : trace_(&trace) {
  // A later registration of the same id replaces an earlier one (as at capture).
  for (const NvtxPayloadSchema& s : trace.records.nvtx_payload_schemas) {
    schemas_[{s.domain_id, s.schema_id}] = &s;
  }
}

std::vector<nvtx_payload::DecodedPayload> PayloadDecoder::Decode(const NvtxEvent& event) {
  std::vector<nvtx_payload::DecodedPayload> out;
  if (event.payloads.empty()) return out;
  const uint32_t domain = event.domain_id;
  const nvtx_payload::SchemaLookup lookup = [&](uint64_t id) -> const NvtxPayloadSchema* {
    auto it = schemas_.find({domain, id});
    return it == schemas_.end() ? nullptr : it->second;
  };
  for (const NvtxPayload& payload : event.payloads) {
    out.push_back(nvtx_payload::Decode(payload, lookup, trace_->strings));
    if (!out.back().decoded) {
      Problem& problem = problems_[payload.schema_id];
      if (problem.count++ == 0) problem.text = out.back().problem;
    }
  }
  return out;
}

std::vector<std::string> PayloadDecoder::Warnings() const {
  std::vector<std::string> lines;
  for (const auto& [schema, problem] : problems_) {
    lines.push_back("process " + std::to_string(trace_->header.pid) + " (" + trace_->path +
                    "): " + std::to_string(problem.count) + " NVTX payload" +
                    (problem.count == 1 ? "" : "s") + " of schema " + std::to_string(schema) +
                    " kept raw: " + problem.text);
  }
  return lines;
}

}  // namespace libprof::analysis
