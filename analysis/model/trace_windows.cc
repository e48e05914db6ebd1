#include "analysis/model/trace_windows.h"

#include <algorithm>
#include <iterator>
#include <limits>
#include <optional>
#include <type_traits>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "analysis/model/api_names.h"
#include "analysis/model/device_ops.h"
#include "proto/trace_reader.h"

namespace libprof::analysis {
namespace {

// Records whose span keeps a cut from falling inside it: timed, on the host's clock, not NVTX.
template <typename T>
constexpr bool kHoldsCuts = kIsTimed<T> && kHasTime<T> && !std::is_same_v<T, NvtxEvent>;

template <typename T>
bool Untimed(const T& r) {
  if constexpr (kHasTime<T>) {
    return StartNs(r) == 0 && EndNs(r) == 0;  // ignored by the recording window too
  } else {
    return true;
  }
}

class Windower {
 public:
  Windower(const WindowLimits& limits, TraceReader& reader, WindowedRead* out,
           const std::function<void(ProcessTrace&, const WindowSpan&)>& window)
      : limits_(limits), reader_(reader), out_(*out), window_(window) {}

  // Takes one chunk: checks its records against what was handed on, keeps them. False once
  // the read is inexact.
  bool Add(TraceRecords& chunk) {
    ++out_.whole.chunks;
    CoverRecords(chunk, &lo_, &hi_);
    if (chunk.run_end) out_.whole.records.run_end = chunk.run_end;
    ForEachList(chunk, [&]<typename T>(std::vector<T>& list) {
      if (!out_.exact) return;
      if constexpr (kIsTimed<T>) {
        std::vector<T>& pending = ListOf<T>(pending_);
        for (T& r : list) {
          if constexpr (kHasCorrelation<T>) {
            if (r.correlation_id != 0 && r.correlation_id <= handed_on_corr_) {
              return Inexact("a record arrived whose correlation id was already handed on");
            }
          }
          if constexpr (kHasTime<T>) {
            if (!Untimed(r)) {
              if constexpr (kHoldsCuts<T>) {
                if (StartNs(r) < last_cut_) {
                  return Inexact("a record arrived that starts before the last cut");
                }
              }
              newest_ = std::max(newest_, EndNs(r));
            }
          }
          pending.push_back(std::move(r));
          ++pending_records_;
        }
      } else {
        std::vector<T>& whole = ListOf<T>(out_.whole.records);
        whole.insert(whole.end(), std::make_move_iterator(list.begin()),
                     std::make_move_iterator(list.end()));
      }
    });
    if (out_.exact && pending_records_ >= next_try_) TryCut();
    return out_.exact;
  }

  // The rest, as the last window.
  void Finish() {
    if (!out_.exact) return;
    if (pending_records_ > 0 || out_.windows == 0) Emit(std::move(pending_), UINT64_MAX);
  }

  uint64_t lo() const { return lo_; }
  uint64_t hi() const { return hi_; }

 private:
  void Inexact(const char* why) {
    out_.exact = false;
    out_.why_inexact = why;
  }

  // The latest quiescent point at least the horizon behind the newest record, after the last
  // cut; none when every such time is inside some span.
  std::optional<uint64_t> FindCut(const std::unordered_map<uint64_t, uint64_t>& call_start) const {
    if (newest_ < limits_.horizon_ns) return std::nullopt;
    const uint64_t limit = newest_ - limits_.horizon_ns;
    if (limit <= last_cut_) return std::nullopt;
    std::vector<std::pair<uint64_t, uint64_t>> spans;  // [start, end) of spans starting before limit
    ForEachList(pending_, [&]<typename T>(const std::vector<T>& list) {
      if constexpr (kHoldsCuts<T>) {
        for (const T& r : list) {
          if (Untimed(r)) continue;
          const uint64_t start = EffectiveStart(r, call_start);
          if (start < limit) spans.push_back({start, EndNs(r)});
        }
      }
    });
    if (limits_.hold_pageable_pairs) AddPageablePairs(limit, &spans);
    std::sort(spans.begin(), spans.end());
    std::optional<uint64_t> best;
    uint64_t max_end = 0;
    for (const auto& [start, end] : spans) {
      if (max_end <= start && start > last_cut_) best = start;
      max_end = std::max(max_end, end);
    }
    if (max_end <= limit) best = limit;
    return best;
  }

