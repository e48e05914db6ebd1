#include "analysis/model/trace_windows.h"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <future>
#include <memory>
#include <iterator>
#include <limits>
#include <mutex>
#include <optional>
#include <thread>
#include <type_traits>
#include <utility>

#include "analysis/model/api_names.h"
#include "analysis/model/device_ops.h"
#include "analysis/model/id_table.h"
#include "analysis/model/nearly_sorted.h"
#include "analysis/model/quiescent_point.h"
#include "proto/chunk_prefetcher.h"
#include "proto/trace_reader.h"

namespace libprof::analysis {
namespace {

// Records whose span keeps a cut from falling inside it: timed, on the host's clock, not NVTX.
template <typename T>
constexpr bool kHoldsCuts = kIsTimed<T> && kHasTime<T> && !std::is_same_v<T, NvtxEvent>;

// Moves [first, last) to the end of *to: copied where a copy is a move (most record kinds), which
// libstdc++ turns into one memmove; a move_iterator range it copies element by element.
template <typename T, typename It>
void AppendRange(std::vector<T>* to, It first, It last) {
  if constexpr (std::is_trivially_copyable_v<T>) {
    to->insert(to->end(), first, last);
  } else {
    to->insert(to->end(), std::make_move_iterator(first), std::make_move_iterator(last));
  }
}

template <typename T>
bool Untimed(const T& r) {
  if constexpr (kHasTime<T>) {
    return StartNs(r) == 0 && EndNs(r) == 0;  // ignored by the recording window too
  } else {
    return true;
  }
}

// The waiting API calls by correlation id, for one try at a cut: the earliest start of the calls
// with an id (a device operation's span starts there) and the last to arrive (the call a copy
// pairs with). One table to the last call, the earliest start kept by call: a try looks up
// every waiting record.
class WaitingCalls {
 public:
  explicit WaitingCalls(const std::vector<ApiCall>& calls) {
    last_.ResetForIds(calls);
    earliest_.resize(calls.size());
    for (uint32_t i = 0; i < calls.size(); ++i) {
      const uint64_t id = calls[i].correlation_id;
      if (id == 0) continue;
      const int64_t before = last_.Find(id);
      earliest_[i] = before < 0 ? calls[i].start_ns
                                : std::min(calls[i].start_ns, earliest_[before]);
      last_.Set(id, i);
    }
  }
  // The waiting call with `id` that arrived last; -1 if none.
  int64_t Last(uint64_t id) const { return id == 0 ? -1 : last_.Find(id); }
  // The earliest start of the waiting calls with the id of Last's call `last`.
  uint64_t EarliestStart(int64_t last) const { return earliest_[last]; }
  // The earliest start of a waiting call with `id`, or none.
  std::optional<uint64_t> Start(uint64_t id) const {
    const int64_t last = Last(id);
    if (last < 0) return std::nullopt;
    return earliest_[last];
  }

 private:
  IdTable last_;
  std::vector<uint64_t> earliest_;  // by call: over the calls of its id up to it
};

// How many lists of records are timed (each has a slot in the Windower's per-list buffers).
size_t CountTimedLists() {
  size_t n = 0;
  const TraceRecords records;
  ForEachList(records, [&]<typename T>(const std::vector<T>&) { n += kIsTimed<T> ? 1 : 0; });
  return n;
}

class Windower {
 public:
  Windower(const WindowLimits& limits, const ChunkPrefetcher& reader, WindowedRead* out,
           const std::function<void(ProcessTrace&, const WindowSpan&)>& window)
      : limits_(limits), reader_(reader), out_(*out), window_(window) {}

