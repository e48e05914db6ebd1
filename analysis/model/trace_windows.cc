#include "analysis/model/trace_windows.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <condition_variable>
#include <ctime>
#include <exception>
#include <functional>
#include <iterator>
#include <limits>
#include <mutex>
#include <optional>
#include <thread>
#include <tuple>
#include <type_traits>
#include <unordered_map>
#include <utility>

#include "analysis/model/api_names.h"
#include "analysis/model/device_ops.h"
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

// Room in *v for `more` elements, grown as push_back grows it (twice the size).
template <typename T>
void MakeRoom(std::vector<T>* v, size_t more) {
  if (v->size() + more > v->capacity()) v->reserve(std::max(v->size() + more, 2 * v->size()));
}

template <typename T>
bool Untimed(const T& r) {
  if constexpr (kHasTime<T>) {
    return StartNs(r) == 0 && EndNs(r) == 0;  // ignored by the recording window too
  } else {
    return true;
  }
}

// The waiting API calls by correlation id, kept from chunk to chunk (a try used to build a table
// over every waiting call): the last to arrive, by its place in the waiting list (the call a
// copy pairs with, and whose start is the earliest of its id's where only one waits), and where
// several calls share an id, the earliest start (a device operation's span starts there). Ids
// are dense (CUPTI numbers calls as they start) and those handed on leave from the front: a
// table by id from the smallest that waits (its front dropped once it is half the table); a
// hash map once they turn sparse.
class WaitingCalls {
 public:
  // Whether a call arrived while one with its id waited (then a later call can lower a key
  // already found: the tries find every key again).
  bool repeated_ids() const { return repeated_ids_; }
  // The waiting call with `id` that arrived last (its place in the waiting list); -1 if none.
  int64_t Last(uint64_t id) const {
    const uint32_t* last = const_cast<WaitingCalls*>(this)->Lookup(id);
    return last == nullptr ? -1 : int64_t{*last};
  }
  // The earliest start of the waiting calls with `id`, whose Last is `last`; `starts`: the
  // waiting calls', by place.
  uint64_t EarliestStart(uint64_t id, int64_t last, const std::vector<uint64_t>& starts) const {
    if (repeated_ids_) {
      if (auto it = earliest_.find(id); it != earliest_.end()) return it->second;
    }
    return starts[last];
  }

  // A call arrived, at `place` in the waiting list (`starts`, the waiting calls').
  void Arrived(uint64_t id, uint32_t place, const std::vector<uint64_t>& starts) {
    if (id == 0) return;
    uint32_t& last = Slot(id);
    if (last != kNone) {
      repeated_ids_ = true;
      auto [it, added] = earliest_.try_emplace(id, starts[last]);
      it->second = std::min(it->second, starts[place]);
    } else {
      ++waiting_;
    }
    last = place;
  }
  // The call at `from` moved to `to` in the waiting list.
  void Moved(uint64_t id, uint32_t from, uint32_t to) {
    uint32_t* last = Lookup(id);
    if (last != nullptr && *last == from) *last = to;
  }
  // The call at `place` left (into a window).
  void Left(uint64_t id, uint32_t place) {
    uint32_t* last = Lookup(id);
    if (last == nullptr || *last != place) return;  // (a later call with its id still waits)
    *last = kNone;
    --waiting_;
    if (sparse_mode_) sparse_.erase(id);
    if (repeated_ids_) earliest_.erase(id);
  }
  // Drops the ids before the first that waits (after the calls of a split left).
  void Trim() {
    while (front_ < dense_.size() && dense_[front_] == kNone) ++front_;
    if (front_ == dense_.size()) {
      dense_.clear();
      front_ = 0;
    } else if (front_ > dense_.size() / 2) {
      dense_.erase(dense_.begin(), dense_.begin() + front_);
      base_ += front_;
      front_ = 0;
    }
  }

 private:
  static constexpr uint32_t kNone = UINT32_MAX;
  static constexpr uint64_t kRoomAhead = 4096;  // slots made at once for later ids

