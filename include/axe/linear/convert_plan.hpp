// Conversion plans: moving a tile from one thread layout to another (LINEAR_LAYOUTS.md §5).
//
// A thread layout is an Axe layout of the tile over `lane`, optional `warp`, and `m` = the
// thread's registers (as in banks.hpp). plan_conversion chooses the cheapest exact mechanism:
//   none       the layouts are equal (as linear layouts: every hardware location holds the same
//              element): no instruction;
//   registers  every destination thread finds its elements in its own source registers (no lane
//              or warp movement): one static register rename, after R selects per lane or warp
//              bit where the register index depends on the thread (a source that broadcasts
//              over lanes the destination tells apart);
//   shuffles   the conversion stays inside each warp and permutes hardware bits (Triton PR 7558):
//              P = P_mixed o P_lane o P_reg, P_reg a rename, P_mixed m disjoint register<->lane
//              transpositions realised with conditional register swaps (selects) around one round
//              of `shfl.sync.idx` (or, for m = 1 and no lane permutation, the cheaper "ship":
//              select, `shfl.sync.bfly`, two selects per register pair);
//   shared     a shared-memory round trip: store with the source layout, barrier, load with the
//              destination layout, in repetitions when the tile exceeds the shared budget. The
//              register order of either side may change (renames) so that vectors span registers
//              both sides hold, or rows of ldmatrix.x4 loads (LoadOp), whichever is cheapest:
//              fewest wavefronts, then fewest instructions.
// A plan is a small typed program (ConvertOp); simulate() runs it over every lane and warp with
// values = tile coordinates and checks it yields exactly the destination layout.
//
// Counts (PR 7558): Swap costs 2·m·R selects and R − R/2^m shuffles (R when P_lane is not the
// identity); Ship 3R/2 selects and R/2 shuffles. Example (TV-19, the 4x4 transpose across 4
// lanes: from S[(4,4):(1@lane,1)] to S[(4,4):(1,1@lane)] on (4,4)): shuffles, 16 selects,
// 3 shuffles. TV-18 (from {m:[1,2], lane:[4,8]} to {m:[4,2], lane:[1,8]}): ship, 6 selects,
// 2 shuffles. TV-17 (from {m:[1], lane:[2,4]} to {m:[4], lane:[1,2]}): 4 selects, 2 shuffles.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <variant>
#include <vector>

#include "axe/cute/swizzle.hpp"
#include "axe/layout/layout.hpp"
#include "axe/linear/linear_layout.hpp"

