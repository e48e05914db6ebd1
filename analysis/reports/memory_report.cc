#include "analysis/reports/memory_report.h"

#include "analysis/reports/formats.h"
#include "analysis/reports/memory_pools_report.h"
#include "analysis/reports/memory_timeline_report.h"
#include "analysis/reports/unified_memory_report.h"
#include "analysis/reports/table_renderer.h"
#include "analysis/model/units.h"

namespace libprof::analysis {
namespace {

std::string Duration(uint64_t ns) { return FormatDuration(static_cast<double>(ns)); }
std::string Mean(uint64_t total, uint64_t n) {
  return n == 0 ? "" : FormatDuration(static_cast<double>(total) / static_cast<double>(n));
}

// "12 (1.5 ms)": calls that waited for earlier device work and the summed wait; "" for none.
std::string Syncs(uint64_t count, uint64_t wait_ns) {
  return count == 0 ? "" : std::to_string(count) + " (" + Duration(wait_ns) + ")";
}

std::string NvtxPath(const std::vector<std::string>& ranges) {
  std::string path;
  for (const std::string& n : ranges) path += (path.empty() ? "" : " › ") + n;
  return path;
}

std::string Block(const MemoryReport& r, size_t max_width) {
  std::string out;
  if (r.apis.empty()) return "No allocation records.\n";
  std::vector<std::vector<std::string>> rows;
  for (const MemoryApiStats& s : r.apis) {
    rows.push_back(
        {s.api, ToString(s.kind), std::to_string(s.allocations),
         s.allocations == 0 ? "" : FormatBytes(s.allocated_bytes), std::to_string(s.releases),
         s.releases == 0 ? "" : FormatBytes(s.released_bytes), std::to_string(s.calls),
         Duration(s.host_ns), Mean(s.host_ns, s.calls), Syncs(s.implicit_syncs, s.sync_wait_ns)});
  }
  out += "Allocations and frees by API\n";
  out += RenderTable({{"API", Align::kLeft, true, 12, FitName},
                      {"Memory", Align::kLeft},
                      {"Allocs", Align::kRight},
                      {"Allocated", Align::kRight},
                      {"Frees", Align::kRight},
                      {"Freed", Align::kRight},
                      {"Calls", Align::kRight},
                      {"Host time", Align::kRight},
                      {"Mean", Align::kRight},
                      {"Implicit syncs", Align::kRight}},
                     rows, max_width);
  if (r.devices.empty()) {
    out += "No device memory allocations.\n";
  } else {
    out += "Device memory in use\n";
    // The NVTX column only when some peak happened inside a range.
    bool nvtx = false;
    for (const DeviceMemoryPeak& d : r.devices) nvtx = nvtx || !d.nvtx.empty();
    std::vector<std::vector<std::string>> dev;
    for (const DeviceMemoryPeak& d : r.devices) {
      dev.push_back({std::to_string(d.device_id), FormatBytes(d.peak_bytes),
                     Duration(d.peak_time_ns), d.api, std::to_string(d.correlation_id),
                     std::to_string(d.thread_id), FormatBytes(d.end_bytes),
                     std::to_string(d.unmatched_releases)});
      if (nvtx) dev.back().insert(dev.back().begin() + 6, NvtxPath(d.nvtx));
    }
    std::vector<TableColumn> columns = {
        {"GPU", Align::kRight},         {"Peak", Align::kRight},
        {"At", Align::kRight},          {"By", Align::kLeft, true, 12, FitName},
        {"Correlation", Align::kRight}, {"Thread", Align::kRight},
        {"At end", Align::kRight},      {"Unmatched frees", Align::kRight}};
    if (nvtx) columns.insert(columns.begin() + 6, {"In NVTX", Align::kLeft, true, 8});
    out += RenderTable(columns, dev, max_width);
  }
  if (r.churn.empty()) {
    out += "No allocation churn (no size allocated and freed twice by the same API).\n";
  } else {
    out += "Allocation churn (same API and size allocated and freed repeatedly)\n";
    std::vector<std::vector<std::string>> ch;
    for (const ChurnGroup& g : r.churn) {
      ch.push_back({g.api, g.free_api, FormatBytes(g.bytes), std::to_string(g.pairs),
                    Duration(g.host_ns), Mean(g.host_ns, g.pairs),
                    Syncs(g.implicit_syncs, g.sync_wait_ns)});
    }
    out += RenderTable({{"Allocated by", Align::kLeft, true, 12, FitName},
                        {"Freed by", Align::kLeft, true, 12, FitName},
                        {"Size", Align::kRight},
                        {"Pairs", Align::kRight},
                        {"Host time", Align::kRight},
                        {"Per pair", Align::kRight},
                        {"Implicit syncs", Align::kRight}},
                       ch, max_width);
  }
  return out;
}

}  // namespace

std::string MemoryTable(const std::vector<MemoryReport>& reports, size_t max_width) {
  std::string out;
  for (const MemoryReport& r : reports) {
    if (reports.size() > 1) {
      out += "Process " + std::to_string(r.pid) + " (" + r.file + ")\n";
    }
    out += Block(r, max_width);
    if (reports.size() > 1) out += "\n";
  }
  out +=
      "Host time: summed duration of the distinct API calls of the row. Device memory in use:\n"
      "device-kind allocations minus the frees matched to them by address; At: time from the\n"
      "trace start. Churn pairs: allocations later freed at the same address, by allocating API\n"
      "and size; host time of both calls. Implicit syncs: calls (cudaMalloc, cudaFree, ...) that\n"
      "waited for earlier device work, and that wait (see profview memory --help).\n";
  return out;
}

std::string MemoryCsv(const std::vector<MemoryReport>& reports) {
  std::string out =
      CsvLine({"section", "pid", "api", "memory_kind", "device_id", "bytes", "what", "value"});
  for (const MemoryReport& r : reports) {
    const std::string pid = std::to_string(r.pid);
    for (const MemoryApiStats& s : r.apis) {
      auto line = [&](const char* what, uint64_t v) {
        out += CsvLine({"api", pid, s.api, ToString(s.kind), "", "", what, std::to_string(v)});
      };
      line("allocations", s.allocations);
      line("allocated_bytes", s.allocated_bytes);
      line("releases", s.releases);
      line("released_bytes", s.released_bytes);
      line("calls", s.calls);
      line("host_ns", s.host_ns);
      line("implicit_syncs", s.implicit_syncs);
      line("sync_wait_ns", s.sync_wait_ns);
    }
    for (const DeviceMemoryPeak& d : r.devices) {
      auto line = [&](const char* what, const std::string& v) {
        out += CsvLine({"device", pid, d.api, "device", std::to_string(d.device_id), "", what, v});
      };
      line("peak_bytes", std::to_string(d.peak_bytes));
      line("peak_time_ns", std::to_string(d.peak_time_ns));
      line("peak_correlation_id", std::to_string(d.correlation_id));
      line("peak_thread_id", std::to_string(d.thread_id));
      line("peak_nvtx", NvtxPath(d.nvtx));
      line("end_bytes", std::to_string(d.end_bytes));
      line("unmatched_releases", std::to_string(d.unmatched_releases));
    }
    for (const ChurnGroup& g : r.churn) {
      auto line = [&](const char* what, uint64_t v) {
        out += CsvLine(
            {"churn", pid, g.api, "", "", std::to_string(g.bytes), what, std::to_string(v)});
      };
      line("pairs", g.pairs);
      line("host_ns", g.host_ns);
      line("implicit_syncs", g.implicit_syncs);
      line("sync_wait_ns", g.sync_wait_ns);
    }
  }
  return out;
}

std::string MemoryJson(const std::vector<MemoryReport>& reports,
                       const std::vector<UnifiedMemoryReport>* unified,
                       const std::vector<MemoryTimeline>* timelines,
                       const std::vector<MemoryPoolReport>* pools) {
  JsonWriter j;
  j.BeginObject().Key("processes").BeginArray();
  for (size_t i = 0; i < reports.size(); ++i) {
    const MemoryReport& r = reports[i];
    j.BeginObject().Field("pid", r.pid).Field("file", r.file);
    j.Key("apis").BeginArray();
    for (const MemoryApiStats& s : r.apis) {
      j.BeginObject()
          .Field("api", s.api)
          .Field("memory_kind", ToString(s.kind))
          .Field("allocations", s.allocations)
          .Field("allocated_bytes", s.allocated_bytes)
          .Field("releases", s.releases)
          .Field("released_bytes", s.released_bytes)
          .Field("calls", s.calls)
          .Field("host_ns", s.host_ns)
          .Field("implicit_syncs", s.implicit_syncs)
          .Field("sync_wait_ns", s.sync_wait_ns)
          .EndObject();
    }
    j.EndArray().Key("devices").BeginArray();
    for (const DeviceMemoryPeak& d : r.devices) {
      j.BeginObject()
          .Field("device_id", d.device_id)
          .Field("peak_bytes", d.peak_bytes)
          .Field("peak_time_ns", d.peak_time_ns)
          .Field("peak_api", d.api)
          .Field("peak_correlation_id", d.correlation_id)
          .Field("peak_thread_id", d.thread_id);
      j.Key("peak_nvtx").BeginArray();
      for (const std::string& n : d.nvtx) j.String(n);
      j.EndArray()
          .Field("end_bytes", d.end_bytes)
          .Field("unmatched_releases", d.unmatched_releases)
          .EndObject();
    }
    j.EndArray().Key("churn").BeginArray();
    for (const ChurnGroup& g : r.churn) {
      j.BeginObject()
          .Field("api", g.api)
          .Field("free_api", g.free_api)
          .Field("bytes", g.bytes)
          .Field("pairs", g.pairs)
          .Field("host_ns", g.host_ns)
          .Field("first_pair_host_ns", g.first_pair_host_ns)
          .Field("implicit_syncs", g.implicit_syncs)
          .Field("sync_wait_ns", g.sync_wait_ns)
          .EndObject();
    }
    j.EndArray();
    if (timelines != nullptr && i < timelines->size() && !(*timelines)[i].failed.empty()) {
      FailedAllocationsJson((*timelines)[i], j);
    }
    if (pools != nullptr && i < pools->size()) MemoryPoolsJson((*pools)[i], j);
    if (unified != nullptr && i < unified->size()) UnifiedMemoryJson((*unified)[i], j);
    j.EndObject();
  }
  j.EndArray().EndObject();
  return j.str();
}

}  // namespace libprof::analysis
