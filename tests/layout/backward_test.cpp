// Backward map: inverts forward, nullopt where nothing lands, errors on non-invertible layouts.
#include <gtest/gtest.h>

#include "layout/layout_test_util.hpp"
#include "support/test_support.hpp"

namespace axe {
namespace {

using test::L;
using test::pc;

TEST(Backward, TensorCoreTile) {
  AxeLayout l = L("S[(8,2,4,2):(4@lane,1@warp,1@lane,1)] + R[2:4@warp] + 5@warp");
  EXPECT_EQ(l.backward(pc({{"lane", 8}, {"warp", 6}, {"m", 1}})), (Preimage{41, 0, 0}));
  EXPECT_EQ(l.backward(pc({{"lane", 8}, {"warp", 10}, {"m", 1}})), (Preimage{41, 1, 0}));
  EXPECT_EQ(l.backward(pc({{"lane", 8}, {"warp", 4}, {"m", 1}})), std::nullopt);  // below offset
  EXPECT_EQ(l.backward(pc({{"lane", 8}, {"warp", 7}, {"m", 1}})), std::nullopt);  // gap
  EXPECT_EQ(l.backward(pc({{"lane", 8}, {"warp", 6}, {"m", 2}})), std::nullopt);
  EXPECT_EQ(l.backward(pc({{"lane", 8}, {"warp", 6}, {"gpu", 1}})), std::nullopt);
  EXPECT_EQ(l.backward(pc({{"lane", 8}, {"warp", 6}, {"m", 1}, {"gpu", 0}})),
            (Preimage{41, 0, 0}));
}

TEST(Backward, PartialTermsAndNegativeStrides) {
  AxeLayout l = L("S[(3,4):(-4,1)] + P[2:-1@gpu] + 3@gpu + 8");
  // x = 4*c0 + c1 -> m = 8 - 4*c0 + c1; gpu = 3 - t.
  EXPECT_EQ(l.backward(pc({{"gpu", 2}, {"m", 8 - 8 + 3}})), (Preimage{11, 0, 1}));
  EXPECT_EQ(l.backward(pc({{"gpu", 3}, {"m", 8}})), (Preimage{0, 0, 0}));
  EXPECT_EQ(l.backward(pc({{"gpu", 4}, {"m", 8}})), std::nullopt);
}

TEST(Backward, NonNestedButInjectiveIsProvedByEnumeration) {
  // Strides 2 and 3 with extent 2: values {0,2,3,5}, injective, not nested.
  AxeLayout l = L("S[(2,2):(2,3)]");
  EXPECT_EQ(l.backward(pc({{"m", 5}})), (Preimage{3, 0, 0}));
  EXPECT_EQ(l.backward(pc({{"m", 3}})), (Preimage{1, 0, 0}));
  EXPECT_EQ(l.backward(pc({{"m", 1}})), std::nullopt);
}

TEST(Backward, NonInvertibleLayoutIsAnErrorNamingTheClash) {
  for (const char* s : {"S[2:1] + R[2:1]", "S[(2,2):(1,1)]", "S[4:0]", "S[(2,3):(3,1)] + R[2:1]",
                        "S[2:1@gpu] + P[2:1@gpu]"}) {
    AxeLayout l = L(s);
    try {
      l.backward(PhysCoord());
      ADD_FAILURE() << "no error for " << s;
    } catch (const Error& e) {
      std::string msg = e.what();
      EXPECT_NE(msg.find("not invertible"), std::string::npos) << msg;
      EXPECT_NE(msg.find("both land on"), std::string::npos) << msg;
    }
  }
}

TEST(Backward, LargeNestedLayoutIsFast) {
  // 2^40 elements: only a digit-by-digit solve can answer this.
  AxeLayout l = L("S[(1024,1024,1024,1024):(1@gpu,1048576,1024,1)] + R[8:1024@gpu]");
  std::int64_t x = (std::int64_t{517} << 30) | (std::int64_t{3} << 20) | (9 << 10) | 1000;
  auto v = l.forward(x);
  for (const Placement& p : v) {
    EXPECT_EQ(l.backward(p.coord), (Preimage{x, p.replica, 0}));
  }
  EXPECT_EQ(l.backward(pc({{"gpu", 1024 * 8}})), std::nullopt);
  EXPECT_EQ(l.backward(pc({{"m", INT64_MAX}})), std::nullopt);
  EXPECT_EQ(l.backward(pc({{"m", INT64_MIN}})), std::nullopt);
}

TEST(Backward, HugeNonNestedLayoutIsRejectedNotEnumerated) {
  AxeLayout l = L("S[(65536,65536):(3,2)]");
  EXPECT_THROW(l.backward(PhysCoord()), Error);
}

TEST(Backward, InvertsForward) {
  auto rng = test::make_rng(303);
  test::RandomOptions o;
  o.max_d = 3;
  for (int i = 0; i < 2000; ++i) {
    AxeLayout l = test::random_nested_layout(rng, o);
    for (std::int64_t x = 0; x < l.size(); ++x) {
      for (const Placement& p : l.forward(x)) {
        ASSERT_EQ(l.backward(p.coord), (Preimage{x, p.replica, p.term}))
            << to_string(l) << " at " << to_string(p.coord);
      }
    }
  }
}

// Oracle: a map built by enumerating forward. Layouts whose map has a coordinate with two
// triples must be rejected; all others must agree with the map on held coordinates and say
// "not held" on a sample of other coordinates near the image.
TEST(Backward, MatchesBruteForceMap) {
  auto rng = test::make_rng(304);
  int invertible = 0, rejected = 0;
  test::RandomOptions o;
  o.max_d = 3;
  for (int i = 0; i < 3000; ++i) {
    AxeLayout l = test::random_layout(rng, o);
    auto map = test::enumerate(l);
    bool clash = std::any_of(map.begin(), map.end(), [](const auto& e) { return e.second.size() > 1; });
    if (clash) {
      ASSERT_THROW(l.backward(PhysCoord()), Error) << to_string(l);
      ++rejected;
      continue;
    }
    ++invertible;
    for (const auto& [c, pre] : map) {
      PhysCoord pcoord;
      for (const auto& [a, v] : c) pcoord.set(Axis(a), v);
      ASSERT_EQ(l.backward(pcoord), pre[0]) << to_string(l);
    }
    std::vector<Axis> axes = l.axes();
    for (int k = 0; k < 40; ++k) {
      PhysCoord probe;
      test::Coord key;
      for (Axis a : axes) {
        std::int64_t v = l.offset(a) + test::pick(rng, -3, l.span(a) + 2);
        probe.set(a, v);
        if (v != 0) key[std::string(a.name())] = v;
      }
      if (map.count(key)) continue;
      ASSERT_EQ(l.backward(probe), std::nullopt) << to_string(l) << " " << to_string(probe);
    }
  }
  EXPECT_GT(invertible, 300);
  EXPECT_GT(rejected, 300);
}

}  // namespace
}  // namespace axe
