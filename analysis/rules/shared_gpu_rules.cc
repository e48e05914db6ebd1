#include "analysis/rules/shared_gpu_rules.h"

#include <algorithm>
#include <map>
#include <string>
#include <utility>

#include "analysis/model/units.h"

namespace libprof::analysis {
namespace {

// One process's use of the GPU in question.
struct User {
  const ProcessGpuUse* process;
  const ProcessGpuUse::Gpu* gpu;
  uint64_t span_ns() const { return gpu->last_ns - gpu->first_ns; }
};

// The stretches of time in which two or more users had work on the GPU (first to last
// operation), merged and in order.
std::vector<Interval> SharedStretches(const std::vector<User>& users) {
  std::vector<std::pair<uint64_t, int>> edges;  // (time, +1 start / -1 end), ends first at ties
  for (const User& u : users) {
    edges.emplace_back(u.gpu->first_ns, 1);
    edges.emplace_back(u.gpu->last_ns, -1);
  }
  std::sort(edges.begin(), edges.end());
  std::vector<Interval> shared;
  int active = 0;
  uint64_t from = 0;
  for (const auto& [t, step] : edges) {
    if (active < 2 && active + step >= 2) from = t;
    if (active >= 2 && active + step < 2 && t > from) shared.push_back({from, t});
    active += step;
  }
  return MergeIntervals(std::move(shared));
}

// What a GPU each would save: the time their work ran at once, taking turns (at least the busy
// time beyond the shared time, as their kernel times are stretched by each other's turns, and
// at least what busy time spread independently over the stretch would overlap, pair by pair),
// shared out among them, as each would have run that work alone in 1/n of it. Two processes of
// 600 GEMMs each on one H200 (.carry/s18/two_gemm_same_gpu.py): 2.02 and 2.15 s busy in 2.28 s,
// so 0.95 s, against the 1.17 s each lost (2.17 s a loop against 0.99 s alone).
template <class Sharers>
uint64_t Saving(const Sharers& sharers, uint64_t shared_ns) {
  double busy = 0, pairs = 0;
  for (size_t i = 0; i < sharers.size(); ++i) {
    busy += static_cast<double>(sharers[i].busy_ns);
    for (size_t j = i + 1; j < sharers.size(); ++j) {
      pairs += static_cast<double>(sharers[i].busy_ns) * static_cast<double>(sharers[j].busy_ns);
    }
  }
  const double shared = static_cast<double>(shared_ns);
  const double at_once = std::min(shared, std::max(busy - shared, pairs / shared));
  return static_cast<uint64_t>(at_once / static_cast<double>(sharers.size()));
}

// "a, b and c" (`last` " and ") or "a, b, c" (`last` ", ").
std::string Join(const std::vector<std::string>& items, const char* last) {
  std::string out;
  for (size_t i = 0; i < items.size(); ++i) {
    out += (i == 0 ? "" : i + 1 == items.size() ? last : ", ") + items[i];
  }
  return out;
}

// The finding of one GPU, if its users shared it long enough.
std::optional<Finding> SharedGpuFinding(const std::vector<User>& all, const std::string& host,
                                        const FindingsOptions& options) {
  const std::vector<Interval> shared = SharedStretches(all);
  uint64_t shared_ns = 0;
  for (const Interval& i : shared) shared_ns += i.length();
  if (shared.empty() || shared_ns < options.min_wait_ns) return std::nullopt;
  // Each user's estimated busy time in the shared stretches: its busy time spread evenly over
  // its span. Those with no part in them only used the GPU before or after the others.
  struct Sharer {
    User user;
    uint64_t busy_ns;
  };
  std::vector<Sharer> sharers;
  for (const User& u : all) {
    const std::vector<Interval> own = {{u.gpu->first_ns, u.gpu->last_ns}};
    uint64_t in_shared = 0;
    for (const Interval& i : Intersect(own, shared)) in_shared += i.length();
    if (in_shared == 0) continue;
    const double share = static_cast<double>(in_shared) / static_cast<double>(u.span_ns());
    sharers.push_back({u, static_cast<uint64_t>(static_cast<double>(u.gpu->busy_ns) * share)});
  }
  if (sharers.size() < 2) return std::nullopt;
  std::sort(sharers.begin(), sharers.end(), [](const Sharer& a, const Sharer& b) {
    if (a.user.gpu->first_ns != b.user.gpu->first_ns) {
      return a.user.gpu->first_ns < b.user.gpu->first_ns;
    }
    return a.user.process->pid < b.user.process->pid;
  });
  uint64_t busy_ns = 0;
  std::vector<std::string> pids, busy;
  for (const Sharer& s : sharers) {
    busy_ns += s.busy_ns;
    pids.push_back(std::to_string(s.user.process->pid));
    busy.push_back(FormatDuration(static_cast<double>(s.busy_ns)));
  }
  const User& first = sharers.front().user;
  Finding f;
  f.rule = RuleId::kSharedGpu;
  f.file = first.process->path;
  f.pid = first.process->pid;
  f.device_id = first.gpu->device_id;
  f.host_start_ns =
      shared.front().start_ns - std::min(shared.front().start_ns, first.process->origin_ns);
  f.host_duration_ns = shared.back().end_ns - shared.front().start_ns;
  f.blocked_ns = Saving(sharers, shared_ns);
  f.explanation =
      "processes " + Join(pids, " and ") + (host.empty() ? "" : " on " + host) +
      " ran work on the same GPU (" + first.gpu->uuid + ") at the same time for " +
      FormatDuration(static_cast<double>(shared_ns)) +
      ". CUDA time-slices a GPU between processes (without MPS): while one's work runs the "
      "others' waits, so a kernel's recorded time includes the other processes' turns and each "
      "process's idle GPU time includes their work. Their recorded GPU busy time in that "
      "stretch: about " +
      Join(busy, " and ") + " (" +
      FormatPercent(static_cast<double>(busy_ns), static_cast<double>(shared_ns)) +
      " of it together" +
      (busy_ns > shared_ns ? ": over 100%, so their kernels ran at the same time, taking turns, "
                             "each one's times stretched by the others'"
                           : "") +
      "). Give each process its own GPU (torch.cuda.set_device(local_rank), "
      "CUDA_VISIBLE_DEVICES) unless they are meant to share it (MPS)";
  SharedGpuDetails details;
  details.gpu = first.gpu->uuid;
  details.pids = Join(pids, ", ");
  details.processes = static_cast<uint32_t>(pids.size());
  details.shared_ns = shared_ns;
  details.busy_ns = busy_ns;
  f.details = std::move(details);
  return f;
}

}  // namespace

std::vector<Finding> FindSharedGpus(std::span<const ProcessGpuUse> processes,
                                    const FindingsOptions& options) {
  std::map<std::pair<std::string, std::string>, std::vector<User>> users;  // (host, uuid)
  for (const ProcessGpuUse& p : processes) {
    for (const ProcessGpuUse::Gpu& g : p.gpus) {
      if (g.last_ns > g.first_ns) users[{p.hostname, g.uuid}].push_back({&p, &g});
    }
  }
  std::vector<Finding> out;
  for (const auto& [where, list] : users) {
    if (list.size() < 2) continue;
    if (auto f = SharedGpuFinding(list, where.first, options)) out.push_back(std::move(*f));
  }
  return out;
}

}  // namespace libprof::analysis