  // The place of the last waiting call with `id`, or null.
  uint32_t* Lookup(uint64_t id) {
    if (id == 0) return nullptr;
    if (sparse_mode_) {
      auto it = sparse_.find(id);
      return it == sparse_.end() ? nullptr : &it->second;
    }
    if (id < base_ || id - base_ >= dense_.size()) return nullptr;
    uint32_t& last = dense_[id - base_];
    return last == kNone ? nullptr : &last;
  }
  // The place of `id`, made room for.
  uint32_t& Slot(uint64_t id) {
    if (!sparse_mode_) {
      if (dense_.empty()) base_ = id;
      // Room for ids this far apart costs more than a hash map: 4 slots a waiting call.
      const uint64_t lo = std::min(base_, id);
      const uint64_t hi = std::max(base_ + dense_.size(), id + 1);
      if (hi - lo <= 4 * (uint64_t{waiting_} + 1) + 65536) {
        if (id < base_) {
          dense_.insert(dense_.begin(), base_ - id, kNone);
          front_ = 0;
          base_ = id;
        } else if (id - base_ >= dense_.size()) {
          // Room for the next ids too: a resize per call (each call's id one past the last)
          // was half of a chunk's arrival for the calls (10M synthetic trace: 0.17 of 0.33 s
          // over four reads on the 2-core machine).
          dense_.resize(id - base_ + 1 + kRoomAhead, kNone);
        }
        return dense_[id - base_];
      }
      sparse_mode_ = true;  // (for good: the ids of this trace are sparse)
      for (size_t i = 0; i < dense_.size(); ++i) {
        if (dense_[i] != kNone) sparse_.emplace(base_ + i, dense_[i]);
      }
      dense_ = std::vector<uint32_t>();
      front_ = 0;
    }
    return sparse_.try_emplace(id, kNone).first->second;
  }

  std::vector<uint32_t> dense_;  // places by id from base_; those before front_ all left
  uint64_t base_ = 0;
  size_t front_ = 0;
  bool sparse_mode_ = false;
  std::unordered_map<uint64_t, uint32_t> sparse_;
  std::unordered_map<uint64_t, uint64_t> earliest_;  // of the ids several waiting calls share
  size_t waiting_ = 0;  // calls with an entry
  bool repeated_ids_ = false;
};

// How many lists of records are timed (each has a slot in the Windower's per-list buffers).
size_t CountTimedLists() {
  size_t n = 0;
  const TraceRecords records;
  ForEachList(records, [&]<typename T>(const std::vector<T>&) { n += kIsTimed<T> ? 1 : 0; });
  return n;
}

// Threads that take the large lists of a Windower's passes (ForEachTimedList), kept for the
// whole read: a chunk's arrival and each try's passes hand a few lists out, hundreds of times a
// read, and starting a thread for each (std::async) cost the cutting thread, on every windowed
// read's critical path, the thread's start and end each time.
class ListThreads {
 public:
  ~ListThreads() {
    {
      std::lock_guard lock(mutex_);
      stopping_ = true;
    }
    changed_.notify_all();
    for (std::thread& t : threads_) t.join();
  }
  // Starts each of `tasks` on a thread of its own; Wait before the next Start. `tasks` must
  // live until then.
  void Start(std::vector<std::function<void()>>* tasks) {
    std::lock_guard lock(mutex_);
    while (threads_.size() < tasks->size()) {
      threads_.emplace_back([this, i = threads_.size()] { Serve(i); });
    }
    tasks_ = tasks;
    running_ = tasks->size();
    error_ = nullptr;
    ++round_;
    changed_.notify_all();
  }
  // Waits for the tasks Start gave out; rethrows the first exception one of them threw.
  void Wait() {
    std::unique_lock lock(mutex_);
    finished_.wait(lock, [&] { return running_ == 0; });
    tasks_ = nullptr;
    if (error_) std::rethrow_exception(std::exchange(error_, nullptr));
  }

 private:
  void Serve(size_t i) {
    uint64_t served = 0;  // the last round this thread looked at
    std::unique_lock lock(mutex_);
    for (;;) {
      changed_.wait(lock, [&] { return stopping_ || round_ != served; });
      if (stopping_) return;
      served = round_;
      if (tasks_ == nullptr || i >= tasks_->size()) continue;  // (not needed this round)
      std::function<void()>& task = (*tasks_)[i];
      lock.unlock();
      std::exception_ptr error;
      try {
        task();
      } catch (...) {
        error = std::current_exception();
      }
      lock.lock();
      if (error && !error_) error_ = error;
      if (--running_ == 0) finished_.notify_all();
    }
  }

