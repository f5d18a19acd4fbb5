// tile_to_shape.
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
IntTuple T(std::string_view s) {
  return parse_int_tuple(s);
}

TEST(TileToShape, Examples) {
  EXPECT_EQ(tile_to_shape(L("(2,2):(1,2)"), T("(4,6)")), L("((2,2),(2,3)):((1,4),(2,8))"));
  // A rank-1 block is padded with 1:0 to the target rank.
  EXPECT_EQ(tile_to_shape(L("2:1"), T("(4,6)")), L("((2,2),(1,6)):((1,2),(0,4))"));
  EXPECT_EQ(tile_to_shape(L("(2,2):(2,1)"), T("(2,2)")), L("((2,1),(2,1)):((2,0),(1,0))"));
}

TEST(TileToShape, Rejects) {
  EXPECT_THROW(tile_to_shape(L("(3,2):(1,3)"), T("(4,6)")), Error);      // 3 does not divide 4
  EXPECT_THROW(tile_to_shape(L("(2,2,2):(1,2,4)"), T("(4,6)")), Error);  // rank too large
  EXPECT_THROW(tile_to_shape(L("(0,2):(1,1)"), T("(4,6)")), Error);
}

// Property: compatible(target, shape(result)) and a compact block gives a bijection onto
// [0, size(target)).
TEST(TileToShape, RepeatsBlockToTarget) {
  auto rng = axe::test::make_rng(801);
  for (int t = 0; t < 1500; ++t) {
    auto kind = testing::uniform(rng, 0, 1) ? testing::StrideKind::kColMajor
                                            : testing::StrideKind::kPermuted;
    Layout block = testing::random_layout(rng, kind, 2, 64);
    std::size_t r = std::max<std::size_t>(rank(block), testing::uniform(rng, 1, 3));
    std::vector<IntTuple> target;
    for (std::size_t k = 0; k < r; ++k) {
      std::int64_t bk = k < rank(block) ? size(block.mode(k)) : 1;
      target.emplace_back(bk * testing::uniform(rng, 1, 4));
    }
    IntTuple trg = r == 1 && !block.shape().is_tuple() ? target[0] : IntTuple::tuple(target);
    Layout tiled = tile_to_shape(block, trg);
    SCOPED_TRACE(to_string(block) + " to " + to_string(trg) + " = " + to_string(tiled));
    ASSERT_TRUE(compatible(trg, tiled.shape()));  // C++'s @post
    ASSERT_EQ(size(tiled), product(trg));
    ASSERT_TRUE(testing::is_injective(tiled));
    ASSERT_EQ(static_cast<std::int64_t>(*testing::image(tiled).rbegin()), size(tiled) - 1);
  }
}

}  // namespace
}  // namespace axe::cute
