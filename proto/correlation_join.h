// The correlation join: device work -> the API call that issued it, by correlation id. The one
// rule for which call launched an id (LaunchesRather), used by TraceIndex in memory, and
// CorrelationJoin, which joins while records stream in, holding only recent correlation ids: for
// the NVTX GPU projection (which thread launched the work, and when) and for the --tid/--nvtx
// filters (whether a kept call issued it).
//
// Layer: proto/ (beside api_nesting.h, whose decisions it takes). CUDA-free, pure; header-only
// because CorrelationJoin holds records of the caller's type.
//
// The launching call of an id is the first call in file order that is not nested, else the
// first call (a runtime call and the driver call nested in it share the id). Ids are settled
// (the result handed to `settled` and forgotten) in increasing order, each once no call with
// that id is still waiting for its nesting to be decided, its latest record lies `horizon_ns`
// behind the latest record seen (libprof hands over every buffer at each flush, so records
// arrive within a flush interval or so of the newest), and the device records have moved op_lag
// ids past it (a device busy for longer than the horizon has not started it yet); or, to bound
// memory, once the ids held span more than max_span. A call or record that arrives for an id
// already settled sets out_of_order(): the caller then reads the trace again with bounded =
// false, which settles nothing before Finish and is exact for any order.
//
// Most ids have their launching call certain long before they settle: a call that is not nested,
// decided, with no other call of the id undecided (no later call can launch it rather). A caller
// that only needs the call for each record (not the id's total device time) can then take the
// record at once (KnownSite) or have the records held so far handed back at that moment
// (OnKnown), rather than hold every record for a horizon.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <unordered_map>
#include <utility>
#include <vector>

namespace libprof {

// Whether a call (`nested`, at file position `seq`) rather than the `other` one is the launching
// call of the correlation id they share.
constexpr bool LaunchesRather(bool nested, uint64_t seq, bool other_nested, uint64_t other_seq) {
  return nested != other_nested ? !nested : seq < other_seq;
}

// Where and when the launching call of a correlation id ran.
struct LaunchSite {
  bool found = false;  // false: no call with this id is in the (filtered) trace
  uint32_t thread_id = 0;
  uint64_t start_ns = 0;
};

template <typename Record>
class CorrelationJoin {
 public:
  // Called once per correlation id that saw a call or a record: its launching call, the device
  // time added for it and the records held for it, in arrival order.
  using Settled = std::function<void(const LaunchSite& site, uint64_t device_ns,
                                     const std::vector<const Record*>& held)>;
  // Called, when set, as soon as an id's launching call is certain, with the records held for
  // it so far, which are then no longer held (settlement hands over only those held later).
  using Known =
      std::function<void(const LaunchSite& site, const std::vector<const Record*>& held)>;

  // Device records of concurrent streams complete out of order by far fewer ids than kOpLag.
  // kMaxSpan ids cost 32 MiB of slots (4 bytes each, seen or not: PyTorch's calls take ~4 ids
  // per recorded record, the unrecorded queries included): seconds of the densest launch loop.
  static constexpr uint64_t kOpLag = uint64_t{1} << 15;
  static constexpr uint64_t kMaxSpan = uint64_t{1} << 23;

  CorrelationJoin(bool bounded, Settled settled, uint64_t horizon_ns, uint64_t op_lag = kOpLag,
                  uint64_t max_span = kMaxSpan)
      : bounded_(bounded),
        settled_(std::move(settled)),
        horizon_ns_(horizon_ns),
        op_lag_(op_lag),
        max_span_(max_span) {}

