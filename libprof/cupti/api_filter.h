// The runtime and driver API calls that LIBPROF_API_FILTER=significant (the default) does not
// record: trivial queries that neither block the host nor issue GPU work.
//
// Layer: libprof/cupti/. The session turns each id off with cuptiActivityEnableRuntimeApi /
// cuptiActivityEnableDriverApi(cbid, 0) after enabling the RUNTIME and DRIVER kinds. Filtering
// at the source, as Kineto does, saves buffer space and per-call overhead: PyTorch and Triton
// make several such queries per kernel launch (cupti-facts.md 2.1).
//
// Rule: a call is filtered only if it can never wait for the GPU or another thread's GPU work
// and never enqueues, launches, copies, allocates, frees or synchronises anything; and it is
// frequent enough to be noise. Blocking or work-issuing calls are never filtered, nor are the
// polling calls cudaEventQuery/cudaStreamQuery (and cuEventQuery/cuStreamQuery): a busy-wait on
// them is a synchronisation pattern the analysis must see.
#pragma once

#include <cstdint>
#include <vector>

namespace libprof {

// CUPTI_RUNTIME_TRACE_CBID_* values, sorted, no duplicates.
std::vector<uint32_t> InsignificantRuntimeCbids();

// CUPTI_DRIVER_TRACE_CBID_* values, sorted, no duplicates.
std::vector<uint32_t> InsignificantDriverCbids();

}  // namespace libprof
