// CUDA stream semantics over a trace: which earlier device work an operation issued on a stream
// had to wait for, so that a host wait can be blamed on the work that really caused it.
//
// Layer: analysis/model/. Built on TraceIndex; pure computation.
//
// Rules (CUDA Runtime API, "Stream synchronization behavior"):
// - work on a stream follows all work issued earlier on the same stream;
// - the legacy NULL stream waits for all earlier work on the blocking streams of its context,
//   and blocking streams wait for earlier work on the legacy NULL stream;
// - non-blocking streams (cudaStreamNonBlocking) take part in neither;
// - a per-thread default stream "does not synchronize with other streams (just like explicitly
//   created streams)" but "is not a non-blocking stream and will synchronize with the legacy
//   default stream if both are used": it behaves as a blocking stream;
// - cudaStreamWaitEvent(S, e): work issued on S afterwards follows the work that was issued on
//   e's stream before e was recorded (SYNCHRONIZATION STREAM_WAIT_EVENT + CUDA_EVENT records).
//
// Stream classes come from STREAM records (CUpti_ActivityStreamFlag). cupti_activity.h (13.0)
// documents only DEFAULT, NON_BLOCKING and NULL and says nothing of per-thread default streams;
// we assume a per-thread default stream is reported with flag NULL but a stream id different
// from its context's null stream (CONTEXT record `nullStreamId`), and also recognise it by work
// issued through a `_ptsz`/`_ptds` API when the trace keeps such raw names (libprof's clean
// names drop the suffix, so there the STREAM and CONTEXT records decide). A stream without a STREAM
// record is the legacy NULL stream if it is a context's null stream, per-thread if `_ptsz` work was
// issued on it, and otherwise assumed blocking (cudaStreamCreate's default).
#pragma once

#include <algorithm>
#include <bit>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "analysis/model/trace_index.h"

namespace libprof::analysis {

enum class StreamClass : uint8_t { kLegacyNull, kBlocking, kNonBlocking, kPerThread };
const char* ToString(
    StreamClass c);  // "legacy-default", "blocking", "non-blocking", "per-thread-default"

// A short list of 32-bit ids kept in place while it has one element, as almost every work
// unit's operations and streams do (a graph launch has more): millions of units then cost no
// heap allocation each, and the list is 16 bytes (a vector alone is 24). Used like a
// std::vector; from two elements on they live in a heap array of the next power of two.
class InlineIds {
 public:
  InlineIds() = default;
  InlineIds(const InlineIds& other) { *this = other; }
  InlineIds& operator=(const InlineIds& other) {
    if (this == &other) return *this;
    size_ = other.size_;
    one_ = other.one_;
    more_.reset();
    if (size_ >= 2) {
      more_ = std::make_unique<uint32_t[]>(std::bit_ceil(size_));
      std::copy(other.begin(), other.end(), more_.get());
    }
    return *this;
  }
  InlineIds(InlineIds&& other) noexcept { *this = std::move(other); }
  InlineIds& operator=(InlineIds&& other) noexcept {
    size_ = other.size_;
    one_ = other.one_;
    more_ = std::move(other.more_);
    other.size_ = 0;  // a moved-from list is empty, as a moved-from vector is
    return *this;
  }

  void push_back(uint32_t id) {
    if (size_ == 0) {
      one_ = id;
    } else if (size_ == 1 || std::has_single_bit(size_)) {  // full: twice the room
      auto grown = std::make_unique<uint32_t[]>(size_ * 2);
      std::copy(begin(), end(), grown.get());
      more_ = std::move(grown);
      more_[size_] = id;
    } else {
      more_[size_] = id;
    }
    ++size_;
  }
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  uint32_t* begin() { return size_ <= 1 ? &one_ : more_.get(); }
  uint32_t* end() { return begin() + size_; }
  const uint32_t* begin() const { return size_ <= 1 ? &one_ : more_.get(); }
  const uint32_t* end() const { return begin() + size_; }
  uint32_t front() const { return *begin(); }
  uint32_t operator[](size_t i) const { return begin()[i]; }

