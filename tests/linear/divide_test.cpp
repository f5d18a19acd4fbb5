// divide_left / divide_right, quotient, num_consecutive_in_out.
#include <gtest/gtest.h>

#include "linear_test_util.hpp"

namespace axe::test::linear {
namespace {

using namespace axe::linear;
using Names = std::vector<std::string>;

TEST(DivideLeft, TV8_Examples) {
  auto l1 = LL("{in1: [(1,1),(2,2),(0,8),(0,4)], in2: [(0,2),(0,1)]} -> [out1:4, out2:16]");
  auto l2 = LL("{in1: [(1,1),(2,2)], in2: [(0,2),(0,1)]} -> [out1:4, out2:4]");
  auto l3 = LL("{in1: [(0,2),(0,1)], in2: []} -> [out1:1, out2:4]");
  EXPECT_EQ(divide_left(l1, l2), l3);
  EXPECT_EQ(divide_left(LinearLayout::identity_1d(8, "in", "out"), LinearLayout::identity_1d(4, "in", "out")),
            LinearLayout::identity_1d(2, "in", "out"));
  EXPECT_EQ(divide_right(LinearLayout::identity_1d(8, "in", "out"), LinearLayout::identity_1d(4, "in", "out")),
            LinearLayout::identity_1d(2, "in", "out"));
  // Not of block form: the first basis is not the factor's.
  EXPECT_EQ(divide_left(LL("{in: [2,1]} -> [out:4]"), LinearLayout::identity_1d(2, "in", "out")),
            std::nullopt);
}

// Law: divide_left(b * c, b) exists and b * it == b * c (the quotient carries all dims of the
// product, so it equals c only up to size-1 dims); likewise divide_right(c * b, b).
TEST(DivideLeft, ProductThenDivide_GivesTheFactorBack) {
  auto rng = make_rng(0xd1);
  for (int trial = 0; trial < 300; ++trial) {
    auto b = random_layout(rng, trial % 3, {"r", "l"}, {"d1", "d0"}, 2);
    auto c = random_layout(rng, (trial + 1) % 3, {"r", "l"}, {"d1", "d0"}, 2);
    auto bc = b * c;
    auto q = divide_left(bc, b);
    ASSERT_TRUE(q.has_value()) << to_string(b) << " * " << to_string(c);
    auto p = b * *q;
    ASSERT_EQ(transpose_outs(transpose_ins(p, bc.in_names()), bc.out_names()), bc);
    auto cb = c * b;
    auto r = divide_right(cb, b);
    ASSERT_TRUE(r.has_value()) << to_string(c) << " * " << to_string(b);
    auto pr = *r * b;
    ASSERT_EQ(transpose_outs(transpose_ins(pr, cb.in_names()), cb.out_names()), cb);
  }
}

TEST(Quotient, DropsTrivialDims) {
  auto l = LL("{reg: [(1,0)], lane: [(0,1)]} -> [reg:2, lane:2]");
  EXPECT_TRUE(is_trivial_over(l, Names{"lane"}));
  EXPECT_EQ(quotient(l, Names{"lane"}), LL("{reg: [1]} -> [reg:2]"));
  auto mixed = LL("{reg: [(1,1)], lane: [(0,1)]} -> [reg:2, lane:2]");
  EXPECT_EQ(quotient(mixed, Names{"lane"}), std::nullopt);
  EXPECT_EQ(quotient(l, Names{"warp"}), std::nullopt);
}

TEST(NumConsecutive, TV10_Examples) {
  EXPECT_EQ(num_consecutive_in_out(LinearLayout::identity_1d(4, "in", "out")), 4);
  EXPECT_EQ(num_consecutive_in_out(LL("{in: [1,2,4,9]} -> [out:16]")), 1);
  EXPECT_EQ(num_consecutive_in_out(LL("{in: [1,2,4,10]} -> [out:16]")), 2);
  EXPECT_EQ(num_consecutive_in_out(LL("{in: [1,4,2]} -> [out:8]")), 2);
  EXPECT_EQ(num_consecutive_in_out(LL("{in: [1,2,4], in2: [8,18]} -> [out:32]")), 2);
  EXPECT_EQ(num_consecutive_in_out(LinearLayout::zeros_1d(4, "in", "o1") *
                                   LinearLayout::identity_1d(4, "in", "o2")),
            1);
}

// Law (brute force): with V = num_consecutive_in_out(l), for every input whose first-dim value is
// a multiple of V, the next V values of the first input dim give V consecutive values of the first
// output dim (the others unchanged).
TEST(NumConsecutive, RunsAreConsecutive_BruteForce) {
  auto rng = make_rng(0xcc);
  for (int trial = 0; trial < 200; ++trial) {
    auto l = random_layout(rng, trial % 2 ? 1 : 0);
    if (l.in_dims().empty() || l.out_dims().empty()) continue;
    std::int64_t v = num_consecutive_in_out(l);
    auto o0 = static_cast<std::uint64_t>(l.out_dims()[0].size() - 1);
    for (std::uint64_t x = 0; x < (std::uint64_t{1} << l.total_in_bits()); x += static_cast<std::uint64_t>(v)) {
      std::uint64_t base = l.apply_flat(x);
      for (std::int64_t k = 1; k < v; ++k) {
        std::uint64_t y = l.apply_flat(x + static_cast<std::uint64_t>(k));
        ASSERT_EQ(y & ~o0, base & ~o0) << to_string(l);
        ASSERT_EQ((y & o0), (base & o0) + static_cast<std::uint64_t>(k)) << to_string(l);
      }
    }
  }
}

}  // namespace
}  // namespace axe::test::linear