  // Spans from each waiting pageable copy's call to the end of the next call of its thread that
  // issued work or synchronises (to the end of time while that call has not arrived).
  void AddPageablePairs(uint64_t limit, std::vector<std::pair<uint64_t, uint64_t>>* spans) const {
    std::unordered_map<uint64_t, const ApiCall*> call_of;
    bool any = false;
    for (const Memcpy& m : pending_.memcpys) any = any || IsPageableCopy(m);
    if (!any) return;
    std::unordered_set<uint64_t> working;  // correlation ids that issued device work
    ForEachList(pending_, [&]<typename T>(const std::vector<T>& list) {
      if constexpr (kIsDeviceOp<T> && kHasCorrelation<T>) {
        for (const T& r : list) working.insert(r.correlation_id);
      }
    });
    const std::vector<std::string>& names = reader_.strings(0);
    std::unordered_map<uint32_t, std::vector<const ApiCall*>> by_thread;
    for (const ApiCall& c : pending_.api_calls) {
      call_of[c.correlation_id] = &c;
      by_thread[c.thread_id].push_back(&c);
    }
    for (auto& [tid, calls] : by_thread) {
      std::stable_sort(calls.begin(), calls.end(), [](const ApiCall* a, const ApiCall* b) {
        return a->start_ns < b->start_ns;
      });
    }
    auto ends_pair = [&](const ApiCall& c) {
      if (working.contains(c.correlation_id)) return true;
      const ApiTraits traits =
          TraitsOf(c.name_id < names.size() ? std::string_view(names[c.name_id]) : "");
      return traits.explicit_sync != SyncScope::kNone || traits.implicit_sync;
    };
    for (const Memcpy& m : pending_.memcpys) {
      if (!IsPageableCopy(m)) continue;
      auto call = call_of.find(m.correlation_id);
      if (call == call_of.end() || call->second->start_ns >= limit) continue;
      const ApiCall& copy_call = *call->second;
      // The thread's calls from the copy call's end on (by start: a search, not a scan).
      const std::vector<const ApiCall*>& calls = by_thread[copy_call.thread_id];
      auto it = std::lower_bound(
          calls.begin(), calls.end(), copy_call.end_ns,
          [](const ApiCall* c, uint64_t t) { return c->start_ns < t; });
      uint64_t end = UINT64_MAX;
      for (; it != calls.end(); ++it) {
        if (*it == &copy_call || !ends_pair(**it)) continue;
        end = (*it)->end_ns;
        break;
      }
      spans->push_back({copy_call.start_ns, end});
    }
  }

  // A span's start: a device operation's is the start of the call that issued it, when that call
  // is waiting too (its queued time belongs to it).
  template <typename T>
  static uint64_t EffectiveStart(const T& r,
                                 const std::unordered_map<uint64_t, uint64_t>& call_start) {
    uint64_t start = StartNs(r);
    if constexpr (kIsDeviceOp<T> && kHasCorrelation<T>) {
      if (r.correlation_id != 0) {
        auto it = call_start.find(r.correlation_id);
        if (it != call_start.end()) start = std::min(start, it->second);
      }
    }
    return start;
  }

  void TryCut() {
    std::unordered_map<uint64_t, uint64_t> call_start;
    call_start.reserve(pending_.api_calls.size());
    for (const ApiCall& c : pending_.api_calls) {
      if (c.correlation_id == 0) continue;
      auto [it, added] = call_start.try_emplace(c.correlation_id, c.start_ns);
      if (!added) it->second = std::min(it->second, c.start_ns);
    }
    const std::optional<uint64_t> cut = FindCut(call_start);
    if (!cut) {
      if (pending_records_ > limits_.max_pending_records) {
        return Inexact("no quiescent point within the pending records' bound");
      }
      // Try again once twice as many wait: each try sorts what waits, so a stretch without a
      // quiescent point costs O(n log n) in all, not a sort per `cut_every_records`.
      next_try_ = std::max(pending_records_ + limits_.cut_every_records, 2 * pending_records_);
      return;
    }
    // Before the cut (by their span's start): handed on; the rest waits.
    const uint64_t q = *cut;
    TraceRecords before, after;
    size_t kept = 0;
    ForEachList(pending_, [&]<typename T>(std::vector<T>& list) {
      if constexpr (kIsTimed<T>) {
        std::vector<T>& b = ListOf<T>(before);
        std::vector<T>& a = ListOf<T>(after);
        for (T& r : list) {
          bool left = true;
          if constexpr (kHasTime<T>) {
            if (!Untimed(r)) left = EffectiveStart(r, call_start) < q;
          } else if constexpr (kHasCorrelation<T>) {
            auto it = call_start.find(r.correlation_id);  // with the call that made it
            if (it != call_start.end()) left = it->second < q;
          }
          (left ? b : a).push_back(std::move(r));
        }
        kept += a.size();
      }
    });
    pending_ = std::move(after);
    pending_records_ = kept;
    next_try_ = kept + limits_.cut_every_records;
    const uint64_t from = last_cut_;
    last_cut_ = q;
    ForEachList(before, [&]<typename T>(const std::vector<T>& list) {
      if constexpr (kIsTimed<T> && kHasCorrelation<T>) {
        for (const T& r : list) handed_on_corr_ = std::max(handed_on_corr_, r.correlation_id);
      }
    });
    // What waits must belong to later windows: a correlation id handed on means its call or its
    // work went before the cut.
    ForEachList(pending_, [&]<typename T>(const std::vector<T>& list) {
      if constexpr (kIsTimed<T> && kHasCorrelation<T>) {
        for (const T& r : list) {
          if (out_.exact && r.correlation_id != 0 && r.correlation_id <= handed_on_corr_) {
            Inexact("a record waits whose correlation id was handed on");
          }
        }
      }
    });
    if (out_.exact && before.RecordCount() > 0) Emit(std::move(before), q, from);
  }

