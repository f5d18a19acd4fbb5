// free_variable_masks, rank, broadcast masks and the duplicate-free layout.
#include <gtest/gtest.h>

#include <bit>
#include <set>

#include "linear_test_util.hpp"

namespace axe::test::linear {
namespace {

using namespace axe::linear;
using Masks = std::vector<std::pair<std::string, std::uint64_t>>;

TEST(FreeVariables, TV7_Examples) {
  auto l = LinearLayout::identity_1d(2, "in", "out") * LinearLayout::zeros_1d(4, "in", "out") *
           LinearLayout::identity_1d(4, "in", "out") * LinearLayout::zeros_1d(2, "in", "out");
  EXPECT_EQ(free_variable_masks(l), (Masks{{"in", 0b100110}}));
  EXPECT_EQ(free_variable_masks(LL("{in1: [(1,1),(2,2),(0,0)], in2: [(1,0),(0,1),(2,0)]} -> [a:4, b:4]")),
            (Masks{{"in1", 0b100}, {"in2", 0b10}}));
  // The nuance: [1,1] has mask 0b10 though flipping bit 1 alone changes the output.
  EXPECT_EQ(free_variable_masks(LL("{in: [1,1]} -> [out:2]")), (Masks{{"in", 0b10}}));
}

TEST(Duplicates, BroadcastBitsAndDuplicateFreeLayout) {
  auto l = LL("{lane: [(0,1),(0,0),(1,0)], warp: [(0,0)]} -> [d1:2, d0:2]");
  EXPECT_EQ(broadcast_masks(l), (Masks{{"lane", 0b010}, {"warp", 0b1}}));
  EXPECT_EQ(remove_duplicates(l), LL("{lane: [(0,1),(1,0)], warp: []} -> [d1:2, d0:2]"));
}

// Law: rank + free bits == input bits; for distributed layouts the free bits are the zero
// columns; remove_duplicates is injective with the same image.
TEST(FreeVariables, RankPlusFreeBits_IsInputBits) {
  auto rng = make_rng(0xfb);
  for (int trial = 0; trial < 300; ++trial) {
    auto l = random_layout(rng, trial % 3);
    int free = 0;
    for (const auto& [n, m] : free_variable_masks(l)) free += std::popcount(m);
    ASSERT_EQ(rank(l) + free, l.total_in_bits()) << to_string(l);
    bool distributed = true;
    std::set<std::uint64_t> seen;
    for (auto c : l.columns()) {
      if (c && (std::popcount(c) != 1 || !seen.insert(c).second)) distributed = false;
    }
    if (distributed) {
      EXPECT_EQ(free_variable_masks(l), broadcast_masks(l)) << to_string(l);
    }
    auto d = remove_duplicates(l);
    EXPECT_TRUE(is_injective(d)) << to_string(l);
    std::set<std::uint64_t> img_l, img_d;
    for (std::uint64_t x = 0; x < (std::uint64_t{1} << l.total_in_bits()); ++x) img_l.insert(l.apply_flat(x));
    for (std::uint64_t x = 0; x < (std::uint64_t{1} << d.total_in_bits()); ++x) img_d.insert(d.apply_flat(x));
    EXPECT_EQ(img_l, img_d) << to_string(l);
  }
}

}  // namespace
}  // namespace axe::test::linear
