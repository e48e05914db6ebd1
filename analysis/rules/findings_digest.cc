#include "analysis/rules/findings_digest.h"

#include <algorithm>
#include <set>

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
      if (const auto* d = std::get_if<StartUpDetails>(&f.details)) {
        sums_.gpu_idle_in_one_time += d->one_time_gpu_idle_ns;
      }
      start_ups_.push_back(f);
      start_up_process_.push_back(process_);
      break;
    case TimeKind::kRankWait:
      sums_.rank_wait += f.blocked_ns;
      break;
    case TimeKind::kHost:
      sums_.host += f.blocked_ns;
      if (f.one_time != OneTimeWork::kNone) {  // (what it is says more than when it ran)
        sums_.host_in_one_time += f.blocked_ns;
        sums_.one_time_kinds |= OneTimeWorkBit(f.one_time);
      } else if (f.in_start_up) {
        sums_.host_in_start_up += f.blocked_ns;
      } else if (Rule(f.rule).family == RuleFamily::kHostWait) {
        sums_.host_waits += f.blocked_ns;
        auto [first, added] = first_waits_.try_emplace(f.pid, f.host_start_ns);
        if (!added) first->second = std::min(first->second, f.host_start_ns);
      }
      host_threads_.insert({f.pid, f.thread_id});
      break;
  }
  Group& group = GroupOf(f);
  FindingGroup& g = group.group;
  const bool worst = BecomesWorst(group, f.blocked_ns, order);
  ++g.count;
  g.total_blocked_ns += f.blocked_ns;
  g.total_host_ns += f.host_duration_ns;
  if (worst) group.worst = order;
  if (keep_all_) {
    if (worst) g.worst = f;
    all_.push_back(std::move(f));
  } else if (worst) {
    g.worst = std::move(f);
  }
}

bool FindingsDigest::BecomesWorst(const Group& group, uint64_t blocked_ns, const Order& order) {
  const FindingGroup& g = group.group;
  return g.count == 0 || blocked_ns > g.worst.blocked_ns ||
         (blocked_ns == g.worst.blocked_ns && order < group.worst);
}

namespace {

// What a group is waiting for: waits paid once (start-up's, an autotuner's) are grouped without
// it, since the kernels they waited for are no fix (cuDNN's benchmark mode synchronised 80 times
// in a conv net's warm-up, on some 30 candidate kernels: 30 rows of one paid-once search).
// CUDA graphs are grouped as one, whichever graph: a program that captures and instantiates a
// graph per step waits on a new graph id each time (.carry/s17/graph_reinstantiate.cu: 300 rows
// of one wait), and the group's worst still names its own graph.
// A wait whose call site names a line of Python is that line's, whichever kernel it met: a CuPy
// loop's cupy.asnumpy at one line waited on 7 different kernels over 400 steps, as the GPU's
// queue happened to stand (.carry/s18/cupy_asnumpy_loop.py), 7 rows of one fix.
std::string_view GroupBlamed(const Finding& f) {
  if (PaidOnce(f) || f.blamed.empty() || f.call_site_line) return {};
  const Blamed& b = f.blamed.front();
  if (b.kind == "graph" && b.name.starts_with("[graph ")) return "[graph]";
  return b.name;
}

// Where a group's calls came from: one-time work is grouped without it, since its calls come
// from the tuner's or compiler's own lines (torch.compile's pattern set-up copied at 13 lines
// of one file: 13 rows of one compilation).
std::string_view GroupCallSite(const Finding& f) {
  return f.one_time != OneTimeWork::kNone ? std::string_view() : std::string_view(f.call_site);
}

// A finding's group key (FindingsDigest::Key) as views into it. Device findings group per
// device: a process on two GPUs (nn.DataParallel, a pipeline) has one row per GPU, not the
// worst GPU's row counting both.
std::tuple<bool, OneTimeWork, std::string_view, std::string_view, std::string_view,
           std::string_view, std::string_view, int64_t>
KeyView(const Finding& f) {
  return {PaidOnce(f),
          f.one_time,
          RuleName(f.rule),
          f.api,
          GroupBlamed(f),
          DetailsGroupKey(f.details),
          GroupCallSite(f),
          f.device_id ? int64_t{*f.device_id} : int64_t{-1}};
}

}  // namespace

bool FindingsDigest::WantsWhole(const Finding& f, uint64_t seq) const {
  if (keep_all_ || TimeKindOf(Rule(f.rule).family) == TimeKind::kStartUp) return true;
  const Group* group = Find(f);
  return group == nullptr ||
         BecomesWorst(*group, f.blocked_ns, Order{process_, f.host_start_ns, f.correlation_id, seq});
}

const FindingsDigest::Group* FindingsDigest::Find(const Finding& f) const {
  auto it = groups_.find(KeyView(f));
  return it == groups_.end() ? nullptr : &it->second;
}

FindingsDigest::Group& FindingsDigest::GroupOf(const Finding& f) {
  const auto view = KeyView(f);
  auto it = groups_.find(view);
  if (it == groups_.end()) it = groups_.try_emplace(Key(view)).first;  // (the views, owned)
  return it->second;
}

