// The CUDA capture backend (CUPTI) as the profiler sees it: it starts CUPTI, then serves the
// recorder as its ActivitySource and the capture gates as their Switch. Everything outside
// libprof/cupti/ stays CUDA-free; capture gates (capture_gates.h) and the takeover policy
// (takeover_watch.h, applied by the recorder) live outside it.
//
// Layer: libprof/. Implemented by libprof/cupti/cupti_session.cc; tests can supply fakes.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "libprof/buffer_pool.h"
#include "libprof/capture_gates.h"
#include "libprof/capture_sources.h"
#include "libprof/clock.h"
#include "libprof/settings.h"
#include "proto/trace_writer.h"

namespace libprof {

class CallSiteRecorder;

class CaptureSession : public ActivitySource, public CaptureGates::Switch {
 public:
  // Loads CUPTI, subscribes, registers the timestamp and buffer callbacks (buffers come from
  // `pool`; names are interned into `strings`) and enables devices, contexts and streams; the
  // data kinds of `settings` follow SetRecording. cudaProfilerStart/Stop are reported to `gates`.
  // Called inside cuInit: makes no CUDA call. On failure returns false with *status saying why
  // in one sentence, leaves CUPTI as it found it as far as it can, and every ActivitySource
  // method does nothing from then on.
  virtual bool Start(const Settings& settings, StringInterner* strings, BufferPool* pool,
                     CaptureGates* gates, std::string* status) = 0;

  // Stops every record kind for good, without flushing (FlushFinal stops, then flushes).
  virtual void Stop() = 0;

  // The clock CUPTI's records carry, once Start has succeeded: CLOCK_MONOTONIC through libprof's
  // timestamp callback, or CLOCK_REALTIME where CUPTI refused it.
  virtual TraceClock clock() const = 0;

  // The call-stack recorder (LIBPROF_BACKTRACE), once Start has set it up; nullptr when stacks
  // are off or capture did not start.
  virtual CallSiteRecorder* call_sites() = 0;

  virtual uint32_t cupti_version() const = 0;
  virtual std::string cupti_path() const = 0;
};

std::unique_ptr<CaptureSession> CreateCuptiSession();

}  // namespace libprof
