// The shared-memory bank model (32 banks of 4 bytes), by enumeration, and its F2 formula.
//
// A shared-memory layout is an Axe layout of the tile over `m` (element offsets), optionally
// followed by Swizzle<B,M,S> on the element offset; a thread layout is an Axe layout of the same
// tile over `lane`, optional `warp`, and `m` = the thread's registers. A warp issues one
// instruction per group of V consecutive registers, where V (the vector width) is the largest
// power of two with V * element bytes <= 16 such that in every thread each aligned group of V
// registers holds V consecutive shared offsets starting at a multiple of V. Each instruction is
// served in phases (32-bit and narrower accesses: 32 lanes per phase; 64-bit: 16; 128-bit: 8);
// in a phase each bank serves one 4-byte word per wavefront, the same word to any number of
// lanes, so a phase costs the largest number of distinct words any bank is asked for.
//
// Example (TV-15, 16x32 f32, store lane = column, register = row; load lane%16 = row,
// column = 2 register + lane/16): row-major S[(16,32):(32,1)] gives 16 store instructions of 1
// wavefront and 16 loads of 16 wavefronts; with Swizzle<4,1,4> (offset 32m + (n ^ 2m)) the loads
// take 1 wavefront each.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "axe/cute/swizzle.hpp"
#include "axe/layout/layout.hpp"

namespace axe::linear {

struct BankReport {
  std::int64_t vector_bytes = 0;   // bytes per lane per instruction (V * element bytes)
  std::int64_t instructions = 0;   // per warp
  std::int64_t warps = 0;
  std::int64_t wavefronts = 0;     // total over every warp and instruction
  std::int64_t ideal = 0;          // sum over instructions of ceil(distinct words / 32)
  // Per (warp, instruction), warp-major: the wavefronts of each instruction.
  std::vector<std::int64_t> per_instruction;
  // Per (warp, instruction, lane), warp-major: the shared element offset (swizzle applied) where
  // that lane's access of vector_bytes starts; -1 where the lane takes no part. The accesses the
  // model counts, e.g. to replay them on a GPU (examples/bank_probe.cu).
  std::vector<std::int64_t> offsets;
};

// The accesses of `threads` to `smem` on the logical `shape`, by enumeration of every element.
// Throws axe::Error naming the argument when: the sizes differ from prod(shape); smem uses an
// axis other than m or has replicas; threads uses an axis other than lane, warp, m; a lane or
// warp is outside [0, 32) resp. [0, 1024); the element size is not 1, 2, 4, 8 or 16 bytes; or
// the tile exceeds 2^20 elements or warps x 32 x registers exceeds 2^22 (guards on the
// enumeration).
BankReport bank_conflicts(const AxeLayout& smem, const AxeLayout& threads,
                          std::span<const std::int64_t> shape, std::int64_t element_bytes,
                          const std::optional<cute::Swizzle>& swizzle = std::nullopt);

// The same for any shared-memory placement: offsets[x] is the element offset of logical (row-major)
// index x, e.g. an XOR-linear layout that no Axe layout + Swizzle<B,M,S> expresses (swizzle.hpp).
// Throws as above, and when offsets.size() differs from prod(shape) or an offset is negative.
// @post bank_conflicts(smem, threads, shape, b, sw) == bank_conflicts(offsets of smem then sw,
// threads, shape, b).
BankReport bank_conflicts(std::span<const std::int64_t> offsets, const AxeLayout& threads,
                          std::span<const std::int64_t> shape, std::int64_t element_bytes);

// The F2 formula (LINEAR_LAYOUTS.md §4.1) for scalar 32-bit accesses: with smem an F2-linear map
// from offset to tensor and the lanes' tensor directions laneTile, one instruction takes
// 2^dim(span(laneTile) ∩ span(smem(offset bits >= 5))) wavefronts. nullopt when a layout is not
// F2-linear (to_linear refuses), smem is not invertible on the tile, or the threads hold more than
// one element per register (then enumeration is the model). Per instruction; equal to every entry
// of bank_conflicts(...).per_instruction for 4-byte elements when the lanes hold distinct elements.
std::optional<std::int64_t> f2_wavefronts(const AxeLayout& smem, const AxeLayout& threads,
                                          std::span<const std::int64_t> shape,
                                          const std::optional<cute::Swizzle>& swizzle = std::nullopt);

}  // namespace axe::linear
