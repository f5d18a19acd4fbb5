// transform_generated (include/axe/cuda/transpose.hpp): the transpose by the generated tile kernel.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <tuple>

#include "axe/codegen/transpose_codegen.hpp"
#include "axe/cuda/check.hpp"
#include "axe/cuda/kernels.hpp"
#include "axe/cuda/nvrtc.hpp"
#include "axe/cuda/transpose.hpp"
#include "cuda/internal.hpp"

namespace axe::cuda {
namespace {

using Compiled = internal::Compiled<codegen::TransposeKernel>;

// The shared memory a block of `device` may opt in to.
int shared_limit(int device) {
  int limit = 0;
  AXE_CUDA_CHECK(cudaDeviceGetAttribute(&limit, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
  return limit;
}

// The kernel of `source` for `device`, allowed `shared_bytes` of dynamic shared memory.
cudaKernel_t load_with_shared(const std::string& source, const std::string& name, std::int64_t shared_bytes,
                              int device) {
  cudaKernel_t kernel = KernelCache::global().kernel(source, name);
  AXE_CUDA_CHECK(cudaKernelSetAttributeForDevice(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                                 static_cast<int>(shared_bytes), device));
  return kernel;
}

// A transpose kernel's grid: its tiles along x and its batch along z (each walks the rest).
dim3 transpose_grid(const codegen::TransposeDesc& d) {
  return dim3(static_cast<unsigned>(std::min<long long>(d.tiles_a * d.tiles_b, 1ll << 30)), 1,
              static_cast<unsigned>(std::min<long long>(d.batch, 65535)));
}

// One kernel per (element size, access, tile, device), compiled once. `fit`: the tile is the
// default, which a device with less shared memory than it needs replaces by a smaller one
// (codegen::fit_transpose_tile); a tile the caller chose is an error there.
const Compiled& compiled(std::int64_t element_bytes, codegen::TransposeAccess access, const codegen::TransposeTile& tile,
                         bool fit) {
  return internal::compile_once<Compiled>(
      std::tuple{element_bytes, access, tile.a, tile.b, tile.warps, tile.b_first, tile.vector_bytes, tile.packed,
                 fit},
      [&](Compiled& c, int device) {
        const codegen::Element e(element_bytes, codegen::Element::Kind::integer, "raw");
        const int limit = shared_limit(device);
        c.k = codegen::transpose_kernel(e, fit ? codegen::fit_transpose_tile(e, tile, access, limit) : tile, access);
        if (c.k.shared_bytes > limit) {
          fail("transform_generated: a " + std::to_string(tile.b) + "x" + std::to_string(tile.a) + " tile of " +
               std::to_string(element_bytes) + "-byte elements needs " + std::to_string(c.k.shared_bytes) +
               " bytes of shared memory (two buffers); device " + std::to_string(device) + " allows " +
               std::to_string(limit));
        }
        c.kernel = load_with_shared(c.k.source, c.k.name, c.k.shared_bytes, device);
      });
}

bool aligned(const void* p, long long offset, std::int64_t bytes, std::int64_t es) {
  return (reinterpret_cast<std::uintptr_t>(p) + static_cast<std::uintptr_t>(offset * es)) % static_cast<std::uintptr_t>(bytes) == 0;
}

}  // namespace

namespace internal {

// The transpose of `box` (is_transpose) as the generated kernel's descriptor.
codegen::TransposeDesc transpose_desc(const Transfer& box) {
  const Transfer t = merge_modes(box);
  const int r = static_cast<int>(t.extents.size());
  int a = -1, b = -1;
  for (int k = 0; k < r; ++k) {
    if (t.src_strides[k] == 1 && t.extents[k] > 1 && a < 0) a = k;
    if (t.dst_strides[k] == 1 && t.extents[k] > 1 && b < 0) b = k;
  }
  codegen::TransposeDesc d;
  d.A = t.extents[a];
  d.B = t.extents[b];
  d.sb = t.src_strides[b];
  d.da = t.dst_strides[a];
  d.soff = t.src_offset;
  d.doff = t.dst_offset;
  for (int k = 0; k < r; ++k) {
    if (k == a || k == b) continue;
    if (d.nb == codegen::kTransposeBatchModes) fail("transform: more than 6 batch modes");
    d.bext[d.nb] = t.extents[k];
    d.bsst[d.nb] = t.src_strides[k];
    d.bdst[d.nb] = t.dst_strides[k];
    d.batch *= t.extents[k];
    ++d.nb;
  }
  return d;
}

bool transpose_vectors_fit(const codegen::TransposeDesc& d, const void* src, const void* dst,
                           std::int64_t es) {
  const std::int64_t v = 16 / es;
  bool ok = aligned(src, d.soff, 16, es) && aligned(dst, d.doff, 16, es) && d.sb % v == 0 && d.da % v == 0;
  for (long long k = 0; k < d.nb; ++k) ok = ok && d.bsst[k] % v == 0 && d.bdst[k] % v == 0;
  return ok;
}

}  // namespace internal

void transform_generated(const Transfer& box, DType dtype, const void* src, void* dst,
                         cudaStream_t stream, const codegen::TransposeTile* tile,
                         std::optional<codegen::TransposeAccess> forced) {
  internal::check_box(box);
  if (!is_transpose(box)) {
    copy_boxes(BoxList::copy({box}, dtype), src, dst, stream);
    return;
  }
  codegen::TransposeDesc d = internal::transpose_desc(box);
  const std::int64_t es = size_of(dtype);
  // Rows that do not all start 16-byte aligned take realigned words or one element per access,
  // whichever is faster for the element size (codegen::unaligned_transpose_access).
  const bool fit = internal::transpose_vectors_fit(d, src, dst, es);
  const codegen::TransposeAccess access = forced ? *forced
                                          : fit  ? codegen::TransposeAccess::vectors
                                                 : codegen::unaligned_transpose_access(es);
  if (access == codegen::TransposeAccess::vectors && !fit) {
    fail("transform_generated: vectors forced on a box whose rows are not 16-byte aligned: " + to_string(box));
  }
  const Compiled& c = compiled(es, access, tile ? *tile : codegen::default_transpose_tile(es, access), !tile);
  d.tiles_a = (d.A + c.k.tile.a - 1) / c.k.tile.a;
  d.tiles_b = (d.B + c.k.tile.b - 1) / c.k.tile.b;
  const void* s = src;
  void* o = dst;
  void* args[] = {&s, &o, &d};
  launch(c.kernel, transpose_grid(d), dim3(static_cast<unsigned>(c.k.threads)), args,
         static_cast<std::size_t>(c.k.shared_bytes), stream);
}

}  // namespace axe::cuda
