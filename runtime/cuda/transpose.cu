// The swizzled shared-memory transpose (include/axe/cuda/transpose.hpp).
#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>

#include "axe/cuda/check.hpp"
#include "axe/cuda/kernels.hpp"
#include "axe/cuda/transpose.hpp"
#include "cuda/internal.hpp"

namespace axe::cuda {

using internal::box_elements;
using internal::check_box;
using internal::merge_modes;

// ---- transpose through an XOR-swizzled shared-memory tile ------------------------------------

namespace {

constexpr int kRows = 8;  // block (32, 8); a tile of 64 x 64 4-byte elements

struct TDesc {
  long long A, B;    // extents: mode a is contiguous in src, mode b in dst
  long long sa, sb;  // src strides of a and b (sa == 1)
  long long da, db;  // dst strides (db == 1)
  long long soff, doff;
  long long tiles_a, tiles_b, batch;
  int nb;  // batch modes
  long long bext[kMaxModes], bsst[kMaxModes], bdst[kMaxModes];
};

// Blocks per SM the transpose is compiled for: the occupancy ptxas chose without a bound (64
// registers).
constexpr int kTransposeBlocksPerSm = 4;

// Each thread loads kTile^2 / 256 elements before the barrier, so many loads are in flight.
template <class T, int kTile>
__global__ void __launch_bounds__(32 * kRows, kTransposeBlocksPerSm)
    transpose_kernel(TDesc d, const T* __restrict__ src, T* __restrict__ dst) {
  __shared__ T tile[kTile][kTile];
  const int tx = threadIdx.x, ty = threadIdx.y;
  const long long tiles = d.tiles_a * d.tiles_b;
  for (long long z = blockIdx.z; z < d.batch; z += gridDim.z) {
    // The batch index, decoded here rather than by decode_modes (device/index_decode.cuh): its
    // unrolled, predicated loop over kMaxModes - 2 modes took the 2-byte instantiation from 48 to
    // 102 registers and the 1-byte one from 48 (12 bytes spilled) to 64 (none); it runs once per z.
    long long so = d.soff, dof = d.doff, q = z;
    for (int m = d.nb - 1; m >= 0; --m) {
      const long long i = q % d.bext[m];
      q /= d.bext[m];
      so += i * d.bsst[m];
      dof += i * d.bdst[m];
    }
    for (long long t = blockIdx.x; t < tiles; t += gridDim.x) {
      const long long a0 = (t % d.tiles_a) * kTile, b0 = (t / d.tiles_a) * kTile;
      const bool full = a0 + kTile <= d.A && b0 + kTile <= d.B;
#pragma unroll
      for (int j = 0; j < kTile; j += kRows) {
#pragma unroll
        for (int i = 0; i < kTile; i += 32) {
          const int r = ty + j, c = tx + i;  // r: b within the tile, c: a
          const long long a = a0 + c, b = b0 + r;
          if (full || (a < d.A && b < d.B))
            tile[r][transpose_swizzle(r, c)] = src[so + a * d.sa + b * d.sb];
        }
      }
      __syncthreads();
#pragma unroll
      for (int j = 0; j < kTile; j += kRows) {
#pragma unroll
        for (int i = 0; i < kTile; i += 32) {
          const int c = ty + j, r = tx + i;  // c: a within the tile, r: b
          const long long a = a0 + c, b = b0 + r;
          if (full || (a < d.A && b < d.B))
            dst[dof + a * d.da + b * d.db] = tile[r][transpose_swizzle(r, c)];
        }
      }
      __syncthreads();
    }
  }
}

template <class T, int kTile>
void launch_transpose(TDesc d, const void* src, void* dst, cudaStream_t stream) {
  d.tiles_a = (d.A + kTile - 1) / kTile;
  d.tiles_b = (d.B + kTile - 1) / kTile;
  const long long tiles = d.tiles_a * d.tiles_b;
  dim3 grid(static_cast<unsigned>(std::min<long long>(tiles, 1ll << 30)), 1,
            static_cast<unsigned>(std::min<long long>(d.batch, 65535)));
  transpose_kernel<T, kTile><<<grid, dim3(32, kRows), 0, stream>>>(d, static_cast<const T*>(src),
                                                                   static_cast<T*>(dst));
}

}  // namespace

bool is_transpose(const Transfer& box) {
  if (box.extents.size() != box.src_strides.size() || box.extents.size() != box.dst_strides.size())
    return false;
  Transfer t = merge_modes(box);
  if (box_elements(t) == 0) return false;
  const std::size_t r = t.extents.size();
  if (t.src_strides[r - 1] == 1 && t.dst_strides[r - 1] == 1) return false;
  int a = -1, b = -1;
  for (std::size_t k = 0; k < r; ++k) {
    if (t.src_strides[k] == 1 && t.extents[k] > 1 && a < 0) a = static_cast<int>(k);
    if (t.dst_strides[k] == 1 && t.extents[k] > 1 && b < 0) b = static_cast<int>(k);
  }
  return a >= 0 && b >= 0 && a != b && r <= static_cast<std::size_t>(kMaxModes);
}

void transform(const Transfer& box, DType dtype, const void* src, void* dst, cudaStream_t stream) {
  check_box(box);
  if (!is_transpose(box)) {
    copy_boxes(BoxList::copy({box}, dtype), src, dst, stream);
    return;
  }
  // The hand-written kernel stays for 4-byte elements whose tile rows are 16-byte aligned: there
  // it is faster in the same run (kernel_bench, one H100, 2026-11-25: 8192^2 f32 96.3% of device
  // memcpy against 93.9% for the best generated tile). Every other transpose is generated from
  // thread layouts (transform_generated), which matches or beats it: f64 98.0% vs 97.4%, f16
  // 93.5% vs 84.1%, u8 86.1% vs 48.4%, the uneven 3001 x 5003 f32 at offset 1 91.1% vs 75.1%.
  const codegen::TransposeDesc g = internal::transpose_desc(box);
  if (size_of(dtype) != 4 || !internal::transpose_vectors_fit(g, src, dst, 4)) {
    transform_generated(box, dtype, src, dst, stream);
    return;
  }
  Transfer t = merge_modes(box);
  const int r = static_cast<int>(t.extents.size());
  int a = -1, b = -1;
  for (int k = 0; k < r; ++k) {
    if (t.src_strides[k] == 1 && t.extents[k] > 1 && a < 0) a = k;
    if (t.dst_strides[k] == 1 && t.extents[k] > 1 && b < 0) b = k;
  }
  TDesc d{};
  d.A = t.extents[a];
  d.B = t.extents[b];
  d.sa = t.src_strides[a];
  d.sb = t.src_strides[b];
  d.da = t.dst_strides[a];
  d.db = t.dst_strides[b];
  d.soff = t.src_offset;
  d.doff = t.dst_offset;
  d.batch = 1;
  for (int k = 0; k < r; ++k) {
    if (k == a || k == b) continue;
    d.bext[d.nb] = t.extents[k];
    d.bsst[d.nb] = t.src_strides[k];
    d.bdst[d.nb] = t.dst_strides[k];
    d.batch *= t.extents[k];
    ++d.nb;
  }
  launch_transpose<unsigned int, transpose_tile()>(d, src, dst, stream);
  AXE_CUDA_CHECK(cudaGetLastError());
}

}  // namespace axe::cuda