  std::mutex mutex_;
  std::condition_variable changed_, finished_;
  std::vector<std::thread> threads_;
  std::vector<std::function<void()>>* tasks_ = nullptr;
  size_t running_ = 0;
  uint64_t round_ = 0;
  std::exception_ptr error_;
  bool stopping_ = false;
};

class Windower {
 public:
  Windower(const WindowLimits& limits, const ChunkPrefetcher& reader, WindowedRead* out,
           const std::function<void(ProcessTrace&, const WindowSpan&)>& window)
      : limits_(limits), reader_(reader), out_(*out), window_(window) {}

  // Takes one chunk: checks its records against what was handed on and keeps them, each list
  // on its own (the large ones on threads of their own, ForEachTimedList: a chunk holds about a
  // window's records); the calls enter calls_ (NoteCalls). False once the read is inexact.
  bool Add(TraceRecords& chunk) {
    ++out_.whole.chunks;
    if (chunk.run_end) out_.whole.records.run_end = chunk.run_end;
    struct Arrival {  // a list's
      const char* inexact = nullptr;  // the first record's that makes the read inexact
      uint64_t newest = 0, lo = UINT64_MAX, hi = 0;
    };
    std::vector<Arrival> arrivals(timed_lists_);
    // Room for the chunk made here (the waiting lists and their keys): lists grown on the
    // threads would come from another malloc arena (LimitMallocArenas), whose free room adds to
    // the main one's (5-10 MB at the 10M synthetic trace).
    size_t room_slot = 0;
    ForEachList(chunk, [&]<typename T>(std::vector<T>& list) {
      if constexpr (kIsTimed<T>) {
        MakeRoom(&ListOf<T>(pending_), list.size());
        MakeRoom(&keys_[room_slot++], list.size());
        if constexpr (std::is_same_v<T, ApiCall>) {
          if (limits_.hold_pageable_pairs) MakeRoom(&worked_, list.size());
        }
      }
    });
    ForEachTimedList(chunk, [&]<typename T>(std::vector<T>& list, size_t slot) {
      Arrival& a = arrivals[slot];
      // Checked (and the recording's span widened, as CoverRecords does), then moved in one go.
      for (const T& r : list) {
        if constexpr (kHasCorrelation<T>) {
          if (r.correlation_id != 0 && r.correlation_id <= handed_on_corr_) {
            a.inexact = "a record arrived whose correlation id was already handed on";
            return;
          }
        }
        if constexpr (kHasTime<T>) {
          if (!Untimed(r)) {
            if constexpr (kHoldsCuts<T>) {
              if (StartNs(r) < last_cut_) {
                a.inexact = "a record arrived that starts before the last cut";
                return;
              }
            }
            a.newest = std::max(a.newest, EndNs(r));
            Cover(StartNs(r), EndNs(r), &a.lo, &a.hi);
          }
        }
      }
      std::vector<T>& pending = ListOf<T>(pending_);
      const size_t first = pending.size();
      AppendRange(&pending, list.begin(), list.end());
      if constexpr (std::is_same_v<T, ApiCall>) NoteCalls(first);
    });
    for (const Arrival& a : arrivals) {  // (in list order: the first list's reason, as one pass)
      if (a.inexact != nullptr) {
        Inexact(a.inexact);
        return false;
      }
      newest_ = std::max(newest_, a.newest);
      lo_ = std::min(lo_, a.lo);
      hi_ = std::max(hi_, a.hi);
    }
    ForEachList(chunk, [&]<typename T>(std::vector<T>& list) {
      if constexpr (kIsTimed<T>) {
        pending_records_ += list.size();
      } else {
        std::vector<T>& whole = ListOf<T>(out_.whole.records);
        whole.insert(whole.end(), std::make_move_iterator(list.begin()),
                     std::make_move_iterator(list.end()));
      }
    });
    if (pending_records_ >= next_try_) TryCut();
    return out_.exact;
  }

