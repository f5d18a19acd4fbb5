// The optimal shared-memory layout for a register -> shared -> register exchange between two thread
// layouts of one tile (LINEAR_LAYOUTS.md §4.2, Triton's generic swizzling `optimalSwizzlingLdSt`).
//
// A shared layout here is an invertible F2 linear layout from the shared element offset (input dim
// `m`, one bit per power of two) to the logical tile (output dims [dim{n-1}, ..., dim0], see
// bridge.hpp): offset bit i holds the element at tensor coordinate basis(m, i), and the element at
// offset o = XOR of the set bits' bases (XOR-linear). The source thread layout stores the tile
// there, the destination loads it; both are Axe layouts over `lane`, optional `warp` and `m` = the
// thread's registers, as in banks.hpp, and every access is costed by banks.hpp's model (widest
// vector <= 16 bytes, 32 banks of 4 bytes, 32/16/8 lanes per phase for <=4/8/16-byte accesses).
//
// Example (TV-15, 16x32 f32 transpose, one warp): from S[(16,32):(1,1@lane)] (lane = column,
// register = row) to S[(16,16,2):(1@lane,1,16@lane)] (lane%16 = row, column = 2 register +
// lane/16). The row-major tile costs 16 stores of 1 wavefront and 16 loads of 16 (272); the best
// Swizzle<B,M,S> over it, Sw<4,1,4> (offset 32m + (n ^ 2m)), 16 + 16 wavefronts in 32 scalar
// instructions; the generic layout, offset bases (row, column)
// [(1,0),(2,0),(0,1),(4,0),(8,0),(0,8),(0,16),(4,2),(8,4)], 4 st.shared.v4 of 4 wavefronts (16)
// and 16 conflict-free loads (16): 32 wavefronts in 20 instructions. As Swizzle o Axe layout it
// is Sw<2,3,4> o S[(4,4,4,4,2):(8,1,32,128,4)] (`axe swizzle` prints both).
#pragma once

#include <cstdint>
#include <iosfwd>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "axe/cute/swizzle.hpp"
#include "axe/layout/layout.hpp"
#include "axe/linear/linear_layout.hpp"

