#include "analysis/metrics/summary_combiner.h"

#include <algorithm>
#include <utility>

namespace libprof::analysis {
namespace {

void MergeInto(const TotalIntervals& part, int64_t offset, TotalIntervals* total) {
  MergeShifted(part.windows, offset, &total->windows);
  MergeShifted(part.host, offset, &total->host);
  MergeShifted(part.device, offset, &total->device);
}

TotalIntervals Shifted(const TotalIntervals& lists, int64_t offset) {
  TotalIntervals out;
  MergeInto(lists, offset, &out);
  return out;
}

bool Contains(const std::vector<uint32_t>& list, uint32_t value) {
  return std::find(list.begin(), list.end(), value) != list.end();
}

}  // namespace

SummaryCombiner::SummaryCombiner(std::optional<bool> same_clock) : same_clock_known_(same_clock) {}

void SummaryCombiner::Add(Summary part, const TraceHeader& header) {
  CombinedState one;
  one.hostname = header.hostname;
  one.timebase = header.timebase;
  one.on_shared_clock = TotalIntervals{std::move(part.windows), std::move(part.host_intervals),
                                       std::move(part.device_intervals)};
  one.uniform_wall_offset = header.wall_clock_offset_ns;
  // Assigning {} would keep the memory.
  std::vector<Interval>().swap(part.windows);
  std::vector<Interval>().swap(part.host_intervals);
  std::vector<Interval>().swap(part.device_intervals);
  one.parts.push_back(std::move(part));
  Merge(std::move(one));
}

void SummaryCombiner::Materialize(CombinedState* s) const {
  if (!s->uniform_wall_offset) return;
  if (WallNeeded()) s->on_wall_clock = Shifted(*s->on_shared_clock, *s->uniform_wall_offset);
  s->uniform_wall_offset.reset();
}

void SummaryCombiner::Merge(CombinedState other) {
  if (other.parts.empty()) return;
  for (const Summary& p : other.parts) rows_.Add(p, 0);  // parts carry no interval lists
  CombinedState& s = state_;
  if (s.parts.empty()) {
    s = std::move(other);
  } else {
    const bool same_clock = s.same_clock && other.same_clock && s.hostname == other.hostname &&
                            s.timebase == other.timebase;
    // Wall-clock unions as lists once the parts' offsets differ, or once the shared-clock
    // lists they are kept as are dropped.
    if (!same_clock || s.uniform_wall_offset != other.uniform_wall_offset) {
      Materialize(&s);
      Materialize(&other);
    }
    if (same_clock && s.on_shared_clock && other.on_shared_clock) {
      MergeInto(*other.on_shared_clock, 0, &*s.on_shared_clock);
    }
    if (s.on_wall_clock && other.on_wall_clock) {
      MergeInto(*other.on_wall_clock, 0, &*s.on_wall_clock);
    }
    s.same_clock = same_clock;
    s.parts.insert(s.parts.end(), std::make_move_iterator(other.parts.begin()),
                   std::make_move_iterator(other.parts.end()));
  }
  // Drop what can no longer be the answer.
  if (!s.same_clock || !SharedNeeded()) {
    Materialize(&s);
    s.on_shared_clock.reset();
  }
  if (!WallNeeded()) {
    s.uniform_wall_offset.reset();
    s.on_wall_clock.reset();
  }
}

void SummaryCombiner::SortParts() {
  std::stable_sort(state_.parts.begin(), state_.parts.end(),
                   [](const Summary& a, const Summary& b) { return a.path < b.path; });
}

SummaryReport SummaryCombiner::Finish() {
  SummaryReport report;
  if (state_.parts.size() == 1) {
    report.total = state_.parts.front();
  } else if (!state_.parts.empty()) {
    report.total = rows_.Finish();
    const bool shared = same_clock_known_.value_or(state_.same_clock);
    if (!shared) Materialize(&state_);
    const TotalIntervals& lists = shared ? *state_.on_shared_clock : *state_.on_wall_clock;
    for (const Interval& i : lists.windows) report.total.trace_ns += i.length();
    for (const Interval& i : lists.host) report.total.host_api_ns += i.length();
    for (const Interval& i : lists.device) report.total.gpu_busy_ns += i.length();
  }
  report.parts = std::move(state_.parts);
  state_ = CombinedState{};
  rows_ = SummaryTotal();
  return report;
}

CombinedState SummaryCombiner::TakeState() {
  CombinedState out = std::move(state_);
  state_ = CombinedState{};
  rows_ = SummaryTotal();
  return out;
}

std::expected<void, std::string> CheckFiltersMatched(const FilterOptions& filters,
                                                     const std::vector<uint32_t>& pids_seen,
                                                     const std::vector<uint32_t>& threads_seen,
                                                     bool any_part) {
  for (uint32_t pid : filters.pids) {
    if (!Contains(pids_seen, pid)) {
      return std::unexpected("no process with pid " + std::to_string(pid) + " in the traces");
    }
  }
  if ((filters.from_ns || filters.to_ns) &&
      filters.from_ns.value_or(0) >= filters.to_ns.value_or(UINT64_MAX)) {
    return std::unexpected("--from must be earlier than --to");
  }
  for (uint32_t tid : filters.tids) {
    if (!Contains(threads_seen, tid)) {
      return std::unexpected("no activity of thread " + std::to_string(tid) + " in the traces");
    }
  }
  if (!any_part) {
    std::string names;
    for (const std::string& n : filters.nvtx) names += (names.empty() ? "'" : ", '") + n + "'";
    return std::unexpected("no NVTX range named " + names + " in the traces");
  }
  return {};
}

}  // namespace libprof::analysis
