// The CUDA subset that generated transpose kernels use, on the host (tests/codegen/
// emulated_transpose_test.cpp): one std::thread per CUDA thread, std::barrier for __syncthreads
// and __syncwarp (a CTA's threads all wait), and one shared buffer (CTAs run one at a time).
// Shuffles, __ldg and funnel shifts (realigned words, warp-level plans) are not emulated.
#pragma once

#include <barrier>
#include <cstdint>

struct uint4 {
  unsigned x, y, z, w;
};
struct uint2 {
  unsigned x, y;
};
struct axe_dim3 {
  unsigned x = 0, y = 0, z = 0;
};
inline thread_local axe_dim3 threadIdx, blockIdx;
inline axe_dim3 gridDim;
inline std::barrier<>* axe_cta_barrier = nullptr;

#define __device__
#define __global__
#define __forceinline__ inline
#define __launch_bounds__(...)
#define __restrict__ __restrict
#define __align__(n)
#define __shared__

inline void __syncthreads() { axe_cta_barrier->arrive_and_wait(); }
inline void __syncwarp() { axe_cta_barrier->arrive_and_wait(); }

// Byte n of the result is byte (s >> 4n) & 7 of the eight bytes y:x (x's byte 0 first).
inline unsigned __byte_perm(unsigned x, unsigned y, unsigned s) {
  const std::uint64_t v = static_cast<std::uint64_t>(y) << 32 | x;
  unsigned r = 0;
  for (int n = 0; n < 4; ++n) r |= static_cast<unsigned>(v >> (8 * ((s >> (4 * n)) & 7)) & 0xffu) << (8 * n);
  return r;
}

alignas(16) inline unsigned char smem[1 << 18];
