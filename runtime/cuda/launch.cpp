// Launch heuristics of the box kernels: base-pointer alignment, grid size, blocks per SM.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdint>
#include <string>

#include "axe/core/error.hpp"
#include "axe/cuda/kernels.hpp"
#include "cuda/internal.hpp"

namespace axe::cuda {

namespace {

thread_local int t_blocks_per_sm = 8;

}  // namespace

namespace internal {

int pointer_align(const void* p) {
  const auto v = reinterpret_cast<std::uintptr_t>(p);
  int a = 16;
  while (a > 1 && (v % static_cast<std::uintptr_t>(a)) != 0) a >>= 1;
  return a;
}

int grid_for(std::int64_t chunks) {
  static int sms = [] {
    int dev = 0, n = 0;
    if (cudaGetDevice(&dev) != cudaSuccess ||
        cudaDeviceGetAttribute(&n, cudaDevAttrMultiProcessorCount, dev) != cudaSuccess)
      return 132;
    return n;
  }();
  return static_cast<int>(std::min<std::int64_t>(chunks, static_cast<std::int64_t>(sms) * t_blocks_per_sm));
}

}  // namespace internal

int set_box_blocks_per_sm(int n) {
  if (n < 1 || n > 8) fail("set_box_blocks_per_sm: " + std::to_string(n) + " outside 1..8");
  const int old = t_blocks_per_sm;
  t_blocks_per_sm = n;
  return old;
}

}  // namespace axe::cuda
