// Tile / Kronecker product (Alg. 2): f(x, y) = f_outer(x) * span(inner) + f_inner(y) per axis.
#include <gtest/gtest.h>

#include "layout/tile_laws.hpp"
#include "support/test_support.hpp"

namespace axe {
namespace {

using test::L;

std::string tiled(const char* o, std::vector<std::int64_t> os, const char* i,
                  std::vector<std::int64_t> is, bool canon = false) {
  AxeLayout t = tile(L(o), os, L(i), is);
  return to_string(canon ? canonicalize(t) : t);
}

TEST(Tile, PaperVectors) {
  EXPECT_EQ(tiled("S[8:1]", {8}, "S[8:1]", {8}, true), "S[64:1]");
  EXPECT_EQ(tiled("S[(8,8):(8,1)]", {8, 8}, "S[(8,8):(8,1)]", {8, 8}),
            "S[(8,8,8,8):(512,8,64,1)]");
  EXPECT_EQ(tiled("S[(8,8):(8,1)]", {8, 8}, "S[(2,4):(1,2)]", {2, 4}, true), "S[(8,2,32):(64,1,2)]");
  EXPECT_EQ(tiled("S[(8,8):(8,1)]", {8, 8}, "S[(2,3):(3,1)]", {2, 3}), "S[(8,2,8,3):(48,3,6,1)]");
  EXPECT_EQ(tiled("S[(8,8):(8,1)]", {8, 8}, "S[(8,4):(4@lane,1@lane)]", {8, 4}),
            "S[(8,8,8,4):(8,4@lane,1,1@lane)]");
  EXPECT_EQ(tiled("S[(8,4):(4@lane,1@lane)]", {8, 4}, "S[(1,2):(2,1)]", {1, 2}, true),
            "S[(32,2):(1@lane,1)]");
}

TEST(Tile, OuterReplicaAndOffsetScaledInnerKept) {
  // Inner span on m is 4 (1 + 3*1), on warp 1.
  EXPECT_EQ(tiled("S[2:1] + R[2:1@warp] + P[2:1] + 3", {2}, "S[4:1] + R[2:8@gpu] + 1", {4}),
            "S[(2,4):(4,1)] + R[(2,2):(1@warp,8@gpu)] + P[2:4] + 13");
}

TEST(Tile, BadInputIsAnError) {
  std::int64_t s8[] = {8}, s24[] = {2, 4}, s5[] = {5}, s32[] = {3, 2};
  EXPECT_THROW(tile(L("S[8:1]"), s8, L("S[8:1]"), s24), Error);    // ranks differ
  EXPECT_THROW(tile(L("S[8:1]"), s5, L("S[8:1]"), s8), Error);     // shape size mismatch
  EXPECT_THROW(tile(L("S[(2,3):(1@x,1)]"), s32, L("S[(2,3):(3,1)]"), s24), Error);  // no grouping
  std::int64_t s2[] = {2};
  EXPECT_THROW(tile(L("S[2:1] + P[2:1@g]"), s2, L("S[2:1] + P<max>[2:1@g]"), s2), Error);
  EXPECT_THROW(tile(L("S[2:4611686018427387904]"), s2, L("S[2:4]"), s2), Error);  // overflow
}

TEST(Tile, SatisfiesKroneckerLaw) {
  auto rng = test::make_rng(601);
  test::RandomOptions o;
  o.max_d = 2;
  o.max_r = 1;
  int done = 0;
  for (int i = 0; i < 1500; ++i) {
    AxeLayout outer = test::random_layout(rng, o), inner = test::random_layout(rng, o);
    int rank = static_cast<int>(test::pick(rng, 1, 3));
    auto os = test::random_shape(rng, outer.size(), rank);
    auto is = test::random_shape(rng, inner.size(), rank);
    if (!group(outer, os) || !group(inner, is) ||
        (!outer.partial().empty() && !inner.partial().empty() &&
         outer.reduce_op() != inner.reduce_op())) {
      EXPECT_THROW(tile(outer, os, inner, is), Error);
      continue;
    }
    AxeLayout t = tile(outer, os, inner, is);
    ++done;
    ASSERT_TRUE(test::SumLaw(t, outer, os, inner, is,
                             [&](const std::string& a) { return inner.span(Axis(a)); }))
        << to_string(outer) << " x " << to_string(inner);
  }
  EXPECT_GT(done, 500);
}

}  // namespace
}  // namespace axe
