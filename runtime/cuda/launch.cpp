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

// The current device's SMs (132 where it cannot be asked), read once.
int sm_count() {
  static const int sms = [] {
    int dev = 0, n = 0;
    if (cudaGetDevice(&dev) != cudaSuccess ||
        cudaDeviceGetAttribute(&n, cudaDevAttrMultiProcessorCount, dev) != cudaSuccess)
      return 132;
    return n;
  }();
  return sms;
}

}  // namespace

namespace internal {

int pointer_align(const void* p) {
  const auto v = reinterpret_cast<std::uintptr_t>(p);
  int a = 16;
  while (a > 1 && (v % static_cast<std::uintptr_t>(a)) != 0) a >>= 1;
  return a;
}

int grid_for(std::int64_t chunks) {
  return static_cast<int>(std::min<std::int64_t>(chunks, std::int64_t{sm_count()} * t_blocks_per_sm));
}

int grid_in_waves(std::int64_t chunks, int resident) {
  const int waves = resident < 1 ? 0 : t_blocks_per_sm / resident;
  const int per_sm = waves >= 2 ? waves * resident : t_blocks_per_sm;
  return static_cast<int>(std::min<std::int64_t>(chunks, std::int64_t{sm_count()} * per_sm));
}

int grid_one_wave(std::int64_t chunks, int resident) {
  const int per_sm = resident < 1 ? t_blocks_per_sm : std::min(resident, t_blocks_per_sm);
  return static_cast<int>(std::min<std::int64_t>(chunks, std::int64_t{sm_count()} * per_sm));
}

}  // namespace internal

int set_box_blocks_per_sm(int n) {
  if (n < 1 || n > 8) fail("set_box_blocks_per_sm: " + std::to_string(n) + " outside 1..8");
  const int old = t_blocks_per_sm;
  t_blocks_per_sm = n;
  return old;
}

}  // namespace axe::cuda
