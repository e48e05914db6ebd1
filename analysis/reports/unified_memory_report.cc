#include "analysis/reports/unified_memory_report.h"

#include "analysis/model/units.h"
#include "analysis/reports/table_renderer.h"

namespace libprof::analysis {
namespace {

std::string Duration(uint64_t ns) { return FormatDuration(static_cast<double>(ns)); }

std::string Processor(uint32_t id) { return id == kUvmCpu ? "host" : std::to_string(id); }

std::string Hex(uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
  return buf;
}

std::string ContentionWhat(const UvmContention& c) {
  std::string what = ToString(c.kind);
  if (c.in_cpu) what += " (in CPU)";
  return what;
}

}  // namespace

bool HasUnifiedMemory(const UnifiedMemoryReport& r) {
  return r.records > 0 || r.unknown_records > 0;
}

std::string UnifiedMemoryTable(const UnifiedMemoryReport& r, size_t max_width) {
  if (!HasUnifiedMemory(r)) return "";
  std::string out;
  if (!r.migrations.empty()) {
    std::vector<std::vector<std::string>> rows;
    for (const UvmMigrationRow& m : r.migrations) {
      rows.push_back({UvmDirection(m.src_device_id, m.dst_device_id), Processor(m.src_device_id),
                      Processor(m.dst_device_id), std::to_string(m.count), FormatBytes(m.bytes),
                      Duration(m.busy_ns), FormatBandwidth(m.bytes, m.busy_ns)});
    }
    out += "Unified memory migrations\n";
    out += RenderTable({{"Direction", Align::kLeft},
                        {"From", Align::kRight},
                        {"To", Align::kRight},
                        {"Migrations", Align::kRight},
                        {"Bytes", Align::kRight},
                        {"Time", Align::kRight},
                        {"Bandwidth", Align::kRight}},
                       rows, max_width);
  }
  if (!r.gpu_faults.empty()) {
    std::vector<std::vector<std::string>> rows;
    for (const UvmKernelFaults& f : r.gpu_faults) {
      rows.push_back({f.kernel, std::to_string(f.device_id), std::to_string(f.launches),
                      std::to_string(f.fault_groups), Duration(f.fault_ns),
                      f.migrated_bytes == 0 ? "" : FormatBytes(f.migrated_bytes),
                      f.migrated_bytes == 0 ? "" : Duration(f.migration_ns),
                      UvmAllocationText(f.allocation)});
    }
    out += "GPU page-fault groups by kernel\n";
    out += RenderTable({{"Kernel", Align::kLeft, true, 16},
                        {"Device", Align::kRight},
                        {"Launches", Align::kRight},
                        {"Fault groups", Align::kRight},
                        {"Fault time", Align::kRight},
                        {"Migrated in", Align::kRight},
                        {"Migration time", Align::kRight},
                        {"Allocation", Align::kLeft, true, 16}},
                       rows, max_width);
  }
  if (!r.cpu_faults.empty()) {
    std::vector<std::vector<std::string>> rows;
    for (const UvmCpuFaults& f : r.cpu_faults) {
      const std::string alloc = UvmAllocationText(f.allocation);
      rows.push_back({alloc.empty() ? "(no recorded allocation)" : alloc, std::to_string(f.faults),
                      Duration(f.last_ns - f.first_ns), std::to_string(f.migrations_to_host),
                      f.bytes_to_host == 0 ? "" : FormatBytes(f.bytes_to_host)});
    }
    out += "CPU page faults by allocation\n";
    out += RenderTable({{"Allocation", Align::kLeft, true, 16},
                        {"Faults", Align::kRight},
                        {"Span", Align::kRight},
                        {"Migrations to host", Align::kRight},
                        {"Bytes to host", Align::kRight}},
                       rows, max_width);
  }
  if (!r.contention.empty()) {
    std::vector<std::vector<std::string>> rows;
    for (const UvmContention& c : r.contention) {
      rows.push_back(
          {ContentionWhat(c),
           c.kind == UvmCounterKind::kThrashing ? Hex(c.processors) : Processor(c.processors),
           std::to_string(c.count), c.bytes == 0 ? "" : FormatBytes(c.bytes),
           Duration(c.last_ns - c.first_ns)});
    }
    out += "Thrashing, throttling and remote maps\n";
    out += RenderTable({{"Event", Align::kLeft},
                        {"Processors", Align::kRight},
                        {"Count", Align::kRight},
                        {"Bytes", Align::kRight},
                        {"Span", Align::kRight}},
                       rows, max_width);
  }
  if (r.records == 0) out += "No unified-memory records of a known kind.\n";
  out +=
      "Unified memory: migrations by direction, Time = union of their spans; fault groups are\n"
      "attributed to the kernel running on the faulting device (Migrated in: migrations to it\n"
      "during those launches); Allocation: the one the first faulting address lies in.\n"
      "Counts are lower bounds: the driver drops the events CUPTI does not take in time, and\n"
      "nobody counts them (a fault-heavy kernel on an H100 lost up to 8% of its migrations).\n";
  return out;
}

std::string UnifiedMemoryCsvRows(const UnifiedMemoryReport& r) {
  std::string out;
  const std::string pid = std::to_string(r.pid);
  for (const UvmMigrationRow& m : r.migrations) {
    auto line = [&](const char* what, uint64_t v) {
      out +=
          CsvLine({"uvm_migration", pid, UvmDirection(m.src_device_id, m.dst_device_id), "managed",
                   Processor(m.dst_device_id), std::to_string(m.bytes), what, std::to_string(v)});
    };
    line("count", m.count);
    line("busy_ns", m.busy_ns);
  }
  for (const UvmKernelFaults& f : r.gpu_faults) {
    auto line = [&](const char* what, uint64_t v) {
      out += CsvLine({"uvm_gpu_faults", pid, f.kernel, "managed", std::to_string(f.device_id),
                      std::to_string(f.migrated_bytes), what, std::to_string(v)});
    };
    line("launches", f.launches);
    line("fault_groups", f.fault_groups);
    line("fault_ns", f.fault_ns);
    line("migration_ns", f.migration_ns);
  }
  for (const UvmCpuFaults& f : r.cpu_faults) {
    auto line = [&](const char* what, uint64_t v) {
      out += CsvLine({"uvm_cpu_faults", pid, f.allocation.api, "managed", "host",
                      std::to_string(f.allocation.bytes), what, std::to_string(v)});
    };
    line("faults", f.faults);
    line("span_ns", f.last_ns - f.first_ns);
    line("bytes_to_host", f.bytes_to_host);
  }
  for (const UvmContention& c : r.contention) {
    out +=
        CsvLine({"uvm_contention", pid, ContentionWhat(c), "managed", std::to_string(c.processors),
                 std::to_string(c.bytes), "count", std::to_string(c.count)});
  }
  return out;
}

void UnifiedMemoryJson(const UnifiedMemoryReport& r, JsonWriter& j) {
  if (!HasUnifiedMemory(r)) return;
  auto processor = [&](std::string_view key, uint32_t id) -> JsonWriter& {
    j.Key(key);
    return id == kUvmCpu ? j.String("host") : j.Uint(id);
  };
  j.Key("unified_memory").BeginObject().Field("records", r.records);
  j.Key("migrations").BeginArray();
  for (const UvmMigrationRow& m : r.migrations) {
    j.BeginObject().Field("direction", UvmDirection(m.src_device_id, m.dst_device_id));
    processor("from", m.src_device_id);
    processor("to", m.dst_device_id);
    j.Field("count", m.count)
        .Field("bytes", m.bytes)
        .Field("busy_ns", m.busy_ns)
        .Field("bandwidth_gbps", m.bandwidth_gbps())
        .EndObject();
  }
  auto allocation = [&](const UvmAllocation& a) {
    j.Key("allocation");
    if (!a.known) {
      j.Null();
      return;
    }
    j.BeginObject()
        .Field("address", a.address)
        .Field("bytes", a.bytes)
        .Field("api", a.api)
        .Field("call_site", a.call_site)
        .EndObject();
  };
  j.EndArray().Key("gpu_faults").BeginArray();
  for (const UvmKernelFaults& f : r.gpu_faults) {
    j.BeginObject()
        .Field("kernel", f.kernel)
        .Field("device_id", f.device_id)
        .Field("launches", f.launches)
        .Field("fault_records", f.fault_records)
        .Field("fault_groups", f.fault_groups)
        .Field("fault_ns", f.fault_ns)
        .Field("migrated_bytes", f.migrated_bytes)
        .Field("migration_ns", f.migration_ns)
        .Field("kernel_ns", f.kernel_ns);
    allocation(f.allocation);
    j.EndObject();
  }
  j.EndArray().Key("cpu_faults").BeginArray();
  for (const UvmCpuFaults& f : r.cpu_faults) {
    j.BeginObject()
        .Field("faults", f.faults)
        .Field("span_ns", f.last_ns - f.first_ns)
        .Field("migrations_to_host", f.migrations_to_host)
        .Field("bytes_to_host", f.bytes_to_host);
    allocation(f.allocation);
    j.EndObject();
  }
  j.EndArray().Key("contention").BeginArray();
  for (const UvmContention& c : r.contention) {
    j.BeginObject()
        .Field("kind", ToString(c.kind))
        .Field("processors", c.processors)
        .Field("in_cpu", c.in_cpu)
        .Field("count", c.count)
        .Field("bytes", c.bytes)
        .Field("span_ns", c.last_ns - c.first_ns)
        .EndObject();
  }
  j.EndArray().Field("unknown_records", r.unknown_records).EndObject();
}

}  // namespace libprof::analysis
