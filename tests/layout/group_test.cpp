// Group by a shape (Alg. 1).
#include <gtest/gtest.h>

#include "layout/layout_test_util.hpp"
#include "support/test_support.hpp"

namespace axe {
namespace {

using test::L;

TEST(Group, PaperVectors) {
  std::int64_t s1[] = {64, 64};
  auto g = group(L("S[(8,8,8,8):(512,8,64,1)]"), s1);
  ASSERT_TRUE(g);
  EXPECT_EQ(to_string(g->layout), "S[(8,8,8,8):(512,8,64,1)]");
  EXPECT_EQ(g->boundaries, (std::vector<std::size_t>{0, 2, 4}));

  std::int64_t s2[] = {2, 12};
  g = group(L("S[(4,6):(6,1)]"), s2);
  ASSERT_TRUE(g);
  EXPECT_EQ(to_string(g->layout), "S[(2,2,6):(12,6,1)]");
  EXPECT_EQ(g->boundaries, (std::vector<std::size_t>{0, 1, 3}));
}

TEST(Group, KeepsReplicasPartialsAndOffsets) {
  std::int64_t s[] = {3, 4};
  auto g = group(L("S[12:1@x] + R[2:5@y] + P<min>[2:1@gpu] + 7"), s);
  ASSERT_TRUE(g);
  EXPECT_EQ(to_string(g->layout), "S[(3,4):(4@x,1@x)] + R[2:5@y] + P<min>[2:1@gpu] + 7");
}

TEST(Group, UnitDimsGetEmptyBlocks) {
  std::int64_t s[] = {1, 6, 1};
  auto g = group(L("S[(2,3):(3,1)]"), s);
  ASSERT_TRUE(g);
  EXPECT_EQ(g->boundaries, (std::vector<std::size_t>{0, 0, 2, 2}));
}

TEST(Group, MergesWhenTheGivenItersDoNotSplit) {
  std::int64_t s[] = {3, 2};
  auto g = group(L("S[(2,3):(3,1)]"), s);
  ASSERT_TRUE(g);
  EXPECT_EQ(to_string(g->layout), "S[(3,2):(2,1)]");
}

TEST(Group, NulloptWhenAnExtentDoesNotSplit) {
  std::int64_t s[] = {4, 3};
  EXPECT_FALSE(group(L("S[(6,2):(1,6)]"), s));
  std::int64_t s2[] = {3, 2};
  EXPECT_FALSE(group(L("S[(2,3):(1@x,1)]"), s2));
}

TEST(Group, ShapeMustMatchSize) {
  std::int64_t s[] = {4, 4}, z[] = {0, 12}, n[] = {-2, -6};
  EXPECT_THROW(group(L("S[12:1]"), s), Error);
  EXPECT_THROW(group(L("S[12:1]"), z), Error);
  EXPECT_THROW(group(L("S[12:1]"), n), Error);
}

TEST(Group, PreservesFunctionAndBlocksMultiplyToShape) {
  auto rng = test::make_rng(501);
  int grouped = 0;
  for (int i = 0; i < 3000; ++i) {
    AxeLayout l = test::random_layout(rng);
    int rank = static_cast<int>(test::pick(rng, 1, 3));
    auto shape = test::random_shape(rng, l.size(), rank);
    auto g = group(l, shape);
    if (!g) continue;
    ++grouped;
    ASSERT_TRUE(test::SameFunction(l, g->layout));
    ASSERT_EQ(g->boundaries.size(), shape.size() + 1);
    ASSERT_EQ(g->boundaries.front(), 0u);
    ASSERT_EQ(g->boundaries.back(), g->layout.shard().size());
    for (std::size_t k = 0; k < shape.size(); ++k) {
      std::int64_t p = 1;
      for (std::size_t i2 = g->boundaries[k]; i2 < g->boundaries[k + 1]; ++i2) {
        p *= g->layout.shard()[i2].extent;
      }
      ASSERT_EQ(p, shape[k]) << to_string(l) << " block " << k;
    }
  }
  EXPECT_GT(grouped, 1500);
}

// Oracle: grouping by the layout's own iter extents always succeeds.
TEST(Group, ByOwnExtentsAlwaysSucceeds) {
  auto rng = test::make_rng(502);
  for (int i = 0; i < 2000; ++i) {
    AxeLayout l = test::random_layout(rng);
    std::vector<std::int64_t> shape;
    for (const Iter& it : l.shard()) shape.push_back(it.extent);
    auto g = group(l, shape);
    ASSERT_TRUE(g) << to_string(l);
    ASSERT_EQ(g->layout, l);
  }
}

}  // namespace
}  // namespace axe
