// The local layout transform (include/axe/cuda/transpose.hpp): transposes by the generated kernel,
// other boxes by copy_boxes.
#include <cuda_runtime.h>

#include <cstddef>

#include "axe/cuda/check.hpp"
#include "axe/cuda/kernels.hpp"
#include "axe/cuda/transpose.hpp"
#include "cuda/internal.hpp"

namespace axe::cuda {

using internal::box_elements;
using internal::merge_modes;

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
  // transform_generated checks the box and sends what is not a transpose to copy_boxes. Every
  // transpose is generated from thread layouts. The hand-written 64x64 kernel that 16-byte
  // aligned 4-byte elements took before was only level with it in the same run (kernel_bench, one
  // H100, 2026-11-27: f32 8192^2 96.7% of device memcpy against 96.6% generated, 1024 x 65536
  // 96.2% against 96.0%; within 0.5 points either way over four runs), so it was retired.
  transform_generated(box, dtype, src, dst, stream);
}

}  // namespace axe::cuda
