// logical_product, zipped_product, tiled_product, blocked_product, raked_product.
#include <gtest/gtest.h>

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

TEST(LogicalProduct, Examples) {
  EXPECT_EQ(logical_product(L("2:1"), Tl("3:1")), L("(2,3):(1,2)"));
  // The example of the CuTe docs: a 2x2 row-major block repeated 6 times.
  EXPECT_EQ(logical_product(L("(2,2):(4,1)"), Tl("6:1")), L("((2,2),(2,3)):((4,1),(2,8))"));
  EXPECT_EQ(logical_product(L("3:0"), Tl("4:0")), L("(3,4):(0,0)"));
  EXPECT_EQ(logical_product(L("(2,3):(1,2)"), Tl("<2:1,4:1>")),
            L("((2,2),(3,(2,2))):((1,2),(2,(1,6)))"));
  EXPECT_EQ(logical_product(L("(2,3):(1,2)"), Tiler::none()), L("(2,3):(1,2)"));
}

TEST(ZippedTiledProduct, Examples) {
  EXPECT_EQ(zipped_product(L("(2,3):(1,2)"), Tl("<2:1,4:1>")),
            L("((2,3),(2,(2,2))):((1,2),(2,(1,6)))"));
  EXPECT_EQ(tiled_product(L("(2,3):(1,2)"), Tl("<2:1,4:1>")), L("((2,3),2,(2,2)):((1,2),2,(1,6))"));
  // A rank-1 rest mode is kept (C++): ((2),(6)), where pycute unwraps to ((2),6).
  EXPECT_EQ(tiled_product(L("(2):(1)"), Tl("(6):(1)")), L("((2),(6)):((1),(2))"));
}

TEST(BlockedRakedProduct, Examples) {
  EXPECT_EQ(blocked_product(L("(2,2):(1,2)"), L("(2,3):(1,2)")), L("((2,2),(2,3)):((1,4),(2,8))"));
  EXPECT_EQ(raked_product(L("(2,2):(1,2)"), L("(2,3):(1,2)")), L("((2,2),(3,2)):((4,1),(8,2))"));
  // Ranks are padded with 1:0 modes.
  EXPECT_EQ(blocked_product(L("(2,2):(1,2)"), L("3:1")), L("((2,3),(2,1)):((1,4),(2,0))"));
  // An int mode pairs with a rank-1 mode as (A_0, B_0).
  EXPECT_EQ(blocked_product(L("8:1"), L("(3):(1)")), L("((8,3)):((1,8))"));
  EXPECT_THROW(blocked_product(L("8:1"), Tl("<3:1>")), Error);
}

TEST(LogicalProduct, Rejects) {
  EXPECT_THROW(logical_product(L("(2,3):(1,2)"), Tl("<2,3,4>")), Error);
  EXPECT_THROW(logical_product(L("(2,2):(1,1)"), Tl("2:1")), Error);        // non-injective block
  EXPECT_THROW(logical_product(L("(2,2):(1,2)"), Tl("<2:1,3:1>")), Error);  // shape divisibility
}

Layout random_injective(std::mt19937_64& rng, int max_depth, std::int64_t max_size) {
  auto kind = static_cast<testing::StrideKind>(testing::uniform(rng, 0, 2));  // col, perm, gap
  return testing::random_layout(rng, kind, max_depth, max_size);
}

Layout random_compact(std::mt19937_64& rng, int max_depth, std::int64_t max_size) {
  auto kind = static_cast<testing::StrideKind>(testing::uniform(rng, 0, 1));  // col, perm
  return testing::random_layout(rng, kind, max_depth, max_size);
}