FindingsDigest::State FindingsDigest::TakeState() {
  State s;
  for (auto& [key, g] : groups_) {
    s.groups.push_back({std::move(g.group), g.worst});
  }
  for (size_t i = 0; i < start_ups_.size(); ++i) {
    s.start_ups.emplace_back(start_up_process_[i], std::move(start_ups_[i]));
  }
  std::copy(std::begin(counts_), std::end(counts_), s.counts.begin());
  s.size = size_;
  s.pids.assign(pids_.begin(), pids_.end());
  s.sums = sums_;
  s.host_threads.assign(host_threads_.begin(), host_threads_.end());
  for (const auto& [device, sums] : idle_) {
    for (const auto& [rule, ns] : sums) s.idle.push_back({device.first, device.second, rule, ns});
  }
  s.processes = process_;
  s.first_waits.assign(first_waits_.begin(), first_waits_.end());
  *this = FindingsDigest(keep_all_);
  return s;
}

void FindingsDigest::Merge(State s, const std::function<uint64_t(uint64_t)>& process) {
  for (State::Group& in : s.groups) {
    Order order = in.worst;
    std::get<0>(order) = process(std::get<0>(order));
    Group& group = GroupOf(in.group.worst);
    FindingGroup& g = group.group;
    const bool worst = BecomesWorst(group, in.group.worst.blocked_ns, order);
    g.count += in.group.count;
    g.total_blocked_ns += in.group.total_blocked_ns;
    g.total_host_ns += in.group.total_host_ns;
    if (worst) {
      group.worst = order;
      g.worst = std::move(in.group.worst);
    }
  }
  // Start-up findings in process order, as the processes' findings were added.
  std::vector<std::pair<uint64_t, Finding>> start_ups;
  for (size_t i = 0; i < start_ups_.size(); ++i) {
    start_ups.emplace_back(start_up_process_[i], std::move(start_ups_[i]));
  }
  for (auto& [p, f] : s.start_ups) start_ups.emplace_back(process(p), std::move(f));
  std::stable_sort(start_ups.begin(), start_ups.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  start_ups_.clear();
  start_up_process_.clear();
  for (auto& [p, f] : start_ups) {
    start_up_process_.push_back(p);
    start_ups_.push_back(std::move(f));
  }
  for (size_t k = 0; k < s.counts.size(); ++k) counts_[k] += s.counts[k];
  size_ += s.size;
  pids_.insert(s.pids.begin(), s.pids.end());
  sums_.host += s.sums.host;
  sums_.saving += s.sums.saving;
  sums_.start_up += s.sums.start_up;
  sums_.rank_wait += s.sums.rank_wait;
  sums_.host_in_start_up += s.sums.host_in_start_up;
  sums_.host_in_one_time += s.sums.host_in_one_time;
  sums_.host_waits += s.sums.host_waits;
  for (const auto& [pid, ns] : s.first_waits) {
    auto [first, added] = first_waits_.try_emplace(pid, ns);
    if (!added) first->second = std::min(first->second, ns);
  }
  sums_.gpu_idle_in_one_time += s.sums.gpu_idle_in_one_time;
  sums_.one_time_kinds |= s.sums.one_time_kinds;
  host_threads_.insert(s.host_threads.begin(), s.host_threads.end());
  for (const State::Idle& i : s.idle) idle_[{i.pid, i.device}][i.rule] += i.ns;
}

std::vector<FindingGroup> FindingsDigest::Groups() const {
  std::vector<FindingGroup> out;
  out.reserve(groups_.size());
  for (const auto& [key, g] : groups_) out.push_back(g.group);
  std::stable_sort(out.begin(), out.end(), [](const FindingGroup& a, const FindingGroup& b) {
    if (PaidOnce(a.worst) != PaidOnce(b.worst)) return PaidOnce(b.worst);
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
  // The bound of the waits: per process with waits, its start-up finding's figures.
  std::set<uint32_t> bounded;
  for (const Finding& f : start_ups_) {
    const auto* d = std::get_if<StartUpDetails>(&f.details);
    auto wait = first_waits_.find(f.pid);
    if (d == nullptr || d->active_ns == 0 || wait == first_waits_.end()) continue;
    if (!bounded.insert(f.pid).second) continue;  // (two processes of one pid: the first's)
    const bool after = d->steady_ns > 0 && wait->second >= f.host_start_ns + f.host_duration_ns;
    t.bound_span_ns += after ? d->steady_ns : d->active_ns;
    t.bound_gpu_busy_ns += after ? d->steady_gpu_busy_ns : d->active_gpu_busy_ns;
    t.bound_after_start_up &= after;
  }
  t.bound_processes = bounded.size();
  if (bounded.size() < first_waits_.size()) {  // a process's waits without a bound
    t.bound_span_ns = t.bound_gpu_busy_ns = 0;
  }
  return t;
}

}  // namespace libprof::analysis
