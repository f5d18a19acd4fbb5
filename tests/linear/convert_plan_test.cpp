// Conversion plans: the PR 7558 test vectors TV-16..TV-19 as exact counts, seeded random pairs of
// thread layouts (every plan simulated == destination layout; none iff equal; registers iff a
// brute-force oracle finds a thread-independent register map), and the shared round trip in
// repetitions.
#include "axe/linear/convert_plan.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <map>
#include <set>

#include "axe/core/error.hpp"
#include "axe/linear/banks.hpp"
#include "axe/linear/bridge.hpp"
#include "axe/linear/thread_layouts.hpp"
#include "linear_test_util.hpp"

namespace axe::test::linear {
namespace {

using namespace axe::linear;
using Shape = std::vector<std::int64_t>;

// An Axe thread layout from a linear layout's text (dims m, lane, warp).
AxeOnShape Threads(std::string_view text) {
  return from_linear(LL(text));
}

bool has_op_ship(const ConvertPlan& p) {
  return std::any_of(p.ops.begin(), p.ops.end(),
                     [](const ConvertOp& o) { return std::holds_alternative<ShipOp>(o); });
}

// Brute force: tables[w][l][r] = the element a thread layout places there (-1: none).
using Table = std::vector<std::vector<std::vector<std::int64_t>>>;
Table table_of(const AxeLayout& t, std::int64_t warps, std::int64_t lanes, std::int64_t regs) {
  Table tab(static_cast<std::size_t>(warps),
            std::vector<std::vector<std::int64_t>>(
                static_cast<std::size_t>(lanes),
                std::vector<std::int64_t>(static_cast<std::size_t>(regs), -1)));
  const Axis m, lane("lane"), warp("warp");
  for (std::int64_t x = 0; x < t.size(); ++x) {
    for (const auto& p : t.forward(x)) {
      tab[static_cast<std::size_t>(p.coord[warp])][static_cast<std::size_t>(p.coord[lane])]
         [static_cast<std::size_t>(p.coord[m])] = x;
    }
  }
  return tab;
}

// Both layouts' tables on the same warps and lanes (each with its own register count).
struct Tables {
  std::int64_t W, L, RS, RT;
  Table s, t;
};
Tables tables_of(const AxeLayout& from, const AxeLayout& to) {
  const Axis m, lane("lane"), warp("warp");
  Tables x;
  x.W = std::max<std::int64_t>({1, from.span(warp), to.span(warp)});
  x.L = std::max<std::int64_t>({1, from.span(lane), to.span(lane)});
  x.RS = std::max<std::int64_t>(1, from.span(m));
  x.RT = std::max<std::int64_t>(1, to.span(m));
  x.s = table_of(from, x.W, x.L, x.RS);
  x.t = table_of(to, x.W, x.L, x.RT);
  return x;
}

// The oracle of "registers": every destination register r finds its element, in every thread, in
// one source register r' of that same thread, r' independent of the thread.
bool register_map_exists(const AxeLayout& from, const AxeLayout& to) {
  const auto [W, L, RS, RT, s, t] = tables_of(from, to);
  for (std::int64_t r = 0; r < RT; ++r) {
    std::set<std::int64_t> cand;
    for (std::int64_t c = 0; c < RS; ++c) cand.insert(c);
    for (std::size_t w = 0; w < static_cast<std::size_t>(W); ++w) {
      for (std::size_t l = 0; l < static_cast<std::size_t>(L); ++l) {
        std::int64_t x = t[w][l][static_cast<std::size_t>(r)];
        if (x < 0) continue;
        std::set<std::int64_t> here;
        for (std::int64_t c : cand) {
          if (s[w][l][static_cast<std::size_t>(c)] == x) here.insert(c);
        }
        cand = here;
      }
    }
    if (cand.empty()) return false;
  }
  return true;
}

// The oracle of "no lane or warp movement": every element a destination thread holds is in
// one of that thread's source registers.
bool own_thread_holds_all(const AxeLayout& from, const AxeLayout& to) {
  const auto [W, L, RS, RT, s, t] = tables_of(from, to);
  for (std::size_t w = 0; w < static_cast<std::size_t>(W); ++w) {
    for (std::size_t l = 0; l < static_cast<std::size_t>(L); ++l) {
      for (auto x : t[w][l]) {
        if (x >= 0 && std::find(s[w][l].begin(), s[w][l].end(), x) == s[w][l].end()) return false;
      }
    }
  }
  return true;
}

bool linear_equal(const AxeLayout& a, const AxeLayout& b, const Shape& shape) {
  auto la = to_linear(a, shape).layout, lb = to_linear(b, shape).layout;
  auto cols = [](const LinearLayout& l, const char* d) {
    std::vector<std::uint64_t> c;
    if (l.has_in_dim(d)) {
      for (int i = 0; i < l.in_bits(d); ++i) c.push_back(l.column(d, i));
    }
    return c;
  };
  for (const char* d : {"m", "lane", "warp"}) {
    if (cols(la, d) != cols(lb, d)) return false;
  }
  return true;
}

// Checks every law of plan_conversion's header on one pair; returns the plan.
ConvertPlan check_plan(const AxeLayout& from, const AxeLayout& to, const Shape& shape,
                       const ConvertOptions& opts = {}) {
  auto plan = plan_conversion(from, to, shape, opts);
  SCOPED_TRACE(to_string(from) + " -> " + to_string(to) + "\n" + to_string(plan));
  EXPECT_EQ(simulate(plan, from, to, shape), "");
  bool equal = linear_equal(from, to, shape);
  EXPECT_EQ(plan.mechanism == Mechanism::none, equal);
  if (!equal) {
    EXPECT_EQ(plan.mechanism == Mechanism::registers, own_thread_holds_all(from, to));
  }
  if (plan.mechanism == Mechanism::registers) {
    EXPECT_EQ(plan.counts.selects == 0, register_map_exists(from, to));
  }
  if (plan.mechanism == Mechanism::none || plan.mechanism == Mechanism::registers) {
    EXPECT_EQ(plan.counts.shuffles + plan.counts.barriers, 0);
  }
  if (plan.mechanism == Mechanism::shared) {
    EXPECT_GE(plan.counts.barriers, 1);
    EXPECT_LE(plan.counts.shared_bytes, opts.shared_budget_bytes);
    EXPECT_EQ(plan.counts.barriers, 2 * plan.counts.repetitions - 1);
  }
  return plan;
}

// The decomposition itself, whatever the cost model prefers.
const ConvertOptions kShuffles = [] {
  ConvertOptions o;
  o.choice = ConvertOptions::Choice::shuffles;
  return o;
}();

// ---- exact: TV-16..TV-19 ---------------------------------------------------------------------

TEST(ConvertPlan, TV17_FourSelectsTwoShuffles) {
  auto s = Threads("{m: [1], lane: [2,4]} -> [dim0:8]");
  auto t = Threads("{m: [4], lane: [1,2]} -> [dim0:8]");
  auto plan = check_plan(s.layout, t.layout, s.shape);
  EXPECT_EQ(plan.mechanism, Mechanism::shuffles);
  EXPECT_EQ(plan.counts.selects, 4);
  EXPECT_EQ(plan.counts.shuffles, 2);
  EXPECT_EQ(plan.counts.shared_bytes, 0);
}

TEST(ConvertPlan, TV18_ShipSixSelectsTwoShuffles) {
  auto s = Threads("{m: [1,2], lane: [4,8]} -> [dim0:16]");
  auto t = Threads("{m: [4,2], lane: [1,8]} -> [dim0:16]");
  auto plan = check_plan(s.layout, t.layout, s.shape);
  EXPECT_EQ(plan.mechanism, Mechanism::shuffles);
  EXPECT_TRUE(has_op_ship(plan));
  EXPECT_EQ(plan.counts.selects, 6);
  EXPECT_EQ(plan.counts.shuffles, 2);
}

TEST(ConvertPlan, TV19_Transpose4x4_SixteenSelectsThreeShuffles) {
  auto s = parse_axe_layout("S[(4,4):(1@lane,1)]");  // lane = row, register = column
  auto t = parse_axe_layout("S[(4,4):(1,1@lane)]");  // the transpose
  ConvertOptions o;
  o.choice = ConvertOptions::Choice::shuffles;
  auto plan = check_plan(s, t, Shape{4, 4}, o);
  EXPECT_EQ(plan.mechanism, Mechanism::shuffles);
  EXPECT_EQ(plan.counts.selects, 16);
  EXPECT_EQ(plan.counts.shuffles, 3);
}

// TV-19 in each group of 4 lanes of 4 warps (f16 32x16): the same program in every warp.
TEST(ConvertPlan, TV19_EveryLaneGroupOfFourWarps_SixteenSelectsThreeShuffles) {
  auto s = parse_axe_layout("S[(4,8,4,4):(1@warp,4@lane,1@lane,1)]");
  auto t = parse_axe_layout("S[(4,8,4,4):(1@warp,4@lane,1,1@lane)]");
  ConvertOptions o;
  o.element_bytes = 2;
  auto plan = check_plan(s, t, Shape{32, 16}, o);
  EXPECT_EQ(plan.mechanism, Mechanism::shuffles);
  EXPECT_EQ(plan.warps, 4);
  EXPECT_EQ(plan.lanes, 32);
  EXPECT_EQ(plan.counts.selects, 16);
  EXPECT_EQ(plan.counts.shuffles, 3);
}

// TV-16: 300 random pairs of bit permutations (3 register bits, 5 lane bits): exact, with the
// PR 7558 counts (Ship: 3R/2 selects, R/2 shuffles; Swap: 2mR selects, R - R/2^m shuffles when
// the lanes are not permuted, else R).
TEST(ConvertPlan, TV16_RandomBitPermutations_SimulatedWithPr7558Counts) {
  auto rng = make_rng(0x716);
  const std::int64_t R = 8;
  for (int trial = 0; trial < 300; ++trial) {
    std::vector<int> ps(8), pt(8);
    for (int k = 0; k < 8; ++k)
      ps[static_cast<std::size_t>(k)] = pt[static_cast<std::size_t>(k)] = k;
    std::shuffle(ps.begin(), ps.end(), rng);
    std::shuffle(pt.begin(), pt.end(), rng);
    auto text = [](const std::vector<int>& p) {
      std::string s = "{m: [";
      for (int k = 0; k < 8; ++k) {
        s += (k == 3 ? "], lane: ["
              : k    ? ","
                     : "") +
             std::to_string(1 << p[static_cast<std::size_t>(k)]);
      }
      return s + "]} -> [dim0:256]";
    };
    auto s = Threads(text(ps)), t = Threads(text(pt));
    auto plan = check_plan(s.layout, t.layout, s.shape, kShuffles);
    ASSERT_NE(plan.mechanism, Mechanism::shared);
    // m: source register bits whose element bit is a destination lane bit.
    int m = 0;
    for (int k = 0; k < 3; ++k) {
      auto it = std::find(pt.begin(), pt.end(), ps[static_cast<std::size_t>(k)]);
      m += (it - pt.begin()) >= 3;
    }
    if (plan.mechanism != Mechanism::shuffles) {
      EXPECT_EQ(m, 0);
      continue;
    }
    if (has_op_ship(plan)) {
      EXPECT_EQ(m, 1);
      EXPECT_EQ(plan.counts.selects, 3 * R / 2);
      EXPECT_EQ(plan.counts.shuffles, R / 2);
    } else {
      EXPECT_EQ(plan.counts.selects, 2 * m * R);
      EXPECT_TRUE(plan.counts.shuffles == R || plan.counts.shuffles == R - (R >> m))
          << plan.counts.shuffles;
    }
  }
}

// Brute force: every pair of bit permutations of 2 register and 2 lane bits (24 x 24 pairs):
// every plan is exact, never goes through shared memory, and costs at most 2mR selects and R
// shuffles (m = register bits that become lane bits).
TEST(ConvertPlan, AllBitPermutationPairs_TwoRegistersTwoLanes_ExactAndWarpLocal) {
  std::vector<int> p{0, 1, 2, 3};
  std::vector<std::vector<int>> perms;
  do {
    perms.push_back(p);
  } while (std::next_permutation(p.begin(), p.end()));
  auto text = [](const std::vector<int>& q) {
    return "{m: [" + std::to_string(1 << q[0]) + "," + std::to_string(1 << q[1]) + "], lane: [" +
           std::to_string(1 << q[2]) + "," + std::to_string(1 << q[3]) + "]} -> [dim0:16]";
  };
  for (const auto& a : perms) {
    for (const auto& b : perms) {
      auto s = Threads(text(a)), t = Threads(text(b));
      auto plan = check_plan(s.layout, t.layout, s.shape, kShuffles);
      ASSERT_NE(plan.mechanism, Mechanism::shared) << text(a) << " -> " << text(b);
      int m = 0;
      for (int k = 0; k < 2; ++k) {
        m += std::find(b.begin(), b.end(), a[static_cast<std::size_t>(k)]) - b.begin() >= 2;
      }
      EXPECT_LE(plan.counts.selects, 2 * m * 4);
      EXPECT_LE(plan.counts.shuffles, 4);
    }
  }
}

// The simulator is the oracle, so it must catch a wrong program: dropping any one step of the
// TV-19 plan (or swapping its destination) fails the simulation.
TEST(ConvertPlan, Simulate_RejectsCorruptedPlans) {
  auto s = parse_axe_layout("S[(4,4):(1@lane,1)]");
  auto t = parse_axe_layout("S[(4,4):(1,1@lane)]");
  ConvertOptions o;
  o.choice = ConvertOptions::Choice::shuffles;
  auto plan = plan_conversion(s, t, Shape{4, 4}, o);
  ASSERT_EQ(simulate(plan, s, t, Shape{4, 4}), "");
  for (std::size_t k = 0; k < plan.ops.size(); ++k) {
    auto bad = plan;
    bad.ops.erase(bad.ops.begin() + static_cast<std::ptrdiff_t>(k));
    EXPECT_NE(simulate(bad, s, t, Shape{4, 4}), "") << "without step " << k;
  }
  EXPECT_NE(simulate(plan, s, s, Shape{4, 4}), "");
  // A shared round trip without its store (a load of a buffer never written) is wrong, not a crash.
  o.choice = ConvertOptions::Choice::shared;
  auto shared = plan_conversion(s, t, Shape{4, 4}, o);
  auto no_store = shared;
  std::erase_if(no_store.ops, [](const ConvertOp& op) { return std::holds_alternative<StoreOp>(op); });
  EXPECT_NE(simulate(no_store, s, t, Shape{4, 4}), "");
}

// ---- exact: the other mechanisms ---------------------------------------------------------------

TEST(ConvertPlan, EqualLayouts_None) {
  auto l = parse_axe_layout("S[(8,32,4):(4,1@lane,1)]");
  auto plan = check_plan(l, parse_axe_layout("S[(8,32,2,2):(4,1@lane,2,1)]"), Shape{8, 128});
  EXPECT_EQ(plan.mechanism, Mechanism::none);
  EXPECT_TRUE(plan.ops.empty());
}

TEST(ConvertPlan, RegisterPermutation_Registers) {
  auto plan = check_plan(parse_axe_layout("S[(8,32,4):(4,1@lane,1)]"),
                         parse_axe_layout("S[(8,32,4):(1,1@lane,8)]"), Shape{8, 128});
  EXPECT_EQ(plan.mechanism, Mechanism::registers);
  EXPECT_GT(plan.counts.register_moves, 0);
}

// A source that broadcasts over lane bit 0 (each pair of lanes holds 8 elements), a destination
// that tells the two lanes apart: no lane movement, but the register depends on the lane (one
// conditional register permutation, R = 8 selects), then a rename.
TEST(ConvertPlan, BroadcastSource_RegistersWithSelects) {
  auto s = parse_axe_layout("S[(16,8):(2@lane,1)] + R[2:1@lane]");
  auto t = parse_axe_layout("S[(16,2,4):(2@lane,1@lane,1)]");
  auto plan = check_plan(s, t, Shape{16, 8});
  EXPECT_EQ(plan.mechanism, Mechanism::registers);
  EXPECT_EQ(plan.counts.selects, 8);
  EXPECT_EQ(plan.counts.shuffles, 0);
}

TEST(ConvertPlan, AcrossWarps_SharedWithRowMajorWavefronts) {
  // Rows split over 4 warps vs columns split over 4 warps: elements cross warps.
  auto s = parse_axe_layout("S[(4,8,4,32):(1@warp,4,1,1@lane)]");
  auto t = parse_axe_layout("S[(32,4,32):(1,1@warp,1@lane)]");
  Shape shape{32, 128};
  auto plan = check_plan(s, t, shape);
  EXPECT_EQ(plan.mechanism, Mechanism::shared);
  EXPECT_EQ(plan.counts.shared_bytes, 32 * 128 * 4);
  EXPECT_EQ(plan.counts.repetitions, 1);
  EXPECT_EQ(plan.counts.barriers, 1);
  auto rm = row_major_shared(shape);
  EXPECT_EQ(to_string(rm.smem), "S[(32,128):(128,1)]");
  EXPECT_EQ(plan.counts.store_wavefronts, bank_conflicts(rm.smem, s, shape, 4).wavefronts);
  EXPECT_EQ(plan.counts.load_wavefronts, bank_conflicts(rm.smem, t, shape, 4).wavefronts);
}

TEST(ConvertPlan, SharedBudget_Repetitions) {
  auto s = parse_axe_layout("S[(4,8,4,32):(1@warp,4,1,1@lane)]");
  auto t = parse_axe_layout("S[(32,4,32):(1,1@warp,1@lane)]");
  ConvertOptions o;
  o.shared_budget_bytes = 4096;
  auto plan = check_plan(s, t, Shape{32, 128}, o);
  EXPECT_EQ(plan.counts.shared_bytes, 4096);
  EXPECT_EQ(plan.counts.repetitions, 4);
  EXPECT_EQ(plan.counts.barriers, 7);
}

// The 64x64 f32 transpose from blocked [4,1]/[4,8]/[1,4] order [0,1] (4 rows per thread) to
// blocked [1,4]/[8,4]/[4,1] order [1,0] (4 columns per thread): no Swizzle o Axe layout expresses
// the optimal shared layout here, so the plan keeps it as a linear layout, and both sides are
// conflict-free: 16 KiB in 128-byte wavefronts is 128 per side (the row-major tile costs 512 + 256).
TEST(ConvertPlan, DefaultShared_KeepsTheLinearLayoutNoSwizzleExpresses) {
  const Shape shape{64, 64};
  auto from = from_linear(blocked_layout(shape, Shape{4, 1}, Shape{4, 8}, Shape{1, 4}, Shape{0, 1})).layout;
  auto to = from_linear(blocked_layout(shape, Shape{1, 4}, Shape{8, 4}, Shape{4, 1}, Shape{1, 0})).layout;
  auto plan = check_plan(from, to, shape, ConvertOptions{});
  ASSERT_EQ(plan.mechanism, Mechanism::shared);
  ASSERT_TRUE(plan.shared && plan.shared->linear);
  EXPECT_EQ(plan.counts.store_wavefronts, 128);
  EXPECT_EQ(plan.counts.load_wavefronts, 128);
  const auto off = shared_offsets(*plan.shared, 64 * 64);
  EXPECT_EQ(std::set<std::int64_t>(off.begin(), off.end()).size(), 4096u);  // a bijection
}

// 128x64 f16 from blocked [1,8]/[16,2]/[4,1] order [1,0] (8 columns per thread) to [8,1]/[2,16]/
// [1,4] order [0,1] (8 rows per thread): both repeat row 64 in their registers. In the given
// register order one side issues 2-byte accesses (128 + 256 wavefronts); with row 64 first in both
// (a rename on each side, no instruction) a 32-bit word holds rows r and r + 64 of one column on
// both sides, and both are conflict-free: 16 KiB / 128 B = 128 wavefronts each.
TEST(ConvertPlan, SharedRoundTrip_ReordersRegistersToWidenVectors) {
  const Shape shape{128, 64};
  auto from = from_linear(blocked_layout(shape, Shape{1, 8}, Shape{16, 2}, Shape{4, 1}, Shape{1, 0})).layout;
  auto to = from_linear(blocked_layout(shape, Shape{8, 1}, Shape{2, 16}, Shape{1, 4}, Shape{0, 1})).layout;
  ConvertOptions o;
  o.element_bytes = 2;
  auto plan = check_plan(from, to, shape, o);
  ASSERT_EQ(plan.mechanism, Mechanism::shared);
  EXPECT_EQ(plan.counts.store_wavefronts, 128);
  EXPECT_EQ(plan.counts.load_wavefronts, 128);
  EXPECT_TRUE(std::holds_alternative<RenameOp>(plan.ops.front()));
  EXPECT_TRUE(std::holds_alternative<RenameOp>(plan.ops.back()));
}

// linear_offsets: the row-major (2,4) tile's bits sit at 1, 2, 4; Swizzle<1,0,2> on it moves
// index 4 to 5 (bit 2 carries bit 0 along); a padded row (offset 5 for index 4) is not linear.
TEST(ConvertPlan, LinearOffsets_ByHand) {
  EXPECT_EQ(linear_offsets({0, 1, 2, 3, 4, 5, 6, 7}), (std::vector<std::uint64_t>{1, 2, 4}));
  EXPECT_EQ(linear_offsets({0, 1, 2, 3, 5, 4, 7, 6}), (std::vector<std::uint64_t>{1, 2, 5}));
  EXPECT_EQ(linear_offsets({0, 1, 2, 3, 5, 6, 7, 8}), std::nullopt);
}

TEST(ConvertPlan, SharedLayoutHook_SwizzleIsUsed) {
  // TV-15: the 16x32 f32 transpose; Swizzle<4,1,4> removes the load conflicts.
  auto s = parse_axe_layout("S[(16,32):(1,1@lane)]");
  auto t = parse_axe_layout("S[(16,16,2):(1@lane,1,16@lane)]");
  Shape shape{16, 32};
  ConvertOptions o;
  o.choice = ConvertOptions::Choice::shared;
  o.shared = row_major_shared(shape);
  auto plain = check_plan(s, t, shape, o);
  o.shared = SharedLayout{row_major_shared(shape).smem, cute::Swizzle(4, 1, 4), std::nullopt};
  auto swz = check_plan(s, t, shape, o);
  EXPECT_EQ(plain.mechanism, Mechanism::shared);
  EXPECT_EQ(plain.counts.load_wavefronts, 16 * 16);
  EXPECT_EQ(swz.counts.load_wavefronts, 16);
}

// Without a shared layout the round trip goes through the optimal swizzle (swizzle.hpp): for
// TV-15 conflict-free on both sides, with 16-byte stores (4 registers = 4 rows at consecutive
// offsets): 4 store instructions of 4 wavefronts; the destination's lanes 0 and 1 hold
// consecutive offsets of 16-byte rows, so its 16 registers load by 4 ldmatrix.x4 of 4 matrices
// (one wavefront each).
TEST(ConvertPlan, DefaultSharedLayout_IsTheOptimalSwizzle) {
  auto s = parse_axe_layout("S[(16,32):(1,1@lane)]");
  auto t = parse_axe_layout("S[(16,16,2):(1@lane,1,16@lane)]");
  Shape shape{16, 32};
  ConvertOptions o;
  o.choice = ConvertOptions::Choice::shared;
  auto p = check_plan(s, t, shape, o);
  EXPECT_EQ(p.mechanism, Mechanism::shared);
  EXPECT_EQ(p.counts.store_instructions, 4);
  EXPECT_EQ(p.counts.store_wavefronts, 16);
  EXPECT_EQ(p.counts.load_instructions, 4);
  EXPECT_EQ(p.counts.load_wavefronts, 16);
  EXPECT_TRUE(std::get<LoadOp>(p.ops.back()).ldmatrix);
  ASSERT_TRUE(p.shared.has_value() && p.shared->swizzle.has_value());
}

// The cost model: TV-19 (m = 2) on one warp is cheaper through shared memory (its barrier is a
// bar.warp.sync, weight 4), on 4 warps by shuffles (TV19_EveryLaneGroupOfFourWarps above); the
// 16x32 f32 transpose (m = 4: 128 selects, 16 shuffles) only against a row-major tile: a swizzled
// one is cheaper.
TEST(ConvertPlan, IssueCost_ChoosesTheCheaperMechanism) {
  auto s = parse_axe_layout("S[(4,4):(1@lane,1)]"), t = parse_axe_layout("S[(4,4):(1,1@lane)]");
  ConvertOptions o;
  o.choice = ConvertOptions::Choice::shuffles;
  auto by_shuffles = plan_conversion(s, t, Shape{4, 4}, o);
  o.choice = ConvertOptions::Choice::shared;
  auto by_shared = plan_conversion(s, t, Shape{4, 4}, o);
  EXPECT_EQ(by_shuffles.mechanism, Mechanism::shuffles);
  EXPECT_EQ(issue_cost(by_shuffles.counts, 1), 22);
  EXPECT_EQ(issue_cost(by_shared.counts, 1), 19);
  EXPECT_EQ(plan_conversion(s, t, Shape{4, 4}).mechanism, Mechanism::shared);
  // TV-15: shuffles cost 128 + 2 * 16 = 160; a row-major tile 32 + 2 * (16 + 256) + 4 = 580,
  // Swizzle<4,1,4> (through the shared-layout hook) 32 + 2 * 32 + 4 = 100, and the default, the
  // optimal swizzle (4 stores of 16 bytes, 4 ldmatrix.x4), 8 + 2 * 32 + 4 = 76: the cheapest.
  auto s15 = parse_axe_layout("S[(16,32):(1,1@lane)]");
  auto t15 = parse_axe_layout("S[(16,16,2):(1@lane,1,16@lane)]");
  Shape shape{16, 32};
  o.choice = ConvertOptions::Choice::shuffles;
  auto shuffled = check_plan(s15, t15, shape, o);
  EXPECT_EQ(shuffled.mechanism, Mechanism::shuffles);
  EXPECT_EQ(shuffled.counts.selects, 128);
  EXPECT_EQ(shuffled.counts.shuffles, 16);
  EXPECT_EQ(issue_cost(shuffled.counts, 1), 160);
  auto by_default = check_plan(s15, t15, shape);
  EXPECT_EQ(by_default.mechanism, Mechanism::shared);
  EXPECT_EQ(issue_cost(by_default.counts, 1), 76);
  o.choice = ConvertOptions::Choice::shared;
  o.shared = row_major_shared(shape);
  EXPECT_EQ(issue_cost(check_plan(s15, t15, shape, o).counts, 1), 580);
  o.choice = ConvertOptions::Choice::cheapest;
  o.shared = SharedLayout{row_major_shared(shape).smem, cute::Swizzle(4, 1, 4), std::nullopt};
  auto swizzled = check_plan(s15, t15, shape, o);
  EXPECT_EQ(swizzled.mechanism, Mechanism::shared);
  EXPECT_EQ(issue_cost(swizzled.counts, 1), 100);
}

TEST(ConvertPlan, BadInput_NamesTheLayout) {
  auto a = parse_axe_layout("S[(8,32):(1,1@lane)]");
  Shape shape{8, 32};
  auto msg = [&](const char* from, const char* to, Shape sh) {
    try {
      plan_conversion(parse_axe_layout(from), parse_axe_layout(to), sh);
    } catch (const axe::Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(msg("S[(8,16):(1,1@lane)]", "S[(8,32):(1,1@lane)]", shape).find("source layout"),
            std::string::npos);
  EXPECT_NE(msg("S[(8,32):(1,1@lane)]", "S[(8,32,2):(1,1@lane,1@warp)] ", Shape{8, 64})
                .find("source layout"),
            std::string::npos);
  EXPECT_NE(
      msg("S[(2,8,32):(1@warp,1,1@lane)]", "S[(16,32):(1,1@lane)]", Shape{16, 32}).find("warp"),
      std::string::npos);
  EXPECT_NE(msg("S[(8,32):(1,1@lane)]", "S[(8,32):(1,1@gpu)]", shape).find("destination layout"),
            std::string::npos);
  EXPECT_NE(msg("S[(8,32):(1,1@lane)]", "S[(8,32):(1,1@lane)] + 1@warp", shape).find("offset"),
            std::string::npos);
  (void)a;
}

// A shared layout given by the caller must be over m and put every tile element at its own
// non-negative offset (the plan would otherwise be wrong, which only simulate would catch).
TEST(ConvertPlan, BadSharedLayout_IsRefusedWithItsName) {
  const auto from = parse_axe_layout("S[(16,32):(1,1@lane)]");
  const auto to = parse_axe_layout("S[(16,32):(1@lane,1)]");
  const Shape shape{16, 32};
  auto with = [&](const char* smem) {
    ConvertOptions o;
    o.shared = SharedLayout{parse_axe_layout(smem), std::nullopt, std::nullopt};
    (void)plan_conversion(from, to, shape, o);
  };
  expect_error([&] { with("S[(16,32):(1@lane,16)]"); }, "uses axis 'lane' (a shared layout is over m");
  expect_error([&] { with("S[(16,32):(0,16)]"); }, "S[(16,32):(0,16)] puts two elements at offset 0");
  expect_error([&] { with("S[(16,16):(16,1)]"); }, "has 256 elements, the tile 512");
  with("S[(16,32):(1,16)]");  // column-major: every element at its own offset
}

// ---- seeded random: every plan simulated == destination layout ---------------------------------

TEST(ConvertPlan, EveryPlanSimulated_EqualsDestination) {
  auto rng = make_rng(0x0c0e);
  std::map<Mechanism, int> seen;
  for (int trial = 0; trial < 160; ++trial) {
    Shape shape{pick_pow2(rng, 5), pick_pow2(rng, 5)};
    if (shape[0] * shape[1] < 32) shape[1] = 32 / shape[0];
    std::int64_t warps = pick_pow2(rng, 2);
    auto a = random_blocked(rng, shape, warps);
    LinearLayout b;
    switch (trial % 4) {
      case 0:
        b = random_blocked(rng, shape, warps);
        break;
      case 1:
        b = permute_dim(rng, a, "m");
        break;
      case 2:
        b = permute_dim(rng, a, "lane");
        break;
      default:
        b = permute_dim(rng, permute_dim(rng, a, "lane"), "m");
        break;
    }
    auto from = from_linear(a).layout, to = from_linear(b).layout;
    ConvertOptions o;
    o.shared_budget_bytes = std::int64_t{4} << uniform(rng, 6, 14);
    o.choice = trial % 7 == 0   ? ConvertOptions::Choice::shared
               : trial % 7 == 1 ? ConvertOptions::Choice::shuffles
                                : ConvertOptions::Choice::cheapest;
    auto plan = check_plan(from, to, shape, o);
    ++seen[plan.mechanism];
    // And back.
    ++seen[check_plan(to, from, shape, o).mechanism];
  }
  for (auto m : {Mechanism::none, Mechanism::registers, Mechanism::shuffles, Mechanism::shared}) {
    EXPECT_GT(seen[m], 0) << to_string(m);
  }
}

}  // namespace
}  // namespace axe::test::linear