 private:
  uint32_t size_ = 0;
  uint32_t one_ = 0;                   // the element while there is one
  std::unique_ptr<uint32_t[]> more_;  // every element, once there are two or more
};

// All device work issued under one correlation id: one kernel or copy, or every node of a graph
// launch (which may run on several internal streams).
struct WorkUnit {
  uint64_t correlation_id = 0;
  uint64_t issue_ns = 0;      // start of the launching API call; the first op's start if unknown
  uint64_t start_ns = 0;      // first op start
  uint64_t end_ns = 0;        // last op end
  InlineIds ops;              // indices into TraceIndex::device_ops()
  InlineIds streams;          // sorted, unique
  uint32_t context_id = 0;
};

// How a pending unit is linked to the waiting operation.
enum class Via : uint8_t { kSameStream, kLegacyStream, kEventWait, kDevice };
const char* ToString(Via via);  // "stream", "legacy-default-stream", "event", "device"

struct Dependency {
  uint32_t unit = 0;
  Via via = Via::kSameStream;
};

// The streams per-thread (`_ptsz`) APIs issued work on: the stream of the first operation of
// each correlation id whose launching call is such an API.
std::unordered_set<uint32_t> PerThreadStreams(const TraceIndex& index);

// The class of a stream by the rules above, from a trace's STREAM and CONTEXT records and
// whether per-thread (`_ptsz`) APIs issued work on it. A stream of neither list is blocking.
class StreamClassifier {
 public:
  explicit StreamClassifier(const TraceRecords& records);
  StreamClass Classify(uint32_t stream_id, bool per_thread_work) const;

 private:
  std::unordered_map<uint32_t, uint32_t> null_stream_of_context_;
  std::unordered_set<uint32_t> null_streams_;
  std::unordered_map<uint32_t, StreamInfo> infos_;
};

class StreamModel {
 public:
  struct EarlierEvent;
  // What a window of a trace read in windows (trace_windows.h) is told of the rest: the events
  // recorded in earlier windows that it may name (their recording calls are not in its index),
  // and every stream with work in the whole trace with its context (a synchronisation of a
  // stream without work in the window still follows the stream's legacy-stream links).
  struct Elsewhere {
    std::span<const EarlierEvent> events;
    std::span<const std::pair<uint32_t, uint32_t>> streams;  // (stream, context)
  };
  explicit StreamModel(const TraceIndex& index) : StreamModel(index, Elsewhere{}) {}
  StreamModel(const TraceIndex& index, const Elsewhere& elsewhere);

  const std::vector<WorkUnit>& units() const { return units_; }
  // The unit issued under `corr`, or -1.
  int64_t UnitOf(uint64_t corr) const;
  StreamClass ClassOf(uint32_t stream_id) const;

  // Units that an operation issued at `issue_ns` (tie broken by `corr`, which is itself
  // excluded) on `stream` must follow and that were still unfinished at `after_ns`.
  std::vector<Dependency> PendingOnStream(uint32_t stream, uint64_t issue_ns, uint64_t corr,
                                          uint64_t after_ns) const;
  // Units on every stream issued before `issue_ns` and unfinished at `after_ns` (device-wide
  // synchronisation).
  std::vector<Dependency> PendingOnDevice(uint64_t issue_ns, uint64_t corr,
                                          uint64_t after_ns) const;

  // Where and when the event of a cudaEventRecord was recorded, by CUDA_EVENT sync id (or, when
  // the sync id is 0, the last recording of `event_id` issued before `before_ns`).
  struct EventRecord {
    uint32_t stream_id = 0;
    uint64_t issue_ns = 0;
    uint64_t correlation_id = 0;
  };
  std::optional<EventRecord> FindEvent(uint64_t sync_id, uint32_t event_id,
                                       uint64_t before_ns) const;
  struct EarlierEvent {
    uint32_t event_id = 0;
    uint64_t sync_id = 0;
    EventRecord record;
  };

 private:
  struct StreamState {
    std::vector<uint32_t> units;    // by (issue_ns, correlation id)
    std::vector<uint64_t> max_end;  // running maximum of end_ns along `units`
    struct Wait {
      uint64_t issue_ns;
      EventRecord event;
    };
    std::vector<Wait> waits;  // by issue_ns
    uint32_t context_id = 0;
    StreamClass klass = StreamClass::kBlocking;
  };
  void Visit(uint32_t stream, uint64_t issue_ns, uint64_t corr, uint64_t after_ns, Via via,
             int depth, std::vector<Dependency>* out) const;
  // Number of units of `state` issued before (issue_ns, corr).
  size_t IssuedBefore(const StreamState& state, uint64_t issue_ns, uint64_t corr) const;
  void Scan(const StreamState& state, uint64_t issue_ns, uint64_t corr, uint64_t after_ns, Via via,
            std::vector<Dependency>* out) const;

  const TraceIndex* index_;
  std::vector<WorkUnit> units_;
  IdTable unit_by_corr_;
  std::unordered_map<uint32_t, StreamState> streams_;
  std::unordered_set<uint32_t> per_thread_streams_;
  std::unordered_map<uint64_t, EventRecord> events_by_sync_;
  std::unordered_map<uint32_t, std::vector<EventRecord>> events_by_id_;  // by issue_ns
};

}  // namespace libprof::analysis
