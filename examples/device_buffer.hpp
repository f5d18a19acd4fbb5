// Device memory of the CUDA benchmarks, freed at scope exit: cudaMalloc'd (CUDA IPC can export
// it, unlike the stream-ordered pool), null for 0 bytes.
// Example: DeviceBuffer b(1 << 20); cudaMemset(b.p, 0, 1 << 20);
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "axe/cuda/check.hpp"

namespace axe::examples {

struct DeviceBuffer {
  void* p = nullptr;
  explicit DeviceBuffer(std::int64_t bytes) {
    if (bytes > 0) AXE_CUDA_CHECK(cudaMalloc(&p, static_cast<std::size_t>(bytes)));
  }
  ~DeviceBuffer() {
    if (p) cudaFree(p);
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
};

}  // namespace axe::examples
