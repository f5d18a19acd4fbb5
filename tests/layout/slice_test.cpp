// Slice by a region: slice(c) == l(begin + c), no-wrap and symmetric one-wrap rules.
#include <gtest/gtest.h>

#include "layout/tile_laws.hpp"
#include "support/test_support.hpp"

namespace axe {
namespace {

using test::L;

// slice(c) and l(begin + c) have the same image for every c in the region.
::testing::AssertionResult AgreesOnRegion(const AxeLayout& l, std::span<const std::int64_t> shape,
                                          std::span<const Range> region, const AxeLayout& s) {
  std::vector<std::int64_t> sub;
  for (const Range& r : region) sub.push_back(r.end - r.begin);
  std::int64_t n = 1;
  for (auto e : sub) n *= e;
  if (s.size() != n) return ::testing::AssertionFailure() << "size " << s.size() << " != " << n;
  for (std::int64_t y = 0; y < n; ++y) {
    auto c = test::coord_of_index(y, sub);
    for (std::size_t k = 0; k < c.size(); ++k) c[k] += region[k].begin;
    if (test::image(s, y) != test::image(l, test::row_major(c, shape))) {
      return ::testing::AssertionFailure() << to_string(s) << " differs from " << to_string(l)
                                           << " at region index " << y;
    }
  }
  return ::testing::AssertionSuccess();
}

TEST(Slice, PaperVector) {
  AxeLayout l = L("S[(2,8,3,8):(192,8,64,1)]");
  std::int64_t shape[] = {16, 24};
  Range region[] = {{0, 8}, {8, 24}};
  auto s = slice(l, shape, region);
  ASSERT_TRUE(s);
  EXPECT_EQ(to_string(*s), "S[(8,2,8):(8,64,1)] + 64");
  EXPECT_TRUE(AgreesOnRegion(l, shape, region, *s));
}

TEST(Slice, NoWrapKeepsReplicasAndMovesTheCornerIntoTheOffset) {
  AxeLayout l = L("S[(4,6):(1@gpu,4)] + R[2:1@x] + 1@gpu");
  std::int64_t shape[] = {4, 6};
  Range region[] = {{1, 3}, {2, 5}};
  auto s = slice(l, shape, region);
  ASSERT_TRUE(s);
  // corner (1,2): gpu 1+1, m 8.
  EXPECT_EQ(to_string(*s), "S[(2,3):(1@gpu,4)] + R[2:1@x] + 2@gpu + 8");
  EXPECT_TRUE(AgreesOnRegion(l, shape, region, *s));
}

TEST(Slice, SymmetricOneWrap) {
  // Elements 4..11 of (2:100, 8:1): 4..7 then 100..103 -> (2 : 100 - 4, 4 : 1) + 4.
  AxeLayout l = L("S[(2,8):(100,1)]");
  std::int64_t shape[] = {16};
  Range region[] = {{4, 12}};
  auto s = slice(l, shape, region);
  ASSERT_TRUE(s);
  EXPECT_EQ(to_string(*s), "S[(2,4):(96,1)] + 4");
  EXPECT_TRUE(AgreesOnRegion(l, shape, region, *s));
}

TEST(Slice, NulloptWhenNeitherRuleApplies) {
  std::int64_t shape[] = {16};
  Range uneven[] = {{5, 12}}, twice[] = {{4, 20}};
  EXPECT_FALSE(slice(L("S[(2,8):(100,1)]"), shape, uneven));
  std::int64_t shape32[] = {32};
  EXPECT_FALSE(slice(L("S[(4,8):(100,1)]"), shape32, twice));
  // The carry lands on two axes at once: not one iter.
  Range wrap[] = {{4, 12}};
  EXPECT_FALSE(slice(L("S[(2,8):(1@gpu,1)]"), shape, wrap));
  // The shape does not group.
  std::int64_t shape23[] = {2, 3};
  Range r23[] = {{0, 1}, {0, 3}};
  EXPECT_FALSE(slice(L("S[(3,2):(1@x,1)]"), shape23, r23));
}

TEST(Slice, BadRegionIsAnError) {
  AxeLayout l = L("S[16:1]");
  std::int64_t shape[] = {16}, bad_shape[] = {15};
  Range empty[] = {{3, 3}}, out[] = {{0, 17}}, neg[] = {{-1, 2}}, ok[] = {{0, 4}};
  Range two[] = {{0, 1}, {0, 1}};
  EXPECT_THROW(slice(l, shape, empty), Error);
  EXPECT_THROW(slice(l, shape, out), Error);
  EXPECT_THROW(slice(l, shape, neg), Error);
  EXPECT_THROW(slice(l, shape, two), Error);
  EXPECT_THROW(slice(l, bad_shape, ok), Error);
}

TEST(Slice, FullRegionIsTheSameFunction) {
  auto rng = test::make_rng(901);
  for (int i = 0; i < 1000; ++i) {
    AxeLayout l = test::random_layout(rng);
    auto shape = test::random_shape(rng, l.size(), static_cast<int>(test::pick(rng, 1, 3)));
    std::vector<Range> region;
    for (auto e : shape) region.push_back({0, e});
    auto s = slice(l, shape, region);
    if (!group(l, shape)) continue;
    ASSERT_TRUE(s) << to_string(l);
    ASSERT_TRUE(test::SameFunction(*s, l));
  }
}

TEST(Slice, SuccessfulSliceAgreesWithOriginalOnRegion) {
  auto rng = test::make_rng(902);
  int ok = 0, wraps = 0;
  for (int i = 0; i < 4000; ++i) {
    AxeLayout l = test::random_layout(rng);
    int rank = static_cast<int>(test::pick(rng, 1, 3));
    auto shape = test::random_shape(rng, l.size(), rank);
    std::vector<Range> region;
    for (auto e : shape) {
      std::int64_t b = test::pick(rng, 0, e - 1), en = test::pick(rng, b + 1, e);
      region.push_back({b, en});
    }
    auto s = slice(l, shape, region);
    if (!s) continue;
    ++ok;
    if (s->shard().size() > l.shard().size()) ++wraps;
    ASSERT_TRUE(AgreesOnRegion(l, shape, region, *s)) << to_string(l);
  }
  EXPECT_GT(ok, 1500);
  EXPECT_GT(wraps, 10);
}

}  // namespace
}  // namespace axe
