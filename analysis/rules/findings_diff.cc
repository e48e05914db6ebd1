#include "analysis/rules/findings_diff.h"

#include <algorithm>
#include <cmath>
#include <map>

namespace libprof::analysis {

FindingKey KeyOf(const Finding& f) {
  FindingKey key;
  key.rule = f.rule;
  key.api = f.api;
  key.device_id = f.device_id;
  key.detail = std::string(DetailsGroupKey(f.details));
  key.one_time = f.one_time;
  if (f.one_time != OneTimeWork::kNone) return key;
  key.call_site = f.call_site;
  if (!f.blamed.empty() && !f.call_site_line) {  // (a line says which wait: GroupBlamed's rule)
    key.blamed_kind = f.blamed.front().kind;
    key.blamed = f.blamed.front().name;
  }
  return key;
}

void FindingTotals::Add(const Finding& finding) {
  FindingKey key = KeyOf(finding);
  auto it = totals_.find(key);
  if (it == totals_.end()) {
    it = totals_.emplace(key, FindingTotal{.key = key}).first;
  }
  ++it->second.count;
  it->second.blocked_ns += finding.blocked_ns;
}

void FindingTotals::Add(const std::vector<Finding>& findings) {
  for (const Finding& f : findings) Add(f);
}

std::vector<FindingTotal> FindingTotals::Totals() const {
  std::vector<FindingTotal> out;
  out.reserve(totals_.size());
  for (const auto& [key, t] : totals_) out.push_back(t);
  return out;
}

FindingTotal FindingTotals::OfRule(RuleId rule, bool with_one_time) const {
  FindingTotal sum;
  sum.key.rule = rule;
  for (const auto& [key, t] : totals_) {
    if (key.rule != rule || (!with_one_time && key.one_time != OneTimeWork::kNone)) continue;
    sum.count += t.count;
    sum.blocked_ns += t.blocked_ns;
  }
  return sum;
}

FindingTotals::OneTimeShare FindingTotals::OneTimeOf(RuleId rule) const {
  OneTimeShare share;
  share.total.key.rule = rule;
  for (const auto& [key, t] : totals_) {
    if (key.rule != rule || key.one_time == OneTimeWork::kNone) continue;
    share.total.count += t.count;
    share.total.blocked_ns += t.blocked_ns;
    share.kinds |= OneTimeWorkBit(key.one_time);
  }
  return share;
}

std::vector<FindingDiff> CompareFindings(const std::vector<FindingTotal>& base,
                                         const std::vector<FindingTotal>& next, double base_per,
                                         double next_per, double threshold, double floor_ns) {
  std::map<FindingKey, FindingDiff> by_key;
  for (const FindingTotal& t : base) {
    FindingDiff& d = by_key[t.key];
    d.key = t.key;
    d.base = t;
  }
  for (const FindingTotal& t : next) {
    FindingDiff& d = by_key[t.key];
    d.key = t.key;
    d.next = t;
  }
  std::vector<FindingDiff> out;
  for (auto& [key, d] : by_key) {
    const FindingTotal empty;
    const FindingTotal& b = d.base ? *d.base : empty;
    const FindingTotal& n = d.next ? *d.next : empty;
    d.blocked = Compare(static_cast<double>(b.blocked_ns) / base_per,
                        static_cast<double>(n.blocked_ns) / next_per, 0, 0, threshold, floor_ns);
    d.count = Compare(static_cast<double>(b.count) / base_per,
                      static_cast<double>(n.count) / next_per, 0, 0, threshold);
    // A key in one run only is new or gone whatever its size: the finding itself changed.
    if (!d.base) {
      d.status = DiffStatus::kAppeared;
    } else if (!d.next) {
      d.status = DiffStatus::kDisappeared;
    } else {
      d.status = !d.blocked.significant  ? DiffStatus::kWithinNoise
                 : d.blocked.delta() > 0 ? DiffStatus::kSlower
                                         : DiffStatus::kFaster;
    }
    out.push_back(std::move(d));
  }
  std::stable_sort(out.begin(), out.end(), [](const FindingDiff& a, const FindingDiff& b) {
    const bool sa = a.status != DiffStatus::kWithinNoise;
    const bool sb = b.status != DiffStatus::kWithinNoise;
    if (sa != sb) return sa;
    return std::fabs(a.blocked.delta()) > std::fabs(b.blocked.delta());
  });
  return out;
}

}  // namespace libprof::analysis
