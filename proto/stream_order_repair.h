// Ends of copies and sets that CUPTI reports after the next operation on their stream started.
//
// Work on one stream runs in order, and a copy or a memset never overlaps the next operation of
// its stream (programmatic dependent launch lets only kernels start early). Yet CUPTI 13.0 gives
// the first copy issued after cudaGraphInstantiate, before the graph's first launch, an end tens
// or hundreds of milliseconds late: when its activity buffer was completed, it seems, since the
// launch's implicit upload takes the copy's completion timestamp (docs/capture-notes.md,
// "Records"; reproduced in plain CUDA C++, on the legacy and on a created stream, and gone with
// cudaGraphUpload before the copy). One such copy made a PyTorch run's "GPU busy" 52 ms instead
// of 0.6 ms. The reader therefore ends such a copy or set where the next operation of its stream
// started, the latest its true end can be, and keeps CUPTI's end in `cupti_end_ns`.
//
// Layer: proto/ (CUDA-free). Called by the chunk decoder on each chunk's records, so every
// reader (streamed, windowed, whole) sees the same repaired records. It looks within the chunk:
// CUPTI writes a stream's records into one buffer in order, and the copy's record came in the
// chunk of its stream's next operation in every recording made (docs/capture-notes.md); a next
// operation in a later chunk leaves the copy as CUPTI gave it.
#pragma once

#include <array>
#include <cstddef>

#include "proto/trace_model.h"

namespace libprof {

// The sizes of every list of a TraceRecords, by RecordKind<T>::kIndex.
using ListSizes = std::array<size_t, kRecordKindCount>;
ListSizes SizesOf(const TraceRecords& records);

// Repairs the copies and sets of `records` from `first` on (the chunk just decoded), against the
// device operations from `first` on: where one ends after another operation of its device and
// stream (of another launch: the nodes of one graph launch may overlap) started, its end becomes
// the earliest such start and `cupti_end_ns` CUPTI's end. Returns how many it repaired.
size_t RepairStreamOrder(TraceRecords* records, const ListSizes& first);

}  // namespace libprof