  // The rest, as the last window.
  void Finish() {
    if (!out_.exact) return;
    // What waited through tries was checked against the correlation ids handed on when it
    // arrived, not since (Split checks records as they leave).
    bool handed_on = false;
    ForEachList(pending_, [&]<typename T>(const std::vector<T>& list) {
      if constexpr (kIsTimed<T> && kHasCorrelation<T>) {
        for (const T& r : list) {
          handed_on = handed_on || (r.correlation_id != 0 && r.correlation_id <= handed_on_corr_);
        }
      }
    });
    if (handed_on) return Inexact(kHandedOnWaits);
    if (limits_.known_cuts != nullptr && out_.cuts.size() != limits_.known_cuts->size()) {
      return Inexact(kReadDifferently);
    }
    if (pending_records_ > 0 || out_.windows == 0) Emit(std::move(pending_), UINT64_MAX);
  }

  uint64_t lo() const { return lo_; }
  uint64_t hi() const { return hi_; }

 private:
  static constexpr const char* kReadDifferently =
      "the file read differently from the read whose cuts were given";
  static constexpr const char* kHandedOnWaits =
      "a record waits whose correlation id was handed on";
  // The calls' list is the first timed list (record_kinds.h): its slot in the per-list buffers.
  static constexpr size_t kCallSlot = 0;
  static_assert(RecordKind<ApiCall>::kIndex == 0 && kIsTimed<ApiCall>);

  void Inexact(const char* why) {
    out_.exact = false;
    out_.why_inexact = why;
  }

  // Whether a record's key follows the call of its correlation id (a device operation's, or a
  // record without times').
  template <typename T>
  static constexpr bool kKeyFollowsCall =
      kHasCorrelation<T> && ((kIsDeviceOp<T> && kHasTime<T>) || !kHasTime<T>);

  // The calls from `first` on in pending_ enter calls_, with their keys (their starts), read
  // once as they arrive.
  void NoteCalls(size_t first) {
    const std::vector<ApiCall>& calls = pending_.api_calls;
    std::vector<uint64_t>& starts = keys_[kCallSlot];
    for (size_t i = first; i < calls.size(); ++i) {
      starts.push_back(calls[i].start_ns);  // (an untimed call's start is 0, its key)
      calls_.Arrived(calls[i].correlation_id, static_cast<uint32_t>(i), starts);
    }
    if (limits_.hold_pageable_pairs) worked_.resize(calls.size(), 0);
  }

  // Finds `r`'s key: a timed record's is its span's start, and a device operation's is the
  // start of the call that issued it, when that call is waiting too (its queued time belongs to
  // it); a record without times goes with the call of its correlation id; an untimed one, at
  // once (0). With hold_pageable_pairs, marks in worked_ the waiting call (Last) whose id issued
  // device work. True while the call of a key that follows it has not arrived (open_).
  template <typename T>
  bool FindKey(const T& r, uint64_t* key_out) {
    uint64_t key = 0;
    bool waits_for_call = false;
    [[maybe_unused]] int64_t call = -1;  // a device operation's, looked up once
    if constexpr (kIsDeviceOp<T> && kHasCorrelation<T>) {
      call = calls_.Last(r.correlation_id);
      if (call >= 0) {
        if (limits_.hold_pageable_pairs) {
          std::atomic_ref(worked_[call]).store(1, std::memory_order_relaxed);
        }
      } else {
        waits_for_call = r.correlation_id != 0;
      }
    }
    if constexpr (kHasTime<T>) {
      if (!Untimed(r)) {
        key = StartNs(r);
        if constexpr (kIsDeviceOp<T> && kHasCorrelation<T>) {
          if (call >= 0) {
            key = std::min(key, calls_.EarliestStart(r.correlation_id, call, keys_[kCallSlot]));
          }
        }
      }
    } else if constexpr (kHasCorrelation<T>) {
      if (const int64_t last = calls_.Last(r.correlation_id); last >= 0) {
        key = calls_.EarliestStart(r.correlation_id, last, keys_[kCallSlot]);
      } else {
        waits_for_call = r.correlation_id != 0;
      }
    }
    *key_out = key;
    return waits_for_call;
  }

