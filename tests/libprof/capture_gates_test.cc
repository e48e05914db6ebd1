// Tests of CaptureGates: when CUDA activity is recorded, for each capture range and window.
#include "libprof/capture_gates.h"

#include <gtest/gtest.h>

#include <vector>

namespace libprof {
namespace {

struct RecordingLog final : CaptureGates::Switch {
  std::vector<bool> changes;
  void SetRecording(bool on) override { changes.push_back(on); }
};

Settings With(const char* range, uint32_t delay_ms = 0, uint32_t duration_ms = 0) {
  Settings settings;
  settings.capture_range = range;
  settings.delay_ms = delay_ms;
  settings.duration_ms = duration_ms;
  return settings;
}

constexpr uint64_t kMs = 1000000;

// Proves: with no range and no window, recording starts at Connect and nothing else switches
// it; nothing is switched before Connect; range events of another kind are ignored.
TEST(CaptureGatesTest, AlwaysRecordsOnceConnected) {
  CaptureGates gates(With(""));
  RecordingLog log;
  gates.OnProfilerApi(false);
  EXPECT_FALSE(gates.recording());
  gates.Connect(&log, 1000);
  EXPECT_EQ(log.changes, (std::vector<bool>{true}));
  gates.OnProfilerApi(false);
  gates.OnNvtxRange(false);
  EXPECT_EQ(gates.UpdateWindow(5000), CaptureGates::kNever);
  EXPECT_EQ(log.changes, (std::vector<bool>{true}));
  EXPECT_TRUE(gates.recording());
}

// Proves cudaProfilerApi: closed until cudaProfilerStart, then follows Start/Stop pairs; NVTX
// triggers do not touch it.
TEST(CaptureGatesTest, CudaProfilerApiRange) {
  CaptureGates gates(With("cudaProfilerApi"));
  EXPECT_EQ(gates.range().kind, CaptureRange::Kind::kCudaProfilerApi);
  RecordingLog log;
  gates.Connect(&log, 0);
  EXPECT_TRUE(log.changes.empty());
  gates.OnNvtxRange(true);
  EXPECT_TRUE(log.changes.empty());
  gates.OnProfilerApi(true);
  gates.OnProfilerApi(true);  // the runtime call wraps the driver one: both come
  gates.OnProfilerApi(false);
  gates.OnProfilerApi(true);
  EXPECT_EQ(log.changes, (std::vector<bool>{true, false, true}));
}

// Proves nvtx:NAME@DOMAIN: the range is parsed for the NVTX trigger, and the trigger's events
// open and close recording.
TEST(CaptureGatesTest, NvtxRange) {
  CaptureGates gates(With("nvtx:step@train"));
  EXPECT_EQ(gates.range().kind, CaptureRange::Kind::kNvtx);
  EXPECT_EQ(gates.range().nvtx_message, "step");
  EXPECT_EQ(gates.range().nvtx_domain, "train");
  RecordingLog log;
  gates.Connect(&log, 0);
  gates.OnProfilerApi(true);  // not this range's kind
  gates.OnNvtxRange(true);
  gates.OnNvtxRange(false);
  EXPECT_EQ(log.changes, (std::vector<bool>{true, false}));
}

// Proves the delay/duration window: closed until start + delay, open until start + delay +
// duration, each moment announced by UpdateWindow before it comes.
TEST(CaptureGatesTest, DelayThenDuration) {
  CaptureGates gates(With("", /*delay_ms=*/30, /*duration_ms=*/50));
  RecordingLog log;
  const uint64_t start = 1000 * kMs;
  gates.Connect(&log, start);
  EXPECT_TRUE(log.changes.empty());
  EXPECT_EQ(gates.UpdateWindow(start), start + 30 * kMs);
  EXPECT_EQ(gates.UpdateWindow(start + 30 * kMs - 1), start + 30 * kMs);
  EXPECT_TRUE(log.changes.empty());
  EXPECT_EQ(gates.UpdateWindow(start + 30 * kMs), start + 80 * kMs);
  EXPECT_EQ(log.changes, (std::vector<bool>{true}));
  EXPECT_EQ(gates.UpdateWindow(start + 80 * kMs), CaptureGates::kNever);
  EXPECT_EQ(log.changes, (std::vector<bool>{true, false}));
  EXPECT_FALSE(gates.recording());
}

// Proves a duration alone opens at once and closes after it; a window and a range must both be
// open to record.
TEST(CaptureGatesTest, DurationAloneAndWithARange) {
  {
    CaptureGates gates(With("", 0, /*duration_ms=*/10));
    RecordingLog log;
    gates.Connect(&log, 0);
    EXPECT_EQ(log.changes, (std::vector<bool>{true}));
    EXPECT_EQ(gates.UpdateWindow(1), 10 * kMs);
    gates.UpdateWindow(10 * kMs);
    EXPECT_EQ(log.changes, (std::vector<bool>{true, false}));
  }
  CaptureGates gates(With("cudaProfilerApi", /*delay_ms=*/5));
  RecordingLog log;
  gates.Connect(&log, 0);
  gates.OnProfilerApi(true);  // range open, window not yet
  EXPECT_TRUE(log.changes.empty());
  gates.UpdateWindow(5 * kMs);
  gates.OnProfilerApi(false);
  EXPECT_EQ(log.changes, (std::vector<bool>{true, false}));
}

// Proves the window does not start before Connect (capture that never started never ticks).
TEST(CaptureGatesTest, NothingBeforeConnect) {
  CaptureGates gates(With("", /*delay_ms=*/1));
  EXPECT_EQ(gates.UpdateWindow(~uint64_t{0} - 1), CaptureGates::kNever);
  EXPECT_FALSE(gates.recording());
}

}  // namespace
}  // namespace libprof
