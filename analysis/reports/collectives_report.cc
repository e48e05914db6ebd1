#include "analysis/reports/collectives_report.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <filesystem>

#include "analysis/model/units.h"
#include "analysis/reports/formats.h"
#include "analysis/rules/rank_rules.h"
#include "analysis/reports/table_renderer.h"

namespace libprof::analysis {
namespace {

std::string Gbps(double value) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.2f", value);
  return text;
}

std::string Ranks(uint32_t n) { return n == 0 ? "?" : std::to_string(n); }

std::string Comm(uint64_t comm) {
  char text[24];
  std::snprintf(text, sizeof(text), "%016llx", static_cast<unsigned long long>(comm));
  return text;
}

std::string SignedDuration(int64_t ns) {
  return (ns < 0 ? "-" : "+") + FormatDuration(static_cast<double>(ns < 0 ? -ns : ns));
}

std::vector<const CollectiveInstance*> Worst(const RankSkewReport& skew, size_t top) {
  std::vector<const CollectiveInstance*> out;
  for (const CollectiveInstance& i : skew.instances) {
    if (i.members.size() > 1 && i.others_wait_ns > 0) out.push_back(&i);
  }
  std::stable_sort(out.begin(), out.end(), [](auto* a, auto* b) {
    return a->others_wait_ns > b->others_wait_ns;
  });
  if (out.size() > top) out.resize(top);
  return out;
}

}  // namespace

std::string CollectiveRowsTable(const std::vector<CollectiveRow>& table, size_t processes,
                                size_t width) {
  std::string out;
  out += "Collectives (" + std::to_string(processes) + " process" +
         (processes == 1 ? "" : "es") +
         "); algbw and busbw as nccl-tests defines them, time on the device:\n";
  std::vector<std::vector<std::string>> rows;
  for (const CollectiveRow& row : table) {
    rows.push_back({row.op, Ranks(row.comm_size), std::to_string(row.calls),
                    FormatBytes(row.bytes), FormatDuration(static_cast<double>(row.time_ns)),
                    row.calls > 0 ? FormatDuration(static_cast<double>(row.time_ns / row.calls))
                                  : "-",
                    Gbps(row.algbw_gbps), row.comm_size == 0 ? "-" : Gbps(row.busbw_gbps)});
  }
  out += RenderTable({{"Operation"},
                      {"Ranks", Align::kRight},
                      {"Calls", Align::kRight},
                      {"Bytes", Align::kRight},
                      {"Time", Align::kRight},
                      {"Mean", Align::kRight},
                      {"algbw GB/s", Align::kRight},
                      {"busbw GB/s", Align::kRight}},
                     rows, width);
  uint64_t host_only = 0;
  for (const CollectiveRow& row : table) host_only += row.host_only;
  if (host_only > 0) {
    out += std::to_string(host_only) +
           " call(s) had no device work recorded inside their range: their host time is used.\n";
  }
  return out;
}

