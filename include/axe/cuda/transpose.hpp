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
// tile by tile: by the kernel generated from thread layouts (transform_generated below), except
// for 4-byte elements whose rows are 16-byte aligned on both sides, which take the hand-written
// 64x64 tile whose column index is XOR-swizzled by the row (transpose_swizzle below; faster there
// in the same run, transpose.cu gives the figures). Any other box is a copy_boxes of that box.
// Example: a 4096x8192 f32 matrix into its transpose is the box (4096,8192) src 0+(8192,1) dst
// 0+(1,4096).
void transform(const Transfer& box, DType dtype, const void* src, void* dst, cudaStream_t stream);
// True when transform() takes the shared-memory path for this box.
bool is_transpose(const Transfer& box);
// The same transpose by the kernel generated from thread layouts (codegen/transpose_codegen.hpp,
// compiled with NVRTC on first use per element size, access and tile, then cached): 16-byte global
// vectors where the pointers, offsets and strides allow, else realigned 16-byte words or one
// element per access, whichever is faster for the element size (codegen::TransposeAccess,
// codegen::unaligned_transpose_access). Boxes that are not transposes are a copy_boxes, as in transform().
// Throws axe::Error without a GPU.
// For benchmarks: `tile`, the tile and warps (default: codegen::default_transpose_tile), and
// `access`, forced (vectors on rows that are not 16-byte aligned is an error).
void transform_generated(const Transfer& box, DType dtype, const void* src, void* dst,
                         cudaStream_t stream, const codegen::TransposeTile* tile = nullptr,
                         std::optional<codegen::TransposeAccess> access = std::nullopt);

// The hand-written transpose's shared tile: transpose_tile() x transpose_tile() 4-byte elements;
// element (r, c) (r: the destination's contiguous index within the tile, c: the source's) sits in
// row r, column transpose_swizzle(r, c) = c ^ (r mod 32). Blocks of 32 x 8 threads: a warp writes
// 32 consecutive c of one row, then reads one column c over 32 consecutive rows r, and every such
// access touches each bank once: bank (c ^ r) mod 32. The XOR term is below the tile width, so
// each row is permuted in place: no padding.
// Example: the read of column c = 5 over rows 0..31 hits banks 5 ^ r: 5, 4, 7, 6, ...
constexpr int transpose_tile() { return 64; }
constexpr int transpose_swizzle(int r, int c) { return c ^ (r & 31); }

}  // namespace axe::cuda
