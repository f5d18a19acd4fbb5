// The runtime's transpose as a generated tile conversion (codegen layer).
//
// A box whose mode `a` is contiguous in the source and mode `b` in the destination (possibly
// batched over other modes: cuda/transpose.hpp) goes tile by tile: a tile of tile.b x tile.a
// elements (logical shape (b, a), row-major index b * tile.a + a) is loaded in a thread layout
// that holds 16-byte vectors along a (blocked [1, V] with lanes along a first, warps along b),
// converted by the plan of linear/convert_plan.hpp to one that holds vectors along b (blocked
// [V, 1], order [0, 1]) through the optimal swizzle in shared memory, and stored. Both global
// sides are coalesced and vectorised; the thread mapping is these two layouts, not index
// arithmetic. Tiles cut by the box's edge take a predicated scalar path. Consecutive tiles of one
// CTA alternate between two shared buffers, so the only barrier is the one inside the conversion.
//
// The kernel:
//   extern "C" __global__ void axe_transpose(const T* src, T* dst, axe_transpose_desc d)
// with the descriptor below (TransposeDesc on the host has the same layout).
#pragma once

#include <cstdint>
#include <string>

#include "axe/codegen/tile_codegen.hpp"

namespace axe::codegen {

// The kernel's argument (16-byte aligned plain data; the generated source declares the same).
inline constexpr int kTransposeBatchModes = 6;
struct alignas(16) TransposeDesc {
  long long A = 0, B = 0;    // extents of modes a and b
  long long sb = 0, da = 0;  // src stride of b (a's is 1), dst stride of a (b's is 1)
  long long soff = 0, doff = 0;
  long long tiles_a = 0, tiles_b = 0, batch = 1, nb = 0;
  long long bext[kTransposeBatchModes] = {}, bsst[kTransposeBatchModes] = {},
            bdst[kTransposeBatchModes] = {};
};

struct TransposeTile {
  std::int64_t a = 64, b = 64;  // tile extents (powers of two)
  std::int64_t warps = 8;
};

struct TransposeKernel {
  std::string source;
  std::string name = "axe_transpose";
  std::int64_t threads = 0;
  std::int64_t shared_bytes = 0;  // dynamic shared memory: two buffers
  TransposeTile tile;
  std::int64_t vector = 1;        // elements per global vector (1: scalar accesses)
  linear::ConvertPlan plan;
};

// The tile (by element size and vector width) the runtime uses, the fastest measured
// (transpose_codegen.cpp gives the figures), b x a and warps: with vectors 64 x 64 with 4 warps
// for 1- and 2-byte elements, 32 x 64 w4 for 4-byte ones, 32 x 32 w4 for 8-byte ones; scalar the
// same but 64 x 64 w8 for 4-byte and 128 x 128 w8 for 1-byte elements.
TransposeTile default_transpose_tile(std::int64_t element_bytes, bool vectors);

// The kernel for `element` (bits only: the op kind is unused) on `tile`; `vectors`: 16-byte
// global accesses (the caller checks alignment: pointers, offsets and strides multiples of the
// vector), else one element per access. Throws axe::Error for extents that are not powers of two
// or a tile the warps cannot cover.
TransposeKernel transpose_kernel(const Element& element, const TransposeTile& tile, bool vectors);

}  // namespace axe::codegen
