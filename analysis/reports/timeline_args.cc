#include "analysis/reports/timeline_args.h"

#include <array>
#include <cstdio>

#include "analysis/model/units.h"

namespace libprof::analysis {
namespace {

std::string Triple(const std::array<uint32_t, 3>& v) {
  char buffer[48];
  std::snprintf(buffer, sizeof buffer, "(%u,%u,%u)", v[0], v[1], v[2]);
  return buffer;
}

}  // namespace

EventArgs ApiCallArgs(const TraceIndex& index, const CallSites& sites, size_t call) {
  const ApiCall& c = index.records().api_calls[call];
  EventArgs args;
  args.Add("correlation_id", c.correlation_id).Add("domain", ToString(c.domain));
  if (c.return_value != 0) args.Add("return_value", c.return_value);
  if (index.IsNested(call)) args.Add("nested", true);
  if (const CallSite& site = sites.Of(c.stack_id); site.known) {
    args.Add("call_site", site.Text());
    std::string stack;
    for (const FrameView& frame : sites.Frames(c.stack_id)) {
      stack += (stack.empty() ? "" : "\n") + frame.Label();
    }
    args.Add("call_stack", stack);
  }
  return args;
}

EventArgs NvtxRangeArgs(const TraceIndex& index, const NvtxEvent& e) {
  EventArgs args;
  const std::string& domain = index.NvtxDomainName(e.domain_id);
  if (!domain.empty()) args.Add("domain", domain);
  if (e.category != 0) args.Add("category", e.category);
  if (e.has_color) {
    char color[8];
    std::snprintf(color, sizeof color, "#%06x", e.color_argb & 0xFFFFFFu);
    args.Add("color", color);
  }
  if (e.kind == NvtxKind::kStartEnd) {
    args.Add("started_on_thread", e.thread_id);
    args.Add("ended_on_thread", e.end_thread_id != 0 ? e.end_thread_id : e.thread_id);
  }
  if (e.open) args.Add("open", true);
  return args;
}

EventArgs DeviceOpArgs(const TraceIndex& index, const DeviceOp& op) {
  const TraceRecords& r = index.records();
  EventArgs args;
  args.Add("correlation_id", op.correlation_id)
      .Add("device", op.device_id)
      .Add("stream", op.stream_id);
  if (op.graph_id != 0) args.Add("graph_id", op.graph_id);
  switch (op.kind) {
    case DeviceOpKind::kKernel: {
      const Kernel& k = r.kernels[op.record];
      const KernelShape& s = k.shape;
      args.Add("kernel", index.OpName(op))
          .Add("mangled_name", index.trace().Str(s.name_id))
          .Add("grid", Triple(s.grid))
          .Add("block", Triple(s.block))
          .Add("registers_per_thread", s.registers_per_thread)
          .Add("static_shared_memory_bytes", s.static_shared_memory_bytes)
          .Add("dynamic_shared_memory_bytes", s.dynamic_shared_memory_bytes)
          .Add("local_memory_per_thread_bytes", s.local_memory_per_thread_bytes);
      if (s.cluster[0] != 0) args.Add("cluster", Triple(s.cluster));
      if (k.graph_node_id != 0) args.Add("graph_node_id", k.graph_node_id);
      if (k.device_launched) args.Add("device_launched", true);
      break;
    }
    case DeviceOpKind::kMemcpy: {
      const Memcpy& m = r.memcpys[op.record];
      args.Add("bytes", m.bytes)
          .Add("gb_per_s", GigabytesPerSecond(m.bytes, op.duration()))
          .Add("copy_kind", ToString(m.copy_kind))
          .Add("src_kind", ToString(m.src_kind))
          .Add("dst_kind", ToString(m.dst_kind))
          .Add("async", m.async);
      if (m.copy_kind == CopyKind::kPtoP) {
        args.Add("src_device", m.src_device_id).Add("dst_device", m.dst_device_id);
      }
      break;
    }
    case DeviceOpKind::kMemset: {
      const Memset& m = r.memsets[op.record];
      args.Add("bytes", m.bytes)
          .Add("gb_per_s", GigabytesPerSecond(m.bytes, op.duration()))
          .Add("memory_kind", ToString(m.memory_kind))
          .Add("value", m.value)
          .Add("async", m.async);
      break;
    }
    case DeviceOpKind::kGraph:
      break;
  }
  const int64_t call = index.LaunchingCall(op.correlation_id);
  if (call >= 0) args.Add("launched_by", index.ApiName(r.api_calls[call]));
  return args;
}

void AddFindingArgs(const std::vector<const Finding*>& findings, EventArgs* args) {
  std::string rules;
  for (const Finding* f : findings) {
    if (!rules.empty()) rules += ", ";
    rules += RuleName(f->rule);
  }
  args->Add("findings", rules);
  for (const Finding* f : findings) {
    if (Rule(f->rule).family == RuleFamily::kHostWait) {
      args->Add("blocked_ns", f->blocked_ns);
      std::string waited;
      for (const Blamed& b : f->blamed) {
        waited += (waited.empty() ? "" : "; ") + b.name + " (" + b.kind + ", corr " +
                  std::to_string(b.correlation_id) + ", stream " + std::to_string(b.stream_id) +
                  ", overlap " + FormatDuration(static_cast<double>(b.overlap_ns)) + ")";
      }
      if (f->blamed_omitted > 0) {
        waited += "; and " + std::to_string(f->blamed_omitted) + " more";
      }
      if (!waited.empty()) args->Add("waited_for", waited);
    }
    args->Add(RuleName(f->rule), f->explanation);
  }
}

}  // namespace libprof::analysis
