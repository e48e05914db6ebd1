#include "analysis/metrics/unified_memory.h"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>
#include <unordered_map>

#include "analysis/model/call_sites.h"
#include "analysis/model/intervals.h"
#include "analysis/model/units.h"

namespace libprof::analysis {
namespace {

bool IsMigration(UvmCounterKind k) {
  return k == UvmCounterKind::kBytesHtoD || k == UvmCounterKind::kBytesDtoH ||
         k == UvmCounterKind::kBytesDtoD;
}

bool InAnyWindow(const std::vector<Interval>& windows, uint64_t t) {
  for (const Interval& w : windows) {
    if (t >= w.start_ns && t < w.end_ns) return true;
  }
  return windows.empty();
}

// The allocations of the process by address, each with its lifetime, to find the one a faulting
// address lies in.
class AllocationMap {
 public:
  AllocationMap(const ProcessTrace& trace, const TraceIndex& index) : trace_(trace), index_(index) {
    std::unordered_map<uint64_t, size_t> live;  // address -> entry
    std::vector<const MemoryOp*> ops;
    for (const MemoryOp& op : trace.records.memory_ops) ops.push_back(&op);
    std::stable_sort(ops.begin(), ops.end(),
                     [](const MemoryOp* a, const MemoryOp* b) { return a->time_ns < b->time_ns; });
    for (const MemoryOp* op : ops) {
      if (op->operation == MemoryOperation::kAllocation && op->bytes > 0) {
        live[op->address] = entries_.size();
        entries_.push_back({op, UINT64_MAX});
      } else if (op->operation == MemoryOperation::kRelease) {
        if (auto it = live.find(op->address); it != live.end()) {
          entries_[it->second].released_ns = op->time_ns;
          live.erase(it);
        }
      }
    }
    for (size_t i = 0; i < entries_.size(); ++i) by_address_[entries_[i].op->address].push_back(i);
  }

  // The allocation containing `address` at time `t`: live then, else the latest one before.
  UvmAllocation Find(uint64_t address, uint64_t t) {
    auto it = by_address_.upper_bound(address);
    if (it == by_address_.begin()) return {};
    --it;
    const Entry* best = nullptr;
    for (size_t i : it->second) {
      const Entry& e = entries_[i];
      if (address >= e.op->address + e.op->bytes) continue;
      if (e.op->time_ns <= t || best == nullptr) best = &e;
      if (e.op->time_ns <= t && t < e.released_ns) break;
    }
    if (best == nullptr) return {};
    UvmAllocation a;
    a.known = true;
    a.address = best->op->address;
    a.bytes = best->op->bytes;
    a.time_ns = best->op->time_ns;
    const int64_t call = index_.LaunchingCall(best->op->correlation_id);
    if (call >= 0) {
      const ApiCall& c = index_.records().api_calls[static_cast<size_t>(call)];
      a.api = index_.ApiName(c);
      if (c.stack_id != 0) {
        if (!sites_) sites_.emplace(trace_);
        a.call_site = sites_->Of(c.stack_id).Text();
      }
    }
    return a;
  }

 private:
  struct Entry {
    const MemoryOp* op;
    uint64_t released_ns;
  };
  const ProcessTrace& trace_;
  const TraceIndex& index_;
  std::vector<Entry> entries_;
  std::map<uint64_t, std::vector<size_t>> by_address_;
  std::optional<CallSites> sites_;
};

// The kernels of each device, by start, and the one running on a device at a time.
class KernelsByDevice {
 public:
  explicit KernelsByDevice(const TraceIndex& index) {
    const std::vector<DeviceOp>& ops = index.device_ops();
    for (uint32_t i = 0; i < ops.size(); ++i) {
      if (ops[i].kind == DeviceOpKind::kKernel) kernels_[ops[i].device_id].push_back(i);
    }
    ops_ = &ops;
  }
  // Index into device_ops() of the kernel running on `device` at `t` (the latest started of
  // those running), or -1.
  int64_t At(uint32_t device, uint64_t t) const {
    auto it = kernels_.find(device);
    if (it == kernels_.end()) return -1;
    const std::vector<uint32_t>& list = it->second;
    auto after = std::upper_bound(list.begin(), list.end(), t, [&](uint64_t time, uint32_t i) {
      return time < (*ops_)[i].start_ns;
    });
    // device_ops() is sorted by start; a few steps back suffice unless kernels overlap widely.
    size_t steps = 0;
    for (auto k = after; k != list.begin() && steps < 64; ++steps) {
      --k;
      if ((*ops_)[*k].end_ns >= t) return *k;
    }
    return -1;
  }

