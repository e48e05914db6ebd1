#include "analysis/reports/streams_report.h"

#include "analysis/reports/formats.h"
#include "analysis/reports/table_renderer.h"
#include "analysis/model/units.h"

namespace libprof::analysis {
namespace {

std::string TypeName(const StreamStats& s) {
  return std::string(ToString(s.klass)) + (s.from_record ? "" : " (no record)");
}

std::string Count(const OpTally& t) { return t.count == 0 ? "" : std::to_string(t.count); }

// "120.0 µs (35.00%)" or "0 ns" when `part` is 0.
std::string TimeAndShare(uint64_t part, uint64_t total) {
  if (part == 0) return "0 ns";
  return FormatDuration(static_cast<double>(part)) + " (" +
         FormatPercent(static_cast<double>(part), static_cast<double>(total)) + ")";
}

std::string DeviceBlock(const StreamsReport& r, const DeviceOverlap& d, size_t max_width) {
  std::string out = "GPU " + std::to_string(d.device_id) + " streams\n";
  std::vector<std::vector<std::string>> rows;
  for (const StreamStats& s : r.streams) {
    if (s.device_id != d.device_id) continue;
    rows.push_back(
        {std::to_string(s.stream_id), TypeName(s), Count(s.kernels), Count(s.copies[0]),
         Count(s.copies[1]), Count(s.copies[2]), Count(s.copies[3]), Count(s.memsets),
         Count(s.graphs), FormatDuration(static_cast<double>(s.busy_ns)),
         FormatPercent(static_cast<double>(s.busy_ns), static_cast<double>(r.trace_ns))});
  }
  out += RenderTable({{"Stream", Align::kRight},
                      {"Type", Align::kLeft, true, 8},
                      {"Kernels", Align::kRight},
                      {"HtoD", Align::kRight},
                      {"DtoH", Align::kRight},
                      {"DtoD", Align::kRight},
                      {"Other copies", Align::kRight},
                      {"Memsets", Align::kRight},
                      {"Graphs", Align::kRight},
                      {"Busy", Align::kRight},
                      {"Busy (%)", Align::kRight}},
                     rows, max_width);
  auto of_trace = [&](uint64_t ns) {
    return FormatDuration(static_cast<double>(ns)) + " (" +
           FormatPercent(static_cast<double>(ns), static_cast<double>(r.trace_ns)) +
           " of the trace)";
  };
  out += "GPU " + std::to_string(d.device_id) + ": kernels ran " + of_trace(d.kernel_ns) +
         "; two or more kernels were in flight " + of_trace(d.multi_kernel_ns) + ".\n";
  std::vector<std::vector<std::string>> overlap;
  for (size_t i = 0; i < kCopyDirections; ++i) {
    const CopyOverlap& o = d.by_direction[i];
    if (o.copy_ns == 0) continue;
    overlap.push_back(
        {ToString(static_cast<CopyDirection>(i)), FormatDuration(static_cast<double>(o.copy_ns)),
         TimeAndShare(o.with_kernel_ns, o.copy_ns), TimeAndShare(o.could_overlap_ns, o.copy_ns)});
  }
  if (overlap.empty()) return out + "No copies.\n";
  overlap.push_back({"all copies", FormatDuration(static_cast<double>(d.all.copy_ns)),
                     TimeAndShare(d.all.with_kernel_ns, d.all.copy_ns),
                     TimeAndShare(d.all.could_overlap_ns, d.all.copy_ns)});
  out += RenderTable({{"Copies", Align::kLeft},
                      {"Copy time", Align::kRight},
                      {"With kernels running", Align::kRight},
                      {"Alone, kernel queued elsewhere", Align::kRight}},
                     overlap, max_width);
  return out;
}

std::string Gbps(uint64_t bytes, uint64_t ns) {
  return ns == 0 ? "-" : FormatBandwidth(bytes, ns);
}

// Copies by link (source -> destination) and by device: where the bytes went, how fast.
std::string LinkBlock(const StreamsReport& r, size_t max_width) {
  if (r.links.empty()) return "";
  std::vector<std::vector<std::string>> rows;
  for (const CopyLink& l : r.links) {
    rows.push_back({l.from + " -> " + l.to, std::to_string(l.count), FormatBytes(l.bytes),
                    FormatDuration(static_cast<double>(l.total_ns)), Gbps(l.bytes, l.total_ns)});
  }
  std::string out = RenderTable({{"Copy link", Align::kLeft},
                                 {"Copies", Align::kRight},
                                 {"Bytes", Align::kRight},
                                 {"Copy time", Align::kRight},
                                 {"Bandwidth", Align::kRight}},
                                rows, max_width);
  rows.clear();
  for (const DeviceCopies& d : r.device_copies) {
    rows.push_back({"GPU " + std::to_string(d.device_id), std::to_string(d.count),
                    FormatBytes(d.bytes_in), FormatBytes(d.bytes_out),
                    FormatDuration(static_cast<double>(d.total_ns)),
                    Gbps(d.bytes_in + d.bytes_out, d.total_ns)});
  }
  if (rows.empty()) return out;
  return out + RenderTable({{"Device", Align::kLeft},
                            {"Copies", Align::kRight},
                            {"Bytes in", Align::kRight},
                            {"Bytes out", Align::kRight},
                            {"Copy time", Align::kRight},
                            {"Bandwidth", Align::kRight}},
                           rows, max_width);
}

}  // namespace

std::string StreamsTable(const std::vector<StreamsReport>& reports, size_t max_width) {
  std::string out;
  for (const StreamsReport& r : reports) {
    if (reports.size() > 1) {
      out += "Process " + std::to_string(r.pid) + " (" + r.file + ")\n";
    }
    out += "Trace time " + FormatDuration(static_cast<double>(r.trace_ns)) + ".\n";
    if (r.devices.empty()) out += "No device activity.\n";
    for (const DeviceOverlap& d : r.devices) out += DeviceBlock(r, d, max_width);
    out += LinkBlock(r, max_width);
    if (reports.size() > 1) out += "\n";
  }
  out +=
      "Busy: union of the stream's operations. With kernels running: copy time during which a\n"
      "kernel ran on the GPU. Alone, kernel queued elsewhere: copy time during which no kernel\n"
      "ran although a kernel launched on another stream had not started. Overlap percentages\n"
      "are of the row's copy time (see profview streams --help). Copy link: source -> destination\n"
      "memory (a peer copy names both GPUs); bandwidth: bytes over the copies' summed time.\n";
  return out;
}

std::string StreamsCsv(const std::vector<StreamsReport>& reports) {
  std::string out = CsvLine(
      {"section", "pid", "device_id", "stream_id", "stream_type", "what", "count", "time_ns"});
  for (const StreamsReport& r : reports) {
    const std::string pid = std::to_string(r.pid);
    for (const StreamStats& s : r.streams) {
      const std::string dev = std::to_string(s.device_id);
      const std::string id = std::to_string(s.stream_id);
      const std::string type = ToString(s.klass);
      auto line = [&](const std::string& what, const OpTally& t) {
        out += CsvLine({"stream", pid, dev, id, type, what, std::to_string(t.count),
                        std::to_string(t.total_ns)});
      };
      line("kernels", s.kernels);
      for (size_t i = 0; i < kCopyDirections; ++i) {
        line(std::string("copies_") + ToString(static_cast<CopyDirection>(i)), s.copies[i]);
      }
      line("memsets", s.memsets);
      line("graphs", s.graphs);
      out += CsvLine({"stream", pid, dev, id, type, "busy", "", std::to_string(s.busy_ns)});
    }
    for (const DeviceOverlap& d : r.devices) {
      const std::string dev = std::to_string(d.device_id);
      auto line = [&](const std::string& what, uint64_t ns) {
        out += CsvLine({"overlap", pid, dev, "", "", what, "", std::to_string(ns)});
      };
      line("kernels", d.kernel_ns);
      line("multi_kernel", d.multi_kernel_ns);
      auto copy = [&](const std::string& suffix, const CopyOverlap& o) {
        line("copy_" + suffix, o.copy_ns);
        line("with_kernel_" + suffix, o.with_kernel_ns);
        line("could_overlap_" + suffix, o.could_overlap_ns);
      };
      for (size_t i = 0; i < kCopyDirections; ++i) {
        copy(ToString(static_cast<CopyDirection>(i)), d.by_direction[i]);
      }
      copy("all", d.all);
    }
  }
  return out;
}

std::string StreamsJson(const std::vector<StreamsReport>& reports) {
  JsonWriter j;
  auto tally = [&j](const char* key, const OpTally& t) {
    j.Key(key).BeginObject().Field("count", t.count).Field("total_ns", t.total_ns).EndObject();
  };
  auto overlap = [&j](const CopyOverlap& o) {
    j.Field("copy_ns", o.copy_ns)
        .Field("with_kernel_ns", o.with_kernel_ns)
        .Field("could_overlap_ns", o.could_overlap_ns);
  };
  j.BeginObject().Key("processes").BeginArray();
  for (const StreamsReport& r : reports) {
    j.BeginObject().Field("pid", r.pid).Field("file", r.file).Field("trace_ns", r.trace_ns);
    j.Key("streams").BeginArray();
    for (const StreamStats& s : r.streams) {
      j.BeginObject()
          .Field("device_id", s.device_id)
          .Field("stream_id", s.stream_id)
          .Field("type", ToString(s.klass))
          .Field("type_from_record", s.from_record);
      tally("kernels", s.kernels);
      j.Key("copies").BeginObject();
      for (size_t i = 0; i < kCopyDirections; ++i) {
        tally(ToString(static_cast<CopyDirection>(i)), s.copies[i]);
      }
      j.EndObject();
      tally("memsets", s.memsets);
      tally("graphs", s.graphs);
      j.Field("busy_ns", s.busy_ns).EndObject();
    }
    j.EndArray();
    j.Key("devices").BeginArray();
    for (const DeviceOverlap& d : r.devices) {
      j.BeginObject()
          .Field("device_id", d.device_id)
          .Field("kernel_ns", d.kernel_ns)
          .Field("multi_kernel_ns", d.multi_kernel_ns);
      j.Key("copies").BeginObject();
      for (size_t i = 0; i < kCopyDirections; ++i) {
        j.Key(ToString(static_cast<CopyDirection>(i))).BeginObject();
        overlap(d.by_direction[i]);
        j.EndObject();
      }
      j.Key("all").BeginObject();
      overlap(d.all);
      j.EndObject().EndObject().EndObject();
    }
    j.EndArray();
    j.Key("links").BeginArray();
    for (const CopyLink& l : r.links) {
      j.BeginObject()
          .Field("from", l.from)
          .Field("to", l.to)
          .Field("count", l.count)
          .Field("bytes", l.bytes)
          .Field("total_ns", l.total_ns)
          .EndObject();
    }
    j.EndArray().Key("device_copies").BeginArray();
    for (const DeviceCopies& d : r.device_copies) {
      j.BeginObject()
          .Field("device_id", d.device_id)
          .Field("count", d.count)
          .Field("bytes_in", d.bytes_in)
          .Field("bytes_out", d.bytes_out)
          .Field("total_ns", d.total_ns)
          .EndObject();
    }
    j.EndArray().EndObject();
  }
  j.EndArray().EndObject();
  return j.str();
}

}  // namespace libprof::analysis
