// When CUDA activity is recorded: while every gate is open. The range gate follows
// LIBPROF_CAPTURE_RANGE (between cudaProfilerStart and cudaProfilerStop, or inside NVTX ranges
// with a given message); the time gate follows LIBPROF_DELAY_MS / LIBPROF_DURATION_MS, counted
// from when CUDA initialised. Devices, contexts and streams are recorded regardless: the backend
// switches only its data kinds.
//
// Layer: libprof/ (CUDA-free, unit-tested). Events come from the CUPTI session's callbacks
// (cudaProfilerStart/Stop), the NVTX recorder's capture trigger and the recorder's writer thread
// (the window's moments), on any thread; the switch is called under the gates' lock, so its
// calls never overlap.
#pragma once

#include <cstdint>
#include <limits>
#include <mutex>

#include "libprof/settings.h"

namespace libprof {

class CaptureGates {
 public:
  // Turns the recording of CUDA activity on and off. Implemented by CaptureSession.
  class Switch {
   public:
    virtual void SetRecording(bool on) = 0;

   protected:
    ~Switch() = default;
  };

  static constexpr uint64_t kNever = std::numeric_limits<uint64_t>::max();

  // From LIBPROF_CAPTURE_RANGE (already validated by ParseSettings), LIBPROF_DELAY_MS and
  // LIBPROF_DURATION_MS.
  explicit CaptureGates(const Settings& settings);

  const CaptureRange& range() const { return range_; }

  // Once capture has started, at `start_ns` on the trace clock: places the window and switches
  // `target` on at once if no gate is closed. Nothing is switched before.
  void Connect(Switch* target, uint64_t start_ns);

  // cudaProfilerStart has returned (true) or cudaProfilerStop was called (false). Ignored unless
  // the capture range is cudaProfilerApi.
  void OnProfilerApi(bool start);
  // The first NVTX range of the capture range opened (true) or the last one closed (false).
  void OnNvtxRange(bool open);
  // Writer thread: opens or closes the window once its moment has come. Returns the next moment
  // (trace clock) at which to call again, kNever when none is left.
  uint64_t UpdateWindow(uint64_t now_ns);

  bool recording() const;

 private:
  enum Gate { kRangeGate = 0, kTimeGate = 1, kGateCount = 2 };
  void SetGate(Gate gate, bool open);
  void ApplyLocked();

  CaptureRange range_;
  const uint32_t delay_ms_;
  const uint32_t duration_ms_;

  mutable std::mutex mutex_;
  Switch* target_ = nullptr;
  bool open_[kGateCount] = {true, true};
  bool recording_ = false;
  // The delay/duration window, on the trace clock (0: none), and how far it has gone.
  uint64_t window_open_at_ns_ = 0;
  uint64_t window_close_at_ns_ = 0;
  bool window_opened_ = false;
  bool window_closed_ = false;
};

}  // namespace libprof
