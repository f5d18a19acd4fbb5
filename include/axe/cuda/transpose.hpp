// The local layout transform of one box (DESIGN §5): a transpose through swizzled shared memory.
#pragma once

#include <cuda_runtime_api.h>

#include <optional>

#include "axe/codegen/transpose_codegen.hpp"
#include "axe/core/dtype.hpp"
#include "axe/plan/plan.hpp"

namespace axe::cuda {

// Local layout transform of one box on one GPU. When one mode is contiguous in src and another in
// dst (a transpose, possibly batched over the other modes), the box goes through shared memory
// tile by tile, by the kernel generated from thread layouts (transform_generated below). Any
// other box is a copy_boxes of that box.
// Example: a 4096x8192 f32 matrix into its transpose is the box (4096,8192) src 0+(8192,1) dst
// 0+(1,4096).
void transform(const Transfer& box, DType dtype, const void* src, void* dst, cudaStream_t stream);
// True when transform() takes the shared-memory path for this box.
bool is_transpose(const Transfer& box);
// The transpose itself, by the kernel generated from thread layouts (codegen/transpose_codegen.hpp,
// compiled with NVRTC on first use per element size, access and tile, then cached): 16-byte global
// vectors where the pointers, offsets and strides allow, else realigned 16-byte words or one
// element per access, whichever is faster for the element size (codegen::TransposeAccess,
// codegen::unaligned_transpose_access). Boxes that are not transposes are a copy_boxes, as in transform().
// Throws axe::Error without a GPU.
// For benchmarks: `tile`, the tile, warps and tile order (default: codegen::default_transpose_tile), and
// `access`, forced (vectors on rows that are not 16-byte aligned is an error).
void transform_generated(const Transfer& box, DType dtype, const void* src, void* dst,
                         cudaStream_t stream, const codegen::TransposeTile* tile = nullptr,
                         std::optional<codegen::TransposeAccess> access = std::nullopt);

}  // namespace axe::cuda
