// The local layout transform of one box (DESIGN §5): a transpose through swizzled shared memory.
#pragma once

#include <cuda_runtime_api.h>

#include "axe/core/dtype.hpp"
#include "axe/plan/plan.hpp"

namespace axe::cuda {

// Local layout transform of one box on one GPU. When one mode is contiguous in src and another in
// dst (a transpose, possibly batched over the other modes), the box goes through a 64x64 tile of
// shared memory (32x32 for 8-byte types) whose column index is XOR-swizzled by the row
// (transpose_swizzle below, no padding): loads and stores are coalesced on both sides and no
// warp access hits a bank twice, for 1-, 2-, 4- and 8-byte elements. Any other box is a
// copy_boxes of that box. Example: a 4096x8192 f32 matrix into its transpose is the box
// (4096,8192) src 0+(8192,1) dst 0+(1,4096).
void transform(const Transfer& box, DType dtype, const void* src, void* dst, cudaStream_t stream);
// True when transform() takes the shared-memory path for this box.
bool is_transpose(const Transfer& box);

// The transpose's shared tile: transpose_tile(b) x transpose_tile(b) elements of b bytes; element
// (r, c) (r: the destination's contiguous index within the tile, c: the source's) sits in row r,
// column transpose_swizzle(b, r, c). Blocks of 32 x 8 threads: a warp writes 32 consecutive c of
// one row, then reads one column c over 32 consecutive rows r, and every such access touches
// each 4-byte bank at most once (8-byte elements: per half-warp, as the hardware serves them):
//   4- and 8-byte: c ^ (r mod 32)              -> bank (c ^ r) mod 32 (8-byte: banks 2w, 2w + 1)
//   2-byte (a row of 64 is 32 banks): c ^ ((r mod 32) << 1) -> bank (c >> 1) ^ (r mod 32)
//   1-byte (a row of 64 is 16 banks): c ^ (((r >> 1) mod 16) << 2)
//                                      -> bank 16 (r mod 2) + ((c >> 2) ^ ((r >> 1) mod 16))
// The XOR term is below the tile width, so each row is permuted in place: no padding.
// Example: 4-byte, the read of column c = 5 over rows 0..31 hits banks 5 ^ r: 5, 4, 7, 6, ...
constexpr int transpose_tile(int elem_bytes) {
  return elem_bytes == 8 ? 32 : 64;
}
constexpr int transpose_swizzle(int elem_bytes, int r, int c) {
  return elem_bytes == 2   ? c ^ ((r & 31) << 1)
         : elem_bytes == 1 ? c ^ (((r >> 1) & 15) << 2)
                           : c ^ (r & 31);
}

}  // namespace axe::cuda
