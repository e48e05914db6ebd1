#include "analysis/model/window_filter.h"

#include <algorithm>
#include <type_traits>
#include <utility>

namespace libprof::analysis {

WindowFilter::WindowFilter(FilterOptions options)
    : options_(std::move(options)), tid_seen_(options_.tids.size()) {}

bool WindowFilter::usable() const {
  return options_.from_ns.value_or(0) < options_.to_ns.value_or(UINT64_MAX);
}

std::vector<Interval> WindowFilter::TimeWindows() const {
  // ApplyWindow's: the recording narrowed to [start + from, start + to).
  return Intersect({recording_}, {TimeFilterWindow(recording_.start_ns, options_.from_ns.value_or(0),
                                                   options_.to_ns.value_or(UINT64_MAX))});
}

NvtxSelection WindowFilter::SelectionFor(const ProcessTrace& window) const {
  // KeepInside asks whether a call, an overhead or an NVTX event lies in a range, so a range
  // ending before the earliest of those times answers nothing here: the window's selection is
  // the ranges that end later (what it holds grows with the ranges open over the window).
  uint64_t earliest = UINT64_MAX;
  ForEachList(window.records, [&]<typename T>(const std::vector<T>& list) {
    if constexpr (kHasThread<T> && kHasTime<T>) {
      for (const T& x : list) earliest = std::min({earliest, StartNs(x), EndNs(x)});
    }
  });
  NvtxSelection selection;
  for (const NvtxRange& r : ranges_) {
    if (r.end_ns >= earliest) selection.Add(r);
  }
  selection.Seal();
  return selection;
}

bool WindowFilter::Learn(ProcessTrace* window, const WindowSpan& span) {
  if (!pid_seen_) {
    pid_seen_ = true;
    pid_ = window->header.pid;
    pid_kept_ = options_.pids.empty() ||
                std::find(options_.pids.begin(), options_.pids.end(), pid_) != options_.pids.end();
    if (!recording_known_) recording_ = {window->header.start_time_ns, UINT64_MAX};
  }
  if (!pid_kept_) return false;
  if (timed()) {
    KeepStartingIn(window, TimeWindows());
    if (!recording_known_) {
      ForEachList(window->records, [&]<typename T>(const std::vector<T>& list) {
        if constexpr (kHasTime<T>) {
          for (const T& x : list) latest_kept_ns_ = std::max(latest_kept_ns_, StartNs(x));
          kept_any_ = kept_any_ || !list.empty();
        }
      });
    }
  }
  if (!options_.tids.empty()) {
    for (size_t i = 0; i < options_.tids.size(); ++i) {
      tid_seen_[i] = tid_seen_[i] || HasThreadActivity(*window, options_.tids[i]);
    }
    KeepThreads(window, options_.tids);
  }
  if (!options_.nvtx.empty()) {
    if (!ranges_known_) {
      std::unordered_set<uint32_t> defined;
      for (const NvtxDomain& d : window->records.nvtx_domains) defined.insert(d.id);
      for (const NvtxEvent& e : window->records.nvtx_events) {
        if (e.kind != NvtxKind::kMark && e.domain_id != 0 && !defined.contains(e.domain_id)) {
          unknown_domains_.insert(e.domain_id);
        }
      }
      for (const NvtxRange& r : MatchingRanges(*window, options_.nvtx)) {
        // Only a range that arrived after the cut before its start can hold records of
        // earlier windows (every other record of a window starts after that cut).
        late_range_ = late_range_ || r.start_ns < span.from_ns;
        ranges_.push_back(r);
      }
    }
    const NvtxKept kept = KeepInside(window, SelectionFor(*window));
    if (!ranges_known_) {  // (the first read's count; a read again is the same trace)
      nvtx_device_ns_ += kept.device_ns;
      nvtx_left_out_ns_ += kept.left_out_ns;
    }
  }
  return true;
}

WindowFilter::Outcome WindowFilter::Settle(const ProcessTrace& whole, std::string* why) {
  if (!pid_kept_) return Outcome::kExact;  // nothing to analyse
  for (const NvtxDomain& d : whole.records.nvtx_domains) {
    if (unknown_domains_.contains(d.id)) {
      *why = "an NVTX domain defined after ranges that name it";
      return Outcome::kInexact;
    }
  }
  Outcome outcome = Outcome::kExact;
  if (!recording_known_) {
    const Interval recording = whole.windows.empty() ? Interval{} : whole.windows.front();
    // The first read kept [header's start + from, + to): the same records when the recording
    // starts there and no kept record starts at its end or later.
    if (timed() && (recording.start_ns != recording_.start_ns ||
                    (kept_any_ && latest_kept_ns_ >= recording.end_ns))) {
      outcome = Outcome::kReadAgain;
    }
    recording_ = recording;
    recording_known_ = true;
  }
  if (!ranges_known_) {
    if (late_range_) outcome = Outcome::kReadAgain;
    ranges_known_ = true;
  }
  return outcome;
}

void WindowFilter::Apply(ProcessTrace* window) const {
  if (!pid_kept_) return;
  if (timed()) KeepStartingIn(window, TimeWindows());
  if (!options_.tids.empty()) KeepThreads(window, options_.tids);
  if (!options_.nvtx.empty()) KeepInside(window, SelectionFor(*window));
}

FilterMatches WindowFilter::matches() const {
  // As FilterProcesses notes them for this process: threads in the order asked.
  FilterMatches m;
  if (!pid_kept_) return m;
  if (!options_.pids.empty()) m.pids = {pid_};
  for (size_t i = 0; i < options_.tids.size(); ++i) {
    const uint32_t tid = options_.tids[i];
    if (tid_seen_[i] && std::find(m.tids.begin(), m.tids.end(), tid) == m.tids.end()) {
      m.tids.push_back(tid);
    }
  }
  m.nvtx = !options_.nvtx.empty() && !ranges_.empty();
  m.nvtx_device_ns = nvtx_device_ns_;
  m.nvtx_left_out_ns = nvtx_left_out_ns_;
  return m;
}

bool WindowFilter::kept() const {
  return pid_kept_ && (options_.nvtx.empty() || !ranges_.empty());
}

std::vector<Interval> WindowFilter::Windows(const ProcessTrace& whole) const {
  // ApplyWindow's and ApplyNvtx's narrowing of the recording.
  std::vector<Interval> windows = whole.windows;
  if (timed()) {
    windows = Intersect(windows, {TimeFilterWindow(whole.start_ns(), options_.from_ns.value_or(0),
                                                   options_.to_ns.value_or(UINT64_MAX))});
  }
  if (!options_.nvtx.empty()) {
    NvtxSelection all;
    for (const NvtxRange& r : ranges_) all.Add(r);
    all.Seal();
    windows = Intersect(windows, all.spans());
  }
  return windows;
}

}  // namespace libprof::analysis
