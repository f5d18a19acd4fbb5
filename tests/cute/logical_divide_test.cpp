// logical_divide, zipped_divide, tiled_divide.
#include <gtest/gtest.h>

#include <algorithm>

#include "axe/core/error.hpp"
#include "axe/cute/layout.hpp"
#include "random_layout.hpp"
#include "support/test_support.hpp"

namespace axe::cute {
namespace {

Layout L(std::string_view s) {
  return parse_layout(s);
}
Tiler Tl(std::string_view s) {
  return parse_tiler(s);
}

std::vector<std::int64_t> sorted_values(const Layout& l) {
  std::vector<std::int64_t> v;
  for (std::int64_t i = 0; i < size(l); ++i) v.push_back(l(i));
  std::sort(v.begin(), v.end());
  return v;
}

TEST(LogicalDivide, Examples) {
  EXPECT_EQ(logical_divide(L("6:2"), Tl("2:1")), L("(2,3):(2,4)"));
  EXPECT_EQ(logical_divide(L("(4,2,3):(2,1,8)"), Tl("4:2")), L("((2,2),(2,3)):((4,1),(2,8))"));
  EXPECT_EQ(logical_divide(L("16:1"), Tl("4")), L("(4,4):(1,4)"));
  // By mode: untiled modes are kept.
  EXPECT_EQ(logical_divide(L("(4,6,5):(1,4,24)"), Tl("<2,3:2>")),
            L("((2,2),(3,2),5):((1,2),(8,4),24)"));
  EXPECT_EQ(logical_divide(L("(4,6):(1,4)"), Tl("<_,3>")), L("(4,(3,2)):(1,(4,12))"));
  EXPECT_EQ(logical_divide(L("(4,6):(1,4)"), Tiler::none()), L("(4,6):(1,4)"));
  // An integer tile 1 is make_layout(1) == 1:0 in C++, so the tile mode has stride 0.
  EXPECT_EQ(logical_divide(L("4:2"), Tl("1")), L("(1,4):(0,2)"));
  EXPECT_EQ(logical_divide(L("4:2"), Tl("1:1")), L("(1,4):(2,2)"));
}

TEST(ZippedDivide, Examples) {
  EXPECT_EQ(zipped_divide(L("(4,6):(1,4)"), Tl("<2:1,3:1>")), L("((2,3),(2,2)):((1,4),(2,12))"));
  // The example of the CuTe docs.
  EXPECT_EQ(zipped_divide(L("(9,(4,8)):(59,(13,1))"), Tl("<3:3,(2,4):(1,8)>")),
            L("((3,(2,4)),(3,(2,2))):((177,(13,2)),(59,(26,1)))"));
  // A layout tiler: zipped_divide is logical_divide.
  EXPECT_EQ(zipped_divide(L("16:1"), Tl("4:1")), L("(4,4):(1,4)"));
}

TEST(TiledDivide, Examples) {
  EXPECT_EQ(tiled_divide(L("(4,6):(1,4)"), Tl("<2:1,3:1>")), L("((2,3),2,2):((1,4),2,12)"));
  EXPECT_EQ(tiled_divide(L("(9,(4,8)):(59,(13,1))"), Tl("<3:3,(2,4):(1,8)>")),
            L("((3,(2,4)),3,(2,2)):((177,(13,2)),59,(26,1))"));
  EXPECT_EQ(tiled_divide(L("(4,6):(1,4)"), Tl("<2>")), L("((2),2,6):((1),2,4)"));
  // A rank-1 rest mode is kept as is (C++), not unwrapped to 4 (pycute).
  EXPECT_EQ(zipped_divide(L("(8):(1)"), Tl("<2>")), L("((2),(4)):((1),(2))"));
  EXPECT_EQ(tiled_divide(L("(8):(1)"), Tl("<2>")), L("((2),(4)):((1),(2))"));
}

TEST(LogicalDivide, Rejects) {
  EXPECT_THROW(logical_divide(L("(4,6):(1,4)"), Tl("<2,3,1>")), Error);  // too many modes
  EXPECT_THROW(logical_divide(L("(6,2):(1,7)"), Tl("2:8")), Error);      // stride divisibility
  EXPECT_THROW(zipped_divide(L("8:1"), Tl("<_>")), Error);  // C++ zip2_by needs a rank-2 mode
}

// Property: for a random A and an injective tile B of A's domain, logical_divide(A, B) is
// rank 2, its tile mode is A o B, and it is a re-indexing of A (same multiset of offsets).
TEST(LogicalDivide, TileModeIsCompositionAndResultPermutesA) {
  auto rng = axe::test::make_rng(401);
  for (int t = 0; t < 2000; ++t) {
    Layout a = testing::random_layout(rng, testing::random_kind(rng), 3, 512);
    Layout b = testing::digit_tile(rng, make_layout(coalesce(a).shape()), false);
    Layout r = logical_divide(a, Tiler(b));
    SCOPED_TRACE(to_string(a) + " / " + to_string(b) + " = " + to_string(r));
    ASSERT_EQ(rank(r), 2u);
    ASSERT_TRUE(compatible(b.shape(), r.mode(0).shape()));
    for (std::int64_t i = 0; i < size(b); ++i) ASSERT_EQ(r.mode(0)(i), a(b(i)));
    ASSERT_EQ(sorted_values(r), sorted_values(a));
    // zipped/tiled divide of a layout tiler are the same layout, regrouped only by tiled_divide.
    ASSERT_EQ(zipped_divide(a, Tiler(b)), r);
    Layout td = tiled_divide(a, Tiler(b));
    ASSERT_EQ(coalesce(td), coalesce(r));
  }
}

// By-mode divide with a tuple of tiles: each tiled mode satisfies the layout-tiler law, the others
// are unchanged, and zipped_divide gathers the tiles into mode 0.
TEST(LogicalDivide, ByModeTilerDividesEachMode) {
  auto rng = axe::test::make_rng(402);
  for (int t = 0; t < 1000; ++t) {
    Layout a = testing::random_layout(rng, testing::random_kind(rng), 2, 512);
    if (!a.shape().is_tuple()) continue;
    std::size_t n =
        static_cast<std::size_t>(testing::uniform(rng, 1, static_cast<std::int64_t>(rank(a))));
    std::vector<Tiler> tiles;
    for (std::size_t k = 0; k < n; ++k) {
      tiles.push_back(
          Tiler(testing::digit_tile(rng, make_layout(coalesce(a.mode(k)).shape()), false)));
    }
    Tiler tiler = Tiler::tuple(tiles);
    Layout r = logical_divide(a, tiler);
    SCOPED_TRACE(to_string(a) + " / " + to_string(tiler) + " = " + to_string(r));
    ASSERT_EQ(rank(r), rank(a));
    for (std::size_t k = 0; k < n; ++k) ASSERT_EQ(r.mode(k), logical_divide(a.mode(k), tiles[k]));
    for (std::size_t k = n; k < rank(a); ++k) ASSERT_EQ(r.mode(k), a.mode(k));
    Layout z = zipped_divide(a, tiler);
    ASSERT_EQ(rank(z), 2u);
    ASSERT_EQ(rank(z.mode(0)), n);
    for (std::size_t k = 0; k < n; ++k) ASSERT_EQ(z.mode(0).mode(k), r.mode(k).mode(0));
    ASSERT_EQ(sorted_values(z), sorted_values(a));
  }
}

}  // namespace
}  // namespace axe::cute
