// Global-memory accesses of a thread layout in generated kernels (codegen layer, internal): the
// coordinates each hardware bit of a layout adds, the per-thread terms and the emitted loads and
// stores (vectors, realigned words, predicated scalars) of the transpose and copy generators.
#pragma once

#include <cstdint>
#include <sstream>
#include <string>
#include <vector>

#include "axe/codegen/tile_codegen.hpp"

namespace axe::codegen::internal {

int log2_of(std::int64_t v);

// v as an unsigned hexadecimal literal of generated code ("0x1fu").
std::string hex(std::uint64_t v);

// Packed registers (elements of 1 or 2 bytes, 4 / size to a 32-bit word; element i in bytes
// (i % per) * size .. of word i / per): the source of one element, element `index` of the packed
// word array `words`, or zero (index < 0).
struct ElementSource {
  std::string words;
  std::int64_t index = -1;
};

// The expression of one packed word assembled from `elements` (its elements in order, missing
// ones zero): the source word itself when it is that word in order, else one __byte_perm of up to
// two source words, or three for bytes from more.
std::string assemble_word(const std::vector<ElementSource>& elements, std::int64_t element_bytes);

// The columns of a thread layout split into the tile's two coordinates: for each hardware bit,
// (contiguous coordinate, other coordinate). Blocked layouts hold one tile bit per column.
struct Split {
  std::vector<std::int64_t> x, y;
};
struct Coords {
  Split m, lane, warp;
};

// `contiguous_is_a`: the global side's contiguous coordinate is a (the source) or b (the
// destination). Tile index c = b * tile_a + a.
Coords coords_of(const ThreadColumns& c, std::int64_t tile_a, bool contiguous_is_a);

// The sum of the columns of `cols` whose bits are set in `bits`.
std::int64_t sum_of(const std::vector<std::int64_t>& cols, std::uint64_t bits);

// The per-thread coordinates (x, y) of a layout: sums of the lane and warp parts.
void thread_terms(std::ostringstream& o, const Coords& c, const char* x, const char* y);

// Loads (stores) registers `regs` of a layout with coordinates `c` at p[x + y * stride]:
//   full: every element in range, V-element vectors along x (the V registers of bits
//         0..log2 V - 1, which hold x, x+1, ... in order: blocked [.., V]);
//   edge: x < xlim and y < ylim per element, scalar.
//   packed: the registers are packed words of 1- or 2-byte elements (ElementSource): whole
//           vectors move as their words, single elements in their places of their words.
void emit_access(std::ostringstream& o, bool load, const std::string& t, const Coords& c,
                 std::int64_t registers, std::int64_t vector, bool edge, bool packed = false);

// Device helpers of the realigned access (TransposeAccess::realigned), ES the element size: the
// head [sh, 16) or the tail [0, sh) of an aligned 16-byte word read or written in naturally
// aligned pieces (sh a multiple of ES, so no piece is smaller than an element; the head's pieces
// grow from sh, the tail's shrink from 0), a 32-byte funnel shift, and whole-word shuffles. The
// pieces are predicated straight-line code: every load is issued before any is used.
extern const char* const kRealignHelpers;

// Device helpers of whole destination words (the copy's), AXE_ES the element size, after
// kRealignHelpers: axe_load_range / axe_store_range move bytes [b0, b1) of an aligned 16-byte word
// (whole, or element by element, never a byte outside the range), and axe_clamp16.
extern const char* const kWordHelpers;

// Device helper of flat word tiles (CopyTile::flat): axe_row_of_word(g, W, finv, m) returns the
// row q of word g of rows of W words and sets m to its word in the row (g = q W + m, 0 <= m < W),
// finv the float reciprocal of W: the estimate g * finv, off by at most one while g / W is under
// 2^20 (three roundings of 2^-24 each), and one correction.
extern const char* const kFlatWordHelpers;

// Realigned full-tile access (TransposeAccess::realigned) of registers `regs` with coordinates
// `c`: V-element vectors along x at p[base + x + y * stride], whatever their alignment. A vector
// sits at byte shift sh of the aligned word w0 and runs into w0 + 16 (rows with sh == 0 read and
// write their vectors directly).
//   load:  each lane reads both words (the neighbour along the row reads one of them too: an L1
//          hit) and funnel-shifts them. In an `interior` tile (the box holds 16 bytes more on both
//          sides of each tile row) both are whole words; else the first lane of the row's `group`
//          reads only the row's bytes of w0 and the last lane those of w0 + 16. Every vector's
//          loads are issued before the first is used.
//   store: the `group` lanes along x of one row hold consecutive vectors (lanes along x first,
//          no register repetition along x), so each lane writes w0 with the lane before's tail
//          (one shuffle) and its head; the group's first lane writes only the row's bytes of w0
//          and its last lane also the row's bytes of w0 + 16.
void emit_realigned(std::ostringstream& o, bool load, const std::string& t, const Coords& c,
                    std::int64_t registers, std::int64_t v, std::int64_t group);

}  // namespace axe::codegen::internal
