// The runtime's box copies (pack, unpack, the local copy of a reshard) as generated tile copies
// (codegen layer).
//
// A box whose innermost mode `a` is contiguous on both sides is cut into tiles of tile.b rows (its
// next mode out, `b`, with strides sb and db) by tile.a elements of a; any other modes are a batch.
// A tile is loaded in one thread layout, blocked [1, V] / [32 / la, la] / [W, 1] order [1, 0] over
// (b, a), la = min(32, tile.a / V), repeated along a where the tile is wider than 32 vectors, then R
// times down b: V consecutive elements of a per vector (16 bytes), la lanes along a first, then
// lanes and warps down b. It is stored in the same layout, so the conversion between the
// two sides is the identity (no shared memory, no exchange) and both global sides are coalesced
// and vectorised by the layout. The thread mapping is that layout, not index arithmetic.
//
// Rows that are not all 16-byte aligned (`realigned`) take destination words instead: the same
// layout with one 16-byte word per register ([1, 1] per thread, la lanes along the words), where
// word m of a row is the destination's aligned word m counted from the one holding the row's first
// byte. Its bytes come from the two aligned source words they straddle (a funnel shift): whole
// words within the box's source span (smin .. smax: bytes between two of its elements are inside
// the buffer), pieces of the row's own bytes only past it; the words at a destination row's ends
// are written in pieces of the row's bytes. A row of L bytes touches at most (L + 30) / 16 words;
// tiles_a counts tiles of tile.a / V words. A word's place in its row is 32-bit arithmetic where
// the rows allow it (copy_rows_fit_32: under 2^31 - 64 bytes less 16 a tile word), else 64-bit in
// a `wide` tile.
//
// Flat tiles (`CopyTile::flat`, destination words only) take the box's rows one after another as
// one sequence of W = (L + 30) / 16 words a row: a tile is tile.a / V consecutive words of it,
// blocked [1] / [32] / [W] with the registers repeated after the CTA's words, so a row's words fill
// the tiles whatever its length (a row of 129 words takes 129 word slots, not the 160 of five
// 32-word tiles) and a warp's access is 32 consecutive words. tiles_a counts tiles of the box's
// B * W words, tiles_b is 1. Rows must be under 2^31 - 64 bytes (the kernel's row arithmetic is
// 32-bit; copy_rows_fit_32).
//
// Exchanged tiles (`CopyTile::exchange`, scalar access only) hold tile.a elements of one row,
// one element an access on both sides as Triton's masked row copy does on such rows, in two
// layouts: loaded blocked [1, 4] / [1, 32] / [1, W] (4 consecutive elements a thread, lanes then
// warps along the row, repeated along it), stored blocked [1, 1] / [1, 32] / [1, W] (one element
// a lane: each warp store 32 consecutive elements), converted between the two by the conversion
// plan (linear/convert_plan.hpp: shared memory in the optimal swizzle) through a static shared
// buffer, a barrier before each tile's exchange. They are launched one tile a block. For 4-byte
// elements on rows that are not 16-byte aligned they beat destination words (figures in
// runtime/cuda/generated_copy.cpp).
//
// One launch moves a whole list of boxes (a plan step's pack or unpack): the grid walks the tiles
// of all boxes, and a block finds the box of its tile by a 32-ary search of the table below (only
// when its tile leaves the box it has). Tiles cut by a box's edge move vector by vector where
// vectors fit (elementwise where one is cut) with `vectors`, element by element otherwise.
//
// The kernel:
//   extern "C" __global__ void axe_copy(const T* src, T* dst, const T* src2,
//                                       const axe_copy_box* table, int nboxes, long long tiles)
// (boxes with `source` 1 read src2), with the descriptor below (CopyBoxDesc has the same layout).
#pragma once

#include <cstdint>
#include <string>

#include "axe/codegen/tile_codegen.hpp"
#include "axe/codegen/transpose_codegen.hpp"

