// What the profiler needs from the capture backend (CUPTI), as an interface so that everything
// outside libprof/cupti/ stays CUDA-free.
//
// Layer: libprof/. Implemented by libprof/cupti/cupti_session.cc; tests can supply fakes.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "libprof/buffer_pool.h"
#include "libprof/settings.h"
#include "proto/trace_model.h"
#include "proto/trace_writer.h"

namespace libprof {

class Recorder;
class CallSiteRecorder;

class CaptureSession {
 public:
  virtual ~CaptureSession() = default;

  // Loads CUPTI, subscribes, sets the clock and buffer attributes, registers the buffer
  // callbacks (buffers come from `pool`, completed ones go to `recorder`) and enables the record
  // kinds of `settings`. Called inside cuInit: makes no CUDA call. On failure returns false with
  // *status saying why in one sentence, and leaves CUPTI as it found it as far as it can.
  // `range_gated` / `time_gated`: CUDA activity waits for SetGate(kRangeGate / kTimeGate, true)
  // (LIBPROF_CAPTURE_RANGE; LIBPROF_DELAY_MS). Devices, contexts and streams are always recorded.
  // A cudaProfilerApi range is opened and closed by the session itself.
  virtual bool Start(const Settings& settings, StringInterner* strings, BufferPool* pool,
                     Recorder* recorder, bool range_gated, bool time_gated,
                     std::string* status) = 0;

  // Opens or closes one gate; CUDA activity is recorded while all are open. Any thread.
  enum Gate { kRangeGate = 0, kTimeGate = 1, kGateCount = 2 };
  virtual void SetGate(Gate gate, bool open) = 0;
  // cuptiActivityFlushAll: completed buffers only, or everything (end of recording).
  virtual void Flush(bool forced) = 0;
  // Decodes a completed buffer into model records (writer thread).
  virtual void Decode(const uint8_t* buffer, size_t size, TraceRecords* out) = 0;
  // Records CUPTI dropped since the last call.
  virtual uint64_t TakeDropped() = 0;
  // Called after each periodic Flush(false). Returns a warning, once, when CUDA work goes on but
  // no activity buffer reaches libprof any more: another CUPTI client in the process (Kineto,
  // behind torch.profiler) re-registered CUPTI's process-wide buffer callbacks. *missed counts
  // the kernel launches seen since (a lower bound of the records lost).
  virtual std::string CheckStillCapturing(uint64_t* missed) = 0;
  // Stops new records (before the final flush).
  virtual void Disable() = 0;

  // The call-stack recorder (LIBPROF_BACKTRACE), once Start has set it up; nullptr when stacks
  // are off or capture did not start.
  virtual CallSiteRecorder* call_sites() { return nullptr; }

  virtual uint32_t cupti_version() const = 0;
  virtual std::string cupti_path() const = 0;
};

std::unique_ptr<CaptureSession> CreateCuptiSession();

}  // namespace libprof
