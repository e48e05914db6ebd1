#include "analysis/reports/memory_pools_report.h"

#include <cinttypes>
#include <cstdio>
#include <tuple>
#include <vector>

#include "analysis/model/units.h"
#include "analysis/reports/table_renderer.h"

namespace libprof::analysis {
namespace {

std::string Hex(uint64_t v) {
  char text[24];
  std::snprintf(text, sizeof text, "0x%" PRIx64, v);
  return text;
}

std::string PoolType(uint32_t type) {
  if (type == kPoolTypeLocal) return "local";
  if (type == kPoolTypeImported) return "imported";
  return "type " + std::to_string(type);
}

// A local pool's threshold for people: UINT64_MAX keeps everything.
std::string Threshold(const MemoryPoolStats& p) {
  if (!p.details) return "";
  std::string text = p.release_threshold == UINT64_MAX ? "none (keeps all)"
                                                        : FormatBytes(p.release_threshold);
  return p.threshold_changed ? text + " (changed)" : text;
}

}  // namespace

std::string MemoryPoolsTable(const MemoryPoolReport& r, size_t max_width) {
  if (r.pools.empty()) return "";
  std::string out = "Memory pools (stream-ordered allocations): " +
                    std::to_string(r.pooled_allocations) + " pooled allocations, " +
                    FormatBytes(r.pooled_bytes) + "; " + std::to_string(r.direct_allocations) +
                    " direct, " + FormatBytes(r.direct_bytes) + "\n";
  std::vector<std::vector<std::string>> rows;
  bool returns_memory = false;
  for (const MemoryPoolStats& p : r.pools) {
    const bool local = p.details;
    returns_memory = returns_memory || (local && p.release_threshold == 0);
    rows.push_back({std::to_string(p.device_id), Hex(p.pool_address), PoolType(p.pool_type),
                    std::to_string(p.allocations), FormatBytes(p.allocated_bytes),
                    std::to_string(p.releases), Threshold(p),
                    local ? FormatBytes(p.peak_pool_bytes) : "",
                    local ? FormatBytes(p.peak_used_bytes) : ""});
  }
  // Release threshold, Largest and Most in use: local pools, recorded by libprof since
  // 2026-11-24 (empty otherwise).
  out += RenderTable({{"GPU", Align::kRight},
                      {"Pool", Align::kLeft},
                      {"Type", Align::kLeft},
                      {"Allocs", Align::kRight},
                      {"Allocated", Align::kRight},
                      {"Frees", Align::kRight},
                      {"Release threshold", Align::kRight},
                      {"Largest", Align::kRight},
                      {"Most in use", Align::kRight}},
                     rows, max_width);
  if (returns_memory) {
    out +=
        "Release threshold 0 B (CUDA's default): the pool gives its free memory back at every\n"
        "synchronisation and maps it again at the next allocation; raise it with\n"
        "cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, ...) to keep it.\n";
  }
  return out;
}

std::string MemoryPoolsCsvRows(const MemoryPoolReport& r) {
  std::string out;
  if (r.pools.empty()) return out;
  const std::string pid = std::to_string(r.pid);
  for (const MemoryPoolStats& p : r.pools) {
    auto line = [&](const char* what, uint64_t v) {
      out += CsvLine({"pool", pid, Hex(p.pool_address), PoolType(p.pool_type),
                      std::to_string(p.device_id), std::to_string(p.release_threshold), what,
                      std::to_string(v)});
    };
    line("allocations", p.allocations);
    line("allocated_bytes", p.allocated_bytes);
    line("releases", p.releases);
    line("released_bytes", p.released_bytes);
    line("release_threshold_changed", p.threshold_changed ? 1 : 0);
    line("peak_pool_bytes", p.peak_pool_bytes);
    line("peak_used_bytes", p.peak_used_bytes);
  }
  for (const auto& [source, count, bytes] :
       {std::tuple{"pooled", r.pooled_allocations, r.pooled_bytes},
        std::tuple{"direct", r.direct_allocations, r.direct_bytes}}) {
    out += CsvLine({"allocation_source", pid, source, "", "", "", "allocations",
                    std::to_string(count)});
    out += CsvLine({"allocation_source", pid, source, "", "", "", "allocated_bytes",
                    std::to_string(bytes)});
  }
  return out;
}

void MemoryPoolsJson(const MemoryPoolReport& r, JsonWriter& j) {
  if (r.pools.empty()) return;
  j.Key("memory_pools").BeginObject();
  j.Field("pooled_allocations", r.pooled_allocations)
      .Field("pooled_bytes", r.pooled_bytes)
      .Field("direct_allocations", r.direct_allocations)
      .Field("direct_bytes", r.direct_bytes);
  j.Key("pools").BeginArray();
  for (const MemoryPoolStats& p : r.pools) {
    j.BeginObject()
        .Field("device_id", p.device_id)
        .Field("pool_address", p.pool_address)
        .Field("pool_type", PoolType(p.pool_type))
        .Field("allocations", p.allocations)
        .Field("allocated_bytes", p.allocated_bytes)
        .Field("releases", p.releases)
        .Field("released_bytes", p.released_bytes)
        .Field("release_threshold", p.release_threshold)
        .Field("release_threshold_changed", p.threshold_changed)
        .Field("peak_pool_bytes", p.peak_pool_bytes)
        .Field("peak_used_bytes", p.peak_used_bytes)
        .EndObject();
  }
  j.EndArray().EndObject();
}

}  // namespace libprof::analysis