namespace axe::codegen {

inline constexpr int kCopyBatchModes = 6;

// One box of the table (16-byte aligned plain data; the generated source declares the same).
struct alignas(16) CopyBoxDesc {
  long long A = 0, B = 1;    // extents of modes a (contiguous on both sides) and b
  long long sb = 0, db = 0;  // strides of b
  long long soff = 0, doff = 0;
  long long tiles_a = 0, tiles_b = 0;
  long long first = 0, tiles = 0;  // this box's tiles in the list: [first, first + tiles)
  long long nb = 0, source = 0;    // batch modes; 1: the box reads src2
  long long bext[kCopyBatchModes] = {}, bsst[kCopyBatchModes] = {}, bdst[kCopyBatchModes] = {};
  long long per = 0;    // tiles_a * tiles_b
  long long small = 0;  // 1: the box's tile indices and batch extents fit 32 bits (32-bit division)
  long long smin = 0, smax = 0;  // the box's lowest and highest source element (offsets)
};

// A tile holds at most 512 vectors along a and 16 vectors (words) a thread.
inline constexpr std::int64_t kMaxCopyVectorsAlongA = 512, kMaxCopyVectorsPerThread = 16;

struct CopyTile {
  std::int64_t a = 0;      // elements along a (a power of two, V .. 512 V; 0: 32 V): lanes along
                           // a first (up to 32 vectors), then each lane's registers
  std::int64_t rows = 4;   // R: rows of b per thread (a power of two)
  std::int64_t warps = 8;  // W (a power of two)
  bool flat = false;       // destination words taken row after row (above): rows 1, tile.a / V
                           // words, 1 to 16 a thread
  bool wide = false;       // destination words in 2-D tiles: the row's bytes in 64-bit arithmetic,
                           // for rows too long for 32 bits (copy_rows_fit_32)
  bool exchange = false;   // one element an access (scalar) on both sides in two layouts, exchanged
                           // through shared memory (below): rows 1, tile.a at least 128 W
};

struct CopyKernel {
  std::string source;
  std::string name = "axe_copy";
  std::int64_t threads = 0;
  std::int64_t tile_a = 0, tile_b = 0;  // the tile: tile_b rows by tile_a elements (realigned:
                                        // by tile_a / V destination words)
  TransposeAccess access = TransposeAccess::vectors;
  bool flat = false;        // tile_a / vector consecutive words of the box's rows, tile_b 1
  bool wide = false;        // 2-D destination words with 64-bit row arithmetic (CopyTile::wide)
  bool exchange = false;    // loaded and stored in two layouts (CopyTile::exchange)
  std::int64_t shared_bytes = 0;  // the exchange's static shared buffer
  std::string mechanism;          // the exchange's conversion (linear::to_string(Mechanism))
  std::int64_t vector = 1;  // elements per global vector (1: scalar accesses)
  std::int64_t registers = 0;
};

// The tile the runtime uses for boxes whose shortest run is `run` elements, 8 warps: on runs
// under a warp's vectors (words), tile.a the largest power of two within the run, 4 rows a thread;
// on longer runs, 1, 2 or 4 vectors a lane along the run and rows to give each thread 8 vectors
// (realigned: 4 words, along the run as far as a tile stays within a quarter of the row's words;
// 1-byte elements into `packed` destination rows, back to back: flat tiles of 1024 words).
// The figures are cited in copy_codegen.cpp.
CopyTile default_copy_tile(std::int64_t element_bytes, TransposeAccess access, std::int64_t run, bool packed = false);

// The kernel for `element` (bits only) on `tile` with `access` (vectors: the caller checks that
// pointers, offsets and the strides of b and the batch are multiples of the 16-byte vector;
// realigned: 16-byte words whatever the alignment, codegen::TransposeAccess; scalar: one element
// per access). Throws axe::Error for extents that are not powers of two or outside the limits above.
CopyKernel copy_kernel(const Element& element, const CopyTile& tile, TransposeAccess access);

// Whether destination words in 32-bit row arithmetic (flat tiles; 2-D tiles not wide, of
// `tile_words` words along the row) can move rows of `row_bytes`: a word's first byte in its row
// plus 32 stays under INT_MAX. A flat tile's words lie within the row's (L + 30) / 16, so that is
// under L + 32; a 2-D tile's last one may lie up to tile_words - 1 words past the row's.
inline bool copy_rows_fit_32(std::int64_t row_bytes, std::int64_t tile_words = 0) {
  return row_bytes >= 0 && tile_words >= 0 && row_bytes + 16 * tile_words < (1ll << 31) - 64;
}

// The tile the runtime launches on destination words (realigned access) whose longest row has
// `longest_row_bytes`: `forced`, or default_copy_tile(..., packed) (not flat where the rows do not
// fit 32 bits); a 2-D tile made wide where its 32-bit row arithmetic would overflow
// (copy_rows_fit_32). A flat tile stays flat: the caller refuses it on rows that do not fit.
CopyTile copy_words_tile(std::int64_t element_bytes, std::int64_t run, bool packed, std::int64_t longest_row_bytes,
                         const CopyTile* forced = nullptr);

}  // namespace axe::codegen