 private:
  std::unordered_map<uint32_t, std::vector<uint32_t>> kernels_;
  const std::vector<DeviceOp>* ops_ = nullptr;
};

struct LaunchFaults {
  uint64_t records = 0, groups = 0;
  std::vector<Interval> faults, migrations;
  uint64_t migrated_bytes = 0;
  uint64_t first_ns = UINT64_MAX;
  uint64_t first_address = 0;
};

}  // namespace

std::pair<uint32_t, uint32_t> UvmProcessors(const UnifiedMemoryCounter& u) {
  switch (u.counter_kind) {
    case UvmCounterKind::kBytesHtoD:
      return {kUvmCpu, u.dst_device_id};
    case UvmCounterKind::kBytesDtoH:
      return {u.src_device_id, kUvmCpu};
    default:
      return {u.src_device_id, u.dst_device_id};
  }
}

std::string UvmDirection(uint32_t src, uint32_t dst) {
  auto name = [](uint32_t id) {
    return id == kUvmCpu ? std::string("host") : "device " + std::to_string(id);
  };
  if (src == kUvmCpu) return "host → " + (dst == kUvmCpu ? "host" : std::string("device"));
  if (dst == kUvmCpu) return "device → host";
  return name(src) + " → " + name(dst);
}

UnifiedMemoryReport AnalyzeUnifiedMemory(const ProcessTrace& trace) {
  const TraceIndex index(trace);
  return AnalyzeUnifiedMemory(trace, index);
}

UnifiedMemoryReport AnalyzeUnifiedMemory(const ProcessTrace& trace, const TraceIndex& index) {
  UnifiedMemoryReport report;
  report.pid = trace.header.pid;
  report.file = trace.path;
  const std::vector<UnifiedMemoryCounter>& all = trace.records.unified_memory_counters;
  if (all.empty()) return report;

  std::vector<const UnifiedMemoryCounter*> records;
  std::set<uint32_t> unknown;
  for (const UnifiedMemoryCounter& u : all) {
    if (!InAnyWindow(trace.windows, u.start_ns)) continue;
    if (!IsKnown(u.counter_kind)) {
      ++report.unknown_records;
      unknown.insert(static_cast<uint32_t>(u.counter_kind));
      continue;
    }
    records.push_back(&u);
  }
  report.unknown_kinds.assign(unknown.begin(), unknown.end());
  report.records = records.size();
  std::stable_sort(records.begin(), records.end(),
                   [](const auto* a, const auto* b) { return a->start_ns < b->start_ns; });

  AllocationMap allocations(trace, index);
  const KernelsByDevice kernels(index);
  std::map<std::tuple<uint32_t, uint32_t, uint32_t>,
           std::pair<UvmMigrationRow, std::vector<Interval>>>
      migrations;
  std::map<int64_t, LaunchFaults> launches;  // device op index (-1 - device: between kernels)
  std::map<std::tuple<uint32_t, uint32_t, bool>, UvmContention> contention;
  std::vector<const UnifiedMemoryCounter*> cpu_faults, to_host;

  for (const UnifiedMemoryCounter* u : records) {
    const UvmCounterKind kind = u->counter_kind;
    if (IsMigration(kind)) {
      const auto [src, dst] = UvmProcessors(*u);
      auto& [row, spans] = migrations[{static_cast<uint32_t>(kind), src, dst}];
      row.kind = kind;
      row.src_device_id = src;
      row.dst_device_id = dst;
      ++row.count;
      row.bytes += u->value;
      spans.push_back({u->start_ns, u->end_ns});
      if (dst == kUvmCpu) {
        to_host.push_back(u);
      } else {
        const int64_t k = kernels.At(dst, u->start_ns);
        if (k >= 0) {
          LaunchFaults& l = launches[k];
          l.migrated_bytes += u->value;
          l.migrations.push_back({u->start_ns, u->end_ns});
        }
      }
    } else if (kind == UvmCounterKind::kGpuPageFault) {
      const int64_t k = kernels.At(u->src_device_id, u->start_ns);
      LaunchFaults& l = launches[k >= 0 ? k : -1 - static_cast<int64_t>(u->src_device_id)];
      ++l.records;
      l.groups += u->value;
      l.faults.push_back({u->start_ns, u->end_ns});
      if (u->start_ns < l.first_ns) {
        l.first_ns = u->start_ns;
        l.first_address = u->address;
      }
    } else if (kind == UvmCounterKind::kCpuPageFault) {
      cpu_faults.push_back(u);
    } else {
      const bool in_cpu =
          (kind == UvmCounterKind::kThrashing || kind == UvmCounterKind::kThrottling) &&
          (u->flags & 1u) != 0;
      UvmContention& c = contention[{static_cast<uint32_t>(kind), u->src_device_id, in_cpu}];
      if (c.count == 0) c.first_ns = u->start_ns;
      c.kind = kind;
      c.processors = u->src_device_id;
      c.in_cpu = in_cpu;
      ++c.count;
      if (kind != UvmCounterKind::kThrottling) c.bytes += u->value;
      c.last_ns = std::max(c.last_ns, u->end_ns);
    }
  }

  for (auto& [key, entry] : migrations) {
    entry.first.busy_ns = UnionLength(std::move(entry.second));
    report.migrations.push_back(entry.first);
  }

  // Launches with fault groups, grouped by kernel name and device.
  const std::vector<DeviceOp>& ops = index.device_ops();
  std::map<std::pair<std::string, uint32_t>, UvmKernelFaults> by_kernel;
  std::map<std::pair<std::string, uint32_t>,
           std::pair<std::vector<Interval>, std::vector<Interval>>>
      spans;
  for (auto& [k, l] : launches) {
    if (l.records == 0) continue;
    const bool between = k < 0;
    const uint32_t device = between ? static_cast<uint32_t>(-1 - k) : ops[k].device_id;
    const std::string name = between ? "[between kernels]" : index.OpName(ops[k]);
    UvmKernelFaults& f = by_kernel[{name, device}];
    f.kernel = name;
    f.device_id = device;
    ++f.launches;
    f.fault_records += l.records;
    f.fault_groups += l.groups;
    f.migrated_bytes += l.migrated_bytes;
    if (!between) f.kernel_ns += ops[k].duration();
    if (f.first_ns == 0 || l.first_ns < f.first_ns) {
      f.first_ns = l.first_ns;
      f.allocation = allocations.Find(l.first_address, l.first_ns);
    }
    auto& [faults, moves] = spans[{name, device}];
    faults.insert(faults.end(), l.faults.begin(), l.faults.end());
    moves.insert(moves.end(), l.migrations.begin(), l.migrations.end());
  }
  for (auto& [key, f] : by_kernel) {
    f.fault_ns = UnionLength(std::move(spans[key].first));
    f.migration_ns = UnionLength(std::move(spans[key].second));
    report.gpu_faults.push_back(std::move(f));
  }
  std::stable_sort(report.gpu_faults.begin(), report.gpu_faults.end(),
                   [](const auto& a, const auto& b) { return a.fault_groups > b.fault_groups; });

  // CPU faults by allocation; each migration to the host counts for the CPU fault just before it
  // (within kFaultServiceNs), whose allocation it then belongs to.
  using AllocationKey = std::pair<uint64_t, uint64_t>;  // address, allocation time
  std::map<AllocationKey, UvmCpuFaults> by_allocation;
  std::vector<AllocationKey> fault_allocation;  // per CPU fault (in start order): its group
  for (const UnifiedMemoryCounter* u : cpu_faults) {
    UvmAllocation a = allocations.Find(u->address, u->start_ns);
    const AllocationKey key = a.known ? AllocationKey{a.address, a.time_ns} : AllocationKey{};
    UvmCpuFaults& f = by_allocation[key];
    if (f.faults == 0) {
      f.allocation = std::move(a);
      f.first_ns = u->start_ns;
    }
    ++f.faults;
    f.last_ns = std::max(f.last_ns, u->start_ns);
    fault_allocation.push_back(key);
  }
  for (const UnifiedMemoryCounter* m : to_host) {
    auto after = std::upper_bound(cpu_faults.begin(), cpu_faults.end(), m->start_ns,
                                  [](uint64_t t, const auto* f) { return t < f->start_ns; });
    if (after == cpu_faults.begin()) continue;
    const size_t i = static_cast<size_t>(after - cpu_faults.begin()) - 1;
    if (m->start_ns - cpu_faults[i]->start_ns > kFaultServiceNs) continue;
    UvmCpuFaults& f = by_allocation[fault_allocation[i]];
    ++f.migrations_to_host;
    f.bytes_to_host += m->value;
  }
  for (auto& [key, f] : by_allocation) report.cpu_faults.push_back(std::move(f));
  std::stable_sort(report.cpu_faults.begin(), report.cpu_faults.end(),
                   [](const auto& a, const auto& b) { return a.faults > b.faults; });
  for (auto& [key, c] : contention) report.contention.push_back(c);
  return report;
}

std::string UnknownUvmWarning(const UnifiedMemoryReport& report) {
  if (report.unknown_records == 0) return "";
  std::string kinds;
  for (uint32_t k : report.unknown_kinds) {
    kinds += (kinds.empty() ? "" : ", ") + std::to_string(k);
  }
  return std::to_string(report.unknown_records) +
         " unified-memory records of unknown counter kind" +
         (report.unknown_kinds.size() > 1 ? "s " : " ") + kinds +
         " skipped (written by a newer libprof)";
}

std::vector<UvmMigrationSeries> UvmMigrationsOverTime(const TraceRecords& records) {
  // Keyed like the report's rows: counter kind, then source and destination.
  std::map<std::tuple<uint32_t, uint32_t, uint32_t>, std::vector<const UnifiedMemoryCounter*>>
      by_direction;
  for (const UnifiedMemoryCounter& u : records.unified_memory_counters) {
    if (!IsMigration(u.counter_kind)) continue;
    const auto [src, dst] = UvmProcessors(u);
    by_direction[{static_cast<uint32_t>(u.counter_kind), src, dst}].push_back(&u);
  }
  std::vector<UvmMigrationSeries> out;
  for (auto& [key, migrations] : by_direction) {
    std::stable_sort(migrations.begin(), migrations.end(),
                     [](const UnifiedMemoryCounter* a, const UnifiedMemoryCounter* b) {
                       return a->end_ns < b->end_ns;
                     });
    UvmMigrationSeries s;
    s.src_device_id = std::get<1>(key);
    s.dst_device_id = std::get<2>(key);
    for (const UnifiedMemoryCounter* m : migrations) {
      s.total_bytes += m->value;
      if (!s.steps.empty() && s.steps.back().time_ns == m->end_ns) {
        s.steps.back().bytes = s.total_bytes;
      } else {
        s.steps.push_back({m->end_ns, s.total_bytes});
      }
    }
    out.push_back(std::move(s));
  }
  return out;
}

std::string UvmAllocationText(const UvmAllocation& a) {
  if (!a.known) return "";
  std::string text =
      (a.api.empty() ? std::string("(unknown)") : a.api) + " " + FormatBytes(a.bytes);
  if (!a.call_site.empty()) text += " ← " + a.call_site;
  return text;
}

}  // namespace libprof::analysis
