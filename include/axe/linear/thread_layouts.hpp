// The thread layouts kernels use, as linear layouts from hardware (`m` = the thread's registers,
// `lane`, `warp`) to the logical tile (dims [dim{n-1}, ..., dim0], see bridge.hpp), following
// Triton's LinearLayoutConversions: blocked (BlockedEncodingAttr), the Ampere mma.sync
// accumulator (NvidiaMmaEncodingAttr v2, m16n8), the Hopper wgmma accumulator (v3, instrShape
// 16 x N x K) and slices of any of them. Each prints as an Axe layout with from_linear
// (bridge.hpp).
//
// Fitting to the tile shape (Triton's combineCtaCgaWithShape): a layout smaller than the tile
// repeats by growing its registers (`m` gains bases, the repeat the most minor); a larger one
// broadcasts (bases beyond the tile become 0: several lanes, warps or registers hold one element).
//
// Examples, printed with from_linear: blocked on (32,32) with size per thread (1,4), threads per
// warp (4,8), warps (4,1) is S[(2,4,32,4):(4,1@warp,1@lane,1)] (a 16x32 tile, repeated once in
// the registers); the mma.sync accumulator on (16,8) is S[(2,32,2):(2,1@lane,1)].
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "axe/linear/linear_layout.hpp"

namespace axe::linear {

// Triton's BlockedLayout on `shape`: each thread holds size_per_thread[d] consecutive elements of
// dim d, a warp's lanes tile threads_per_warp (whose product must be 32), the warps tile
// warps_per_cta; `order` lists the dims fastest first (default: row-major, last dim fastest).
// Every entry must be a power of two and every list have the shape's rank; axe::Error names the
// argument otherwise.
LinearLayout blocked_layout(std::span<const std::int64_t> shape,
                            std::span<const std::int64_t> size_per_thread,
                            std::span<const std::int64_t> threads_per_warp,
                            std::span<const std::int64_t> warps_per_cta,
                            std::span<const std::int64_t> order = {});

// The mma.sync m16n8 accumulator (Ampere, NvidiaMma v2) on a 2-D `shape`: lane l holds rows
// l/4 and l/4 + 8, columns 2(l%4) and 2(l%4)+1 of each 16x8 tile; warps tile warps_per_cta with
// the column dim fastest. Registers: {m: [(1,0),(0,8)], lane: [(2,0),(4,0),(0,1),(0,2),(0,4)]}.
LinearLayout mma_accumulator(std::span<const std::int64_t> shape,
                             std::span<const std::int64_t> warps_per_cta);

// The wgmma accumulator (Hopper, NvidiaMma v3) for instrShape 16 x n x K on a 2-D `shape`: the
// m16n8 tile repeated n/8 times along columns in the registers, warps along rows first
// (4 warps = one warpgroup = 64 rows). @pre n a power of two in [8, 256].
LinearLayout wgmma_accumulator(std::span<const std::int64_t> shape, std::int64_t n,
                               std::span<const std::int64_t> warps_per_cta);

// Triton's SliceLayout: `parent` is built on the sliced shape with extent 1 inserted at `dim`;
// the result drops logical dim `dim` (renaming the later dims down by one) and the registers
// that became zero. Several lanes or warps then hold one element (broadcast).
// Example: slicing dim 1 of blocked({4,1}, ...) gives a layout on (4).
LinearLayout slice_layout(const LinearLayout& parent, int dim);

}  // namespace axe::linear
