// The one host clock of a recording: CUPTI records (through the timestamp callback) and NVTX
// events both read NowNs(), so they share a timebase.
//
// Layer: libprof/ (CUDA-free). CLOCK_MONOTONIC by default: it never steps with NTP and is shared
// by every process of a host. If CUPTI refuses our timestamp callback, the session switches to
// CLOCK_REALTIME, CUPTI's own default, before any record is taken.
#pragma once

#include <time.h>

#include <atomic>
#include <cstdint>

namespace libprof {

inline std::atomic<clockid_t> g_trace_clock{CLOCK_MONOTONIC};

inline uint64_t ReadClockNs(clockid_t clock) {
  timespec ts;
  clock_gettime(clock, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

inline uint64_t NowNs() { return ReadClockNs(g_trace_clock.load(std::memory_order_relaxed)); }

}  // namespace libprof
