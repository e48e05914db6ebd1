// Joins device work to the API call that issued it (by correlation id) while records stream in,
// holding only recent correlation ids: for the NVTX GPU projection (which thread launched the
// work, and when) and for the --tid/--nvtx filters (whether a kept call issued it).
//
// Layer: viewer-cli/ analysis library. Pure; header-only because it holds records of the
// caller's type.
//
// The launching call of an id is TraceIndex::LaunchingCall's: the first call in file order that is
// not nested, else the first call. An id is settled (its result handed to `settled` and
// forgotten) once the device records have moved op_lag ids past it, or any record call_lag ids
// past it, and no call with that id is still waiting for its nesting to be decided. A call or
// record that arrives for an id already settled sets out_of_order(): the caller then reads the
// trace again with bounded = false, which settles nothing before Finish and is exact for any
// order.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <limits>
#include <unordered_map>
#include <utility>
#include <vector>

namespace libprof::viewer {

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

  // CUPTI delivers device records within a flush interval of their launch; at a million launches
  // a second that is up to ~10^6 ids behind the newest call (libprof flushes every second), and
  // device records of concurrent streams complete out of order by far fewer ids than kOpLag.
  static constexpr uint64_t kOpLag = uint64_t{1} << 15;
  static constexpr uint64_t kCallLag = uint64_t{1} << 20;

  CorrelationJoin(bool bounded, Settled settled, uint64_t op_lag = kOpLag,
                  uint64_t call_lag = kCallLag)
      : bounded_(bounded), settled_(std::move(settled)), op_lag_(op_lag), call_lag_(call_lag) {}

  // A call arrived whose nesting is not yet decided: its id stays open until CallDecided.
  void CallSeen(uint64_t corr) {
    if (Entry* e = Get(corr)) ++e->undecided;
    max_call_ = std::max(max_call_, corr);
  }
  // The call's nesting is decided (CallSeen came first). `seq` is its position in the file.
  void CallDecided(uint64_t corr, uint32_t thread_id, uint64_t start_ns, uint64_t seq,
                   bool nested) {
    Entry* e = Get(corr);
    if (e == nullptr) return;
    if (e->undecided > 0) --e->undecided;
    Candidate& slot = nested ? e->first : e->first_unnested;
    if (seq < slot.seq) slot = {seq, thread_id, start_ns};
    if (!nested && seq < e->first.seq) e->first = {seq, thread_id, start_ns};
  }
  // Device time of work with this id (kernel, copy, memset, graph).
  void AddDeviceTime(uint64_t corr, uint64_t ns) {
    if (Entry* e = Get(corr)) e->device_ns += ns;
    max_op_ = std::max(max_op_, corr);
  }
  // A record to hand back at settlement, when the id's launching call is known.
  void Hold(uint64_t corr, Record record) {
    Entry* e = Get(corr);
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

  // Settles what the lags allow; call between chunks.
  void SettleOld() {
    if (!bounded_) return;
    while (!window_.empty()) {
      const Entry& front = window_.front();
      const bool ops_moved_on = front.undecided == 0 && base_ + op_lag_ < max_op_;
      const bool calls_moved_on = base_ + call_lag_ < std::max(max_call_, max_op_);
      if (!ops_moved_on && !calls_moved_on) break;
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
    uint64_t start_ns = 0;
  };
  struct Entry {
    Candidate first;           // the first call, nested or not
    Candidate first_unnested;  // the first call that is not nested
    uint64_t device_ns = 0;
    uint32_t undecided = 0;
    uint32_t head = kNone32;  // held records: a list through pool_
    uint32_t tail = kNone32;
  };
  struct Held {
    Record record;
    uint32_t next = kNone32;
  };

  // The entry of `corr`, created if new; nullptr (and out_of_order) if it was settled.
  Entry* Get(uint64_t corr) {
    if (!bounded_) return &unbounded_[corr];
    if (window_.empty() && corr >= settled_end_) base_ = corr;
    if (corr < base_) {
      // Below the window: fine unless that id was settled already (or is absurdly far back).
      if (corr < settled_end_ || base_ - corr >= call_lag_) {
        out_of_order_ = true;
        return nullptr;
      }
      window_.insert(window_.begin(), base_ - corr, Entry{});
      base_ = corr;
    }
    if (corr - base_ >= call_lag_) {
      // An id far ahead of the window: settle what is there and jump, rather than hold a
      // window of empty entries. Records of the skipped ids arriving later are out of order.
      while (!window_.empty() && corr - base_ >= call_lag_) SettleFront();
      if (window_.empty()) base_ = settled_end_ = corr;
    }
    if (corr - base_ >= window_.size()) window_.resize(corr - base_ + 1);
    return &window_[corr - base_];
  }
  void SettleFront() {
    Settle(window_.front());
    window_.pop_front();
    settled_end_ = ++base_;
  }
  void Settle(Entry& e) {
    LaunchSite site;
    const Candidate& c = e.first_unnested.seq != kNone ? e.first_unnested : e.first;
    if (c.seq != kNone) site = {true, c.thread_id, c.start_ns};
    held_.clear();
    for (uint32_t i = e.head; i != kNone32; i = pool_[i].next) held_.push_back(&pool_[i].record);
    if (site.found || e.device_ns != 0 || !held_.empty()) settled_(site, e.device_ns, held_);
    for (uint32_t i = e.head; i != kNone32; i = pool_[i].next) free_.push_back(i);
  }

  bool bounded_;
  Settled settled_;
  uint64_t op_lag_;
  uint64_t call_lag_;
  std::deque<Entry> window_;  // ids base_, base_ + 1, ... (bounded)
  std::unordered_map<uint64_t, Entry> unbounded_;
  uint64_t base_ = 0;         // the id of window_.front()
  uint64_t settled_end_ = 0;  // every id below this one was settled
  uint64_t max_call_ = 0;
  uint64_t max_op_ = 0;
  std::vector<Held> pool_;
  std::vector<uint32_t> free_;
  std::vector<const Record*> held_;
  bool out_of_order_ = false;
};

}  // namespace libprof::viewer