  // A call starting at `start_ns` arrived whose nesting is not yet decided: its id stays open
  // until CallDecided.
  void CallSeen(uint64_t corr, uint64_t start_ns) {
    if (Entry* e = Get(corr, start_ns)) ++e->undecided;
  }
  // The call's nesting is decided (CallSeen came first). `seq` is its position in the file.
  void CallDecided(uint64_t corr, uint32_t thread_id, uint64_t start_ns, uint64_t seq,
                   bool nested) {
    Entry* e = Get(corr, start_ns);
    if (e == nullptr) return;
    if (e->undecided > 0) --e->undecided;
    Candidate& c = e->launch;
    if (c.seq == kNone || LaunchesRather(nested, seq, c.nested, c.seq)) {
      c = {seq, thread_id, nested, start_ns};
    }
    if (known_ && e->head != kNone32 && Certain(*e)) {
      HandBack(*e, [&](const std::vector<const Record*>& held) { known_(Site(*e), held); });
    }
  }
  void OnKnown(Known known) { known_ = std::move(known); }
  // The launching call of `corr` if it is certain already, for a record of time `time_ns` (seen
  // as by Hold). nullopt: not yet, or the id was settled.
  std::optional<LaunchSite> KnownSite(uint64_t corr, uint64_t time_ns) {
    const Entry* e = Get(corr, time_ns);
    if (e == nullptr || !Certain(*e)) return std::nullopt;
    return Site(*e);
  }
  // Device time of work with this id (kernel, copy, memset, graph) that ended at `end_ns`.
  void AddDeviceTime(uint64_t corr, uint64_t ns, uint64_t end_ns) {
    if (Entry* e = Get(corr, end_ns)) e->device_ns += ns;
    max_op_ = std::max(max_op_, corr);
  }
  // A record of time `time_ns` to hand back at settlement, when the id's launching call is known.
  void Hold(uint64_t corr, Record record, uint64_t time_ns) {
    Entry* e = Get(corr, time_ns);
    if (e == nullptr) return;
    uint32_t index;
    if (free_.empty()) {
      index = static_cast<uint32_t>(pool_.size());
      pool_.emplace_back();
    } else {
      index = free_.back();
      free_.pop_back();
    }
    pool_[index] = {std::move(record), kNone32};
    // Appended at the tail so records come back in arrival order.
    if (e->tail == kNone32) {
      e->head = index;
    } else {
      pool_[e->tail].next = index;
    }
    e->tail = index;
  }

  // Settles what the horizon and lags allow; call between chunks.
  void SettleOld() {
    if (!bounded_) return;
    while (!window_.empty()) {
      if (window_.front() != kNone32) {
        const Entry& e = entries_[window_.front()];
        const bool old = e.undecided == 0 && e.latest_ns + horizon_ns_ < latest_ns_ &&
                         (max_op_ == 0 || base_ + op_lag_ < max_op_);
        if (!old && window_.size() <= max_span_) break;
      }
      SettleFront();
    }
  }
  void Finish() {
    while (!window_.empty()) SettleFront();
    for (auto& [corr, entry] : unbounded_) Settle(entry);
    unbounded_.clear();
  }
  bool out_of_order() const { return out_of_order_; }

 private:
  static constexpr uint64_t kNone = std::numeric_limits<uint64_t>::max();
  static constexpr uint32_t kNone32 = std::numeric_limits<uint32_t>::max();
  struct Candidate {
    uint64_t seq = kNone;
    uint32_t thread_id = 0;
    bool nested = false;
    uint64_t start_ns = 0;
  };
  struct Entry {
    Candidate launch;  // the launching call so far
    uint64_t device_ns = 0;
    uint64_t latest_ns = 0;  // the latest time of a record with this id
    uint32_t undecided = 0;
    uint32_t head = kNone32;  // held records: a list through pool_
    uint32_t tail = kNone32;
  };
  struct Held {
    Record record;
    uint32_t next = kNone32;
  };
  // The slots of ids base_, base_ + 1, ...: a vector read from `head_`, its front dropped by
  // moving `head_` and compacted once that is half of it (a deque's indexing cost a tenth of
  // the streamed summary).
  class Slots {
   public:
    bool empty() const { return head_ == slots_.size(); }
    size_t size() const { return slots_.size() - head_; }
    uint32_t front() const { return slots_[head_]; }
    uint32_t& operator[](size_t i) { return slots_[head_ + i]; }
    void pop_front() {
      if (++head_ == slots_.size()) {
        slots_.clear();
        head_ = 0;
      } else if (head_ >= 4096 && 2 * head_ >= slots_.size()) {
        slots_.erase(slots_.begin(), slots_.begin() + static_cast<std::ptrdiff_t>(head_));
        head_ = 0;
      }
    }
    void push_front(size_t n, uint32_t value) {
      if (head_ >= n) {
        head_ -= n;
        std::fill_n(slots_.begin() + static_cast<std::ptrdiff_t>(head_), n, value);
      } else {
        slots_.insert(slots_.begin() + static_cast<std::ptrdiff_t>(head_), n, value);
      }
    }
    void resize(size_t n, uint32_t value) { slots_.resize(head_ + n, value); }

