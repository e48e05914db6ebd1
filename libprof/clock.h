// The timebase of one recording: which host clock stamps its records. CUPTI's records (through
// libprof's timestamp callback) and NVTX events must read the same clock, so the capture context
// (capture_context.h) holds one TraceClock and hands it to each of them; there is no global.
//
// Layer: libprof/ (CUDA-free). CLOCK_MONOTONIC by default: it never steps with NTP and is shared
// by every process of a host. CLOCK_REALTIME, CUPTI's own default, only where CUPTI refuses the
// timestamp callback (cupti-facts.md 0.7).
#pragma once

#include <time.h>

#include <cstdint>

#include "proto/trace_model.h"

namespace libprof {

inline uint64_t ReadClockNs(clockid_t clock) {
  timespec ts;
  clock_gettime(clock, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

class TraceClock {
 public:
  constexpr TraceClock() = default;
  constexpr explicit TraceClock(clockid_t id) : id_(id) {}

  uint64_t NowNs() const { return ReadClockNs(id_); }
  clockid_t id() const { return id_; }
  // As the trace header names it.
  Timebase timebase() const {
    return id_ == CLOCK_MONOTONIC ? Timebase::kClockMonotonic : Timebase::kClockRealtime;
  }

 private:
  clockid_t id_ = CLOCK_MONOTONIC;
};

}  // namespace libprof
