// What the Recorder records, and from whom: the narrow interfaces through which the recorder's
// writer thread takes CUDA activity, NVTX events, call stacks and driver facts. The recorder owns
// these interfaces; the capture backends implement them:
//   ActivitySource  CaptureSession (libprof/cupti/cupti_session.cc, CUPTI's activity buffers)
//   NvtxSource      NvtxRecorder (libprof/nvtx/)
//   CallSiteSource  CallSiteRecorder (libprof/backtrace/)
//   DetailsSource   DriverDetails (libprof/driver_queries.h)
// Tests implement them with fakes, so the whole recording pipeline runs without CUDA.
//
// Layer: libprof/ (CUDA-free). Every method is called on the writer thread unless it says
// otherwise, and none may throw.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "proto/trace_model.h"
#include "proto/trace_writer.h"

namespace libprof {

// How a source asks the writer thread to come soon (a buffer was completed, cudaDeviceReset),
// before its next periodic tick. Implemented by Recorder. Any thread; never blocks.
class FlushRequester {
 public:
  virtual void RequestFlush() = 0;

 protected:
  ~FlushRequester() = default;
};

// What the takeover watch (takeover_watch.h) reads after each periodic flush.
struct ActivityCounters {
  uint64_t buffers = 0;    // activity buffers completed so far
  uint64_t launches = 0;   // kernel launches counted so far (only while CountLaunches(true))
  bool recording = false;  // CUDA activity is being recorded now (gates open, capture alive)
};

// CUDA activity: buffers of records the backend fills, completes and decodes.
class ActivitySource {
 public:
  virtual ~ActivitySource() = default;
  // Called once by Recorder::Start, before the writer thread runs.
  virtual void Connect(FlushRequester* writer) = 0;
  // Periodic: asks the backend to complete the buffers whose records are complete.
  virtual void Flush() = 0;
  // End of recording: stops new activity, then completes every buffer, partly filled ones too.
  virtual void FlushFinal() = 0;
  // Decodes the oldest completed buffer into *out (appends) and recycles it; false when none
  // waits. Buffers come out in the order they were completed.
  virtual bool TakeBuffer(TraceRecords* out) = 0;
  // Records the backend dropped since the last call (no buffer space).
  virtual uint64_t TakeDropped() = 0;
  // Records that came in but could not be decoded since the last call (a kind this build does
  // not decode, a decoding that failed): lost too, and reported apart from TakeDropped's.
  virtual uint64_t TakeUndecoded() { return 0; }
  virtual ActivityCounters Counters() = 0;
  // Counts kernel launches (a callback per launch) while on; the takeover watch decides.
  virtual void CountLaunches(bool on) = 0;
  // How soon (ms) the writer thread should call Flush() again, besides its periodic tick: for
  // records that a queue outside the source loses when not taken in time (CUPTI's unified-memory
  // events, which the driver drops when its queue fills); 0: the tick is enough. Asked after
  // each flush and the buffers it completed were taken.
  virtual uint32_t UrgentFlushIntervalMs() { return 0; }
};

// NVTX ranges and marks, buffered by the application's threads.
class NvtxSource {
 public:
  // Moves completed events, new domains and new payload schemas out (appends), with string ids of `strings`;
  // `final` (once, at the end) also closes the ranges still open at `now_ns`.
  virtual void Drain(StringInterner& strings, std::vector<NvtxEvent>* events,
                     std::vector<NvtxDomain>* domains, std::vector<NvtxPayloadSchema>* schemas,
                     bool final, uint64_t now_ns) = 0;
  // Events dropped since the last call.
  virtual uint64_t TakeDropped() = 0;

 protected:
  ~NvtxSource() = default;
};

// (correlation id, stack id): the stack of the API call with that correlation id.
using CallSitePair = std::pair<uint64_t, uint32_t>;

// Call stacks noted at API entry (LIBPROF_BACKTRACE).
class CallSiteSource {
 public:
  // Moves the pairs noted since the last call into *out (cleared first).
  virtual void TakePairs(std::vector<CallSitePair>* out) = 0;
  // Appends the stacks noted since the last call with the frames and modules they bring, names
  // interned into `strings`: called before writing calls that may use them, so that a stack is
  // written with the chunk that first uses it. `final` (once, after FlushFinal) also stops noting.
  virtual void TakeNewStacks(StringInterner& strings, TraceRecords* out, bool final) = 0;

 protected:
  ~CallSiteSource() = default;
};

// What CUPTI's records lack, asked of the CUDA driver and runtime from the writer thread (never
// from inside cuInit).
class DetailsSource {
 public:
  // Versions that need CUDA loaded, just before the header is written.
  virtual void CompleteHeader(TraceHeader* header) = 0;
  // The CUDA runtime version once a runtime is loaded, else 0.
  virtual uint32_t RuntimeVersion() = 0;
  // PCI bus id and memory interface of a device record.
  virtual void CompleteDevice(DeviceInfo* device) = 0;

 protected:
  ~DetailsSource() = default;
};

}  // namespace libprof
