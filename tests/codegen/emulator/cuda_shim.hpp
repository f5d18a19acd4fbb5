// The CUDA subset that generated kernels use, on the host (tests/codegen/emulated_*_test.cpp): one
// std::thread per CUDA thread, std::barrier for __syncthreads and __syncwarp (a CTA's threads all
// wait), one shared buffer (CTAs run one at a time), and shuffles through a slot per thread
// between two CTA-wide barriers (generated code shuffles on every thread of the CTA at the same
// points); ballots through the same slots between two barriers of the warp (a copy kernel's first
// warp alone searches its box table). Not emulated: inline PTX (ldmatrix).
#pragma once

#include <algorithm>
#include <barrier>
#include <bit>
#include <cstdint>
#include <memory>
#include <thread>
#include <vector>

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
inline axe_dim3 gridDim, blockDim;  // gridDim set by the main before a launch, blockDim by axe_run_cta
inline std::barrier<>* axe_cta_barrier = nullptr;
inline std::barrier<>* axe_warp_barriers[32] = {};  // one per warp of 32 threads, where ballots are used
inline std::uint64_t axe_shuffle_slots[1024];

using std::max;
using std::min;

inline uint4 make_uint4(unsigned x, unsigned y, unsigned z, unsigned w) { return uint4{x, y, z, w}; }
inline uint2 make_uint2(unsigned x, unsigned y) { return uint2{x, y}; }
inline int __clz(unsigned x) { return std::countl_zero(x); }
// The low 32 bits of hi:lo shifted right by (s & 31).
inline unsigned __funnelshift_r(unsigned lo, unsigned hi, unsigned s) {
  return static_cast<unsigned>((static_cast<std::uint64_t>(hi) << 32 | lo) >> (s & 31u));
}
template <class T>
T __ldg(const T* p) {
  return *p;
}

#define __device__
#define __global__
#define __forceinline__ inline
#define __launch_bounds__(...)
#define __restrict__ __restrict
#define __align__(n)
#define __shared__

inline void __syncthreads() { axe_cta_barrier->arrive_and_wait(); }
inline void __syncwarp() { axe_cta_barrier->arrive_and_wait(); }

template <class V>
V axe_shuffle(V v, unsigned from_lane) {
  const unsigned t = threadIdx.x;
  axe_shuffle_slots[t] = static_cast<std::uint64_t>(v);
  axe_cta_barrier->arrive_and_wait();
  const V r = static_cast<V>(axe_shuffle_slots[(t & ~31u) + (from_lane & 31u)]);
  axe_cta_barrier->arrive_and_wait();
  return r;
}
template <class V>
V __shfl_sync(unsigned, V v, unsigned lane) {
  return axe_shuffle(v, lane);
}
template <class V>
V __shfl_xor_sync(unsigned, V v, unsigned mask) {
  return axe_shuffle(v, (threadIdx.x & 31u) ^ mask);
}
template <class V>
V __shfl_up_sync(unsigned, V v, unsigned delta, int width) {
  const unsigned l = threadIdx.x & 31u, w = static_cast<unsigned>(width);
  return axe_shuffle(v, l % w >= delta ? l - delta : l);
}
inline unsigned __ballot_sync(unsigned, bool pred) {
  const unsigned t = threadIdx.x;
  std::barrier<>* warp = axe_warp_barriers[t / 32];
  axe_shuffle_slots[t] = pred;
  warp->arrive_and_wait();
  unsigned r = 0;
  for (unsigned l = 0; l < 32; ++l) r |= static_cast<unsigned>(axe_shuffle_slots[(t & ~31u) + l] != 0) << l;
  warp->arrive_and_wait();
  return r;
}

// Byte n of the result is byte (s >> 4n) & 7 of the eight bytes y:x (x's byte 0 first).
inline unsigned __byte_perm(unsigned x, unsigned y, unsigned s) {
  const std::uint64_t v = static_cast<std::uint64_t>(y) << 32 | x;
  unsigned r = 0;
  for (int n = 0; n < 4; ++n) r |= static_cast<unsigned>(v >> (8 * ((s >> (4 * n)) & 7)) & 0xffu) << (8 * n);
  return r;
}

alignas(16) inline unsigned char smem[1 << 18];

// The element type of the kernel under test, by its size ES (the test's compile line sets it).
#if ES == 1
typedef unsigned char axe_element_t;
#elif ES == 2
typedef unsigned short axe_element_t;
#elif ES == 4
typedef unsigned int axe_element_t;
#else
typedef unsigned long long axe_element_t;
#endif

// Runs block `block` of a launch: `threads` std::threads (a multiple of 32, at most 1024), each
// calling `body` with its threadIdx and blockIdx set, with a barrier for the CTA and one per warp.
template <class F>
void axe_run_cta(int threads, unsigned block, F body) {
  std::barrier<> cta(threads);
  axe_cta_barrier = &cta;
  std::vector<std::unique_ptr<std::barrier<>>> warps;
  for (int w = 0; w < threads / 32; ++w) {
    warps.push_back(std::make_unique<std::barrier<>>(32));
    axe_warp_barriers[w] = warps.back().get();
  }
  blockDim = {static_cast<unsigned>(threads), 1, 1};
  std::vector<std::thread> th;
  for (int i = 0; i < threads; ++i) {
    th.emplace_back([&, i] {
      threadIdx = {static_cast<unsigned>(i), 0, 0};
      blockIdx = {block, 0, 0};
      body();
    });
  }
  for (auto& x : th) x.join();
}
