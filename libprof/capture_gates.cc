#include "libprof/capture_gates.h"

#include <algorithm>
#include <string>

namespace libprof {

CaptureGates::CaptureGates(const Settings& settings)
    : delay_ms_(settings.delay_ms), duration_ms_(settings.duration_ms) {
  std::string error;
  ParseCaptureRange(settings.capture_range, &range_, &error);  // validated when parsed
  open_[kRangeGate] = range_.kind == CaptureRange::Kind::kAlways;
  open_[kTimeGate] = delay_ms_ == 0;
}

void CaptureGates::Connect(Switch* target, uint64_t start_ns) {
  std::lock_guard<std::mutex> lock(mutex_);
  target_ = target;
  if (delay_ms_ > 0 || duration_ms_ > 0) {
    window_open_at_ns_ = start_ns + uint64_t{delay_ms_} * 1000000;
    if (duration_ms_ > 0) {
      window_close_at_ns_ = window_open_at_ns_ + uint64_t{duration_ms_} * 1000000;
    }
  }
  ApplyLocked();
}

void CaptureGates::OnProfilerApi(bool start) {
  if (range_.kind == CaptureRange::Kind::kCudaProfilerApi) SetGate(kRangeGate, start);
}

void CaptureGates::OnNvtxRange(bool open) {
  if (range_.kind == CaptureRange::Kind::kNvtx) SetGate(kRangeGate, open);
}

uint64_t CaptureGates::UpdateWindow(uint64_t now_ns) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (target_ == nullptr) return kNever;
  const uint64_t open_at = window_open_at_ns_;
  const uint64_t close_at = window_close_at_ns_;
  if (open_at != 0 && !window_opened_ && now_ns >= open_at) {
    window_opened_ = true;
    open_[kTimeGate] = true;
    ApplyLocked();
  }
  if (close_at != 0 && !window_closed_ && now_ns >= close_at) {
    window_closed_ = true;
    open_[kTimeGate] = false;
    ApplyLocked();
  }
  uint64_t next = kNever;
  if (open_at != 0 && !window_opened_) next = std::min(next, open_at);
  if (close_at != 0 && !window_closed_) next = std::min(next, close_at);
  return next;
}

bool CaptureGates::recording() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return recording_;
}

void CaptureGates::SetGate(Gate gate, bool open) {
  std::lock_guard<std::mutex> lock(mutex_);
  open_[gate] = open;
  ApplyLocked();
}

void CaptureGates::ApplyLocked() {
  if (target_ == nullptr) return;
  const bool want = open_[kRangeGate] && open_[kTimeGate];
  if (want == recording_) return;
  recording_ = want;
  target_->SetRecording(want);
}

}  // namespace libprof