std::string CollectivesTable(const CollectivesReport& r, size_t width) {
  if (r.table.empty()) {
    return "No NCCL collectives: no range of the NVTX domain \"NCCL\" named after a collective "
           "(NCCL annotates its calls unless NCCL_NVTX_DISABLE=1; libprof records NVTX unless "
           "LIBPROF_TRACE leaves nvtx out).\n";
  }
  std::string out = CollectiveRowsTable(r.table, r.processes.size(), width);
  std::vector<std::vector<std::string>> rows;
  if (r.processes.size() < 2) return out;

  const RankSkewReport& s = r.skew;
  uint32_t reference = UINT32_MAX;
  for (const RankClock& c : s.clocks) reference = std::min(reference, c.rank);
  out += "\nClocks aligned on matched collective ends (reference: rank " +
         std::to_string(s.clocks.empty() ? 0 : reference) +
         "); residual error up to " + FormatDuration(static_cast<double>(s.max_residual_ns)) +
         ":\n";
  rows.clear();
  for (const RankClock& c : s.clocks) {
    // The file's name: whole paths would take the table's width.
    rows.push_back({std::to_string(c.rank),
                    std::filesystem::path(r.processes[c.process].path).filename().string(),
                    c.aligned ? SignedDuration(c.offset_ns) : "not aligned",
                    std::to_string(c.instances),
                    FormatDuration(c.rms_residual_ns), FormatDuration(double(c.max_residual_ns))});
  }
  out += RenderTable({{"Rank", Align::kRight},
                      {"File", Align::kLeft, true},
                      {"Offset", Align::kRight},
                      {"Instances", Align::kRight},
                      {"RMS residual", Align::kRight},
                      {"Max residual", Align::kRight}},
                     rows, width);

  out += "\nStragglers (late: arrived last by at least --min-wait; wait and transfer: the rank's "
         "own time in its collectives):\n";
  rows.clear();
  for (const StragglerRow& row : s.stragglers) {
    rows.push_back({std::to_string(row.rank), std::to_string(row.instances),
                    std::to_string(row.late), FormatDuration(double(row.late_by_ns)),
                    FormatDuration(double(row.caused_wait_ns)),
                    FormatDuration(double(row.waited_ns)), FormatDuration(double(row.transfer_ns))});
  }
  out += RenderTable({{"Rank", Align::kRight},
                      {"Instances", Align::kRight},
                      {"Late", Align::kRight},
                      {"Late by", Align::kRight},
                      {"Others waited", Align::kRight},
                      {"Waited", Align::kRight},
                      {"Transfer", Align::kRight}},
                     rows, width);

  const auto worst = Worst(s, r.top);
  if (!worst.empty()) {
    out += "\nLongest waits for a late rank:\n";
    for (const CollectiveInstance* i : worst) out += "  " + LateRankSentence(*i) + ".\n";
  }
  if (!s.unmatched.empty()) {
    out += "\n" + std::to_string(s.unmatched.size()) +
           " call(s) not matched across ranks (left out of the alignment and waits):\n";
    rows.clear();
    for (const UnmatchedCall& u : s.unmatched) {
      rows.push_back({std::to_string(u.rank), u.op, Comm(u.comm), std::to_string(u.seq),
                      u.reason});
    }
    out += RenderTable({{"Rank", Align::kRight},
                        {"Operation"},
                        {"Communicator"},
                        {"#", Align::kRight},
                        {"Why", Align::kLeft, true}},
                       rows, width);
  }
  return out;
}

std::string CollectivesJson(const CollectivesReport& r) {
  JsonWriter j;
  j.BeginObject().Key("collectives").BeginArray();
  for (const CollectiveRow& row : r.table) {
    j.BeginObject()
        .Field("operation", row.op)
        .Field("ranks", row.comm_size)
        .Field("calls", row.calls)
        .Field("bytes", row.bytes)
        .Field("time_ns", row.time_ns)
        .Field("host_only_calls", row.host_only)
        .Field("algbw_gbps", row.algbw_gbps)
        .Field("busbw_gbps", row.busbw_gbps)
        .EndObject();
  }
  j.EndArray();
  if (r.processes.size() >= 2) {
    const RankSkewReport& s = r.skew;
    j.Key("clocks").BeginArray();
    for (const RankClock& c : s.clocks) {
      j.BeginObject()
          .Field("rank", c.rank)
          .Field("file", r.processes[c.process].path)
          .Field("aligned", c.aligned)
          .Field("offset_ns", c.offset_ns)
          .Field("instances", c.instances)
          .Field("rms_residual_ns", c.rms_residual_ns)
          .Field("max_residual_ns", c.max_residual_ns)
          .EndObject();
    }
    j.EndArray().Key("stragglers").BeginArray();
    for (const StragglerRow& row : s.stragglers) {
      j.BeginObject()
          .Field("rank", row.rank)
          .Field("instances", row.instances)
          .Field("late", row.late)
          .Field("late_by_ns", row.late_by_ns)
          .Field("caused_wait_ns", row.caused_wait_ns)
          .Field("waited_ns", row.waited_ns)
          .Field("transfer_ns", row.transfer_ns)
          .EndObject();
    }
    j.EndArray().Key("late_instances").BeginArray();
    for (const CollectiveInstance* i : Worst(s, r.top)) {
      j.BeginObject()
          .Field("operation", i->op)
          .Field("communicator", Comm(i->comm))
          .Field("seq", i->seq)
          .Field("late_rank", i->members[i->late].rank)
          .Field("late_by_ns", i->late_by_ns)
          .Field("others_wait_ns", i->others_wait_ns)
          .EndObject();
    }
    j.EndArray().Key("unmatched").BeginArray();
    for (const UnmatchedCall& u : s.unmatched) {
      j.BeginObject()
          .Field("rank", u.rank)
          .Field("operation", u.op)
          .Field("communicator", Comm(u.comm))
          .Field("seq", u.seq)
          .Field("reason", u.reason)
          .EndObject();
    }
    j.EndArray();
  }
  j.EndObject();
  return j.str() + "\n";
}

}  // namespace libprof::analysis
