// invert_and_compose, invert, pseudo_invert.
#include <gtest/gtest.h>

#include "axe/core/error.hpp"
#include "linear_test_util.hpp"

namespace axe::test::linear {
namespace {

using axe::linear::compose;
using axe::linear::invert;
using axe::linear::invert_and_compose;
using axe::linear::pseudo_invert;

TEST(InvertAndCompose, TV5_Examples) {
  auto l1 = LL("{in1: [2,1,4]} -> [out:8]");
  auto l2 = LL("{in2: [4,1,2]} -> [out:8]");
  auto c = invert_and_compose(l1, l2);
  EXPECT_EQ(c, LL("{in1: [4,2,1]} -> [in2:8]"));
  EXPECT_EQ(compose(c, l2), l1);
  // Non-injective outer: the minimal solution never uses the broadcast bit.
  auto b = LL("{in2: [0,2,1,4]} -> [out:8]");
  auto cb = invert_and_compose(l1, b);
  EXPECT_EQ(cb, LL("{in1: [2,4,8]} -> [in2:16]"));
  EXPECT_FALSE(axe::linear::is_surjective(cb));
  EXPECT_EQ(invert_and_compose(LL("{in: [1,2,4]} -> [out:8]"), LL("{in: [0,4,1,2]} -> [out:8]")),
            LL("{in: [4,8,2]} -> [in:16]"));
  EXPECT_EQ(invert_and_compose(LL("{in1: [1,2,4], in2: [0]} -> [out:8]"),
                               LL("{in3: [1,2,4], in4: [0]} -> [out:8]")),
            LL("{in1: [(1,0),(2,0),(4,0)], in2: [(0,0)]} -> [in3:8, in4:2]"));
}

TEST(InvertAndCompose, TV17_Permutation) {
  // S = {register:[1], lane:[2,4]}, T = {register:[4], lane:[1,2]}:
  // P = S.invertAndCompose(T) = {register: [(0,1)], lane: [(0,2),(1,0)]}.
  auto s = LL("{register: [1], lane: [2,4]} -> [x:8]");
  auto t = LL("{register: [4], lane: [1,2]} -> [x:8]");
  EXPECT_EQ(invert_and_compose(s, t),
            LL("{register: [(0,1)], lane: [(0,2),(1,0)]} -> [register:2, lane:4]"));
}

TEST(InvertAndCompose, BroadcastDimsMapByIdentity) {
  // Both broadcast over warps: the warps map to themselves, not all to warp 0.
  auto a = LL("{lane: [(1,0),(0,1)], warp: [(0,0),(0,0)]} -> [x:2, y:2]");
  auto b = LL("{lane: [(0,1),(1,0)], warp: [(0,0),(0,0)]} -> [x:2, y:2]");
  EXPECT_EQ(invert_and_compose(a, b),
            LL("{lane: [(2,0),(1,0)], warp: [(0,1),(0,2)]} -> [lane:4, warp:4]"));
}

TEST(InvertAndCompose, Errors) {
  try {
    (void)invert_and_compose(LL("{a: [1]} -> [x:2]"), LL("{b: [0]} -> [x:2]"));
    ADD_FAILURE();
  } catch (const axe::Error& e) {
    EXPECT_NE(std::string(e.what()).find("is not surjective"), std::string::npos) << e.what();
  }
  try {
    (void)invert(LL("{a: [1,0]} -> [x:2]"));
    ADD_FAILURE();
  } catch (const axe::Error& e) {
    EXPECT_NE(std::string(e.what()).find("is not invertible"), std::string::npos) << e.what();
  }
}

TEST(PseudoInvert, TV12_RightInverse) {
  // CuTe right_inverse((4,8):(8,1)) = (8,4):(4,1): pseudoinvert of [8,16,1,2,4] is [4,8,16,1,2].
  EXPECT_EQ(pseudo_invert(LL("{in: [8,16,1,2,4]} -> [out:32]")),
            LL("{out: [4,8,16,1,2]} -> [in:32]"));
}

// Law: compose(invert_and_compose(a, b), b) == a for b surjective with a's outputs.
TEST(InvertAndCompose, ComposeBackGivesTheLayout) {
  auto rng = make_rng(0x1a);
  int checked = 0;
  for (int trial = 0; trial < 300; ++trial) {
    auto b = random_layout(rng, trial % 2 ? 2 : 1, {"r", "l", "w"}, {"d1", "d0"}, 3);
    if (!axe::linear::is_surjective(b)) continue;
    // a: random inputs into b's outputs (names overlapping b's inputs sometimes).
    auto in = random_dims(rng, {"r", "l", "x"}, 3);
    std::vector<std::uint64_t> cols;
    for (int j = 0; j < total(in); ++j) {
      cols.push_back(b.total_out_bits()
                         ? std::uniform_int_distribution<std::uint64_t>(
                               0, (std::uint64_t{1} << b.total_out_bits()) - 1)(rng)
                         : 0);
    }
    auto a = LinearLayout::from_columns(in, b.out_dims(), cols, false);
    auto c = invert_and_compose(a, b);
    ASSERT_EQ(compose(c, b), a) << to_string(a) << " / " << to_string(b);
    ++checked;
  }
  EXPECT_GT(checked, 100);
}

// Law: compose(pseudo_invert(l), l) == identity on l's outputs; the chosen location has every
// free variable 0; invert is a two-sided inverse for invertible layouts.
TEST(PseudoInvert, IsARightInverse_WithFreeVariablesZero) {
  auto rng = make_rng(0x1b);
  for (int trial = 0; trial < 300; ++trial) {
    auto l = random_layout(rng, 2);
    auto p = pseudo_invert(l);
    std::vector<std::uint64_t> id;
    for (int i = 0; i < l.total_out_bits(); ++i) id.push_back(std::uint64_t{1} << i);
    ASSERT_EQ(compose(p, l), LinearLayout::from_columns(l.out_dims(), l.out_dims(), id))
        << to_string(l);
    std::uint64_t free = 0;
    int shift = 0;
    for (const auto& [name, mask] : axe::linear::free_variable_masks(l)) {
      free |= mask << shift;
      shift += l.in_bits(name);
    }
    for (auto c : p.columns()) EXPECT_EQ(c & free, 0u) << to_string(l);
    if (axe::linear::is_invertible(l)) {
      auto inv = invert(l);
      std::vector<std::uint64_t> iid;
      for (int i = 0; i < l.total_in_bits(); ++i) iid.push_back(std::uint64_t{1} << i);
      EXPECT_EQ(compose(l, inv), LinearLayout::from_columns(l.in_dims(), l.in_dims(), iid));
    }
  }
}

}  // namespace
}  // namespace axe::test::linear
