#include "proto/stream_order_repair.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <type_traits>
#include <vector>

namespace libprof {
namespace {

// Timestamps of a stream's copy engine and of its SMs may disagree by a few tens of
// nanoseconds: an end less than this past the next start is left as CUPTI gave it.
constexpr uint64_t kToleranceNs = 1000;

struct StreamKey {
  uint32_t device = 0;
  uint32_t stream = 0;
  bool operator==(const StreamKey&) const = default;
};

// Host-to-host copies carry a stream but do not keep its order: JAX's start while a kernel
// issued before them still runs, and a kernel issued before one starts inside it
// (docs/capture-notes.md). They neither are repaired nor bound another's end.
template <typename T>
bool KeepsStreamOrder(const T& record) {
  if constexpr (std::is_same_v<T, Memcpy>) {
    return record.copy_kind != CopyKind::kHtoH;
  } else {
    return true;
  }
}

template <typename T>
StreamKey KeyOf(const T& record) {
  return StreamKey{DeviceId(record), record.stream_id};
}

// A copy or set long enough to overlap the next operation of its stream by more than the
// tolerance.
struct Suspect {
  uint64_t start_ns = 0;
  uint64_t end_ns = 0;
  uint64_t correlation_id = 0;
  uint64_t* end_field = nullptr;
  uint64_t* cupti_end_field = nullptr;
  uint64_t next_start_ns = std::numeric_limits<uint64_t>::max();
};

// The suspects of one stream by start, and where the last operation seen fell among them: a
// list's operations come nearly in start order, so the place moves forward a step at a time.
struct StreamSuspects {
  StreamKey key;
  std::vector<Suspect> suspects;
  size_t after_last = 0;  // suspects before this one started before the last operation seen
  uint64_t last_start_ns = 0;
};

class Streams {
 public:
  template <typename T>
  void AddSuspects(std::vector<T>& list, size_t first) {
    for (size_t i = first; i < list.size(); ++i) {
      T& r = list[i];
      if (r.end_ns <= r.start_ns + kToleranceNs || !KeepsStreamOrder(r)) continue;
      Find(KeyOf(r), true)->suspects.push_back(Suspect{.start_ns = r.start_ns,
                                                       .end_ns = r.end_ns,
                                                       .correlation_id = r.correlation_id,
                                                       .end_field = &r.end_ns,
                                                       .cupti_end_field = &r.cupti_end_ns});
    }
  }

  bool empty() const { return streams_.empty(); }

  void SortSuspects() {
    for (StreamSuspects& stream : streams_) {
      auto by_start = [](const Suspect& a, const Suspect& b) { return a.start_ns < b.start_ns; };
      if (!std::is_sorted(stream.suspects.begin(), stream.suspects.end(), by_start)) {
        std::stable_sort(stream.suspects.begin(), stream.suspects.end(), by_start);
      }
    }
  }

  // An operation of the chunk: the latest suspect of its stream that started before it ends no
  // later than its start (the earlier suspects of the stream are bounded by operations between
  // them and it, each of which comes here too).
  void See(StreamKey key, uint64_t start_ns, uint64_t correlation_id) {
    StreamSuspects* stream = Find(key, false);
    if (stream == nullptr) return;
    std::vector<Suspect>& suspects = stream->suspects;
    size_t& after = stream->after_last;
    if (start_ns < stream->last_start_ns) {
      after = static_cast<size_t>(
          std::partition_point(suspects.begin(), suspects.end(),
                               [&](const Suspect& s) { return s.start_ns < start_ns; }) -
          suspects.begin());
    } else {
      while (after < suspects.size() && suspects[after].start_ns < start_ns) ++after;
    }
    stream->last_start_ns = start_ns;
    if (after == 0) return;
    Suspect& s = suspects[after - 1];
    if (s.correlation_id == correlation_id || start_ns + kToleranceNs >= s.end_ns) return;
    s.next_start_ns = std::min(s.next_start_ns, start_ns);
  }

  // Ends each suspect that an operation started inside; returns how many.
  size_t Repair() {
    size_t repaired = 0;
    for (const StreamSuspects& stream : streams_) {
      for (const Suspect& s : stream.suspects) {
        if (s.next_start_ns == std::numeric_limits<uint64_t>::max()) continue;
        *s.cupti_end_field = s.end_ns;
        *s.end_field = s.next_start_ns;
        ++repaired;
      }
    }
    return repaired;
  }

 private:
  StreamSuspects* Find(StreamKey key, bool add) {
    if (last_ < streams_.size() && streams_[last_].key == key) return &streams_[last_];
    for (size_t i = 0; i < streams_.size(); ++i) {
      if (streams_[i].key == key) return &streams_[last_ = i];
    }
    if (!add) return nullptr;
    last_ = streams_.size();
    streams_.emplace_back().key = key;
    return &streams_.back();
  }

  std::vector<StreamSuspects> streams_;  // a few per chunk: a linear search finds one
  size_t last_ = 0;
};

}  // namespace

ListSizes SizesOf(const TraceRecords& records) {
  ListSizes sizes{};
  ForEachList(records, [&]<typename T>(const std::vector<T>& list) {
    sizes[RecordKind<T>::kIndex] = list.size();
  });
  return sizes;
}

size_t RepairStreamOrder(TraceRecords* records, const ListSizes& first) {
  Streams streams;
  streams.AddSuspects(records->memcpys, first[RecordKind<Memcpy>::kIndex]);
  streams.AddSuspects(records->memsets, first[RecordKind<Memset>::kIndex]);
  if (streams.empty()) return 0;
  streams.SortSuspects();
  ForEachList(*records, [&]<typename T>(const std::vector<T>& list) {
    if constexpr (kIsDeviceOp<T>) {
      for (size_t i = first[RecordKind<T>::kIndex]; i < list.size(); ++i) {
        if (KeepsStreamOrder(list[i])) {
          streams.See(KeyOf(list[i]), list[i].start_ns, list[i].correlation_id);
        }
      }
    }
  });
  return streams.Repair();
}

}  // namespace libprof
