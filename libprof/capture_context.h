// What every part of one recording shares: the trace's string table and its timebase. Owned by
// the Profiler, which creates it when recording starts and hands it to the recorder, the CUPTI
// session (its decoder interns names) and the NVTX recorder (its clock); it outlives all of them.
//
// Layer: libprof/ (CUDA-free).
#pragma once

#include "libprof/clock.h"
#include "proto/trace_writer.h"

namespace libprof {

struct CaptureContext {
  // Every string id of the trace: kernel and API names (CUPTI decoder), NVTX messages and
  // domains (exported by NvtxRecorder::Drain), symbols of call stacks. The writer defines each
  // string in the chunk that first uses it.
  StringInterner strings;
  // Set once, before any record is taken: the clock CUPTI's records carry (CaptureSession::clock).
  TraceClock clock;
};

}  // namespace libprof
