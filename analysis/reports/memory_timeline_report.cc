#include "analysis/reports/memory_timeline_report.h"

#include <algorithm>

#include "analysis/model/units.h"
#include "analysis/reports/formats.h"
#include "analysis/reports/table_renderer.h"

namespace libprof::analysis {
namespace {

std::string At(uint64_t t, uint64_t origin) {
  return FormatDuration(static_cast<double>(t > origin ? t - origin : 0));
}

struct Span {
  uint64_t from, to, bytes;
};

// The steps as intervals [step, next step), the last one lasting to the trace end.
std::vector<Span> Spans(const DeviceMemorySeries& d, uint64_t end_ns) {
  std::vector<Span> spans;
  for (size_t i = 0; i < d.steps.size(); ++i) {
    const uint64_t to =
        i + 1 < d.steps.size() ? d.steps[i + 1].time_ns : std::max(end_ns, d.steps[i].time_ns);
    spans.push_back({d.steps[i].time_ns, to, d.steps[i].bytes});
  }
  return spans;
}

// At most kMaxTimelineRows spans: equal shares of the timeline, each with its largest value.
std::vector<Span> Coarsen(const std::vector<Span>& spans, bool* coarsened) {
  *coarsened = spans.size() > kMaxTimelineRows;
  if (!*coarsened) return spans;
  const uint64_t first = spans.front().from, last = spans.back().to;
  const uint64_t width =
      std::max<uint64_t>(1, (last - first + kMaxTimelineRows - 1) / kMaxTimelineRows);
  std::vector<Span> out;
  size_t i = 0;
  for (uint64_t from = first; from < last && i < spans.size(); from += width) {
    const uint64_t to = std::min(last, from + width);
    uint64_t most = 0;
    // Every span overlapping [from, to).
    while (i < spans.size() && spans[i].to <= from) ++i;
    for (size_t k = i; k < spans.size() && spans[k].from < to; ++k) {
      most = std::max(most, spans[k].bytes);
    }
    out.push_back({from, to, most});
  }
  return out;
}

std::string InUseText(const FailedAllocation& f) {
  std::string text;
  for (const auto& [device, bytes] : f.in_use) {
    text += (text.empty() ? "" : ", ") + std::string("device ") + std::to_string(device) + ": " +
            FormatBytes(bytes);
  }
  return text.empty() ? "no device memory recorded" : text;
}

}  // namespace

std::string FailedAllocationsTable(const MemoryTimeline& t, size_t max_width) {
  if (t.failed.empty()) return "";
  std::vector<std::vector<std::string>> rows;
  for (const FailedAllocation& f : t.failed) {
    rows.push_back({f.api, At(f.start_ns, t.origin_ns), std::to_string(f.thread_id),
                    "out of memory (" + std::to_string(f.return_value) + ")", InUseText(f),
                    f.call_site});
  }
  return "Failed allocations\n" +
         RenderTable({{"API", Align::kLeft},
                      {"At", Align::kRight},
                      {"Thread", Align::kRight},
                      {"Error", Align::kLeft},
                      {"Device memory in use then", Align::kLeft, true, 16},
                      {"Call site", Align::kLeft, true, 12}},
                     rows, max_width);
}

std::string MemoryTimelineTable(const std::vector<MemoryTimeline>& timelines, size_t max_width) {
  std::string out;
  bool any_coarsened = false;
  for (const MemoryTimeline& t : timelines) {
    if (timelines.size() > 1) out += "Process " + std::to_string(t.pid) + " (" + t.file + ")\n";
    if (t.devices.empty()) out += "No device memory allocations.\n";
    for (const DeviceMemorySeries& d : t.devices) {
      bool coarsened = false;
      const std::vector<Span> spans = Coarsen(Spans(d, t.end_ns), &coarsened);
      any_coarsened = any_coarsened || coarsened;
      std::vector<std::vector<std::string>> rows;
      for (const Span& s : spans) {
        rows.push_back({At(s.from, t.origin_ns), At(s.to, t.origin_ns), FormatBytes(s.bytes)});
      }
      out += "Device " + std::to_string(d.device_id) + " memory in use over time (peak " +
             FormatBytes(d.peak_bytes) + ")\n";
      out += RenderTable({{"From", Align::kRight},
                          {"To", Align::kRight},
                          {coarsened ? "In use (max)" : "In use", Align::kRight}},
                         rows, max_width);
    }
    out += FailedAllocationsTable(t, max_width);
  }
  out +=
      "In use: device-kind allocations minus the frees matched to them by address (as profview\n"
      "memory's peak); From/To: time from the trace start.";
  if (any_coarsened) {
    out += " A device with more than " + std::to_string(kMaxTimelineRows) +
           " changes is shown in\nequal spans with the largest value of each (--format json "
           "keeps every step).";
  }
  out += "\n";
  return out;
}

std::string MemoryTimelineCsv(const std::vector<MemoryTimeline>& timelines) {
  std::string out = CsvLine({"pid", "device_id", "from_ns", "to_ns", "bytes"});
  for (const MemoryTimeline& t : timelines) {
    const std::string pid = std::to_string(t.pid);
    auto rel = [&](uint64_t v) { return std::to_string(v > t.origin_ns ? v - t.origin_ns : 0); };
    for (const DeviceMemorySeries& d : t.devices) {
      for (const Span& s : Spans(d, t.end_ns)) {
        out += CsvLine(
            {pid, std::to_string(d.device_id), rel(s.from), rel(s.to), std::to_string(s.bytes)});
      }
    }
    for (const FailedAllocation& f : t.failed) {
      for (const auto& [device, bytes] : f.in_use) {
        out += CsvLine({pid, "failed:" + f.api + ":" + std::to_string(device), rel(f.start_ns),
                        rel(f.start_ns + f.duration_ns), std::to_string(bytes)});
      }
    }
  }
  return out;
}

void FailedAllocationsJson(const MemoryTimeline& t, JsonWriter& j) {
  j.Key("failed_allocations").BeginArray();
  for (const FailedAllocation& f : t.failed) {
    j.BeginObject()
        .Field("api", f.api)
        .Field("start_ns", f.start_ns > t.origin_ns ? f.start_ns - t.origin_ns : 0)
        .Field("duration_ns", f.duration_ns)
        .Field("thread_id", f.thread_id)
        .Field("return_value", static_cast<int64_t>(f.return_value))
        .Field("call_site", f.call_site)
        .Key("in_use")
        .BeginArray();
    for (const auto& [device, bytes] : f.in_use) {
      j.BeginObject().Field("device_id", device).Field("bytes", bytes).EndObject();
    }
    j.EndArray().EndObject();
  }
  j.EndArray();
}

std::string MemoryTimelineJson(const std::vector<MemoryTimeline>& timelines) {
  JsonWriter j;
  j.BeginObject().Key("processes").BeginArray();
  for (const MemoryTimeline& t : timelines) {
    auto rel = [&](uint64_t v) { return v > t.origin_ns ? v - t.origin_ns : 0; };
    j.BeginObject().Field("pid", t.pid).Field("file", t.file).Key("devices").BeginArray();
    for (const DeviceMemorySeries& d : t.devices) {
      j.BeginObject()
          .Field("device_id", d.device_id)
          .Field("peak_bytes", d.peak_bytes)
          .Key("steps")
          .BeginArray();
      for (const Span& s : Spans(d, t.end_ns)) {
        j.BeginObject()
            .Field("from_ns", rel(s.from))
            .Field("to_ns", rel(s.to))
            .Field("bytes", s.bytes)
            .EndObject();
      }
      j.EndArray().EndObject();
    }
    j.EndArray();
    FailedAllocationsJson(t, j);
    j.EndObject();
  }
  j.EndArray().EndObject();
  return j.str();
}

}  // namespace libprof::analysis
