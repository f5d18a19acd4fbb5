// Optimal swizzle (swizzle.hpp): TV-15 exactly; the F2 cost == the bank model's enumeration; the
// plan is a bijection, never worse than the row-major tile or the best Swizzle<B,M,S>; swizzle
// involution; the Swizzle o Axe form places every element where the plan does.
#include "axe/linear/swizzle.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>

#include "axe/core/error.hpp"
#include "axe/linear/banks.hpp"
#include "axe/linear/bridge.hpp"
#include "axe/linear/f2.hpp"
#include "axe/linear/thread_layouts.hpp"
#include "linear_test_util.hpp"

namespace axe::test::linear {
namespace {

using namespace axe::linear;
using Shape = std::vector<std::int64_t>;

const char* kStore = "S[(16,32):(1,1@lane)]";          // lane = column, register = row
const char* kLoad = "S[(16,16,2):(1@lane,1,16@lane)]";  // lane%16 = row, column = 2 reg + lane/16

AccessCost enumerated(const LinearLayout& shared, const AxeLayout& threads, const Shape& shape,
                      std::int64_t bytes) {
  auto r = bank_conflicts(shared_offsets(shared), threads, shape, bytes);
  return {r.vector_bytes, r.instructions, r.wavefronts};
}

// The plan's laws, checked against the bank model's enumeration.
void check_plan(const SwizzlePlan& p, const AxeLayout& from, const AxeLayout& to,
                const Shape& shape, std::int64_t bytes) {
  SCOPED_TRACE(to_string(from) + " -> " + to_string(to) + " bytes " + std::to_string(bytes) +
               " shared " + to_string(p.shared));
  // Bijection tile <-> offsets.
  auto off = shared_offsets(p.shared);
  auto sorted = off;
  std::sort(sorted.begin(), sorted.end());
  for (std::size_t i = 0; i < sorted.size(); ++i) ASSERT_EQ(sorted[i], static_cast<std::int64_t>(i));
  // Reported cost == enumeration.
  EXPECT_EQ(p.cost.store, enumerated(p.shared, from, shape, bytes));
  EXPECT_EQ(p.cost.load, enumerated(p.shared, to, shape, bytes));
  // Baselines == enumeration through the Axe layout + Swizzle path of bank_conflicts.
  Shape strides(shape.size(), 1);
  for (std::size_t k = shape.size() - 1; k-- > 0;) strides[k] = strides[k + 1] * shape[k + 1];
  std::vector<Iter> it;
  for (std::size_t k = 0; k < shape.size(); ++k) it.push_back({shape[k], strides[k], Axis()});
  AxeLayout rm(it);
  auto st = bank_conflicts(rm, from, shape, bytes);
  auto ld = bank_conflicts(rm, to, shape, bytes);
  EXPECT_EQ(p.row_major.store.wavefronts, st.wavefronts);
  EXPECT_EQ(p.row_major.load.wavefronts, ld.wavefronts);
  EXPECT_EQ(p.row_major.instructions(), st.instructions + ld.instructions);
  if (p.best_swizzle) {
    auto sst = bank_conflicts(rm, from, shape, bytes, p.best_swizzle);
    auto sld = bank_conflicts(rm, to, shape, bytes, p.best_swizzle);
    EXPECT_EQ(p.best_swizzle_cost.wavefronts(), sst.wavefronts + sld.wavefronts);
    EXPECT_EQ(p.best_swizzle_cost.instructions(), sst.instructions + sld.instructions);
  }
  // Never worse than the baselines.
  EXPECT_FALSE(p.row_major.better_than(p.cost));
  EXPECT_FALSE(p.best_swizzle_cost.better_than(p.cost));
  // The Swizzle o Axe form, when given, places every element where the plan does.
  if (p.axe) {
    for (std::int64_t x = 0; x < static_cast<std::int64_t>(off.size()); ++x) {
      ASSERT_EQ(p.axe->swizzle(p.axe->layout.forward_first(x)[Axis()]), off[static_cast<std::size_t>(x)]) << x;
    }
  }
}

TEST(OptimalSwizzle, TV15_RowMajor_OneStoreSixteenLoadWavefrontsPerInstruction) {
  auto p = optimal_swizzle(parse_axe_layout(kStore), parse_axe_layout(kLoad), Shape{16, 32}, 4);
  EXPECT_EQ(p.row_major.store, (AccessCost{4, 16, 16}));  // 16 instructions x 1 wavefront
  EXPECT_EQ(p.row_major.load, (AccessCost{4, 16, 256}));  // 16 instructions x 16 wavefronts
}

TEST(OptimalSwizzle, TV15_ConflictFreeWith128BitStores) {
  auto from = parse_axe_layout(kStore), to = parse_axe_layout(kLoad);
  auto p = optimal_swizzle(from, to, Shape{16, 32}, 4);
  EXPECT_EQ(p.origin, "generic");
  // 4 st.shared.v4, each 4 quarter-warp phases of 1 wavefront; 16 conflict-free ld.shared.b32.
  EXPECT_EQ(p.cost.store, (AccessCost{16, 4, 16}));
  EXPECT_EQ(p.cost.load, (AccessCost{4, 16, 16}));
  // LINEAR_LAYOUTS.md TV-15: vector [32,64], bank [1,128,256], segment [8,16,130,260].
  EXPECT_EQ(p.shared.columns(),
            (std::vector<std::uint64_t>{32, 64, 1, 128, 256, 8, 16, 130, 260}));
  // The best plain swizzle is also conflict-free but scalar (Sw<4,1,4>-like): 32 instructions.
  ASSERT_TRUE(p.best_swizzle.has_value());
  EXPECT_EQ(p.best_swizzle_cost.wavefronts(), 32);
  EXPECT_EQ(p.best_swizzle_cost.instructions(), 32);
  EXPECT_TRUE(p.cost.better_than(p.best_swizzle_cost));
  ASSERT_TRUE(p.axe.has_value());
  EXPECT_EQ(p.axe->swizzle, cute::Swizzle(2, 3, 4));
  check_plan(p, from, to, Shape{16, 32}, 4);
}

TEST(OptimalSwizzle, Swizzle_Involution) {
  for (int n = 2; n <= 10; ++n) {
    for (int b = 1; 2 * b <= n; ++b) {
      for (int m = 0; 2 * b + m <= n; ++m) {
        for (int s = b; b + m + s <= n; ++s) {
          for (int sign : {1, -1}) {
            auto l = from_swizzle(cute::Swizzle(b, m, sign * s), n, "m", "m");
            EXPECT_EQ(compose(l, l), LinearLayout::identity_1d(std::int64_t{1} << n, "m", "m"));
          }
        }
      }
    }
  }
}

TEST(OptimalSwizzle, SwizzledShared_IsSwizzleOverRowMajor) {
  auto l = swizzled_linear(cute::Swizzle(3, 3, 3), Shape{8, 64});
  auto off = shared_offsets(l);
  for (std::int64_t x = 0; x < 512; ++x) EXPECT_EQ(off[static_cast<std::size_t>(x)], cute::Swizzle(3, 3, 3)(x));
  auto a = as_swizzled_axe(l);
  ASSERT_TRUE(a.has_value());
  EXPECT_EQ(a->swizzle, cute::Swizzle(3, 3, 3));
  EXPECT_EQ(to_string(a->layout), "S[512:1]");  // runs merged: the row-major flat index
  auto rm = as_swizzled_axe(row_major_linear(Shape{8, 64}));
  ASSERT_TRUE(rm.has_value());
  EXPECT_EQ(rm->swizzle, cute::Swizzle());
}

TEST(OptimalSwizzle, AsSwizzledAxe_SaysWhenNotExpressible) {
  // 2x8 tile (x = 8 row + col): offset bits 0, 1 hold cols 1, 2; bit 2 holds row ^ col 2 ^ col 4
  // (x = 14); bit 3 col 4. No Sw<B,M,S> cancels two terms of one basis, so none leaves a permutation.
  auto l = LinearLayout::from_columns({{"m", 4}}, logical_dims(Shape{2, 8}), {1, 2, 8 | 2 | 4, 4});
  ASSERT_TRUE(is_invertible(l));
  EXPECT_FALSE(as_swizzled_axe(l).has_value());
}

// A random thread layout of a 2^n tile: each tensor bit goes to one hardware bit of m (up to
// `max_regs`), lane (up to 5) or warp (up to 2), fastest bits first; at least one lane bit.
AxeLayout random_threads(std::mt19937_64& rng, int n, int max_regs) {
  std::vector<int> perm(static_cast<std::size_t>(n));
  std::iota(perm.begin(), perm.end(), 0);
  std::shuffle(perm.begin(), perm.end(), rng);
  int lanes = std::min(5, std::max(1, n - max_regs - 2));
  lanes = uniform(rng, lanes, std::min(5, n));
  int warps = std::min(2, n - lanes);
  warps = uniform(rng, 0, warps);
  // Hardware bit k of the first n: lanes, then warps, then registers.
  std::vector<Iter> it;
  for (int b = n - 1; b >= 0; --b) {
    int h = perm[static_cast<std::size_t>(b)];
    if (h < lanes) {
      it.push_back({2, std::int64_t{1} << h, Axis("lane")});
    } else if (h < lanes + warps) {
      it.push_back({2, std::int64_t{1} << (h - lanes), Axis("warp")});
    } else {
      it.push_back({2, std::int64_t{1} << (h - lanes - warps), Axis()});
    }
  }
  return AxeLayout(it);
}

// A random invertible XOR-linear shared layout: a random bit permutation, then random XORs of lower
// offset bits into higher ones.
LinearLayout random_shared(std::mt19937_64& rng, const Shape& shape) {
  auto outs = logical_dims(shape);
  int n = 0;
  for (const auto& d : outs) n += d.bits;
  std::vector<std::uint64_t> cols(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) cols[static_cast<std::size_t>(i)] = std::uint64_t{1} << i;
  std::shuffle(cols.begin(), cols.end(), rng);
  for (int i = 1; i < n; ++i) {
    if (uniform(rng, 0, 1)) cols[static_cast<std::size_t>(i)] ^= cols[static_cast<std::size_t>(uniform(rng, 0, i - 1))];
  }
  return LinearLayout::from_columns({{"m", n}}, outs, cols);
}

// Law: access_cost (the F2 formula) == bank_conflicts' enumeration, for random shared layouts,
// random thread layouts and every element size.
TEST(OptimalSwizzle, AccessCost_EqualsEnumeration) {
  auto rng = make_rng(0x5e1);
  for (int trial = 0; trial < 150; ++trial) {
    int rows = uniform(rng, 1, 5), cols = uniform(rng, 1, 6);
    Shape shape{std::int64_t{1} << rows, std::int64_t{1} << cols};
    std::int64_t bytes = std::int64_t{1} << uniform(rng, 0, 4);
    auto threads = random_threads(rng, rows + cols, 4);
    // Half the time a shared layout that gives this side vectors: its registers first.
    LinearLayout shared = random_shared(rng, shape);
    auto tl = to_linear(threads, shape).layout;
    if (trial % 2) {
      auto regs = tl.has_in_dim("m") ? tl.in_bits("m") : 0;
      auto c = shared.columns();
      for (int i = 0; i < std::min(regs, 2); ++i) {
        auto r = tl.column("m", i);
        auto pos = std::find(c.begin(), c.end(), r);
        if (pos != c.end()) std::iter_swap(c.begin() + i, pos);
      }
      shared = LinearLayout::from_columns(shared.in_dims(), shared.out_dims(), c);
    }
    SCOPED_TRACE(to_string(threads) + " shared " + to_string(shared) + " bytes " + std::to_string(bytes));
    ASSERT_EQ(access_cost(shared, tl, bytes), enumerated(shared, threads, shape, bytes));
  }
}

// Laws of optimal_swizzle over random thread layouts (bit permutations of m, lane, warp).
TEST(OptimalSwizzle, RandomLayouts_BijectionCostEqualsEnumerationNeverWorse) {
  auto rng = make_rng(0x5e2);
  for (int trial = 0; trial < 40; ++trial) {
    int rows = uniform(rng, 2, 5), cols = uniform(rng, 2, 6);
    Shape shape{std::int64_t{1} << rows, std::int64_t{1} << cols};
    std::int64_t bytes = std::int64_t{1} << uniform(rng, 0, 3);
    auto from = random_threads(rng, rows + cols, 4);
    auto to = random_threads(rng, rows + cols, 4);
    auto warps = [&](const AxeLayout& l) { return l.span(Axis("warp")); };
    if (warps(from) != warps(to)) continue;
    check_plan(optimal_swizzle(from, to, shape, bytes), from, to, shape, bytes);
  }
}

// The same over Triton blocked layouts with random parameters and their transposes (order
// swapped), the usual reason for a shared-memory round trip.
TEST(OptimalSwizzle, BlockedTransposes_BijectionCostEqualsEnumerationNeverWorse) {
  auto rng = make_rng(0x5e3);
  for (int trial = 0; trial < 30; ++trial) {
    Shape shape{std::int64_t{1} << uniform(rng, 3, 6), std::int64_t{1} << uniform(rng, 3, 6)};
    std::int64_t bytes = std::int64_t{1} << uniform(rng, 1, 3);
    int w = uniform(rng, 0, 2);
    auto random_blocked = [&](const Shape& order) {
      Shape spt{std::int64_t{1} << uniform(rng, 0, 2), std::int64_t{1} << uniform(rng, 0, 2)};
      int t0 = uniform(rng, 0, 5);
      Shape tpw{std::int64_t{1} << t0, std::int64_t{1} << (5 - t0)};
      int w0 = uniform(rng, 0, w);
      Shape wpc{std::int64_t{1} << w0, std::int64_t{1} << (w - w0)};
      return from_linear(blocked_layout(shape, spt, tpw, wpc, order)).layout;
    };
    auto from = random_blocked(Shape{1, 0});
    auto to = random_blocked(Shape{0, 1});
    check_plan(optimal_swizzle(from, to, shape, bytes), from, to, shape, bytes);
  }
}

// Brute force: on 16-element tiles of 16-byte elements (256 bytes, two bank rows) the plan costs
// exactly the minimum over every invertible shared layout (all 20160 of GL(4, F2)), for random
// thread layouts.
TEST(OptimalSwizzle, TinyTiles_MatchBruteForceOptimum) {
  auto rng = make_rng(0x5e4);
  Shape shape{4, 4};
  auto outs = logical_dims(shape);
  std::vector<LinearLayout> all;
  for (std::uint64_t code = 0; code < (1u << 16); ++code) {
    std::vector<std::uint64_t> cols{code & 15, code >> 4 & 15, code >> 8 & 15, code >> 12 & 15};
    if (f2::rank(cols) == 4) all.push_back(LinearLayout::from_columns({{"m", 4}}, outs, cols));
  }
  ASSERT_EQ(all.size(), 20160u);
  for (int trial = 0; trial < 12; ++trial) {
    auto from = random_threads(rng, 4, 1), to = random_threads(rng, 4, 1);
    if (from.span(Axis("warp")) != to.span(Axis("warp"))) continue;
    auto fl = to_linear(from, shape).layout, tl = to_linear(to, shape).layout;
    ExchangeCost best{access_cost(all[0], fl, 16), access_cost(all[0], tl, 16)};
    for (const auto& l : all) {
      ExchangeCost c{access_cost(l, fl, 16), access_cost(l, tl, 16)};
      if (c.better_than(best)) best = c;
    }
    auto p = optimal_swizzle(from, to, shape, 16);
    EXPECT_EQ(p.cost.wavefronts(), best.wavefronts()) << to_string(from) << " -> " << to_string(to);
    EXPECT_EQ(p.cost.instructions(), best.instructions()) << to_string(from) << " -> " << to_string(to);
  }
}

TEST(OptimalSwizzle, Errors_NameTheArgument) {
  auto st = parse_axe_layout(kStore), ld = parse_axe_layout(kLoad);
  expect_error([&] { (void)optimal_swizzle(st, ld, Shape{16, 32}, 3); }, "element size 3 bytes");
  expect_error([&] { (void)optimal_swizzle(parse_axe_layout("S[(16,32):(1,1@tid)]"), ld, Shape{16, 32}, 4); },
         "the source thread layout S[(16,32):(1,1@tid)] uses axis 'tid'");
  expect_error([&] { (void)optimal_swizzle(st, parse_axe_layout("S[(16,3,2):(1@lane,1,16@lane)]"), Shape{16, 6, 2}, 4); },
         "logical extent 6");
  expect_error([&] { (void)optimal_swizzle(st, parse_axe_layout("S[(16,32):(2,1@lane)]"), Shape{16, 32}, 4); },
         "the destination thread layout S[(16,32):(2,1@lane)] leaves 512 of its 1024 hardware");
  expect_error([&] { (void)optimal_swizzle(st, parse_axe_layout("S[(16,32):(1@warp,1@lane)]"), Shape{16, 32}, 4); },
         "uses 1 warp(s) but the destination");
  expect_error([&] { (void)optimal_swizzle(st, ld, Shape{16, 16}, 4); }, "the source thread layout");
  expect_error([&] { (void)optimal_swizzle(parse_axe_layout("S[(8,64):(1,1@lane)]"), parse_axe_layout("S[(8,64):(1@lane,1)]"), Shape{8, 64}, 4); },
         "reaches lane 63");
}

}  // namespace
}  // namespace axe::test::linear
