// Reads a one-process trace file chunk by chunk and hands it on in windows: ProcessTraces that
// each hold the records of one stretch of time, cut at quiescent points, so that an analysis
// whose figures add up over time (per-stream tallies, unions of intervals that no window shares)
// holds a few windows of records instead of the whole trace.
//
// A cut at time q is made only where no span crosses q: API calls, synchronisations, memory
// operations, device operations from the start of the call that issued them (their queued time:
// a kernel issued before q that starts after it keeps q from being a cut) to their end. NVTX
// ranges do not hold cuts (an epoch's range spans everything); a range goes with the window of
// its start. Records reach the file out of order (libprof hands over each thread's and each
// activity kind's buffer at its flushes), so only what lies `horizon_ns` (trace time) behind
// the newest record is cut. The cut is then checked, not assumed: a record arriving later that
// starts before the last cut, or that carries a correlation id at or below the largest one
// already handed on (its call or its work went into an earlier window; CUDA numbers calls as
// they start, so later windows' ids are larger), makes the read inexact. So does a file of
// several processes, and a stretch with no quiescent point that outgrows `max_pending_records`.
// An inexact read tells the caller to analyse the whole trace instead (trace_loader.h): output
// stays exact, and only traces without quiescent points pay the whole trace's memory.
//
// Each window carries the file's path, header and string table, the definitions seen so far
// (devices, contexts, streams, NVTX domains, payload schemas) and its own timed records; its
// `windows` is everything ([0, max)), so clipping to it changes nothing. Untimed records (call
// stacks, drop reports) and RunEnd stay in the whole trace's summary.
//
// Layer: analysis/model/. Reads through proto/trace_reader.h.
#pragma once

#include <cstddef>
#include <cstdint>
#include <expected>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "analysis/model/trace_loader.h"

namespace libprof::analysis {

struct WindowLimits {
  // How far (trace time) behind the newest record a record may still arrive; 0: the trace's
  // own (trace_loader.h ArrivalHorizon).
  uint64_t horizon_ns = 0;
  // A cut is tried once this many timed records wait; memory holds about this many records
  // plus those of the horizon.
  size_t cut_every_records = size_t{1} << 17;
  // Waiting records beyond which the read gives up (inexact): no quiescent point came.
  size_t max_pending_records = size_t{1} << 23;
  // Also hand each window the call stacks (with their frames and modules) read so far: untimed,
  // findings name call sites from them.
  bool call_stacks = false;
  // No cut between a pageable host copy's call (device_ops.h IsPageableCopy) and the end of the
  // next call of its thread that issued device work or synchronises: the findings rule
  // no-overlap-default-stream pairs the copy with the kernel that call launched.
  bool hold_pageable_pairs = false;
  // A list of this many records gets a thread of its own in a try's passes over the waiting
  // records and in a chunk's arrival (the API calls' and kernels' lists of a large trace);
  // tests set 1 to put every list on one.
  size_t list_thread_records = size_t{1} << 14;
  // Chunks decoded ahead of the cutting thread, and threads decoding them (chunk_prefetcher.h).
  // A try at a cut keeps the cutting thread busy for several chunks' worth of decoding: with
  // room for one chunk ahead the decoding thread then waits (the bare windowed read of the 10M
  // synthetic trace: 1.22-1.27 s with one, 0.84-0.85 s with four), but every chunk ahead is
  // held by every read at once (a diff reads two files): two, as the 16-core device host's
  // findings, diff and report took the same time with 1, 2 or 4, and the diff peaked at 254-259,
  // 253-282 and 307-323 MB (bench/README.md). More decoding threads pay off only where the
  // cutting thread keeps up, each holding a parsed chunk (several MB) more.
  size_t decode_ahead = 2;
  size_t decoders = 1;
  // The cuts an earlier read of the same file with the same limits made (WindowedRead::cuts):
  // this read makes them again without looking for quiescent points, which is most of a try's
  // work (the windows are the same: a try's cuts depend only on the records read so far). A
  // file that reads differently makes the read inexact.
  std::shared_ptr<const std::vector<std::vector<uint64_t>>> known_cuts = nullptr;
};

// Where a window lies: every timed record it holds starts at or after `from_ns` (the cut
// before it; 0 for the first) and before `to_ns` (the cut after it; UINT64_MAX for the last).
// Records arriving late may break the first part for NVTX ranges, which do not hold cuts.
struct WindowSpan {
  uint64_t from_ns = 0;
  uint64_t to_ns = UINT64_MAX;
};

struct WindowedRead {
  bool exact = true;
  std::string why_inexact;  // what made it inexact (tests, diagnostics)
  size_t windows = 0;
  // CPU seconds of the thread that read and cut the trace, the threads of its lists' passes
  // not counted (bench/findings_phases: it bounds the read once decoding is not the bound).
  double cutting_cpu_s = 0;
  // Each try's cuts, in order (empty where a try found none): for WindowLimits::known_cuts.
  std::vector<std::vector<uint64_t>> cuts;
  // The process without its timed records: path, header, strings, definitions, untimed records,
  // RunEnd, chunks, truncated, and `windows`/`origin_ns` of the whole recording
  // (SetDefaultWindow's). Warnings as LoadTraceFile gives them.
  ProcessTrace whole;
  std::vector<std::string> warnings;
};

// Calls `window` for each window of `path`, in time order. An error: the file cannot be read
// (as LoadTraceFile says it). When the result is not exact the caller discards what the windows
// gave it and analyses the whole trace.
std::expected<WindowedRead, std::string> ReadInWindows(
    const std::string& path, const WindowLimits& limits,
    const std::function<void(const ProcessTrace& window)>& window);
// The same, each window handed on changeable (a caller may add to it) with its span.
std::expected<WindowedRead, std::string> ReadInWindows(
    const std::string& path, const WindowLimits& limits,
    const std::function<void(ProcessTrace& window, const WindowSpan& span)>& window);

}  // namespace libprof::analysis