  // The keys of the records that arrived since the last try and of those a call arriving since
  // may have changed, and `with_spans` (unless the cuts are known) the spans of the waiting
  // records that hold cuts and go before `limit` (spans_): a span runs from its record's key to its end. A key goes before a cut at q when it
  // is below q. A key found by a try stays its key but where its call had not arrived (open_:
  // found again until it has) or where a call arrived while one with its id waited (then every
  // key that follows a call is found again, and the marks in worked_ with it). A call leaves no
  // earlier than the work it issued, whose key is at most its own; one that left before its
  // work makes the read inexact. So each record is looked up once, and the horizon's records,
  // which wait through about three tries, have their keys read, not their records, but for
  // their spans. The lists are looked at on threads of their own (ForEachTimedList).
  void KeysAndSpans(uint64_t limit, bool with_spans) {
    const bool again = calls_.repeated_ids();
    if (again) std::fill(worked_.begin(), worked_.end(), 0);
    ForEachTimedList([&]<typename T>(const std::vector<T>& list, size_t slot) {
      std::vector<uint64_t>& keys = keys_[slot];
      if constexpr (!std::is_same_v<T, ApiCall>) {  // (the calls' keys are their starts)
        std::vector<uint32_t>& open = open_[slot];
        size_t from = keyed_[slot];
        if (kKeyFollowsCall<T> && again) {
          from = 0;
          open.clear();
        }
        size_t still_open = 0;
        for (const uint32_t i : open) {
          if (FindKey(list[i], &keys[i])) open[still_open++] = i;
        }
        open.resize(still_open);
        keys.resize(list.size());
        for (size_t i = from; i < list.size(); ++i) {
          if (FindKey(list[i], &keys[i])) open.push_back(static_cast<uint32_t>(i));
        }
        keyed_[slot] = list.size();
      }
      std::vector<Span>& spans = list_spans_[slot];
      spans.clear();
      if (!with_spans) return;  // (known cuts)
      if constexpr (kHoldsCuts<T>) {
        for (size_t i = 0; i < list.size(); ++i) {
          if (keys[i] < limit && !Untimed(list[i])) spans.push_back({keys[i], EndNs(list[i])});
        }
      }
    });
    spans_.clear();
    for (const std::vector<Span>& spans : list_spans_) {
      spans_.insert(spans_.end(), spans.begin(), spans.end());
    }
  }

