// Tile-of recognition (Alg. 3): the outer layout of a tiling, or nullopt.
#include <gtest/gtest.h>

#include "layout/tile_laws.hpp"
#include "support/test_support.hpp"

namespace axe {
namespace {

using test::L;

TEST(TileOf, PaperVectors) {
  std::int64_t s[] = {16, 24}, is[] = {2, 3};
  auto o = tile_of(L("S[(8,2,8,3):(48,3,6,1)]"), s, L("S[(2,3):(3,1)]"), is);
  ASSERT_TRUE(o);
  EXPECT_EQ(to_string(*o), "S[(8,8):(8,1)]");

  std::int64_t s64[] = {64}, i8[] = {8};
  o = tile_of(L("S[64:1]"), s64, L("S[8:1]"), i8);
  ASSERT_TRUE(o);
  EXPECT_EQ(to_string(*o), "S[8:1]");

  std::int64_t s2[] = {64, 32}, i2[] = {8, 4};
  o = tile_of(L("S[(8,8,8,4):(8,4@lane,1,1@lane)]"), s2, L("S[(8,4):(4@lane,1@lane)]"), i2);
  ASSERT_TRUE(o);
  EXPECT_EQ(to_string(*o), "S[(8,8):(8,1)]");
}

TEST(TileOf, RecoversReplicaPartialAndOffset) {
  std::int64_t s[] = {8}, is[] = {4};
  AxeLayout l = L("S[(2,4):(4,1)] + R[(2,2):(1@warp,8@gpu)] + P[2:4] + 13");
  auto o = tile_of(l, s, L("S[4:1] + R[2:8@gpu] + 1"), is);
  ASSERT_TRUE(o);
  EXPECT_TRUE(equivalent(*o, L("S[2:1] + R[2:1@warp] + P[2:1] + 3")));
}

TEST(TileOf, NulloptWhenNotATiling) {
  std::int64_t s[] = {16, 24}, is[] = {2, 3}, bad[] = {6, 1};
  // Row-major 16x24 is a tiling of a 2x3 row-major tile only if the tile is contiguous: no.
  EXPECT_FALSE(tile_of(L("S[(16,24):(24,1)]"), s, L("S[(2,3):(3,1)]"), is));
  EXPECT_FALSE(tile_of(L("S[(8,2,8,3):(48,3,6,1)]"), s, L("S[(2,3):(1,2)]"), is));
  EXPECT_FALSE(tile_of(L("S[(8,2,8,3):(48,3,6,1)]"), s, L("S[(2,3):(3,1)]"), bad));  // 16 % 5
  // Outer strides not multiples of the inner span.
  std::int64_t s1[] = {8}, i1[] = {4};
  EXPECT_FALSE(tile_of(L("S[(2,4):(3,1)]"), s1, L("S[4:1]"), i1));
  // Inner replica missing.
  EXPECT_FALSE(tile_of(L("S[(2,4):(4,1)]"), s1, L("S[4:1] + R[2:1@gpu]"), i1));
}

TEST(TileOf, RecoversOuterOfRandomTiles) {
  auto rng = test::make_rng(701);
  test::RandomOptions o;
  o.max_d = 3;
  o.max_r = 1;
  int done = 0;
  for (int i = 0; i < 2000; ++i) {
    AxeLayout outer = test::random_layout(rng, o), inner = test::random_layout(rng, o);
    int rank = static_cast<int>(test::pick(rng, 1, 3));
    auto os = test::random_shape(rng, outer.size(), rank);
    auto is = test::random_shape(rng, inner.size(), rank);
    AxeLayout t;
    try {
      t = tile(outer, os, inner, is);
    } catch (const Error&) {
      continue;
    }
    std::vector<std::int64_t> shape;
    for (int k = 0; k < rank; ++k) shape.push_back(os[k] * is[k]);
    auto rec = tile_of(t, shape, inner, is);
    ASSERT_TRUE(rec) << to_string(outer) << " x " << to_string(inner) << " = " << to_string(t);
    ASSERT_TRUE(equivalent(*rec, outer)) << to_string(*rec) << " vs " << to_string(outer);
    ++done;
  }
  EXPECT_GT(done, 800);
}

// Soundness on arbitrary layouts: whatever tile_of returns re-tiles to the same function.
TEST(TileOf, AnswerRetilesToTheSameFunction) {
  auto rng = test::make_rng(702);
  test::RandomOptions o;
  o.max_d = 4;
  o.max_r = 1;
  o.max_p = 0;
  int found = 0;
  for (int i = 0; i < 3000; ++i) {
    AxeLayout l = test::random_layout(rng, o);
    AxeLayout inner = test::random_layout(rng, o);
    int rank = static_cast<int>(test::pick(rng, 1, 2));
    auto shape = test::random_shape(rng, l.size(), rank);
    auto is = test::random_shape(rng, inner.size(), rank);
    bool divides = true;
    for (int k = 0; k < rank; ++k) divides = divides && shape[k] % is[k] == 0;
    if (!divides || l.size() % inner.size() != 0) continue;
    auto rec = tile_of(l, shape, inner, is);
    if (!rec) continue;
    ++found;
    std::vector<std::int64_t> os;
    for (int k = 0; k < rank; ++k) os.push_back(shape[k] / is[k]);
    ASSERT_TRUE(test::SameFunction(tile(*rec, os, inner, is), l));
  }
  EXPECT_GT(found, 5);
}

}  // namespace
}  // namespace axe
