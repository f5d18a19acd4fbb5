// Shared helpers of the CUDA tests: GPU presence (tests skip with a reason without one), device
// buffers, host reference walks over boxes.
#pragma once

#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "axe/cuda/check.hpp"
#include "axe/plan/plan.hpp"

namespace axe::cuda::test {

inline int gpu_count() {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    cudaGetLastError();
    return 0;
  }
  return n;
}

#define AXE_REQUIRE_GPUS(n)                                                                   \
  do {                                                                                        \
    const int axe_gpus_ = ::axe::cuda::test::gpu_count();                                     \
    if (axe_gpus_ < (n))                                                                      \
      GTEST_SKIP() << "needs " << (n) << " CUDA GPU(s); cudaGetDeviceCount reports " << axe_gpus_; \
  } while (0)

// Device memory owned by the test.
struct DeviceBuffer {
  void* p = nullptr;
  std::size_t bytes = 0;
  explicit DeviceBuffer(std::size_t n) : bytes(n) { AXE_CUDA_CHECK(cudaMalloc(&p, n ? n : 1)); }
  ~DeviceBuffer() { cudaFree(p); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  void upload(const void* h, std::size_t n, std::size_t at = 0) {
    AXE_CUDA_CHECK(cudaMemcpy(static_cast<char*>(p) + at, h, n, cudaMemcpyHostToDevice));
  }
  std::vector<unsigned char> download() const {
    std::vector<unsigned char> h(bytes);
    AXE_CUDA_CHECK(cudaMemcpy(h.data(), p, bytes, cudaMemcpyDeviceToHost));
    return h;
  }
  char* c() { return static_cast<char*>(p); }
};

// f(src_offset, dst_offset, linear index) for every element of the box, row-major.
template <class F>
void for_each_element(const Transfer& t, F&& f) {
  const std::size_t r = t.extents.size();
  for (auto e : t.extents)
    if (e <= 0) return;
  std::vector<std::int64_t> idx(r, 0);
  std::int64_t linear = 0;
  while (true) {
    std::int64_t so = t.src_offset, dof = t.dst_offset;
    for (std::size_t k = 0; k < r; ++k) {
      so += idx[k] * t.src_strides[k];
      dof += idx[k] * t.dst_strides[k];
    }
    f(so, dof, linear++);
    std::size_t k = r;
    while (true) {
      if (k == 0) return;
      --k;
      if (++idx[k] < t.extents[k]) break;
      idx[k] = 0;
    }
  }
}

}  // namespace axe::cuda::test