   private:
    std::vector<uint32_t> slots_;
    size_t head_ = 0;
  };

  // The entry of `corr`, created if new, for a record of time `time_ns`; nullptr (and
  // out_of_order) if it was settled.
  Entry* Get(uint64_t corr, uint64_t time_ns) {
    latest_ns_ = std::max(latest_ns_, time_ns);
    Entry* e = Find(corr);
    if (e != nullptr) e->latest_ns = std::max(e->latest_ns, time_ns);
    return e;
  }
  Entry* Find(uint64_t corr) {
    if (!bounded_) return &unbounded_[corr];
    if (window_.empty()) base_ = std::max(corr, settled_end_);
    if (corr < base_) {
      if (corr < settled_end_) {
        out_of_order_ = true;  // settled already: the result may be wrong
        return nullptr;
      }
      window_.push_front(base_ - corr, kNone32);  // nothing settled down there
      base_ = corr;
    }
    if (corr - base_ >= max_span_) {
      // Far ahead: settle the front rather than hold a huge window.
      while (!window_.empty() && corr - base_ >= max_span_) SettleFront();
      if (window_.empty()) base_ = settled_end_ = corr;
    }
    if (corr - base_ >= window_.size()) window_.resize(corr - base_ + 1, kNone32);
    uint32_t& slot = window_[corr - base_];
    if (slot == kNone32) {
      if (free_entries_.empty()) {
        slot = static_cast<uint32_t>(entries_.size());
        entries_.emplace_back();
      } else {
        slot = free_entries_.back();
        free_entries_.pop_back();
        entries_[slot] = Entry{};
      }
    }
    return &entries_[slot];
  }
  void SettleFront() {
    if (const uint32_t slot = window_.front(); slot != kNone32) {
      Settle(entries_[slot]);
      free_entries_.push_back(slot);
    }
    window_.pop_front();
    settled_end_ = ++base_;
  }
  // No later call can launch the id rather than the current candidate (LaunchesRather: the
  // call outside first, then the earlier one), and no call seen is still undecided.
  static bool Certain(const Entry& e) {
    return e.launch.seq != kNone && !e.launch.nested && e.undecided == 0;
  }
  static LaunchSite Site(const Entry& e) {
    const Candidate& c = e.launch;
    return c.seq == kNone ? LaunchSite{} : LaunchSite{true, c.thread_id, c.start_ns};
  }
  // Hands the records held for `e` to `use`, in arrival order, and frees them.
  template <typename Use>
  void HandBack(Entry& e, Use use) {
    held_.clear();
    for (uint32_t i = e.head; i != kNone32; i = pool_[i].next) held_.push_back(&pool_[i].record);
    use(held_);
    for (uint32_t i = e.head; i != kNone32; i = pool_[i].next) free_.push_back(i);
    e.head = e.tail = kNone32;
  }
  void Settle(Entry& e) {
    const LaunchSite site = Site(e);
    HandBack(e, [&](const std::vector<const Record*>& held) {
      if (site.found || e.device_ns != 0 || !held.empty()) settled_(site, e.device_ns, held);
    });
  }

  bool bounded_;
  Settled settled_;
  Known known_;
  uint64_t horizon_ns_;
  uint64_t latest_ns_ = 0;
  uint64_t op_lag_;
  uint64_t max_span_;
  Slots window_;  // ids base_, base_ + 1, ...: index into entries_, or none
  std::vector<Entry> entries_;   // of the ids seen; reused once settled
  std::vector<uint32_t> free_entries_;
  std::unordered_map<uint64_t, Entry> unbounded_;
  uint64_t base_ = 0;         // the id of window_.front()
  uint64_t settled_end_ = 0;  // every id below this one was settled
  uint64_t max_op_ = 0;
  std::vector<Held> pool_;
  std::vector<uint32_t> free_;
  std::vector<const Record*> held_;
  bool out_of_order_ = false;
};

}  // namespace libprof
