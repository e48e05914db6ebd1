// The driver calls that start a program's use of unified (managed) memory: the gate that turns
// CUPTI's unified-memory counters on lazily. Enabled from the start, those counters cost every
// process about 2 s at exit, managed memory or not (bench/README.md "Unified-memory counters");
// enabled at the first of these calls, a program that never uses managed memory pays nothing.
//
// The calls: managed allocations (cuMemAllocManaged, which cudaMallocManaged calls), `__managed__`
// variables (cuLibraryGetManaged, which the runtime calls when it loads them), memory advice and
// prefetches (which also cover system memory on HMM/ATS platforms), and managed memory pools
// (created, or the device's managed pool asked for). A program that touches managed memory
// through none of them (system memory on an HMM platform, with no advice or prefetch) is not
// seen: its migrations are not recorded (docs/capture-notes.md).
//
// Layer: libprof/cupti/ (CUPTI types). Pure: no CUPTI call.
#pragma once

#include <cupti.h>

#include <span>

namespace libprof {

// The driver callback ids to watch (CUPTI_CB_DOMAIN_DRIVER_API), in ascending order.
std::span<const CUpti_CallbackId> ManagedMemoryDriverCbids();

// Whether the driver call `cbid` with these parameters (CUpti_CallbackData::functionParams, may be
// null) starts using managed memory: every watched call does, except the pool calls, which do
// only for a managed pool.
bool StartsManagedMemory(CUpti_CallbackId cbid, const void* function_params);

}  // namespace libprof
