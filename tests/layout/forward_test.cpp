// Forward map, size and span.
#include <gtest/gtest.h>

#include "layout/layout_test_util.hpp"
#include "support/test_support.hpp"

namespace axe {
namespace {

using test::L;
using test::pc;

TEST(Forward, DigitsAreRowMajorLastIterFastest) {
  // S[(3,4):(1,3)]: x = 4*c0 + c1 -> c0*1 + c1*3.
  AxeLayout l = L("S[(3,4):(1,3)]");
  for (std::int64_t x = 0; x < 12; ++x) {
    EXPECT_EQ(l.forward_first(x), pc({{"m", (x / 4) * 1 + (x % 4) * 3}}));
  }
}

TEST(Forward, ReplicasOuterTermsInner) {
  AxeLayout l = L("S[2:1] + R[2:10@gpu] + P[3:100@gpu] + 7@gpu");
  auto v = l.forward(1);
  ASSERT_EQ(v.size(), 6u);
  for (std::int64_t r = 0; r < 2; ++r) {
    for (std::int64_t t = 0; t < 3; ++t) {
      const Placement& p = v[static_cast<std::size_t>(r * 3 + t)];
      EXPECT_EQ(p.replica, r);
      EXPECT_EQ(p.term, t);
      EXPECT_EQ(p.coord, pc({{"gpu", 7 + 10 * r + 100 * t}, {"m", 1}}));
    }
  }
}

TEST(Forward, NegativeStridesAndOffsets) {
  AxeLayout l = L("S[(2,3):(-1@x,-2)] + -4@x + 10");
  // x = 3*c0 + c1 -> {x: -4 - c0, m: 10 - 2*c1}
  for (std::int64_t x = 0; x < 6; ++x) {
    EXPECT_EQ(l.forward_first(x), pc({{"x", -4 - x / 3}, {"m", 10 - 2 * (x % 3)}}));
  }
}

TEST(Forward, CoordinateOfShape) {
  AxeLayout l = L("S[(4,6):(1,4)]");
  std::int64_t shape[] = {2, 12}, c[] = {1, 5};
  EXPECT_EQ(l.forward(c, shape)[0].coord, l.forward_first(17));
}

TEST(Forward, BadInputIsAnError) {
  AxeLayout l = L("S[(4,6):(1,4)]");
  EXPECT_THROW(l.forward(-1), Error);
  EXPECT_THROW(l.forward(24), Error);
  std::int64_t bad_shape[] = {5, 5}, shape[] = {4, 6}, zero_shape[] = {0, 24}, c[] = {4, 0};
  std::int64_t ok[] = {1, 1};
  EXPECT_THROW(l.forward(ok, bad_shape), Error);
  EXPECT_THROW(l.forward(ok, zero_shape), Error);
  EXPECT_THROW(l.forward(c, shape), Error);
  EXPECT_THROW(AxeLayout({Iter{0, 1, Axis()}}), Error);
  EXPECT_THROW(AxeLayout({Iter{2, 1, Axis()}}, {Iter{-1, 1, Axis()}}), Error);
  EXPECT_THROW(AxeLayout({}, {}, {}, {{Axis("x"), 1}, {Axis("x"), 2}}), Error);
}

TEST(Forward, SizeAndSpan) {
  AxeLayout l = L("S[(8,2,4,2):(4@lane,1@warp,1@lane,1)] + R[2:4@warp] + 5@warp");
  EXPECT_EQ(l.size(), 128);
  EXPECT_EQ(l.replicas(), 2);
  EXPECT_EQ(l.terms(), 1);
  EXPECT_EQ(l.span(Axis("warp")), 6);
  EXPECT_EQ(l.span(Axis("lane")), 1 + 4 * 7 + 3);
  EXPECT_EQ(l.span(Axis()), 2);
  EXPECT_EQ(l.span(Axis("gpu")), 1);
  EXPECT_EQ(L("S[(3,2):(-5,2)]").span(Axis()), 1 + 10 + 2);
  std::vector<Axis> axes = l.axes();
  ASSERT_EQ(axes.size(), 3u);
  EXPECT_EQ(axes[0], Axis("lane"));
  EXPECT_EQ(axes[1], Axis("warp"));
  EXPECT_EQ(axes[2], Axis());
}

TEST(Forward, DefaultLayoutIsOneElementAtOrigin) {
  AxeLayout l;
  EXPECT_EQ(l.size(), 1);
  auto v = l.forward(0);
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(v[0].coord, PhysCoord());
}

// Brute-force oracle: the forward set equals the sum of every (D, R, P) digit combination.
TEST(Forward, MatchesDefinitionOnRandomLayouts) {
  auto rng = test::make_rng(202);
  for (int i = 0; i < 500; ++i) {
    AxeLayout l = test::random_layout(rng);
    for (std::int64_t x = 0; x < l.size(); ++x) {
      auto v = l.forward(x);
      ASSERT_EQ(static_cast<std::int64_t>(v.size()), l.replicas() * l.terms());
      for (const Placement& p : v) {
        // Recompute from the formula with explicit digits.
        test::Coord want;
        auto add = [&](const std::vector<Iter>& it, std::int64_t idx) {
          for (std::size_t k = it.size(); k-- > 0;) {
            want[std::string(it[k].axis.name())] += (idx % it[k].extent) * it[k].stride;
            idx /= it[k].extent;
          }
        };
        add(l.shard(), x);
        add(l.replica(), p.replica);
        add(l.partial(), p.term);
        for (const auto& [a, o] : l.offset()) want[std::string(a.name())] += o;
        std::erase_if(want, [](const auto& e) { return e.second == 0; });
        ASSERT_EQ(test::to_map(p.coord), want) << to_string(l) << " x=" << x;
      }
    }
  }
}

}  // namespace
}  // namespace axe
