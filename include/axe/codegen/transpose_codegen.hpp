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
#include <string_view>

#include "axe/codegen/tile_codegen.hpp"

namespace axe::codegen {

// How a full tile's rows are read and written:
//   vectors:   16-byte vectors; the caller checks that pointers, offsets and strides are multiples
//              of the vector, so every tile row starts 16-byte aligned;
//   realigned: 16-byte aligned words whatever the rows' alignment (each row's shift found at run
//              time): a lane's vector straddles two words, the word it shares with its neighbour
//              along the row passes by one shuffle, and the words at a tile row's two ends are
//              read or written in aligned pieces of its bytes only (never a byte outside the row);
//   scalar:    one element per access.
// Tiles cut by the box's edge are scalar in every mode.
enum class TransposeAccess { vectors, realigned, scalar };
std::string_view to_string(TransposeAccess a);

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
  // The order of the tiles over the CTAs: along a first (consecutive CTAs read the same source
  // rows), or along b first (consecutive CTAs write consecutive pieces of the same destination
  // rows, so the 32-byte sectors two tiles share at a destination row's cut are written by CTAs
  // running side by side: rows that are not 16-byte aligned; aligned rows gained too, on one H200,
  // default_transpose_tile).
  bool b_first = false;
  // With vectors: the bytes of each global vector (16, 8 or 4; at least an element). Narrower
  // vectors make the squares of elements under 4 bytes smaller (u8: 4 x 8 per thread with 8), so a
  // thread holds fewer registers.
  std::int64_t vector_bytes = 16;
  // With vectors, elements under 4 bytes: hold them packed, 4 / size to a 32-bit register, the
  // byte transposes done by byte permutes (emit_conversion's packed registers), instead of one
  // element to a register (u8 128 x 64 w4: 72 registers a thread against 83, f16 128 x 128 w4: 96
  // against 158, by ptxas). The default for 1-byte elements (default_transpose_tile, measured).
  bool packed = false;
};

struct TransposeKernel {
  std::string source;
  std::string name = "axe_transpose";
  std::int64_t threads = 0;
  std::int64_t shared_bytes = 0;  // dynamic shared memory: two buffers
  TransposeTile tile;
  TransposeAccess access = TransposeAccess::vectors;
  std::int64_t vector = 1;        // elements per global vector (1: scalar accesses)
  std::int64_t block = 1;         // rows per thread in each vector's square: 4 bytes / element (< 4 bytes)
  bool packed = false;  // tile.packed taken: elements held 4 / size to a 32-bit register
  linear::ConvertPlan plan;
};

// The tile (by element size and access) the runtime uses, the fastest measured
// (transpose_codegen.cpp gives the figures).
TransposeTile default_transpose_tile(std::int64_t element_bytes, TransposeAccess access);

// The access the runtime uses when a box's rows are not all 16-byte aligned: realigned or scalar,
// whichever was faster for this element size (transpose_codegen.cpp gives the figures: scalar,
// along b first, for every size since 2026-11-28).
TransposeAccess unaligned_transpose_access(std::int64_t element_bytes);

// The tile the runtime takes when `tile` (the default) needs more than `shared_limit` bytes of
// shared memory (a GPU with less than the H100's 227 KiB per block): extents halved, the larger
// first (a on a tie), and warps halved where the extents become too small for them, until the
// kernel's two buffers fit. `tile` itself when it fits. Throws axe::Error naming the element size,
// the access and the limit when no tile fits.
TransposeTile fit_transpose_tile(const Element& element, TransposeTile tile, TransposeAccess access,
                                 std::int64_t shared_limit);

// The kernel for `element` (bits only: the op kind is unused) on `tile` with `access`. With
// vectors (aligned or realigned) of elements under 4 bytes, each thread holds a square of
// 4 / bytes rows by 4 bytes on both sides (source: block rows of b by V of a; destination: V of b
// by block of a), so that the shared round trip moves 4-byte words both ways and its vectors hold
// no byte of another thread (a byte transpose is a register rename: bytes are permuted inside the
// thread). Realigned tiles need at most 32 vectors across each side (tile.a, tile.b <= 32 V).
// Throws axe::Error for extents that are not powers of two or a tile the warps cannot cover.
TransposeKernel transpose_kernel(const Element& element, const TransposeTile& tile, TransposeAccess access);

}  // namespace axe::codegen
