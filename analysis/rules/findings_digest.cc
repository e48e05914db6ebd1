#include "analysis/rules/findings_digest.h"

#include <algorithm>

#include "analysis/rules/rule_details.h"

namespace libprof::analysis {

void FindingsDigest::Add(std::vector<Finding> findings) {
  for (Finding& f : findings) Add(std::move(f));
}

void FindingsDigest::Add(Finding f) {
  const Order order{process_, 0, 0, position_++};
  Add(std::move(f), order);
}

void FindingsDigest::Add(Finding f, uint64_t seq) {
  const Order order{process_, f.host_start_ns, f.correlation_id, seq};
  Add(std::move(f), order);
}

void FindingsDigest::Add(Finding f, const Order& order) {
  ++size_;
  pids_.insert(f.pid);
  const TimeKind kind = TimeKindOf(Rule(f.rule).family);
  ++counts_[static_cast<size_t>(kind)];
  switch (kind) {
    case TimeKind::kGpuIdle:
      idle_[{f.pid, f.device_id.value_or(0)}][f.rule] += f.blocked_ns;
      break;
    case TimeKind::kSaving:
      sums_.saving += f.blocked_ns;
      break;
    case TimeKind::kStartUp:
      sums_.start_up += f.blocked_ns;
      start_ups_.push_back(f);
      break;
    case TimeKind::kRankWait:
      sums_.rank_wait += f.blocked_ns;
      break;
    case TimeKind::kHost:
      sums_.host += f.blocked_ns;
      if (f.in_start_up) sums_.host_in_start_up += f.blocked_ns;
      host_threads_.insert({f.pid, f.thread_id});
      break;
  }
  const std::string_view blamed =
      f.blamed.empty() ? std::string_view() : std::string_view(f.blamed.front().name);
  const std::tuple<bool, std::string_view, std::string_view, std::string_view, std::string_view,
                   std::string_view>
      view{f.in_start_up, RuleName(f.rule), f.api, blamed, DetailsGroupKey(f.details),
           f.call_site};
  auto it = groups_.find(view);
  if (it == groups_.end()) {
    it = groups_
             .try_emplace(Key{f.in_start_up, RuleName(f.rule), f.api, std::string(blamed),
                              std::string(DetailsGroupKey(f.details)), f.call_site})
             .first;
  }
  FindingGroup& g = it->second.group;
  ++g.count;
  g.total_blocked_ns += f.blocked_ns;
  g.total_host_ns += f.host_duration_ns;
  // The first of the largest time lost, in the order of everything added.
  const bool worst = g.count == 1 || f.blocked_ns > g.worst.blocked_ns ||
                     (f.blocked_ns == g.worst.blocked_ns && order < it->second.worst);
  if (worst) it->second.worst = order;
  if (keep_all_) {
    if (worst) g.worst = f;
    all_.push_back(std::move(f));
  } else if (worst) {
    g.worst = std::move(f);
  }
}

std::vector<FindingGroup> FindingsDigest::Groups() const {
  std::vector<FindingGroup> out;
  out.reserve(groups_.size());
  for (const auto& [key, g] : groups_) out.push_back(g.group);
  std::stable_sort(out.begin(), out.end(), [](const FindingGroup& a, const FindingGroup& b) {
    if (a.worst.in_start_up != b.worst.in_start_up) return b.worst.in_start_up;
    return a.total_blocked_ns > b.total_blocked_ns;
  });
  return out;
}

FindingsTotals FindingsDigest::Totals() const {
  FindingsTotals t = sums_;
  for (const auto& [device, sums] : idle_) {
    uint64_t largest = 0;
    for (const auto& [rule, sum] : sums) largest = std::max(largest, sum);
    t.gpu_idle += largest;
  }
  t.host_threads = host_threads_.size();
  return t;
}

}  // namespace libprof::analysis
