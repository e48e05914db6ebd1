#include "analysis/model/collectives.h"

#include <algorithm>
#include <map>
#include <string_view>
#include <unordered_map>

#include "analysis/model/nvtx_payloads.h"

namespace libprof::analysis {
namespace {

// NCCL's payload entry names (src/include/nvtx_payload_schemas.h): its interface, like a field
// name; entries are found by name, so a reordered or extended schema still reads.
constexpr std::string_view kCommField = "NCCL communicator ID";
constexpr std::string_view kBytesField = "Message size [bytes]";
constexpr std::string_view kReductionField = "Reduction operation";
constexpr std::string_view kRootField = "Root";
constexpr std::string_view kPeerField = "Peer rank";
constexpr std::string_view kRanksField = "No. of ranks";
constexpr std::string_view kRankField = "Rank";
constexpr std::string_view kDomain = "NCCL";

// Ranges that create a communicator and give its size and our rank.
bool IsCommunicatorCreation(std::string_view op) {
  return op.starts_with("CommInitRank") || op == "CommSplit" || op == "CommShrink" ||
         op == "CommGrow";
}

const nvtx_payload::Field* Find(const std::vector<nvtx_payload::DecodedPayload>& payloads,
                                std::string_view name) {
  for (const auto& payload : payloads) {
    if (const nvtx_payload::Field* f = payload.Find(name)) return f;
  }
  return nullptr;
}

struct ThreadCall {
  uint64_t start_ns;
  uint64_t correlation_id;
};

}  // namespace

bool IsCollectiveOp(const std::string& op) {
  static const char* const kOps[] = {"AllReduce", "AllGather", "ReduceScatter", "Broadcast",
                                     "Reduce",    "AlltoAll",  "Gather",        "Scatter",
                                     "Send",      "Recv"};
  return std::find(std::begin(kOps), std::end(kOps), op) != std::end(kOps);
}

bool HasNcclRanges(const ProcessTrace& trace) {
  for (const NvtxDomain& d : trace.records.nvtx_domains) {
    if (trace.Str(d.name_id) == kDomain) return true;
  }
  return false;
}

ProcessCollectives ExtractCollectives(const TraceIndex& index) {
  const ProcessTrace& trace = index.trace();
  ProcessCollectives out{.path = trace.path,
                         .pid = trace.header.pid,
                         .hostname = trace.header.hostname,
                         .rank = trace.header.rank,
                         .origin_ns = trace.origin_ns};
  // The NCCL domain's id(s) (one per NVTX instance name, usually one).
  std::vector<uint32_t> domains;
  for (const NvtxDomain& d : trace.records.nvtx_domains) {
    if (trace.Str(d.name_id) == kDomain) domains.push_back(d.id);
  }
  if (domains.empty()) return out;

  // API calls per thread by start: the launches made inside a range.
  std::unordered_map<uint32_t, std::vector<ThreadCall>> calls_by_thread;
  for (const ApiCall& call : trace.records.api_calls) {
    calls_by_thread[call.thread_id].push_back({call.start_ns, call.correlation_id});
  }
  for (auto& [tid, calls] : calls_by_thread) {
    std::sort(calls.begin(), calls.end(),
              [](const ThreadCall& a, const ThreadCall& b) { return a.start_ns < b.start_ns; });
  }

  PayloadDecoder decoder(trace);
  struct Communicator {
    uint32_t size = 0;
    int32_t rank = -1;
  };
  std::map<uint64_t, Communicator> communicators;
  std::vector<const NvtxEvent*> ranges;
  for (const NvtxEvent& e : trace.records.nvtx_events) {
    if (e.kind == NvtxKind::kMark) continue;
    if (std::find(domains.begin(), domains.end(), e.domain_id) == domains.end()) continue;
    ranges.push_back(&e);
  }
  std::sort(ranges.begin(), ranges.end(), [](const NvtxEvent* a, const NvtxEvent* b) {
    return a->start_ns < b->start_ns;
  });
  for (const NvtxEvent* e : ranges) {
    std::string_view name = trace.Str(e->message_id);
    if (!name.starts_with("nccl")) continue;
    const std::string op(name.substr(4));
    const bool creation = IsCommunicatorCreation(op);
    if (!creation && !IsCollectiveOp(op)) continue;
    const auto payloads = decoder.Decode(*e);
    const nvtx_payload::Field* comm = Find(payloads, kCommField);
    if (creation) {
      const nvtx_payload::Field* ranks = Find(payloads, kRanksField);
      const nvtx_payload::Field* rank = Find(payloads, kRankField);
      if (comm != nullptr && ranks != nullptr) {
        communicators[comm->as_unsigned] = {
            .size = static_cast<uint32_t>(ranks->as_signed),
            .rank = rank != nullptr ? static_cast<int32_t>(rank->as_signed) : -1};
      }
      continue;
    }
    CollectiveCall call{.op = op,
                        .host_start_ns = e->start_ns,
                        .host_end_ns = e->end_ns,
                        .start_ns = e->start_ns,
                        .end_ns = e->end_ns,
                        .thread_id = e->thread_id};
    if (comm != nullptr) call.comm = comm->as_unsigned;
    if (const auto* f = Find(payloads, kBytesField)) call.bytes = f->as_unsigned;
    if (const auto* f = Find(payloads, kReductionField)) call.reduction = f->text;
    if (const auto* f = Find(payloads, kRootField)) call.root = f->as_signed;
    if (const auto* f = Find(payloads, kPeerField)) call.root = f->as_signed;
    // The device work of the calls this thread made inside the range.
    auto it = calls_by_thread.find(e->thread_id);
    if (it != calls_by_thread.end()) {
      const auto& calls = it->second;
      auto first = std::lower_bound(
          calls.begin(), calls.end(), e->start_ns,
          [](const ThreadCall& c, uint64_t t) { return c.start_ns < t; });
      std::vector<uint64_t> seen;
      for (auto c = first; c != calls.end() && c->start_ns <= e->end_ns; ++c) {
        // A runtime call and its nested driver call share a correlation id: count it once.
        if (std::find(seen.begin(), seen.end(), c->correlation_id) != seen.end()) continue;
        seen.push_back(c->correlation_id);
        for (uint32_t op_index : index.OpsOf(c->correlation_id)) {
          const DeviceOp& dop = index.device_ops()[op_index];
          if (!call.has_device_work) {
            call.start_ns = dop.start_ns;
            call.end_ns = dop.end_ns;
            call.device_id = dop.device_id;
            call.has_device_work = true;
          }
          call.start_ns = std::min(call.start_ns, dop.start_ns);
          call.end_ns = std::max(call.end_ns, dop.end_ns);
          ++call.device_ops;
        }
      }
    }
    out.calls.push_back(std::move(call));
  }
  // Sizes and ranks (a communicator is created before its first collective), and the sequence
  // number of each call within its communicator.
  std::map<uint64_t, uint64_t> next_seq;
  for (CollectiveCall& call : out.calls) {
    if (auto it = communicators.find(call.comm); it != communicators.end()) {
      call.comm_size = it->second.size;
      call.comm_rank = it->second.rank;
    }
    call.seq = next_seq[call.comm]++;
  }
  out.warnings = decoder.Warnings();
  return out;
}

}  // namespace libprof::analysis