namespace axe::linear {

// One side's accesses (every warp), as banks.hpp's BankReport totals.
struct AccessCost {
  std::int64_t vector_bytes = 0;
  std::int64_t instructions = 0;  // per warp
  std::int64_t wavefronts = 0;    // total over every warp and instruction
  bool operator==(const AccessCost&) const = default;
};

// Store (source) and load (destination) costs of one shared layout.
struct ExchangeCost {
  AccessCost store, load;
  std::int64_t wavefronts() const { return store.wavefronts + load.wavefronts; }
  // Per warp, stores plus loads.
  std::int64_t instructions() const { return store.instructions + load.instructions; }
  // The optimizer's order: fewer wavefronts, then fewer instructions (wider vectors).
  bool better_than(const ExchangeCost& o) const {
    return wavefronts() != o.wavefronts() ? wavefronts() < o.wavefronts()
                                          : instructions() < o.instructions();
  }
  bool operator==(const ExchangeCost&) const = default;
};

// Text forms: "4 x 16 B, 16 wavefronts" (instructions per warp x vector bytes, total wavefronts);
// "store ...; load ...; total 32 wavefronts, 20 instructions per warp".
std::string to_string(const AccessCost& c);
std::string to_string(const ExchangeCost& c);
std::ostream& operator<<(std::ostream& os, const AccessCost& c);
std::ostream& operator<<(std::ostream& os, const ExchangeCost& c);

// The bank model's cost by the F2 formula, for a shared layout (`m` -> logical dims, invertible)
// and a thread layout (`m`, `lane`, `warp` -> the same logical dims, surjective, every hardware
// location used: no gaps) of `element_bytes` (1, 2, 4, 8 or 16) elements. With V the widest
// vector (offsets of registers 0..V-1 are 0..V-1 and every other hardware bit lands on an offset
// that is a multiple of V) and the lanes of one phase, one phase costs 2^dim(W ∩ R) wavefronts, W
// the span of the 4-byte words the phase touches relative to lane 0 and R the words in bank 0.
// @post equals bank_conflicts(shared_offsets(shared), threads, ...) (enumeration) in vector
// bytes, instructions and total wavefronts. Throws axe::Error when the dims disagree or either
// layout has more than 40 input bits.
AccessCost access_cost(const LinearLayout& shared, const LinearLayout& threads,
                       std::int64_t element_bytes);

// The element offset of every logical (row-major) index: shared^-1. @pre is_invertible(shared).
// Example: the row-major tile {m: [1,2,...]} gives offsets[x] == x.
std::vector<std::int64_t> shared_offsets(const LinearLayout& shared);

// The row-major shared tile on `shape` (offset == row-major index), input dim `m`.
LinearLayout row_major_linear(std::span<const std::int64_t> shape);

// Swizzle<B,M,S> over the row-major tile: the element at row-major index x sits at offset sw(x);
// as an offset -> tensor layout that is from_swizzle itself (an involution).
// @pre B + M + |S| <= log2(prod(shape)).
LinearLayout swizzled_linear(const cute::Swizzle& sw, std::span<const std::int64_t> shape);

// `shared` written as Swizzle<B,M,S> o (an Axe layout of the tile over m): the element at logical x
// sits at offset sw(axe(x)). The identity swizzle Sw<0,0,0> when a plain Axe layout does;
// nullopt when no CuTe swizzle with |S| >= B > 0 (S > 0 first, each in increasing B, M, |S|)
// makes the rest a bit permutation.
// @post when it exists: for every x, sw(axe.forward_first(x)[m]) == shared_offsets(shared)[x].
struct SwizzledAxe {
  cute::Swizzle swizzle;
  AxeLayout layout;
};
std::optional<SwizzledAxe> as_swizzled_axe(const LinearLayout& shared);

// The result of optimal_swizzle.
struct SwizzlePlan {
  LinearLayout shared;          // the chosen layout: m (offset) -> logical dims
  ExchangeCost cost;            // its cost (the F2 formula, == the enumeration)
  std::string origin;           // "generic", or "swizzle" / "row-major" when a baseline was better
  std::optional<SwizzledAxe> axe;  // the chosen layout as Swizzle o Axe layout, if expressible
  ExchangeCost row_major;       // the row-major tile's cost
  std::optional<cute::Swizzle> best_swizzle;  // the best Sw<B,M,S> over the row-major tile
  ExchangeCost best_swizzle_cost;             // (nullopt / row_major when no swizzle fits)
};

// The shared layout minimising store + load wavefronts, then instructions (widest vectors), for
// `from` storing and `to` loading a tile of logical `shape` with `element_bytes` elements. Tries
// the generic swizzling algorithm (LINEAR_LAYOUTS.md §4.2) for every vector basis that is a
// register prefix of either side (capped at 16 bytes), then the row-major tile and every
// Swizzle<B,M,S> over it (B >= 1, |S| >= B, B + M + |S| <= log2(size); S > 0 preferred on ties),
// and keeps the best.
// @post plan.cost is never worse (better_than) than row_major nor best_swizzle_cost;
// is_invertible(plan.shared); plan.cost == access costs of plan.shared for both sides.
// Throws axe::Error naming "the source" / "the destination" thread layout when it uses an axis
// other than m, lane, warp, is not F2-linear on the shape (linear_refusal's reason), has an
// offset, leaves hardware locations unused (gaps), reaches past lane 31 or has more than 2^17
// registers x warps, or when the two use different numbers of warps; when the tile has more than
// 2^20 elements or an extent that is not a power of two; for an element size not 1, 2, 4, 8, 16.
SwizzlePlan optimal_swizzle(const AxeLayout& from, const AxeLayout& to,
                            std::span<const std::int64_t> shape, std::int64_t element_bytes);

}  // namespace axe::linear