// Property: R = logical_product(A, B) has rank 2, R0 == A, compatible(B, R1), size(A)*size(B)
// elements, and is injective for a compact block A and an injective B. (For a block with gaps
// the complement has several modes and C++ accepts tilers that straddle them through the weak
// divisibility condition, so R need not be injective there; see GappedBlockKeepsLaws.)
TEST(LogicalProduct, RepeatsBlockOverTiler) {
  auto rng = axe::test::make_rng(501);
  int checked = 0;
  for (int t = 0; t < 2000; ++t) {
    Layout a = random_compact(rng, 2, 64);
    Layout b = random_injective(rng, 2, 32);
    Layout r;
    try {
      r = logical_product(a, Tiler(b));
    } catch (const Error& e) {
      ASSERT_NE(std::string(e.what()).find("Divisibility"), std::string::npos) << e.what();
      continue;
    }
    ++checked;
    SCOPED_TRACE(to_string(a) + " x " + to_string(b) + " = " + to_string(r));
    ASSERT_EQ(rank(r), 2u);
    ASSERT_EQ(r.mode(0), a);
    ASSERT_TRUE(compatible(b.shape(), r.mode(1).shape()));
    ASSERT_EQ(size(r), size(a) * size(b));
    ASSERT_TRUE(testing::is_injective(r));
    // zipped/tiled products of a layout tiler are the same function.
    ASSERT_EQ(zipped_product(a, Tiler(b)), r);
    ASSERT_EQ(coalesce(tiled_product(a, Tiler(b))), coalesce(r));
  }
  EXPECT_GT(checked, 1000);
}

TEST(LogicalProduct, GappedBlockKeepsLaws) {
  auto rng = axe::test::make_rng(503);
  int checked = 0;
  for (int t = 0; t < 2000; ++t) {
    Layout a = random_injective(rng, 2, 64);
    Layout b = random_injective(rng, 2, 32);
    Layout r;
    try {
      r = logical_product(a, Tiler(b));
    } catch (const Error& e) {
      ASSERT_NE(std::string(e.what()).find("Divisibility"), std::string::npos) << e.what();
      continue;
    }
    ++checked;
    SCOPED_TRACE(to_string(a) + " x " + to_string(b) + " = " + to_string(r));
    ASSERT_EQ(rank(r), 2u);
    ASSERT_EQ(r.mode(0), a);
    ASSERT_TRUE(compatible(b.shape(), r.mode(1).shape()));
  }
  EXPECT_GT(checked, 1000);
}

// blocked/raked products: rank max(rank A, rank B), size(A)*size(B), the same set of offsets as
// the logical product, and mode i of the result is (A_i, B_i) resp. (B_i, A_i) in size.
TEST(BlockedRakedProduct, ZipBlockAndTiler) {
  auto rng = axe::test::make_rng(502);
  int checked = 0;
  for (int t = 0; t < 2000; ++t) {
    Layout a = random_compact(rng, 2, 64);
    Layout b = random_injective(rng, 2, 32);
    Layout blocked;
    Layout raked;
    try {
      blocked = blocked_product(a, b);
      raked = raked_product(a, b);
    } catch (const Error&) {
      continue;
    }
    ++checked;
    SCOPED_TRACE(to_string(a) + " x " + to_string(b));
    std::size_t r = std::max(rank(a), rank(b));
    ASSERT_EQ(rank(blocked), r);
    ASSERT_EQ(rank(raked), r);
    ASSERT_EQ(size(blocked), size(a) * size(b));
    ASSERT_EQ(size(raked), size(a) * size(b));
    ASSERT_TRUE(testing::is_injective(blocked));
    ASSERT_TRUE(testing::is_injective(raked));
    ASSERT_EQ(testing::image(blocked), testing::image(raked));
    for (std::size_t k = 0; k < r; ++k) {
      std::int64_t ak = k < rank(a) ? size(a.mode(k)) : 1;
      std::int64_t bk = k < rank(b) ? size(b.mode(k)) : 1;
      ASSERT_EQ(size(blocked.mode(k)), ak * bk);
      ASSERT_EQ(size(blocked.mode(k).mode(0)), ak);  // the block is the fast part of the mode
      ASSERT_EQ(size(raked.mode(k).mode(0)), bk);    // the tiler is the fast part of the mode
    }
  }
  EXPECT_GT(checked, 1000);
}

}  // namespace
}  // namespace axe::cute