  // A window of `records`, ending at `to` and starting at the cut before (`from`; for the last
  // window, the last cut).
  void Emit(TraceRecords records, uint64_t to, std::optional<uint64_t> from = std::nullopt) {
    ProcessTrace w;
    w.path = out_.whole.path;
    w.header = out_.whole.header;
    w.strings = reader_.strings(0);
    w.records = std::move(records);
    ForEachList(out_.whole.records, [&]<typename T>(const std::vector<T>& list) {
      if constexpr (kIsDefinition<T>) ListOf<T>(w.records) = list;
    });
    if (limits_.call_stacks) {
      w.records.stack_modules = out_.whole.records.stack_modules;
      w.records.stack_frames = out_.whole.records.stack_frames;
      w.records.call_stacks = out_.whole.records.call_stacks;
    }
    w.windows = {{0, std::numeric_limits<uint64_t>::max()}};
    ++out_.windows;
    window_(w, WindowSpan{from.value_or(last_cut_), to});
  }

  const WindowLimits& limits_;
  TraceReader& reader_;
  WindowedRead& out_;
  const std::function<void(ProcessTrace&, const WindowSpan&)>& window_;
  TraceRecords pending_;
  size_t pending_records_ = 0;
  size_t next_try_ = limits_.cut_every_records;
  uint64_t newest_ = 0;
  uint64_t last_cut_ = 0;
  uint64_t handed_on_corr_ = 0;
  uint64_t lo_ = std::numeric_limits<uint64_t>::max(), hi_ = 0;
};

}  // namespace

std::expected<WindowedRead, std::string> ReadInWindows(
    const std::string& path, const WindowLimits& limits,
    const std::function<void(const ProcessTrace& window)>& window) {
  return ReadInWindows(path, limits,
                       [&](ProcessTrace& w, const WindowSpan&) { window(w); });
}

std::expected<WindowedRead, std::string> ReadInWindows(
    const std::string& path, const WindowLimits& limits,
    const std::function<void(ProcessTrace& window, const WindowSpan& span)>& window) {
  auto opened = TraceReader::Open(path);
  if (!opened) return std::unexpected(opened.error());
  TraceReader& reader = **opened;
  WindowedRead out;
  out.whole.path = path;
  if (reader.headers().size() != 1) {
    out.exact = false;
    out.why_inexact = "the file holds several processes";
    return out;
  }
  out.whole.header = reader.header();
  WindowLimits resolved = limits;
  if (resolved.horizon_ns == 0) resolved.horizon_ns = ArrivalHorizon(out.whole.header);
  Windower windower(resolved, reader, &out, window);
  TraceRecords chunk;
  while (reader.Next(&chunk)) {
    if (chunk.process_index != 0) {
      return std::unexpected(path + ": a chunk names process " +
                             std::to_string(chunk.process_index) + " but the file has 1 header(s)");
    }
    if (!windower.Add(chunk)) return out;
    chunk = TraceRecords();
  }
  if (!reader.error().empty()) return std::unexpected(reader.error());
  windower.Finish();
  out.whole.strings = reader.strings(0);
  out.whole.truncated = reader.truncated();
  out.whole.windows = {RecordingWindow(out.whole.header.start_time_ns, windower.lo(),
                                       windower.hi(), out.whole.records.run_end)};
  out.whole.origin_ns = out.whole.windows.front().start_ns;
  if (reader.truncated()) out.warnings.push_back(TruncationWarning(path, reader.chunks_read()));
  if (const uint64_t dropped = DroppedRecords(out.whole.records); dropped > 0) {
    out.warnings.push_back(DroppedWarning(out.whole, dropped));
  }
  return out;
}

}  // namespace libprof::analysis
