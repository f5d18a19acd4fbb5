// The box kernel (copy_boxes, reduce_boxes, fill_boxes of include/axe/cuda/kernels.hpp), templated
// on what it does to each unit, and its launch.
//
// Work split: every box is cut into chunks of kChunk units (a unit is 1..16 bytes, chosen per box
// on the host); the grid walks the chunks of all boxes (grid-stride), a block finds its box by a
// binary search over the chunk prefix sums. Inside a chunk, thread t handles units t, t + 256,
// t + 512, t + 768: consecutive threads touch consecutive units of the innermost run, so a warp
// reads 512 contiguous bytes when the run allows it, and each thread has four loads in flight
// before its first store. Rows the box kernel could only move in units of 1, 2 or 4 bytes (odd
// lengths, pitches or offsets) go through the generated copy's destination words instead
// (copy_engine.hpp, realigned rows).
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

#include "axe/cuda/box_list.hpp"
#include "axe/cuda/check.hpp"
#include "cuda/device/index_decode.cuh"
#include "cuda/internal.hpp"

namespace axe::cuda::internal {

template <int B>
struct UnitOf;
template <>
struct UnitOf<1> {
  using type = unsigned char;
};
template <>
struct UnitOf<2> {
  using type = unsigned short;
};
template <>
struct UnitOf<4> {
  using type = unsigned int;
};
template <>
struct UnitOf<8> {
  using type = unsigned long long;
};
template <>
struct UnitOf<16> {
  using type = uint4;
};

__device__ __forceinline__ void offsets(const Desc& d, long long u, long long& so, long long& dof) {
  so = d.soff;
  dof = d.doff;
  if (d.small) {
    const unsigned q = decode_modes<1, kMaxModes>(d, static_cast<unsigned>(u), so, dof);
    so += static_cast<long long>(q) * d.sst[0];
    dof += static_cast<long long>(q) * d.dst[0];
  } else {
    const long long q = decode_modes<1, kMaxModes>(d, u, so, dof);
    so += q * d.sst[0];
    dof += q * d.dst[0];
  }
}

template <int B, class F>
__device__ __forceinline__ void run_chunk(const Desc& d, long long base, const char* src, char* dst,
                                          const F& f) {
  using U = typename UnitOf<B>::type;
  U v[kUnroll];
  long long dofs[kUnroll];
  bool ok[kUnroll];
#pragma unroll
  for (int k = 0; k < kUnroll; ++k) {
    const long long u = base + k * kThreads + threadIdx.x;
    ok[k] = u < d.units;
    if (ok[k]) {
      long long so;
      offsets(d, u, so, dofs[k]);
      if constexpr (F::reads_src) v[k] = reinterpret_cast<const U*>(src)[so];
    }
  }
#pragma unroll
  for (int k = 0; k < kUnroll; ++k)
    if (ok[k]) f.template apply<U>(v[k], reinterpret_cast<U*>(dst) + dofs[k]);
}

// Makes shared `sd` the descriptor of chunk c's box, unless it already is (a block's c only
// grows, so that is c < end, the end of sd's chunks, kept in a register): warp 0 searches for the
// last box whose first chunk is <= c, 32-ary (log32(boxes) rounds of dependent loads instead of
// log2(boxes)), then the block copies it, between barriers. Every thread of the block calls it with
// the same c, so a block walking the chunks of one box passes no barrier after its first (ncu on
// the realigned-row kernel, one H200: 39% of its stall cycles were at the barriers of a per-chunk
// search).
template <class D>
__device__ __forceinline__ void load_box(const D* __restrict__ table, int nboxes, long long c,
                                         D& sd, int& box, long long& end) {
  if (c < end) return;
  __syncthreads();  // every thread is done with the previous descriptor
  if (threadIdx.x < 32) {
    int lo = 0, n = nboxes;  // answer in [lo, lo + n)
    while (n > 1) {
      const int step = (n + 31) / 32;
      const int cand = lo + static_cast<int>(threadIdx.x) * step;
      const bool ok = cand < lo + n && table[cand].chunk_begin <= c;
      const unsigned mask = __ballot_sync(0xffffffffu, ok);
      const int last = 31 - __clz(mask);  // lane 0 always qualifies
      lo += last * step;
      n = min(step, n - last * step);
    }
    if (threadIdx.x == 0) box = lo;
  }
  __syncthreads();
  constexpr int words = sizeof(D) / 8;
  static_assert(words <= kThreads);
  if (threadIdx.x < words)
    reinterpret_cast<long long*>(&sd)[threadIdx.x] =
        reinterpret_cast<const long long*>(table + box)[threadIdx.x];
  __syncthreads();
  end = sd.chunk_begin + (sd.units + kChunk - 1) / kChunk;
}

// At least 3 blocks per SM (80 registers), what every instantiation reaches anyway; without it the
// compiler held ReduceF<double> to 64 registers and spilled 56 bytes.
template <class F>
__global__ void __launch_bounds__(kThreads, 3)
    box_kernel(const Desc* __restrict__ table, int nboxes, long long chunks, const char* src,
               char* dst, const char* src2, F f) {
  __shared__ Desc sd;
  __shared__ int box;
  long long end = 0;  // the end of sd's chunks (no box yet)
  for (long long c = blockIdx.x; c < chunks; c += gridDim.x) {
    load_box(table, nboxes, c, sd, box, end);
    const long long base = (c - sd.chunk_begin) * kChunk;
    const char* s = sd.source ? src2 : src;
    switch (sd.ulog) {
      case 0: run_chunk<1>(sd, base, s, dst, f); break;
      case 1: run_chunk<2>(sd, base, s, dst, f); break;
      case 2: run_chunk<4>(sd, base, s, dst, f); break;
      case 3: run_chunk<8>(sd, base, s, dst, f); break;
      default: run_chunk<16>(sd, base, s, dst, f); break;
    }
  }
}

template <class F>
void launch(const BoxList& list, const void* src, void* dst, cudaStream_t stream, const F& f,
            const void* src2 = nullptr) {
  if (list.empty()) return;
  int align = pointer_align(dst);
  if (src) align = std::min(align, pointer_align(src));
  if (src2) align = std::min(align, pointer_align(src2));
  auto dev = list.device(align, stream);
  if (dev.chunks == 0) return;
  box_kernel<F><<<grid_for(dev.chunks), kThreads, 0, stream>>>(
      static_cast<const Desc*>(dev.table), dev.boxes, dev.chunks, static_cast<const char*>(src),
      static_cast<char*>(dst), static_cast<const char*>(src2), f);
  AXE_CUDA_CHECK(cudaGetLastError());
}

}  // namespace axe::cuda::internal
