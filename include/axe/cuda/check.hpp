// Wrapping CUDA and NCCL errors once at the call site (STYLE.md §6): file, line and the library's
// own message, thrown as axe::Error so every backend reports failures the same way.
//
// Example: AXE_CUDA_CHECK(cudaMalloc(&p, n)) on an out-of-memory device throws
//   axe::Error("runtime/cuda/box_list.cpp:233: cudaMalloc(&p, n) failed: out of memory")
#pragma once

#include <cuda_runtime_api.h>

#include <string>

#include "axe/core/error.hpp"

namespace axe::cuda {

[[noreturn]] void throw_cuda_error(cudaError_t e, const char* expr, const char* file, int line);

}  // namespace axe::cuda

#define AXE_CUDA_CHECK(expr)                                                        \
  do {                                                                              \
    cudaError_t axe_cuda_err_ = (expr);                                             \
    if (axe_cuda_err_ != cudaSuccess)                                               \
      ::axe::cuda::throw_cuda_error(axe_cuda_err_, #expr, __FILE__, __LINE__);      \
  } while (0)
