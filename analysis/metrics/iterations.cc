#include "analysis/metrics/iterations.h"

#include <algorithm>
#include <cmath>
#include <memory>
#include <unordered_map>

#include "proto/trace_reader.h"
#include "analysis/model/filters.h"

namespace libprof::analysis {
namespace {

// One process's ranges by (domain id, message id), before names are known: each instance's
// start (trace time) and duration.
struct ProcessRanges {
  std::unordered_map<uint64_t, std::vector<Iteration>> top_level;
  std::unordered_map<uint64_t, std::vector<Iteration>> all;  // only while `wanted` is unresolved
  std::unordered_map<uint32_t, uint32_t> domain_names;       // domain id -> string id
};

uint64_t Key(uint32_t domain_id, uint32_t message_id) {
  return uint64_t{domain_id} << 32 | message_id;
}

// A process's instances into `to`; with their starts from `origin_ns` (the header's recording
// start, 0 when unknown) while `to` has only this process's.
void Append(RangeInstances* to, const std::vector<Iteration>& from, uint64_t origin_ns) {
  for (const Iteration& i : from) to->durations_ns.push_back(i.duration_ns);
  if (to->processes > 1) {
    to->in_order.clear();
    return;
  }
  for (const Iteration& i : from) {
    if (origin_ns == 0 || i.start_ns < origin_ns) {  // no recording start to count from
      to->in_order.clear();
      return;
    }
    to->in_order.push_back({i.start_ns - origin_ns, i.duration_ns});
  }
}

}  // namespace

std::string RangeInstances::Label() const { return domain.empty() ? name : domain + ":" + name; }

double RangeInstances::PerProcess() const {
  return processes == 0 ? 0.0
                        : static_cast<double>(durations_ns.size()) / static_cast<double>(processes);
}

double RangeInstances::Quantile(double q) const {
  if (durations_ns.empty()) return 0.0;
  const double at = std::clamp(q, 0.0, 1.0) * static_cast<double>(durations_ns.size() - 1);
  const size_t lo = static_cast<size_t>(std::floor(at));
  const size_t hi = std::min(lo + 1, durations_ns.size() - 1);
  const double frac = at - static_cast<double>(lo);
  return static_cast<double>(durations_ns[lo]) * (1.0 - frac) +
         static_cast<double>(durations_ns[hi]) * frac;
}

std::expected<RunRanges, std::string> ReadRunRanges(const std::vector<std::string>& files,
                                                    const std::string& wanted) {
  RunRanges run;
  for (const std::string& path : files) {
    auto opened = TraceReader::Open(path);
    if (!opened) return std::unexpected(opened.error());
    TraceReader& reader = **opened;
    std::vector<ProcessRanges> processes(reader.headers().size());
    TraceRecords chunk;
    while (reader.NextNvtx(&chunk)) {
      ProcessRanges& p = processes[chunk.process_index];
      for (const NvtxDomain& d : chunk.nvtx_domains) p.domain_names[d.id] = d.name_id;
      for (const NvtxEvent& e : chunk.nvtx_events) {
        if (e.kind == NvtxKind::kMark || e.open || e.end_ns < e.start_ns) continue;
        const uint64_t key = Key(e.domain_id, e.message_id);
        const Iteration instance{e.start_ns, e.end_ns - e.start_ns};
        if (e.kind != NvtxKind::kPushPop || e.depth == 0) p.top_level[key].push_back(instance);
        if (!wanted.empty()) p.all[key].push_back(instance);
      }
    }
    if (!reader.error().empty()) return std::unexpected(reader.error());
    for (uint32_t i = 0; i < processes.size(); ++i) {
      const ProcessRanges& p = processes[i];
      const uint64_t origin_ns = reader.headers()[i].start_time_ns;
      auto names = [&](uint64_t key) {
        const uint32_t domain_id = static_cast<uint32_t>(key >> 32);
        auto d = p.domain_names.find(domain_id);
        std::string domain =
            domain_id == 0 || d == p.domain_names.end() ? "" : reader.String(d->second, i);
        return std::make_pair(std::move(domain), reader.String(static_cast<uint32_t>(key), i));
      };
      for (const auto& [key, durations] : p.top_level) {
        auto named = names(key);
        RangeInstances& r = run.top_level[named];
        r.domain = named.first;
        r.name = named.second;
        ++r.processes;
        Append(&r, durations, origin_ns);
      }
      bool counted = false;
      for (const auto& [key, durations] : p.all) {
        auto [domain, name] = names(key);
        if (!NvtxNameMatches(wanted, domain, name)) continue;
        // The first match names the range; a second name matching too (the same message in
        // two domains, asked for without one) joins it.
        if (!run.wanted_found) {
          run.wanted.domain = domain;
          run.wanted.name = name;
          run.wanted_found = true;
        }
        if (!counted) ++run.wanted.processes;
        counted = true;
        Append(&run.wanted, durations, origin_ns);
      }
    }
  }
  auto sort = [](RangeInstances* r) {
    std::sort(r->durations_ns.begin(), r->durations_ns.end());
    std::sort(r->in_order.begin(), r->in_order.end(),
              [](const Iteration& a, const Iteration& b) { return a.start_ns < b.start_ns; });
  };
  for (auto& [key, r] : run.top_level) sort(&r);
  sort(&run.wanted);
  return run;
}

size_t LeadingWarmUp(const RangeInstances& range) {
  const std::vector<Iteration>& all = range.in_order;
  if (range.processes != 1 || all.size() != range.durations_ns.size()) return 0;
  const double bar = kWarmUpIterationFactor * range.Median();
  size_t count = 0;
  while (count < all.size() && static_cast<double>(all[count].duration_ns) > bar) ++count;
  if (count * 2 > all.size() || all.size() - count < 3) return 0;
  return count;
}

RangeInstances WithoutLeading(const RangeInstances& range, size_t count, uint64_t* from_ns) {
  RangeInstances kept = range;
  count = std::min(count, range.in_order.size());
  kept.in_order.erase(kept.in_order.begin(), kept.in_order.begin() + static_cast<long>(count));
  kept.durations_ns.clear();
  for (const Iteration& i : kept.in_order) kept.durations_ns.push_back(i.duration_ns);
  std::sort(kept.durations_ns.begin(), kept.durations_ns.end());
  if (from_ns != nullptr) *from_ns = kept.in_order.empty() ? 0 : kept.in_order.front().start_ns;
  return kept;
}

const RangeInstances* CommonIterationRange(const RunRanges& base, const RunRanges& next) {
  const RangeInstances* best = nullptr;
  for (const auto& [key, r] : base.top_level) {  // in name order: ties keep the first
    auto other = next.top_level.find(key);
    if (other == next.top_level.end()) continue;
    if (r.durations_ns.size() < 2 || other->second.durations_ns.size() < 2) continue;
    if (best == nullptr || r.durations_ns.size() > best->durations_ns.size()) best = &r;
  }
  return best;
}

const RangeInstances* IterationRange(const RunRanges& run) {
  return CommonIterationRange(run, run);
}

}  // namespace libprof::analysis
