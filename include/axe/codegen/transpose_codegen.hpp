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

// Staged words, a transpose for rows that are not 16-byte aligned, every global access a whole
// aligned 16-byte word but at the box's edges. Not the runtime's choice: its first version ran at
// 29-32% of memcpy on the uneven u8 boxes and 46-50% on f16 (default tile, one H200, 2026-11-28),
// against 57% and 75-78% for one element per access (examples/results/1xH200/staged_2026-11-28/).
// This version overlaps a tile's loads with the gather of the tile before (the runtime launches
// one wave of blocks, each looping over tiles) and does the gather's index arithmetic in 32 bits
// with no branch (the first, one block a tile, issued one 16-byte load at a time a thread and none
// while its block gathered). It ran at 44% (default tile) to 49% (best) on the large uneven u8
// box, 53-56% on f16, still behind one element per access on every large box (same folder, call
// 3); ncu found it bound by latency, neither the L2 nor the SMs busy (call 4).
//
// A tile is tile.a columns (a) by tile.words destination words of each destination row, the
// words counted from the aligned word that holds the row's first byte, as the copy's destination
// words. A word holds V = 16 / size elements of b, and each destination row starts at its own
// shift, so the tile's words need source rows m0 V - (V - 1) .. (m0 + words) V - 1:
// - Stage: those rows' aligned words over the tile's columns (tile.a * size / 16 + 1 a row) are read
//   whole into shared memory as they are, a row to a slot, each slot's words swizzled (word j of
//   slot i at j ^ (i / V mod the slot's words)), so the rows of one destination word are read from
//   different banks.
// - Gather: each thread assembles its destination words element by element from the slots, each
//   row read at its own shift. An element of a row outside the box is read from whatever its slot
//   holds: it falls outside the destination row's bytes, which the store leaves alone.
// - Store: each word is written whole, or in the row's own bytes at a destination row's ends.
// Global reads are whole words inside the box's source span (from its lowest to its highest
// element), pieces of the row's bytes past it. The gather's thread layout is blocked [1, 1] /
// [32 / lk, lk] / [W, 1] over (columns, words), lk = min(32, words): lanes along a destination
// row's words first. The stage walks its rows' words linearly, so its rows need not be a power of
// two: a thread's n-th word is threadIdx.x + n x threads, stage_loads of them, read into registers
// (all loads issued first) while the tile before gathers, then written to the slots between two
// barriers. A block walks tiles blockIdx.x, + gridDim.x, ...
//
// tile.realigned: the stage shifts each row to start at its slot's byte 0 (each staged word from
// the two aligned words it straddles, axe_shift16 at the row's shift), tile.a * size / 16 words a
// slot, slot i at i * slot_stride + 16 (i / V) (the pads spread a gather's rows over the banks).
// The gather then reads element e of a word at a constant offset e * slot_stride from its first,
// plus 16 past the pad it crosses: no shift, no swizzle per element (about 5 PTX instructions an
// element for u8 against 9 raw; ptxas: 80 registers a thread against 64).
//
// The kernel has transpose_kernel's signature and descriptor, with tiles_a = ceil(A / tile.a) and
// tiles_b = staged_tiles_along_b(size, tile, B).
struct StagedTile {
  std::int64_t a = 64;      // columns (powers of two, at least 16 bytes)
  std::int64_t words = 8;   // destination words along b
  std::int64_t warps = 8;
  bool realigned = false;   // each slot's row shifted to byte 0 by the stage
};

struct StagedKernel {
  std::string source;
  std::string name = "axe_transpose";
  std::int64_t threads = 0;
  std::int64_t shared_bytes = 0;  // rows x slot_stride (realigned: + 16 every V rows)
  std::int64_t rows = 0;          // staged source rows: words V + V - 1
  std::int64_t row_bytes = 0;     // a slot: a power of two of words, at least the row's
  std::int64_t slot_stride = 0;   // slot to slot: row_bytes (realigned 1, 2 bytes: + 4, + 8)
  std::int64_t registers = 0;     // destination words a thread gathers
  std::int64_t stage_loads = 0;   // staged words a thread loads a tile (ceil: rows x words / threads)
  StagedTile tile;
};

// The kernel for `element` (bits only) on `tile`. Throws axe::Error for extents or warps that are
// not powers of two, a tile under 16 bytes of columns, or one too narrow for its warps.
StagedKernel staged_transpose_kernel(const Element& element, const StagedTile& tile);

// The tiles along b of a box of B rows: a destination row of B elements touches at most
// (B * size + 30) / 16 aligned words.
std::int64_t staged_tiles_along_b(std::int64_t element_bytes, const StagedTile& tile, std::int64_t B);

}  // namespace axe::codegen