  // Spans from each waiting pageable copy's call to the end of the next call of its thread that
  // issued work (worked_, by Last's position) or synchronises (to the end of time while that
  // call has not arrived): the first such call by start (arrival order on ties) that starts at
  // or after the copy's call ends, other than that call. The calls' starts are their keys; only
  // the calls that could still end a pair are looked at closely: none starting after the two
  // first that end the copy ending last on each thread.
  void AddPageablePairs(uint64_t limit) {
    const std::vector<ApiCall>& waiting = pending_.api_calls;
    const std::vector<uint64_t>& starts = keys_[kCallSlot];
    std::vector<uint32_t> copy_calls;  // in the copies' order
    for (const Memcpy& m : pending_.memcpys) {
      if (!IsPageableCopy(m)) continue;
      const int64_t call = calls_.Last(m.correlation_id);
      if (call >= 0 && starts[call] < limit) copy_calls.push_back(static_cast<uint32_t>(call));
    }
    if (copy_calls.empty()) return;
    // The copies' calls by thread, then end (a few). A call that ends the copies sorted at
    // [first, k) of its thread's (those ending by its start) is offered to slot k - 1 of best,
    // which keeps the two first of each slot; a copy's pair ends at the first of its slot and
    // those after it that is not its own call.
    struct Copy {
      uint32_t thread;
      uint64_t end;
      uint32_t call;
      bool operator<(const Copy& o) const {
        return std::tie(thread, end, call) < std::tie(o.thread, o.end, o.call);
      }
    };
    std::vector<Copy> copies;
    for (const uint32_t call : copy_calls) {
      copies.push_back({waiting[call].thread_id, waiting[call].end_ns, call});
    }
    std::sort(copies.begin(), copies.end());
    struct Group {  // one thread's copies: [first, last) of copies
      uint32_t thread;
      size_t first, last;
    };
    std::vector<Group> groups;
    uint64_t first_end = UINT64_MAX;
    for (size_t k = 0; k < copies.size(); ++k) {
      first_end = std::min(first_end, copies[k].end);
      if (groups.empty() || groups.back().thread != copies[k].thread) {
        groups.push_back({copies[k].thread, k, k});
      }
      groups.back().last = k + 1;
    }
    using Ender = std::pair<uint64_t, uint32_t>;  // start, place: the order calls end pairs in
    constexpr Ender kNone{UINT64_MAX, UINT32_MAX};
    std::vector<std::array<Ender, 2>> best(copies.size(), {kNone, kNone});
    auto offer = [](std::array<Ender, 2>& two, const Ender& e) {
      if (e < two[0]) {
        two[1] = two[0];
        two[0] = e;
      } else if (e < two[1]) {
        two[1] = e;
      }
    };
    // A call starting after this ends no pair first: the second of the last slot of each thread
    // (every copy's slots include it), the latest over the threads.
    uint64_t bound = UINT64_MAX;
    const bool unique = !calls_.repeated_ids();  // (then a call is the last of its id)
    for (uint32_t i = 0; i < waiting.size(); ++i) {
      const uint64_t start = starts[i];
      if (start < first_end || start > bound) continue;
      const ApiCall& c = waiting[i];
      const uint32_t thread = c.thread_id;
      const auto group =
          std::lower_bound(groups.begin(), groups.end(), thread,
                           [](const Group& g, uint32_t t) { return g.thread < t; });
      if (group == groups.end() || group->thread != thread) continue;
      const int64_t last = !unique ? calls_.Last(c.correlation_id) : c.correlation_id != 0 ? i : -1;
      if (!((last >= 0 && worked_[last] != 0) || Synchronises(c.name_id))) continue;
      const size_t k = std::upper_bound(copies.begin() + group->first,
                                        copies.begin() + group->last, start,
                                        [](uint64_t s, const Copy& c) { return s < c.end; }) -
                       copies.begin();
      if (k == group->first) continue;
      offer(best[k - 1], {start, i});
      if (k == group->last) {
        bound = 0;
        for (const Group& g : groups) bound = std::max(bound, best[g.last - 1][1].first);
      }
    }
    for (const Group& g : groups) {
      for (size_t k = g.last - 1; k > g.first; --k) {
        for (const Ender& e : best[k]) offer(best[k - 1], e);
      }
    }
    for (const uint32_t call : copy_calls) {
      const ApiCall& copy_call = waiting[call];
      const size_t k =
          std::lower_bound(copies.begin(), copies.end(),
                           Copy{copy_call.thread_id, copy_call.end_ns, call}) -
          copies.begin();  // (equal copies share their slot's answer: the first holds it)
      const Ender& next = best[k][0].second != call ? best[k][0] : best[k][1];
      spans_.push_back({copy_call.start_ns,
                        next.second == UINT32_MAX ? UINT64_MAX : waiting[next.second].end_ns});
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

  // Calls fn(list, slot) for each timed list of pending_: `slot` numbers the timed lists. The
  // large lists (API calls and kernels, most of a trace; WindowLimits::list_thread_records)
  // each on a thread of their own: a chunk's arrival and a try's passes are the cutting
  // thread's work, and it is on every windowed read's critical path.
  template <typename F>
  void ForEachTimedList(F&& fn) {
    ForEachTimedList(pending_, fn);
  }
  // The same over `records`' lists.
  template <typename F>
  void ForEachTimedList(TraceRecords& records, F&& fn) {
    large_.clear();
    on_thread_.assign(timed_lists_, false);
    size_t slot = 0;
    ForEachList(records, [&]<typename T>(std::vector<T>& list) {
      if constexpr (kIsTimed<T>) {
        if (list.size() >= limits_.list_thread_records) {
          large_.push_back([&fn, &list, slot] { fn(list, slot); });
          on_thread_[slot] = true;
        }
        ++slot;
      }
    });
    if (!large_.empty()) list_threads_.Start(&large_);
    try {
      // The others here, as chosen above: a large list's size changes on its thread meanwhile.
      slot = 0;
      ForEachList(records, [&]<typename T>(std::vector<T>& list) {
        if constexpr (kIsTimed<T>) {
          if (!on_thread_[slot]) fn(list, slot);
          ++slot;
        }
      });
    } catch (...) {
      if (!large_.empty()) {
        try {
          list_threads_.Wait();
        } catch (...) {  // (the first exception, this thread's, is the one passed on)
        }
      }
      throw;
    }
    if (!large_.empty()) list_threads_.Wait();
  }

  // Cuts what lies at least the horizon behind the newest record into windows, at quiescent
  // points after the last cut: about `cut_every_records` each, the last at the latest point; or
  // where limits_.known_cuts says this try cut in an earlier read (a try's cuts depend only on
  // what was read before it, and the tries come after the same chunks).
  void TryCut() {
    std::vector<uint64_t> cuts;
    const bool ready = newest_ >= limits_.horizon_ns && newest_ - limits_.horizon_ns > last_cut_;
    const uint64_t limit = ready ? newest_ - limits_.horizon_ns : 0;
    if (ready) KeysAndSpans(limit, limits_.known_cuts == nullptr);
    if (limits_.known_cuts != nullptr) {
      // This try's cuts as the earlier read made them: after the last cut, by the limit.
      const std::vector<std::vector<uint64_t>>& known = *limits_.known_cuts;
      if (out_.cuts.size() >= known.size()) return Inexact(kReadDifferently);
      cuts = known[out_.cuts.size()];
      uint64_t after = last_cut_;
      for (const uint64_t cut : cuts) {
        if (cut <= after || cut > limit) return Inexact(kReadDifferently);
        after = cut;
      }
    } else if (ready) {
      if (limits_.hold_pageable_pairs) AddPageablePairs(limit);
      cuts = QuiescentCuts(spans_, last_cut_, limit, limits_.cut_every_records);
    }
    out_.cuts.push_back(cuts);
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
    // horizon's) if that is more: a try looks at every waiting record's key, so each is looked
    // at at most about three times however many windows the horizon holds, for at most about
    // 1.5 times the horizon's records waiting (a try per window would look at each record as
    // many times as the horizon holds windows). (Waiting for as many as wait looks at each about
    // twice but held 18 MB more at the 10M synthetic trace's findings.)
    next_try_ = pending_records_ + std::max(limits_.cut_every_records, pending_records_ / 2);
  }

  // Hands on the records before each cut as a window (by their key: before cuts[j] and not
  // before cuts[j - 1]); the rest waits, moved to the front of its list (the lists keep their
  // room for the chunks to come) with what is kept of it (keys_, open_, worked_, the calls'
  // places in calls_).
  void Split(const std::vector<uint64_t>& cuts) {
    const size_t n = cuts.size();
    std::vector<TraceRecords> windows(n);
    for (TraceRecords& w : windows) {
      if (spare_.empty()) break;
      w = std::move(spare_.back());
      spare_.pop_back();
    }
    // Per list (a thread each, ForEachTimedList), per window: the smallest and largest
    // correlation id; and how many wait.
    std::vector<std::vector<uint64_t>> list_min(timed_lists_), list_max(timed_lists_);
    std::vector<size_t> list_kept(timed_lists_, 0);
    ForEachTimedList([&]<typename T>(std::vector<T>& list, size_t slot) {
      std::vector<uint64_t>& min_corr = list_min[slot];
      std::vector<uint64_t>& max_corr = list_max[slot];
      min_corr.assign(n, UINT64_MAX);
      max_corr.assign(n, 0);
      std::vector<uint64_t>& keys = keys_[slot];
      std::vector<uint32_t>& open = open_[slot];
      // Runs of records with the same destination move in one go (most records are trivially
      // copyable: a run is a memmove); what waits moves to the front, with its key, its place
      // in open_ and (calls) its mark in worked_ and its place in calls_.
      size_t w = 0, run = 0, run_to = 0, open_at = 0, open_kept = 0;
      auto flush = [&](size_t end) {
        if (end == run) return;
        const bool waits = run_to == n;
        if constexpr (std::is_same_v<T, ApiCall>) {
          for (size_t k = run; k < end; ++k) {
            const auto place = static_cast<uint32_t>(k);
            if (!waits) {
              calls_.Left(list[k].correlation_id, place);
            } else if (w != run) {
              calls_.Moved(list[k].correlation_id, place, static_cast<uint32_t>(k - run + w));
            }
          }
        }
        if (!waits) {
          AppendRange(&ListOf<T>(windows[run_to]), list.begin() + run, list.begin() + end);
        } else if (w != run) {
          auto slide = [&](auto& v) { std::move(v.begin() + run, v.begin() + end, v.begin() + w); };
          slide(list);
          slide(keys);
          if constexpr (std::is_same_v<T, ApiCall>) {
            if (limits_.hold_pageable_pairs) slide(worked_);
          }
        }
        for (; open_at < open.size() && open[open_at] < end; ++open_at) {
          if (waits) open[open_kept++] = static_cast<uint32_t>(open[open_at] - run + w);
        }
        if (waits) w += end - run;
      };
      for (size_t i = 0; i < list.size(); ++i) {
        const uint64_t key = keys[i];
        const size_t j = n == 1 ? (key < cuts[0] ? 0 : 1)
                                : std::upper_bound(cuts.begin(), cuts.end(), key) - cuts.begin();
        if constexpr (kHasCorrelation<T>) {
          if (j < n) {  // (what waits is checked when it leaves: its record is not read now)
            if (const uint64_t c = list[i].correlation_id; c != 0) {
              min_corr[j] = std::min(min_corr[j], c);
              max_corr[j] = std::max(max_corr[j], c);
            }
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
      keys.resize(w);
      if constexpr (std::is_same_v<T, ApiCall>) {
        if (limits_.hold_pageable_pairs) worked_.resize(w);
      }
      open.resize(open_kept);
      keyed_[slot] = w;
      list_kept[slot] = w;
    });
    calls_.Trim();
    std::vector<uint64_t> min_corr(n, UINT64_MAX), max_corr(n, 0);
    size_t kept = 0;
    for (size_t slot = 0; slot < timed_lists_; ++slot) {
      kept += list_kept[slot];
      for (size_t j = 0; j < n; ++j) {
        min_corr[j] = std::min(min_corr[j], list_min[slot][j]);
        max_corr[j] = std::max(max_corr[j], list_max[slot][j]);
      }
    }
    pending_records_ = kept;
    // A window's records must belong after the cuts before it: a correlation id handed on
    // before means its call or its work went before the cut. (Each record was checked when it
    // arrived against the windows handed on by then; those that waited through tries since
    // are checked now, as they leave, or at the end.)
    for (size_t j = 0; j < n; ++j) {
      if (min_corr[j] <= handed_on_corr_) return Inexact(kHandedOnWaits);
      handed_on_corr_ = std::max(handed_on_corr_, max_corr[j]);
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
  WaitingCalls calls_;
  ListThreads list_threads_;                   // ForEachTimedList's
  std::vector<std::function<void()>> large_;  // its tasks, kept for their room
  std::vector<bool> on_thread_;                // by slot: whether ForEachTimedList gave it out
  // By timed list (slot): each waiting record's key, in list order (NoteCalls', KeysAndSpans'),
  // how many of the list's first records have theirs, and the records whose key waits for
  // their call (by place).
  std::vector<std::vector<uint64_t>> keys_ = std::vector<std::vector<uint64_t>>(timed_lists_);
  std::vector<size_t> keyed_ = std::vector<size_t>(timed_lists_, 0);
  std::vector<std::vector<uint32_t>> open_ = std::vector<std::vector<uint32_t>>(timed_lists_);
  // With hold_pageable_pairs, by waiting call in list order: whether its id issued device work
  // (FindKey's, through atomic_ref on KeysAndSpans' threads).
  std::vector<uint8_t> worked_;
  std::vector<Span> spans_;  // KeysAndSpans', kept for its room
  std::vector<std::vector<Span>> list_spans_ = std::vector<std::vector<Span>>(timed_lists_);
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
    timespec cpu{};
    if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &cpu) == 0) {
      out.cutting_cpu_s = static_cast<double>(cpu.tv_sec) + static_cast<double>(cpu.tv_nsec) / 1e9;
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
  AddRecordingWarnings(path, out.whole.header, out.whole.records, reader.truncated(),
                       &out.warnings);
  return out;
}

}  // namespace libprof::analysis
