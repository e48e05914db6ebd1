// Shared by the cuBLAS samples: a failed cuBLAS call ends the program with status 1, as
// sample_util.cuh's CHECK_CUDA does for CUDA calls.
//
// Layer: samples/ (test programs, not part of libprof).
#pragma once

#include <cublas_v2.h>

#include <cstdio>
#include <cstdlib>

#define CHECK_CUBLAS(call)                                                      \
  do {                                                                          \
    cublasStatus_t cublas_status_ = (call);                                     \
    if (cublas_status_ != CUBLAS_STATUS_SUCCESS) {                              \
      std::fprintf(stderr, "%s:%d: %s failed: %s\n", __FILE__, __LINE__, #call, \
                   cublasGetStatusString(cublas_status_));                      \
      std::exit(1);                                                             \
    }                                                                           \
  } while (0)
