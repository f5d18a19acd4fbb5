// Device kernels driven by plan boxes (DESIGN §5): pack, unpack, reduce on receipt, fill, and the
// local layout transform (a transpose through swizzled shared memory).
//
// The boxes are a BoxList (box_list.hpp); copy_boxes moves them on the copy engines or the kernels
// as CopyEnginePolicy says (copy_engine.hpp); transform is in transpose.hpp. This header includes
// all three.
//
// Vectorisation: when the innermost mode is contiguous on both sides, every access moves the
// largest power-of-two unit (up to 16 bytes) that divides the run length, the outer strides and
// the offsets (in bytes) and the alignment of both base pointers; otherwise one element per
// access. Modes that are contiguous in both buffers are merged first, so a box of 8 modes often
// launches as 1 or 2.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <vector>

#include "axe/codegen/copy_codegen.hpp"
#include "axe/core/dtype.hpp"
#include "axe/cuda/box_list.hpp"
#include "axe/cuda/copy_engine.hpp"
#include "axe/cuda/transpose.hpp"
#include "axe/dist/placement.hpp"
#include "axe/plan/plan.hpp"

namespace axe::cuda {

// Occupancy of the box kernels (copy_boxes, reduce_boxes, fill_boxes): at most n blocks of 256
// threads per SM (1..8; 8, the default, fills the GPU). A pipelined step lowers it while NCCL runs
// on another stream, so NCCL's blocks find room on every SM. Per host thread; returns the previous
// value; axe::Error outside 1..8.
int set_box_blocks_per_sm(int n);

// dst box = src box (bitwise), every box of `list`, one launch. Boxes marked
// from_second_source() read `src2` instead of `src`. Under copy_engine_policy(), or `policy`
// (copy_engine.hpp: which boxes go to the copy engines, the generated copy or the box kernel).
void copy_boxes(const BoxList& list, const void* src, void* dst, cudaStream_t stream,
                const void* src2 = nullptr);
void copy_boxes(const BoxList& list, const void* src, void* dst, cudaStream_t stream,
                const void* src2, const CopyEnginePolicy& policy);

// copy_boxes by the kernel generated from thread layouts (codegen/copy_codegen.hpp: a tile copy
// whose one thread layout loads and stores 16-byte vectors along each box's innermost mode),
// compiled with NVRTC on first use per element size, access and tile, then cached. Every box's
// innermost mode must be contiguous on both sides (copy_generated_fits; else axe::Error naming the
// box). Rows that are not all 16-byte aligned take exchanged tiles for 4-byte elements on runs of
// 1024 or more (codegen::CopyTile::exchange: 1024 elements on 4 warps, one block a tile), else
// realigned words (codegen::TransposeAccess), on codegen::copy_words_tile (flat tiles for u8
// packs, one wave of blocks; 64-bit row arithmetic where a row is too long for 32). For
// benchmarks: `tile` (default codegen::default_copy_tile for the list's shortest run) and
// `access`, forced (vectors on rows that are not 16-byte aligned, and a flat tile on rows of
// 2^31 - 64 bytes or more, are errors naming the box; an exchanged tile takes scalar access
// unless `access` is given).
// Throws axe::Error without a GPU.
bool copy_generated_fits(const BoxList& list);
void copy_generated(const BoxList& list, const void* src, void* dst, cudaStream_t stream,
                    const void* src2 = nullptr, const codegen::CopyTile* tile = nullptr,
                    std::optional<codegen::TransposeAccess> access = std::nullopt);

// Reduce on receipt: dst box = op(dst box, src box) when `combine`, else dst box = src box; then,
// when divide != 1, dst box = dst box / divide (avg: the last term divides by the term count).
// Integer arithmetic wraps; f16 and bf16 combine in float and round to nearest even; division
// truncates for integers, as the host executor does.
void reduce_boxes(const BoxList& list, const void* src, void* dst, ReduceOp op, bool combine,
                  double divide, cudaStream_t stream, const void* src2 = nullptr);

// Sets every element of the dst side of each box to `value` converted to the list's dtype
// (NaN and infinities map to the integer extremes as on the host; NaN to 0 for u8 padding).
void fill_boxes(const BoxList& list, void* dst, double value, cudaStream_t stream);

// Bit pattern of `value` in `dtype` (little-endian, size_of(dtype) bytes used).
std::uint64_t value_bits(DType dtype, double value);

}  // namespace axe::cuda
