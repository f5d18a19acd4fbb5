// copy_boxes (include/axe/cuda/kernels.hpp): the copy-engine calls, the realigned-row kernel, the
// generated copy (generated_copy.cpp) and the box kernel (device/box_kernel.cuh) with a plain copy.
#include <cuda_runtime.h>

#include <cstdint>

#include "axe/cuda/check.hpp"
#include "axe/cuda/kernels.hpp"
#include "cuda/device/box_kernel.cuh"
#include "cuda/device/index_decode.cuh"
#include "cuda/internal.hpp"

namespace axe::cuda {

using internal::RDesc;
using internal::decode_modes;
using internal::grid_for;
using internal::kChunk;
using internal::kThreads;
using internal::kUnroll;
using internal::launch;
using internal::load_box;

namespace {

// ---- realigned rows (kernels.hpp): 16-byte slots of the destination row -----------------------

// Bytes [b0, b1) of the 16-byte word at `w` (16-aligned), the others zero; one 16-byte load for
// the whole word, else ES-byte elements, so nothing outside [b0, b1) is read. b0 and b1 are
// multiples of ES in 0..16.
template <int ES>
__device__ __forceinline__ uint4 load_part(std::uintptr_t w, int b0, int b1) {
  if (b0 == 0 && b1 == 16) return *reinterpret_cast<const uint4*>(w);
  unsigned r[4] = {0, 0, 0, 0};
#pragma unroll
  for (int j = 0; j < 16; j += ES) {
    if (j < b0 || j >= b1) continue;
    const std::uintptr_t a = w + j;
    if constexpr (ES == 4)
      r[j / 4] = *reinterpret_cast<const unsigned*>(a);
    else if constexpr (ES == 2)
      r[j / 4] |= unsigned{*reinterpret_cast<const unsigned short*>(a)} << (8 * (j % 4));
    else
      r[j / 4] |= unsigned{*reinterpret_cast<const unsigned char*>(a)} << (8 * (j % 4));
  }
  return make_uint4(r[0], r[1], r[2], r[3]);
}

// Stores bytes [b0, b1) of v at the 16-byte word `w` (16-aligned): one 16-byte store for the
// whole word, else ES-byte elements.
template <int ES>
__device__ __forceinline__ void store_part(std::uintptr_t w, int b0, int b1, uint4 v) {
  if (b0 == 0 && b1 == 16) {
    *reinterpret_cast<uint4*>(w) = v;
    return;
  }
  const unsigned r[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
  for (int j = 0; j < 16; j += ES) {
    if (j < b0 || j >= b1) continue;
    const std::uintptr_t a = w + j;
    if constexpr (ES == 4)
      *reinterpret_cast<unsigned*>(a) = r[j / 4];
    else if constexpr (ES == 2)
      *reinterpret_cast<unsigned short*>(a) =
          static_cast<unsigned short>(r[j / 4] >> (8 * (j % 4)));
    else
      *reinterpret_cast<unsigned char*>(a) = static_cast<unsigned char>(r[j / 4] >> (8 * (j % 4)));
  }
}

// x clamped to 0..16: a byte position of a row range seen from one 16-byte word.
__device__ __forceinline__ int clamp16(long long x) {
  return static_cast<int>(min(max(x, 0ll), 16ll));
}

// Bytes k .. k + 15 (k < 16) of the 32 bytes a, b (little-endian: a's byte 0 first).
__device__ __forceinline__ uint4 shift_bytes(uint4 a, uint4 b, int k) {
  const unsigned w[8] = {a.x, a.y, a.z, a.w, b.x, b.y, b.z, b.w};
  const int q = k >> 2, r = 8 * (k & 3);
  unsigned s[5];
#pragma unroll
  for (int i = 0; i < 5; ++i)
    s[i] = q == 0 ? w[i] : q == 1 ? w[i + 1] : q == 2 ? w[i + 2] : w[i + 3];
  return make_uint4(__funnelshift_r(s[0], s[1], r), __funnelshift_r(s[1], s[2], r),
                    __funnelshift_r(s[2], s[3], r), __funnelshift_r(s[3], s[4], r));
}

// Slots base + t, base + t + 256, ... of box d: slot m of a row is the destination's 16-byte word
// m counted from the word holding the row's first byte. Its 16 bytes come from the source bytes
// at the same distance from the row's start, i.e. bytes k..k+15 of the two aligned source words
// they straddle. Every load is issued before the first store.
template <int ES, int R>
__device__ __forceinline__ void row_chunk(const RDesc& d, long long base, const char* src,
                                          char* dst) {
  uint4 lo[kUnroll], hi[kUnroll];
  std::uintptr_t dw[kUnroll];
  int sh[kUnroll], part[kUnroll];  // shift; the slot's bytes in its row: b0 | b1 << 8
  bool ok[kUnroll];
#pragma unroll
  for (int k = 0; k < kUnroll; ++k) {
    const long long u = base + k * kThreads + threadIdx.x;
    ok[k] = u < d.units;
    if (!ok[k]) continue;
    long long m, so = d.soff, dof = d.doff;
    if (d.small) {  // 32-bit division
      const unsigned row = static_cast<unsigned>(u) / static_cast<unsigned>(d.slots);
      m = static_cast<unsigned>(u) - row * static_cast<unsigned>(d.slots);
      decode_modes<0, R>(d, row, so, dof);
    } else {
      const long long row = u / d.slots;
      m = u - row * d.slots;
      decode_modes<0, R>(d, row, so, dof);
    }
    const std::uintptr_t D = reinterpret_cast<std::uintptr_t>(dst) + dof;
    dw[k] = (D & ~std::uintptr_t{15}) + 16 * static_cast<std::uintptr_t>(m);
    // the slot's first byte in the row: -15 .. run - 1
    const long long at = static_cast<long long>(dw[k] - D);
    ok[k] = at < d.run;
    if (!ok[k]) continue;
    part[k] = clamp16(-at) | clamp16(d.run - at) << 8;
    const std::uintptr_t s0 = reinterpret_cast<std::uintptr_t>(src) + so + at;  // its source byte
    const std::uintptr_t w0 = s0 & ~std::uintptr_t{15};
    sh[k] = static_cast<int>(s0 & 15);
    const long long wa = at - sh[k];  // w0's first byte in the row
    lo[k] = load_part<ES>(w0, clamp16(-wa), clamp16(d.run - wa));
    hi[k] = sh[k] ? load_part<ES>(w0 + 16, clamp16(-wa - 16), clamp16(d.run - wa - 16))
                  : make_uint4(0, 0, 0, 0);
  }
#pragma unroll
  for (int k = 0; k < kUnroll; ++k)
    if (ok[k])
      store_part<ES>(dw[k], part[k] & 0xff, part[k] >> 8, shift_bytes(lo[k], hi[k], sh[k]));
}

// ES: the element size (the partial words at the ends of a row move element by element; base
// pointers are element-aligned, as for the box kernel). R: the most outer modes of a box (1 for
// plain 2-D boxes, which then hold fewer registers).
// Blocks per SM: 3 (80 registers) for R == 1, as ptxas chose on its own; 2 for R > 1, where it
// chose 90 registers for 2- and 4-byte elements but held 1-byte ones to 80 with 8 bytes spilled.
template <int ES, int R>
__global__ void __launch_bounds__(kThreads, R == 1 ? 3 : 2)
    row_kernel(const RDesc* __restrict__ table, int nboxes, long long chunks, const char* src,
               char* dst, const char* src2) {
  __shared__ RDesc sd;
  __shared__ int box;
  long long end = 0;  // the end of sd's chunks (no box yet)
  for (long long c = blockIdx.x; c < chunks; c += gridDim.x) {
    load_box(table, nboxes, c, sd, box, end);
    row_chunk<ES, R>(sd, (c - sd.chunk_begin) * kChunk, sd.source ? src2 : src, dst);
  }
}

struct CopyF {
  static constexpr bool reads_src = true;
  template <class U>
  __device__ __forceinline__ void apply(const U& s, U* d) const {
    *d = s;
  }
};

template <int ES>
void launch_rows(const BoxList& rows, const char* src, char* dst, const char* src2,
                 cudaStream_t stream) {
  const auto dev = rows.row_device(stream);
  const auto* table = static_cast<const RDesc*>(dev.table);
  const int grid = grid_for(dev.chunks);
  if (dev.modes <= 2)
    row_kernel<ES, 1><<<grid, kThreads, 0, stream>>>(table, dev.boxes, dev.chunks, src, dst, src2);
  else
    row_kernel<ES, kMaxModes - 1>
        <<<grid, kThreads, 0, stream>>>(table, dev.boxes, dev.chunks, src, dst, src2);
  AXE_CUDA_CHECK(cudaGetLastError());
}

}  // namespace

void copy_boxes(const BoxList& list, const void* src, void* dst, cudaStream_t stream,
                const void* src2) {
  const CopyEnginePolicy policy = copy_engine_policy();
  const BoxList::Split sp = list.split(policy);
  const BoxList* kernel_list = sp.engine.empty() && !sp.rows ? &list : sp.rest.get();
  for (const EngineCopy& c : sp.engine) {
    const char* s = static_cast<const char*>(c.source ? src2 : src) + c.src_offset;
    char* d = static_cast<char*>(dst) + c.dst_offset;
    if (c.height == 1)
      AXE_CUDA_CHECK(cudaMemcpyAsync(d, s, static_cast<std::size_t>(c.width), cudaMemcpyDeviceToDevice, stream));
    else
      AXE_CUDA_CHECK(cudaMemcpy2DAsync(d, static_cast<std::size_t>(c.dst_pitch), s,
                                       static_cast<std::size_t>(c.src_pitch), static_cast<std::size_t>(c.width),
                                       static_cast<std::size_t>(c.height), cudaMemcpyDeviceToDevice, stream));
  }
  if (sp.rows) {
    const auto* s = static_cast<const char*>(src);
    const auto* s2 = static_cast<const char*>(src2);
    auto* d = static_cast<char*>(dst);
    switch (size_of(list.dtype())) {  // 1, 2 or 4: realigns() admits no 8-byte unit
      case 4: launch_rows<4>(*sp.rows, s, d, s2, stream); break;
      case 2: launch_rows<2>(*sp.rows, s, d, s2, stream); break;
      default: launch_rows<1>(*sp.rows, s, d, s2, stream); break;
    }
  }
  if (!kernel_list) return;
  // Aligned strided boxes in runs of at least generated_min_run bytes: the generated tile copy
  // (copy_engine.hpp gives the figures for and against).
  if (copies_generated(*kernel_list, src, dst, src2, policy))
    copy_generated(*kernel_list, src, dst, stream, src2);
  else
    launch(*kernel_list, src, dst, stream, CopyF{}, src2);
}

}  // namespace axe::cuda