  // Takes one chunk: checks its records against what was handed on, keeps them. False once
  // the read is inexact.
  bool Add(TraceRecords& chunk) {
    ++out_.whole.chunks;
    if (chunk.run_end) out_.whole.records.run_end = chunk.run_end;
    ForEachList(chunk, [&]<typename T>(std::vector<T>& list) {
      if (!out_.exact) return;
      if constexpr (kIsTimed<T>) {
        // Checked (and the recording's span widened, as CoverRecords does), then moved in one go.
        for (const T& r : list) {
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
              Cover(StartNs(r), EndNs(r), &lo_, &hi_);
            }
          }
        }
        std::vector<T>& pending = ListOf<T>(pending_);
        AppendRange(&pending, list.begin(), list.end());
        pending_records_ += list.size();
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

  // Each waiting timed record's key, in list order (keys_), and the spans of those that hold
  // cuts and go before `limit` (spans_), in one pass. A key goes before a cut at q when it is
  // below q. A timed record's key is its span's start: a device operation's is the start of the
  // call that issued it, when that call is waiting too (its queued time belongs to it). A
  // record without times goes with the call of its correlation id; an untimed one, at once (0).
  // With `mark_worked`, marks in worked_ the waiting calls (by Last's position) whose id issued
  // device work. The lists are looked at on threads of their own (ForEachTimedList).
  void KeysAndSpans(const WaitingCalls& calls, uint64_t limit, bool mark_worked) {
    keys_.resize(pending_records_);
    if (mark_worked) worked_ = std::make_unique<std::atomic<uint8_t>[]>(pending_.api_calls.size());
    ForEachTimedList([&]<typename T>(const std::vector<T>& list, size_t slot, size_t base) {
      std::vector<Span>& spans = list_spans_[slot];
      spans.clear();
      uint64_t* key_out = keys_.data() + base;
      for (const T& r : list) {
        uint64_t key = 0;
        [[maybe_unused]] int64_t call = -1;  // a device operation's, looked up once
        if constexpr (kIsDeviceOp<T> && kHasCorrelation<T>) {
          call = calls.Last(r.correlation_id);
          if (mark_worked && call >= 0) worked_[call].store(1, std::memory_order_relaxed);
        }
        if constexpr (kHasTime<T>) {
          if (!Untimed(r)) {
            key = StartNs(r);
            if constexpr (kIsDeviceOp<T> && kHasCorrelation<T>) {
              if (call >= 0) key = std::min(key, calls.EarliestStart(call));
            }
            if constexpr (kHoldsCuts<T>) {
              if (key < limit) spans.push_back({key, EndNs(r)});
            }
          }
        } else if constexpr (kHasCorrelation<T>) {
          if (const auto start = calls.Start(r.correlation_id)) key = *start;
        }
        *key_out++ = key;
      }
    });
    spans_.clear();
    for (const std::vector<Span>& spans : list_spans_) {
      spans_.insert(spans_.end(), spans.begin(), spans.end());
    }
  }

  // Spans from each waiting pageable copy's call to the end of the next call of its thread that
  // issued work (worked_, by Last's position) or synchronises (to the end of time while that
  // call has not arrived).
  void AddPageablePairs(uint64_t limit, const WaitingCalls& calls) {
    const std::vector<ApiCall>& waiting = pending_.api_calls;
    std::vector<uint32_t> copy_calls;
    for (const Memcpy& m : pending_.memcpys) {
      if (!IsPageableCopy(m)) continue;
      const int64_t call = calls.Last(m.correlation_id);
      if (call >= 0 && waiting[call].start_ns < limit) copy_calls.push_back(call);
    }
    if (copy_calls.empty()) return;
    std::vector<uint32_t> threads;  // of the copies (a few)
    for (uint32_t call : copy_calls) threads.push_back(waiting[call].thread_id);
    std::sort(threads.begin(), threads.end());
    threads.erase(std::unique(threads.begin(), threads.end()), threads.end());
    // The calls of those threads that end a pair, from the first copy's end on, by start
    // (arrival order on ties; they arrive almost in order).
    uint64_t first_end = UINT64_MAX;
    for (uint32_t call : copy_calls) first_end = std::min(first_end, waiting[call].end_ns);
    std::vector<std::pair<uint64_t, uint32_t>>& enders = enders_;
    enders.clear();
    for (uint32_t i = 0; i < waiting.size(); ++i) {
      const ApiCall& c = waiting[i];
      if (c.start_ns < first_end) continue;
      if (!std::binary_search(threads.begin(), threads.end(), c.thread_id)) continue;
      const int64_t last = calls.Last(c.correlation_id);
      if ((last >= 0 && worked_[last].load(std::memory_order_relaxed) != 0) ||
          Synchronises(c.name_id)) {
        enders.push_back({c.start_ns, i});
      }
    }
    StableSortNearlySorted(enders.begin(), enders.end(),
                           [](const auto& a, const auto& b) { return a.first < b.first; });
    for (uint32_t call : copy_calls) {
      const ApiCall& copy_call = waiting[call];
      auto it = std::lower_bound(enders.begin(), enders.end(),
                                 std::pair<uint64_t, uint32_t>{copy_call.end_ns, 0});
      uint64_t end = UINT64_MAX;
      for (; it != enders.end(); ++it) {
        const ApiCall& next = waiting[it->second];
        if (next.thread_id != copy_call.thread_id || it->second == call) continue;
        end = next.end_ns;
        break;
      }
      spans_.push_back({copy_call.start_ns, end});
    }
  }

  // Whether calls named `name_id` synchronise (explicitly or implicitly); cached per name.
  bool Synchronises(uint32_t name_id) {
    if (name_id >= synchronises_.size()) synchronises_.resize(name_id + 1, -1);
    int8_t& known = synchronises_[name_id];
    if (known < 0) {
      const std::vector<std::string>& names = reader_.strings(0);
      const ApiTraits traits =
          TraitsOf(name_id < names.size() ? std::string_view(names[name_id]) : "");
      known = traits.explicit_sync != SyncScope::kNone || traits.implicit_sync;
    }
    return known == 1;
  }

  // Calls fn(list, slot, base) for each timed list of pending_: `slot` numbers the timed lists,
  // `base` is the index of the list's first key in keys_. The large lists (API calls and kernels,
  // most of a trace; WindowLimits::list_thread_records) each on a thread of their own: a try's
  // passes over the waiting records are most of the cutting thread's work, and it is on every
  // windowed read's critical path.
  template <typename F>
  void ForEachTimedList(F&& fn) {
    std::vector<std::future<void>> running;  // (each waits in its destructor if get() throws)
    size_t slot = 0, base = 0;
    ForEachList(pending_, [&]<typename T>(std::vector<T>& list) {
      if constexpr (kIsTimed<T>) {
        const size_t size = list.size();  // (before fn, which may shorten it)
        if (size >= limits_.list_thread_records) {
          running.push_back(std::async(std::launch::async,
                                       [&fn, &list, slot, base] { fn(list, slot, base); }));
        } else {
          fn(list, slot, base);
        }
        ++slot;
        base += size;
      }
    });
    for (std::future<void>& r : running) r.get();
  }

  // Cuts what lies at least the horizon behind the newest record into windows, at quiescent
  // points after the last cut: about `cut_every_records` each, the last at the latest point.
  void TryCut() {
    std::vector<uint64_t> cuts;
    if (newest_ >= limits_.horizon_ns && newest_ - limits_.horizon_ns > last_cut_) {
      const uint64_t limit = newest_ - limits_.horizon_ns;
      const WaitingCalls calls(pending_.api_calls);
      const bool pairs = limits_.hold_pageable_pairs;
      KeysAndSpans(calls, limit, pairs);
      if (pairs) AddPageablePairs(limit, calls);
      cuts = QuiescentCuts(spans_, last_cut_, limit, limits_.cut_every_records);
    }
    if (cuts.empty()) {
      if (pending_records_ > limits_.max_pending_records) {
        return Inexact("no quiescent point within the pending records' bound");
      }
      // Try again once twice as many wait: each try looks at all that waits, so a stretch
      // without a quiescent point costs O(n log n) in all, not a try per `cut_every_records`.
      next_try_ = std::max(pending_records_ + limits_.cut_every_records, 2 * pending_records_);
      return;
    }
    Split(cuts);
    // The next try once `cut_every_records` have come, or half as many as still wait (the
    // horizon's) if that is more: a try looks at every waiting record, so each is looked at at
    // most about three times however many windows the horizon holds, for at most about 1.5
    // times the horizon's records waiting (a try per window would look at each record as many
    // times as the horizon holds windows). (Waiting for as many as wait looks at each about
    // twice but held 18 MB more at the 10M synthetic trace's findings.)
    next_try_ = pending_records_ + std::max(limits_.cut_every_records, pending_records_ / 2);
  }

  // Hands on the records before each cut as a window (by their key: before cuts[j] and not
  // before cuts[j - 1]); the rest waits, moved to the front of its list (the lists keep their
  // room for the chunks to come).
  void Split(const std::vector<uint64_t>& cuts) {
    const size_t n = cuts.size();
    std::vector<TraceRecords> windows(n);
    for (TraceRecords& w : windows) {
      if (spare_.empty()) break;
      w = std::move(spare_.back());
      spare_.pop_back();
    }
    // Per list (a thread each, ForEachTimedList), per window and for what waits (index n): the
    // smallest and largest correlation id; and how many wait.
    std::vector<std::vector<uint64_t>> list_min(timed_lists_), list_max(timed_lists_);
    std::vector<size_t> list_kept(timed_lists_, 0);
    ForEachTimedList([&]<typename T>(std::vector<T>& list, size_t slot, size_t base) {
      std::vector<uint64_t>& min_corr = list_min[slot];
      std::vector<uint64_t>& max_corr = list_max[slot];
      min_corr.assign(n + 1, UINT64_MAX);
      max_corr.assign(n + 1, 0);
      const uint64_t* key = keys_.data() + base;
      // Runs of records with the same destination move in one go (most records are trivially
      // copyable: a run is a memmove); what waits moves to the front.
      size_t w = 0, run = 0, run_to = 0;
      auto flush = [&](size_t end) {
        if (end == run) return;
        if (run_to < n) {
          AppendRange(&ListOf<T>(windows[run_to]), list.begin() + run, list.begin() + end);
        } else {
          if (w != run) std::move(list.begin() + run, list.begin() + end, list.begin() + w);
          w += end - run;
        }
      };
      for (size_t i = 0; i < list.size(); ++i) {
        const size_t j = n == 1 ? (key[i] < cuts[0] ? 0 : 1)
                                : std::upper_bound(cuts.begin(), cuts.end(), key[i]) -
                                      cuts.begin();
        if constexpr (kHasCorrelation<T>) {
          if (const uint64_t c = list[i].correlation_id; c != 0) {
            min_corr[j] = std::min(min_corr[j], c);
            max_corr[j] = std::max(max_corr[j], c);
          }
        }
        if (j != run_to) {
          flush(i);
          run = i;
          run_to = j;
        }
      }
      flush(list.size());
      list.erase(list.begin() + w, list.end());
      list_kept[slot] = w;
    });
    std::vector<uint64_t> min_corr(n + 1, UINT64_MAX), max_corr(n + 1, 0);
    size_t kept = 0;
    for (size_t slot = 0; slot < timed_lists_; ++slot) {
      kept += list_kept[slot];
      for (size_t j = 0; j < list_min[slot].size(); ++j) {
        min_corr[j] = std::min(min_corr[j], list_min[slot][j]);
        max_corr[j] = std::max(max_corr[j], list_max[slot][j]);
      }
    }
    pending_records_ = kept;
    // What follows a cut must belong after it: a correlation id handed on before means its
    // call or its work went before the cut. (Each group was checked against the windows
    // handed on before this try when it arrived.)
    for (size_t j = 0; j < n; ++j) {
      handed_on_corr_ = std::max(handed_on_corr_, max_corr[j]);
      if (min_corr[j + 1] <= handed_on_corr_) {
        return Inexact("a record waits whose correlation id was handed on");
      }
    }
    for (size_t j = 0; j < n; ++j) {
      const uint64_t from = last_cut_;
      last_cut_ = cuts[j];
      if (windows[j].RecordCount() > 0) Emit(std::move(windows[j]), cuts[j], from);
    }
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
    // The lists handed back, emptied, hold later windows (fresh ones would page-fault again).
    if (spare_.size() < kSpareWindows) {
      spare_.push_back(std::move(w.records));
      EmptyKeepingRoom(&spare_.back());
    }
  }

  const WindowLimits& limits_;
  const ChunkPrefetcher& reader_;  // for the strings read so far
  WindowedRead& out_;
  const std::function<void(ProcessTrace&, const WindowSpan&)>& window_;
  TraceRecords pending_;
  static constexpr size_t kSpareWindows = 4;
  const size_t timed_lists_ = CountTimedLists();  // slots of the per-list buffers
  std::vector<TraceRecords> spare_;  // lists handed back by the caller, emptied
  std::vector<uint64_t> keys_;  // KeysAndSpans', kept for their room
  std::vector<Span> spans_;  // KeysAndSpans', likewise
  std::unique_ptr<std::atomic<uint8_t>[]> worked_;  // by waiting call (KeysAndSpans')
  std::vector<std::vector<Span>> list_spans_ = std::vector<std::vector<Span>>(timed_lists_);
  std::vector<std::pair<uint64_t, uint32_t>> enders_;  // AddPageablePairs', likewise
  std::vector<int8_t> synchronises_;  // by API name id: 1, 0, or -1 not known yet
  size_t pending_records_ = 0;
  size_t next_try_ = limits_.cut_every_records;
  uint64_t newest_ = 0;
  uint64_t last_cut_ = 0;
  uint64_t handed_on_corr_ = 0;
  uint64_t lo_ = std::numeric_limits<uint64_t>::max(), hi_ = 0;
};

// Hands windows from the thread that reads and cuts the trace to the caller's thread, one
// waiting at most, so that cutting the next window overlaps the caller's work on this one; the
// caller's finished windows come back, for their lists' room (the Windower empties them).
class WindowQueue {
 public:
  // The reading thread's: false once the caller stopped taking windows.
  bool Push(ProcessTrace* w, const WindowSpan& span) {
    std::unique_lock lock(mutex_);
    changed_.wait(lock, [&] { return stopped_ || !waiting_; });
    if (stopped_) return false;
    waiting_.emplace(std::move(*w), span);
    w->records = std::exchange(returned_, TraceRecords());  // the caller's last, or none yet
    changed_.notify_all();
    return true;
  }
  void Close() {
    std::lock_guard lock(mutex_);
    closed_ = true;
    changed_.notify_all();
  }
  // The caller's: the next window, or none once the reading thread closed the queue.
  std::optional<std::pair<ProcessTrace, WindowSpan>> Pop() {
    std::unique_lock lock(mutex_);
    changed_.wait(lock, [&] { return waiting_ || closed_; });
    if (!waiting_) return std::nullopt;
    auto w = std::move(waiting_);
    waiting_.reset();
    changed_.notify_all();
    return w;
  }
  void Return(TraceRecords records) {  // emptied by the Windower when it takes them back
    std::lock_guard lock(mutex_);
    returned_ = std::move(records);
  }
  void Stop() {
    std::lock_guard lock(mutex_);
    stopped_ = true;
    changed_.notify_all();
  }

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  std::optional<std::pair<ProcessTrace, WindowSpan>> waiting_;
  TraceRecords returned_;
  bool closed_ = false, stopped_ = false;
};

// Reads and cuts `path` (opened as `reader`) into `out`, handing each window to `emit`; the read's
// error, if any.
std::expected<void, std::string> ReadAndCut(
    const std::string& path, TraceReader& reader, const WindowLimits& limits, WindowedRead* out,
    const std::function<void(ProcessTrace&, const WindowSpan&)>& emit) {
  ChunkPrefetcher chunks(reader, limits.decode_ahead, limits.decoders);
  Windower windower(limits, chunks, out, emit);
  TraceRecords chunk;
  while (chunks.Next(&chunk)) {
    if (chunk.process_index != 0) {
      return std::unexpected(path + ": a chunk names process " +
                             std::to_string(chunk.process_index) + " but the file has 1 header(s)");
    }
    if (!windower.Add(chunk)) return {};
  }
  if (!chunks.error().empty()) return std::unexpected(chunks.error());
  windower.Finish();
  out->whole.strings = reader.strings(0);
  out->whole.truncated = reader.truncated();
  out->whole.windows = {RecordingWindow(out->whole.header.start_time_ns, windower.lo(),
                                        windower.hi(), out->whole.records.run_end)};
  out->whole.origin_ns = out->whole.windows.front().start_ns;
  return {};
}

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
  // A thread reads and cuts while this one runs `window` on the windows cut so far. If `window`
  // throws, the reading thread is stopped and joined before the exception leaves.
  WindowQueue queue;
  std::expected<void, std::string> read;
  std::thread reading([&] {
    try {
      read = ReadAndCut(path, reader, resolved, &out, [&](ProcessTrace& w, const WindowSpan& s) {
        if (!queue.Push(&w, s)) out.exact = false;  // (the caller stopped: nothing uses `out`)
      });
    } catch (const std::exception& e) {
      read = std::unexpected(path + ": reading failed: " + e.what());
    }
    queue.Close();
  });
  struct Joiner {
    WindowQueue& queue;
    std::thread& thread;
    ~Joiner() {
      queue.Stop();
      if (thread.joinable()) thread.join();
    }
  } joiner{queue, reading};
  while (auto w = queue.Pop()) {
    window(w->first, w->second);
    queue.Return(std::move(w->first.records));
  }
  reading.join();
  if (!read) return std::unexpected(read.error());
  if (!out.exact) return out;
  if (reader.truncated()) out.warnings.push_back(TruncationWarning(path, reader.chunks_read()));
  if (const uint64_t dropped = DroppedRecords(out.whole.records); dropped > 0) {
    out.warnings.push_back(DroppedWarning(out.whole, dropped));
  }
  return out;
}

}  // namespace libprof::analysis