namespace axe::linear {

enum class Mechanism { none, registers, shuffles, shared };
std::string to_string(Mechanism m);

// A shared-memory layout of the tile: an Axe layout over `m` (element offsets), optionally
// followed by Swizzle<B,M,S> on the offset (the form bank_conflicts takes), or, where `linear` is
// set, that F2 layout from the offset (`m`) to the logical dims, which no Axe layout + Swizzle
// need express (optimal_swizzle's SwizzlePlan::shared; smem and swizzle are then unused). This is
// the hook for an optimised (swizzled) layout; the default is the plain row-major tile.
struct SharedLayout {
  AxeLayout smem;
  std::optional<cute::Swizzle> swizzle;
  std::optional<LinearLayout> linear;  // @pre invertible, on the tile's logical dims
};
// The element offset of every row-major tile index x < n under `shared`.
std::vector<std::int64_t> shared_offsets(const SharedLayout& shared, std::int64_t n);
// The offset of each index bit (bit k: offsets[2^k]) when `offsets` (of a power-of-two tile) is
// XOR-linear, offsets[x] == f2::combine(bits, x) for every x; nullopt otherwise (padded rows).
// Example: the row-major tile of (2,4) gives {1, 2, 4}.
std::optional<std::vector<std::uint64_t>> linear_offsets(const std::vector<std::int64_t>& offsets);
// S[shape:row-major strides] over m, no swizzle. Example: (4,8) -> S[(4,8):(8,1)].
SharedLayout row_major_shared(std::span<const std::int64_t> shape);

// ---- the program -------------------------------------------------------------------------------
// Every thread runs the same program on its register file; `lane` and `warp` are its ids.

// reg'[i] = reg[from[i]] for i < from.size() (the file takes from.size() registers): a rename,
// copy or drop of registers, no instruction on a GPU (the compiler renames). After a LoadOp it
// renames the destination file (a shared round trip that reordered the registers to widen its
// vectors puts them back).
struct RenameOp {
  std::vector<std::int64_t> from;
};
// In lanes with bit `lane_bit` set: swap reg[x] and reg[x | 2^reg_bit] for every x without that
// bit (two selects per pair: R selects).
struct CondSwapOp {
  int reg_bit = 0;
  int lane_bit = 0;
};
// One shfl.sync.idx round: reg'[r] on lane l = reg[r] on lane source(l, r), where
// source(l, r) = lane_map(l) ^ lane_xor[r] and lane_map is F2-linear (lane_map[k] = image of
// lane bit k). Registers with source(l, r) == l for every l issue no shuffle.
struct ShuffleOp {
  std::vector<std::uint64_t> lane_map;
  std::vector<std::uint64_t> lane_xor;
};
// Ship for the transposition (reg_bit, lane_bit), per register pair (x, x + 2^reg_bit):
// ship = l_j ? reg[x] : reg[x+2^i]; got = shfl.bfly(ship, 2^j); reg[x] = l_j ? got : reg[x];
// reg[x+2^i] = l_j ? reg[x+2^i] : got. 3 selects and 1 shuffle per pair.
struct ShipOp {
  int reg_bit = 0;
  int lane_bit = 0;
};
// Store (load): each thread writes (reads) register r to (from) the shared offset of the element
// `address` gives for its location, when that offset lies in [window * chunk, (window+1) * chunk)
// (at offset - window * chunk). `address` has input dims [m, lane, warp] and the tile's output
// dims; a store skips locations whose `skip` bits are set (broadcast duplicates: one writer per
// element). Loads fill the destination register file, a separate one: a later repetition still
// stores source registers.
struct StoreOp {
  LinearLayout address;
  std::uint64_t skip = 0;  // over the packed [m, lane, warp] input
  std::int64_t window = 0;
};
// A load may be `ldmatrix.sync.aligned.m8n8.x4.shared.b16` instead of ld.shared (the same data
// into the same registers, 4 x 32 bits per lane per instruction): when the destination's lanes 0
// and 1 (for 2-byte elements, register bit 0, then lanes 0 and 1) hold consecutive offsets of one
// 16-byte row, and every other location starts a row (lanes 2..4 give the 8 rows of a matrix;
// matrix_bits, two register bits, pick one of 4 matrices). Each lane 8j + i then supplies the
// address of row i of matrix j. All 32 lanes take part, no register broadcasts, one repetition.
struct LoadOp {
  LinearLayout address;
  std::int64_t window = 0;
  bool ldmatrix = false;
  int matrix_bits[2] = {-1, -1};  // register bits of the matrix index (ldmatrix only)
};
struct BarrierOp {};
// In threads whose lane bit `lane_bit` (if >= 0, else warp bit `warp_bit`) is set:
// reg'[x] = reg[x ^ reg_xor], a register permutation chosen by the thread (R selects). Used by
// `registers` when a source layout broadcasts over lanes or warps the destination tells apart.
struct CondXorOp {
  int lane_bit = -1;
  int warp_bit = -1;
  std::int64_t reg_xor = 0;
};

using ConvertOp =
    std::variant<RenameOp, CondSwapOp, CondXorOp, ShuffleOp, ShipOp, StoreOp, BarrierOp, LoadOp>;

struct ConvertCounts {
  std::int64_t register_moves = 0;  // registers whose index changes in renames
  std::int64_t selects = 0;
  std::int64_t shuffles = 0;      // per thread (shfl.sync instructions)
  std::int64_t shared_bytes = 0;  // the shared buffer (one repetition)
  std::int64_t repetitions = 0;   // store/barrier/load rounds
  std::int64_t barriers = 0;
  // bank_conflicts (banks.hpp) of the source (destination) layout through the shared layout: the
  // whole tile, all warps and repetitions, every placement (replicas included). Exact when each
  // instruction falls in one repetition's window (the window bits are held by registers outside
  // the vector or by warps in both layouts, as for row-major tiles of blocked and accumulator
  // layouts); an instruction whose lanes span windows issues once per window, predicated.
  std::int64_t store_wavefronts = 0;
  std::int64_t load_wavefronts = 0;
  std::int64_t store_instructions = 0;  // per thread, all repetitions (widest vectors; an
                                        // ldmatrix.x4 load counts once for its 4 x 32 bits)
  std::int64_t load_instructions = 0;
  std::int64_t wavefronts() const { return store_wavefronts + load_wavefronts; }
  bool operator==(const ConvertCounts&) const = default;
};

struct ConvertPlan {
  Mechanism mechanism = Mechanism::none;
  std::vector<ConvertOp> ops;
  std::int64_t lanes = 1;  // lanes and warps the program runs on (powers of two)
  std::int64_t warps = 1;
  std::int64_t src_registers = 1;  // register file size before / after
  std::int64_t dst_registers = 1;
  std::optional<SharedLayout> shared;  // for Mechanism::shared
  std::int64_t chunk = 0;              // shared elements per repetition
  ConvertCounts counts;
};

struct ConvertOptions {
  std::int64_t element_bytes = 4;
  // The shared buffer may hold at most this many bytes; larger tiles go in repetitions.
  std::int64_t shared_budget_bytes = 48 * 1024;
  // The shared layout; nullopt: the optimal swizzle for the exchange (optimal_swizzle,
  // swizzle.hpp) where it is a Swizzle over an Axe layout, else row_major_shared(shape).
  std::optional<SharedLayout> shared;
  // Between the two mechanisms that move data, `cheapest` compares issue_cost(); `shuffles`
  // takes shuffles whenever the decomposition applies, `shared` never plans shuffles.
  enum class Choice { cheapest, shuffles, shared };
  Choice choice = Choice::cheapest;
};

// A heuristic issue cost per thread, to choose between shuffles and shared memory:
//   selects + 2 * shuffles + (store + load instructions) + 2 * wavefronts per warp
//   + 32 * barriers (4 with one warp: a bar.warp.sync).
// Examples (one warp): TV-19 by shuffles 16 + 2 * 3 = 22, through shared memory 47 - 28 = 19
// (measured on one H100: 71.6 and 49.6 ns per round trip); the 16x32 f32 transpose of TV-15
// (m = 4) by shuffles 128 + 2 * 16 = 160, through a row-major tile 32 + 2 * 272 + 4 = 580,
// through the tile with Swizzle<4,1,4> 32 + 2 * 32 + 4 = 100 (measured: 299 against 117 ns).
std::int64_t issue_cost(const ConvertCounts& c, std::int64_t warps);

// The cheapest exact plan moving the tile from thread layout `from` to `to` on `shape`.
// @pre both are F2-linear thread layouts (to_linear accepts them; axes m, lane, warp only; no
// offset), both cover the tile (size == prod(shape)), lanes < 32, and they use the same number of
// warps; else axe::Error naming "the source layout" / "the destination layout".
// @post simulate(plan, from, to, shape) is empty (the plan is exact);
//       mechanism == none iff the linear layouts are equal;
//       mechanism == registers iff not none and every destination thread finds each of its
//       elements in its own source registers, with no select iff a thread-independent register
//       map R gives to(r, l, w) == from(R(r), l, w);
//       shuffles: no costlier than PR 7558 (counts above); shared otherwise.
// Between shuffles and shared, the lower issue_cost (ConvertOptions::choice). Unlike Triton's
// cvtNeedsWarpShuffle (shared memory from 2 mixed transpositions on), TV-19 (m = 2) is shuffled
// in a CTA of several warps; with one warp the shared round trip wins.
ConvertPlan plan_conversion(const AxeLayout& from, const AxeLayout& to,
                            std::span<const std::int64_t> shape, const ConvertOptions& opts = {});

// Runs `plan` on every lane and warp: registers start as `from` places the tile (value = the
// row-major element index, unplaced registers undefined) and every register `to` places must end
// holding its element. Empty on success, else the first mismatch (warp, lane, register, expected,
// got).
std::string simulate(const ConvertPlan& plan, const AxeLayout& from, const AxeLayout& to,
                     std::span<const std::int64_t> shape);

// One line per step, e.g. "shfl.sync.idx: 3 registers, source lane ^ (1,2,3)".
std::string to_string(const ConvertOp& op);
std::string to_string(const ConvertPlan& plan);

}  // namespace axe::linear
