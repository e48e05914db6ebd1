#include "analysis/metrics/rank_skew.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <tuple>

namespace libprof::analysis {
namespace {

struct RawInstance {
  uint64_t comm = 0;
  uint64_t seq = 0;
  std::vector<std::pair<size_t, size_t>> members;  // (process, call)
};

int64_t Median(std::vector<int64_t> values) {
  std::sort(values.begin(), values.end());
  const size_t n = values.size();
  return n % 2 == 1 ? values[n / 2] : values[n / 2 - 1] + (values[n / 2] - values[n / 2 - 1]) / 2;
}

uint64_t Shift(uint64_t t, int64_t offset) { return static_cast<uint64_t>(int64_t(t) - offset); }

}  // namespace

uint32_t RankOf(const ProcessCollectives& process, size_t index) {
  if (process.rank) return *process.rank;
  for (const CollectiveCall& call : process.calls) {
    if (call.comm_rank >= 0) return static_cast<uint32_t>(call.comm_rank);
  }
  return static_cast<uint32_t>(index);
}

RankSkewReport AnalyzeRankSkew(std::span<const ProcessCollectives> processes,
                               uint64_t min_late_ns) {
  RankSkewReport report;
  const size_t n = processes.size();
  std::vector<uint32_t> ranks(n);
  for (size_t i = 0; i < n; ++i) ranks[i] = RankOf(processes[i], i);

  // Group the calls by (communicator, sequence number); learn each communicator's size.
  std::map<std::pair<uint64_t, uint64_t>, RawInstance> groups;
  std::map<uint64_t, uint32_t> comm_size;
  std::map<uint64_t, std::set<size_t>> comm_processes;
  for (size_t p = 0; p < n; ++p) {
    const auto& calls = processes[p].calls;
    for (size_t c = 0; c < calls.size(); ++c) {
      const CollectiveCall& call = calls[c];
      if (call.comm == 0) {
        report.unmatched.push_back({p, ranks[p], call.op, 0, call.seq,
                                    "no communicator id in its NVTX payload"});
        continue;
      }
      RawInstance& g = groups[{call.comm, call.seq}];
      g.comm = call.comm;
      g.seq = call.seq;
      g.members.emplace_back(p, c);
      comm_size[call.comm] = std::max(comm_size[call.comm], call.comm_size);
      comm_processes[call.comm].insert(p);
    }
  }
  std::vector<RawInstance> matched;
  for (auto& [key, g] : groups) {
    const auto& [comm, seq] = key;
    const uint32_t expected = comm_size[comm] != 0
                                  ? comm_size[comm]
                                  : static_cast<uint32_t>(comm_processes[comm].size());
    std::string reason;
    std::set<size_t> distinct;
    for (auto [p, c] : g.members) distinct.insert(p);
    if (distinct.size() != g.members.size()) {
      reason = "the same communicator and sequence number twice in one process";
    } else if (g.members.size() != expected) {
      reason = "seen on " + std::to_string(g.members.size()) + " of " + std::to_string(expected) +
               " ranks";
    } else {
      const std::string& op = processes[g.members[0].first].calls[g.members[0].second].op;
      for (auto [p, c] : g.members) {
        if (processes[p].calls[c].op != op) {
          reason = "operation differs across ranks (" + op + ", " + processes[p].calls[c].op + ")";
        }
      }
    }
    if (!reason.empty()) {
      for (auto [p, c] : g.members) {
        report.unmatched.push_back({p, ranks[p], processes[p].calls[c].op, comm, seq, reason});
      }
      continue;
    }
    std::sort(g.members.begin(), g.members.end(),
              [&](auto a, auto b) { return ranks[a.first] < ranks[b.first]; });
    matched.push_back(std::move(g));
  }

  // Clocks: offsets from the reference (lowest rank), through shared instance ends.
  report.clocks.resize(n);
  for (size_t p = 0; p < n; ++p) report.clocks[p] = {.process = p, .rank = ranks[p]};
  if (n > 0) {
    const size_t reference = static_cast<size_t>(
        std::min_element(ranks.begin(), ranks.end()) - ranks.begin());
    report.clocks[reference].aligned = true;
    for (bool progress = true; progress;) {
      progress = false;
      for (size_t p = 0; p < n; ++p) {
        if (report.clocks[p].aligned) continue;
        std::vector<int64_t> diffs;
        for (const RawInstance& g : matched) {
          const auto self = std::find_if(g.members.begin(), g.members.end(),
                                         [p](auto m) { return m.first == p; });
          if (self == g.members.end()) continue;
          // The lowest aligned rank of the instance.
          for (auto [q, c] : g.members) {
            if (q == p || !report.clocks[q].aligned) continue;
            const int64_t end_p = int64_t(processes[p].calls[self->second].end_ns);
            const int64_t end_q = int64_t(processes[q].calls[c].end_ns) - report.clocks[q].offset_ns;
            diffs.push_back(end_p - end_q);
            break;
          }
        }
        if (diffs.empty()) continue;
        report.clocks[p].offset_ns = Median(std::move(diffs));
        report.clocks[p].aligned = true;
        progress = true;
      }
    }
  }

  // Instances on aligned clocks: the wait / transfer split and the late rank.
  std::vector<double> squares(n, 0);
  for (const RawInstance& g : matched) {
    const CollectiveCall& first = processes[g.members[0].first].calls[g.members[0].second];
    CollectiveInstance inst{.op = first.op, .comm = g.comm, .seq = g.seq, .bytes = first.bytes};
    uint64_t last = 0;
    double mean_end = 0;
    for (auto [p, c] : g.members) {
      const CollectiveCall& call = processes[p].calls[c];
      const int64_t offset = report.clocks[p].offset_ns;
      InstanceMember m{.process = p,
                       .rank = ranks[p],
                       .call = c,
                       .arrive_ns = Shift(call.start_ns, offset),
                       .end_ns = Shift(call.end_ns, offset)};
      last = std::max(last, m.arrive_ns);
      mean_end += static_cast<double>(m.end_ns) / static_cast<double>(g.members.size());
      inst.members.push_back(m);
    }
    uint64_t latest_other = 0;
    for (size_t i = 0; i < inst.members.size(); ++i) {
      InstanceMember& m = inst.members[i];
      m.wait_ns = last - m.arrive_ns;
      m.transfer_ns = m.end_ns > last ? m.end_ns - last : 0;
      if (m.arrive_ns == last && inst.members[inst.late].arrive_ns != last) inst.late = i;
    }
    for (size_t i = 0; i < inst.members.size(); ++i) {
      if (i == inst.late) continue;
      latest_other = std::max(latest_other, inst.members[i].arrive_ns);
      inst.others_wait_ns += inst.members[i].wait_ns;
    }
    inst.late_by_ns = inst.members.size() > 1 ? last - latest_other : 0;
    for (const InstanceMember& m : inst.members) {
      const double residual = std::abs(static_cast<double>(m.end_ns) - mean_end);
      squares[m.process] += residual * residual;
      RankClock& clock = report.clocks[m.process];
      ++clock.instances;
      clock.max_residual_ns = std::max(clock.max_residual_ns, static_cast<uint64_t>(residual));
      report.max_residual_ns = std::max(report.max_residual_ns, clock.max_residual_ns);
    }
    report.instances.push_back(std::move(inst));
  }
  for (size_t p = 0; p < n; ++p) {
    RankClock& clock = report.clocks[p];
    if (clock.instances > 0) clock.rms_residual_ns = std::sqrt(squares[p] / clock.instances);
  }
  auto first_arrival = [](const CollectiveInstance& i) {
    uint64_t t = UINT64_MAX;
    for (const InstanceMember& m : i.members) t = std::min(t, m.arrive_ns);
    return t;
  };
  std::stable_sort(report.instances.begin(), report.instances.end(),
                   [&](const CollectiveInstance& a, const CollectiveInstance& b) {
                     return first_arrival(a) < first_arrival(b);
                   });

  // Stragglers.
  std::vector<StragglerRow> rows(n);
  for (size_t p = 0; p < n; ++p) rows[p] = {.rank = ranks[p], .process = p};
  for (const CollectiveInstance& inst : report.instances) {
    for (size_t i = 0; i < inst.members.size(); ++i) {
      const InstanceMember& m = inst.members[i];
      StragglerRow& row = rows[m.process];
      ++row.instances;
      row.waited_ns += m.wait_ns;
      row.transfer_ns += m.transfer_ns;
      if (i == inst.late && inst.members.size() > 1 && inst.late_by_ns >= min_late_ns &&
          inst.late_by_ns > 0) {
        ++row.late;
        row.late_by_ns += inst.late_by_ns;
        row.caused_wait_ns += inst.others_wait_ns;
      }
    }
  }
  std::stable_sort(rows.begin(), rows.end(), [](const StragglerRow& a, const StragglerRow& b) {
    return std::tie(b.caused_wait_ns, a.rank) < std::tie(a.caused_wait_ns, b.rank);
  });
  report.stragglers = std::move(rows);
  return report;
}

}  // namespace libprof::analysis
