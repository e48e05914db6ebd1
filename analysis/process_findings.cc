#include "analysis/process_findings.h"

#include <map>
#include <utility>

#include "proto/trace_inputs.h"
#include "analysis/reports/findings_report.h"
#include "analysis/rules/findings_digest.h"
#include "analysis/rules/windowed_findings.h"

namespace libprof::analysis {

namespace {

// The brief of one process's findings, grouped as `profview findings` groups them.
ProcessFindings BriefOf(const FindingsDigest& digest) {
  ProcessFindings brief;
  brief.host_lost_ns = digest.Totals().host;
  brief.findings = digest.size();
  // The first row `profview findings` prints: its host table's, else the first table's
  // (Groups() is in table order within each kind; the tables come host first).
  const std::vector<FindingGroup> groups = digest.Groups();
  const FindingGroup* top = nullptr;
  for (const FindingGroup& g : groups) {
    const TimeKind kind = TimeKindOf(Rule(g.worst.rule).family);
    if (kind == TimeKind::kHost) {
      top = &g;
      break;
    }
    if (top == nullptr && kind != TimeKind::kStartUp) top = &g;
  }
  if (top != nullptr) {
    brief.top_rule = std::string(RuleName(top->worst.rule));
    brief.top_in_start_up = top->worst.in_start_up;
    brief.top_one_time = std::string(OneTimeWorkId(top->worst.one_time));
    brief.top_api = top->worst.api;
    brief.top_waiting_for = FindingWaitingFor(top->worst);
    brief.top_time_kind = ToString(TimeKindOf(Rule(top->worst.rule).family));
    brief.top_time_lost_ns = top->total_blocked_ns;
    brief.top_count = top->count;
  }
  return brief;
}

}  // namespace

ProcessFindings BriefFindings(const ProcessTrace& trace, const FindingsOptions& options) {
  FindingsDigest digest;
  digest.BeginProcess();
  StreamFindings(
      trace, options, [&](Finding&& f, uint64_t seq) { digest.Add(std::move(f), seq); },
      [&](const Finding& f, uint64_t seq) { return digest.WantsWhole(f, seq); });
  return BriefOf(digest);
}

std::expected<void, std::string> AddProcessFindings(const std::vector<std::string>& files,
                                                    const FilterOptions& filters,
                                                    const FindingsOptions& options,
                                                    std::vector<Summary>* parts) {
  std::map<std::pair<std::string, uint32_t>, Summary*> part_of;
  for (Summary& p : *parts) part_of[{p.path, p.pid}] = &p;
  auto paths = ExpandTraceInputs(files);
  if (!paths) return std::unexpected(paths.error());
  // The summary's read gave the files' warnings and checks what the filters matched (a partial
  // summary leaves that to combine): this read only finds.
  std::vector<std::string> said_already;
  FilterMatches unused;
  for (const std::string& path : *paths) {
    // In windows, filtered there, when they give the exact findings (bounded memory,
    // windowed_findings.h).
    auto plan = WindowedFindings::Plan(path, options, filters);
    if (!plan) return std::unexpected(plan.error());
    if (plan->exact()) {
      if (!plan->kept()) continue;
      FindingsDigest digest;
      if (auto ran = plan->AddTo(&digest); !ran) return std::unexpected(ran.error());
      const ProcessTrace& t = plan->whole();
      if (auto it = part_of.find({t.path, t.header.pid}); it != part_of.end()) {
        it->second->findings = BriefOf(digest);
      }
      continue;
    }
    auto loaded = LoadTraceFile(path, &said_already);
    if (!loaded) return std::unexpected(loaded.error());
    auto kept = FilterProcesses(std::move(*loaded), filters, &unused);
    if (!kept) return std::unexpected(kept.error());
    for (const ProcessTrace& t : *kept) {
      if (auto it = part_of.find({t.path, t.header.pid}); it != part_of.end()) {
        it->second->findings = BriefFindings(t, options);
      }
    }
  }
  return {};
}

}  // namespace libprof::analysis
