#include "analysis/rules/unified_memory_rules.h"

#include <algorithm>

#include "analysis/metrics/unified_memory.h"
#include "analysis/model/units.h"

namespace libprof::analysis {
namespace {

std::string Dur(uint64_t ns) { return FormatDuration(static_cast<double>(ns)); }

Finding Base(const ProcessTrace& trace, RuleId rule, uint64_t start_ns) {
  Finding f;
  f.rule = rule;
  f.file = trace.path;
  f.pid = trace.header.pid;
  f.host_start_ns = start_ns > trace.origin_ns ? start_ns - trace.origin_ns : 0;
  return f;
}

}  // namespace

void FindUnifiedMemoryFindings(const RuleInput& input, std::vector<Finding>* out) {
  const ProcessTrace& trace = input.trace;
  if (trace.records.unified_memory_counters.empty()) return;
  const UnifiedMemoryReport report = AnalyzeUnifiedMemory(trace, input.index);
  const uint64_t min_ns = input.options.min_wait_ns;

  for (const UvmKernelFaults& k : report.gpu_faults) {
    const uint64_t lost = std::max(k.migration_ns, k.fault_ns);
    if (lost < min_ns) continue;
    Finding f = Base(trace, RuleId::kUvmGpuPageFaults, k.first_ns);
    f.device_id = k.device_id;
    f.host_duration_ns = std::max(k.kernel_ns, lost);
    f.blocked_ns = std::min(lost, f.host_duration_ns);
    UnifiedMemoryDetails d;
    d.kernel = k.kernel;
    d.fault_groups = k.fault_groups;
    d.migrated_bytes = k.migrated_bytes;
    d.migration_ns = k.migration_ns;
    d.allocation = UvmAllocationText(k.allocation);
    const std::string launches =
        k.launches == 1 ? "" : " over " + std::to_string(k.launches) + " launches";
    f.explanation = "kernel " + k.kernel + " raised " + std::to_string(k.fault_groups) +
                    " page-fault groups on GPU " + std::to_string(k.device_id) + launches;
    if (k.migrated_bytes > 0) {
      f.explanation +=
          " migrating " + FormatBytes(k.migrated_bytes) + " host→device in " + Dur(k.migration_ns);
    } else {
      f.explanation += " (the driver handled them for " + Dur(k.fault_ns) + ")";
    }
    if (!d.allocation.empty()) f.explanation += ", in " + d.allocation;
    f.explanation +=
        "; prefetch the range with cudaMemPrefetchAsync before the launch, or use device memory";
    f.details = std::move(d);
    out->push_back(std::move(f));
  }

  for (const UvmCpuFaults& c : report.cpu_faults) {
    const uint64_t span = c.last_ns - c.first_ns;
    if (c.faults < kUvmCpuFaultsMin || span < min_ns) continue;
    Finding f = Base(trace, RuleId::kUvmCpuFaults, c.first_ns);
    f.host_duration_ns = span;
    UnifiedMemoryDetails d;
    d.fault_groups = c.faults;
    d.migrations = c.migrations_to_host;
    d.migrated_bytes = c.bytes_to_host;
    d.allocation = UvmAllocationText(c.allocation);
    // The time lost is the host's: the span the CPU spent faulting on this memory.
    f.blocked_ns = span;
    f.explanation = "the CPU touched managed memory page by page: " + std::to_string(c.faults) +
                    " CPU page faults in " + Dur(span);
    if (!d.allocation.empty()) f.explanation += " on " + d.allocation;
    if (c.migrations_to_host > 0) {
      f.explanation += ", pulling " + FormatBytes(c.bytes_to_host) + " back to the host in " +
                       std::to_string(c.migrations_to_host) + " migrations (" +
                       FormatBytes(c.bytes_to_host / c.migrations_to_host) + " each)";
    }
    f.explanation +=
        "; copy the data back in one cudaMemcpy (or cudaMemPrefetchAsync to cudaCpuDeviceId) "
        "before the CPU loop, or keep the loop on the GPU";
    f.details = std::move(d);
    out->push_back(std::move(f));
  }

  for (const UvmContention& c : report.contention) {
    Finding f = Base(trace, RuleId::kUvmThrashing, c.first_ns);
    f.host_duration_ns = c.last_ns - c.first_ns;
    f.blocked_ns = f.host_duration_ns;
    if (c.kind != UvmCounterKind::kThrashing && c.processors != kUvmCpu) {
      f.device_id = c.processors;
    }
    UnifiedMemoryDetails d;
    d.event = ToString(c.kind);
    d.events = c.count;
    d.migrated_bytes = c.bytes;
    f.explanation = "the driver reported " + std::to_string(c.count) + " " + d.event +
                    (c.count == 1 ? " event" : " events") + " over " + Dur(f.host_duration_ns);
    if (c.kind == UvmCounterKind::kThrashing) {
      f.explanation += std::string(": memory migrated back and forth between ") +
                       (c.in_cpu ? "the CPU and " : "") + "the processors of mask " +
                       std::to_string(c.processors);
    }
    f.explanation +=
        "; give each processor its own data, or pin the shared range with cudaMemAdvise "
        "(SetPreferredLocation / SetAccessedBy)";
    f.details = std::move(d);
    out->push_back(std::move(f));
  }
}

}  // namespace libprof::analysis
