// compose(first, then) = then o first (Triton's first.compose(then)).
#include <gtest/gtest.h>

#include "axe/core/error.hpp"
#include "linear_test_util.hpp"

namespace axe::test::linear {
namespace {

using axe::linear::compose;

TEST(Compose, TV3_NotSurjective) {
  auto m1 = LL("{in1: [(1,1),(0,1)], in2: [(1,0),(1,2)]} -> [out1:4, out2:4]");
  auto m2 = LL("{out1: [(2,2),(1,0)], out2: [(1,1),(2,1)]} -> [out3:4, out4:4]");
  auto c = compose(m1, m2);
  EXPECT_EQ(c, LL("{in1: [(3,3),(1,1)], in2: [(2,2),(0,3)]} -> [out3:4, out4:4]"));
  EXPECT_FALSE(axe::linear::is_surjective(c));
}

TEST(Compose, TV12_CuteCompositionIsReversedCompose) {
  // CuTe composition((4,8):(8,1), (8,4):(4,1)) = identity on 32: LL [4,8,16,1,2] then [8,16,1,2,4].
  auto b = LL("{i: [4,8,16,1,2]} -> [x:32]");
  auto a = LL("{x: [8,16,1,2,4]} -> [y:32]");
  EXPECT_EQ(compose(b, a), LL("{i: [1,2,4,8,16]} -> [y:32]"));
}

TEST(Compose, Errors_NameTheDim) {
  auto l = LL("{in: [1,2]} -> [out:4]");
  try {
    (void)compose(l, LL("{x: [1,2]} -> [y:4]"));
    ADD_FAILURE();
  } catch (const axe::Error& e) {
    EXPECT_NE(std::string(e.what()).find("output dim 'out'"), std::string::npos) << e.what();
  }
  try {
    (void)compose(l, LL("{out: [1]} -> [y:2]"));
    ADD_FAILURE();
  } catch (const axe::Error& e) {
    EXPECT_NE(std::string(e.what()).find("has size 4"), std::string::npos) << e.what();
  }
}

// Law: compose(l, identity on l's outputs) == l, and compose agrees with applying one after the
// other on every input (brute force).
TEST(Compose, WithIdentity_IsTheLayout_AndAgreesWithApplyTwice) {
  auto rng = make_rng(0xc0);
  for (int trial = 0; trial < 200; ++trial) {
    auto l = random_layout(rng, trial % 3);
    std::vector<std::uint64_t> id;
    for (int i = 0; i < l.total_out_bits(); ++i) id.push_back(std::uint64_t{1} << i);
    auto identity = LinearLayout::from_columns(l.out_dims(), l.out_dims(), id);
    ASSERT_EQ(compose(l, identity), l) << to_string(l);
    // then: from l's outputs to random outputs.
    std::vector<Dim> outs{{"p", uniform(rng, 0, 3)}, {"q", uniform(rng, 0, 3)}};
    std::vector<std::uint64_t> cols;
    int tout = outs[0].bits + outs[1].bits;
    for (int i = 0; i < l.total_out_bits(); ++i) {
      cols.push_back(tout ? std::uniform_int_distribution<std::uint64_t>(0, (1u << tout) - 1)(rng) : 0);
    }
    auto then = LinearLayout::from_columns(l.out_dims(), outs, cols, false);
    auto c = compose(l, then);
    for (std::uint64_t x = 0; x < (std::uint64_t{1} << l.total_in_bits()); ++x) {
      ASSERT_EQ(c.apply_flat(x), then.apply_flat(l.apply_flat(x))) << to_string(l);
    }
  }
}

}  // namespace
}  // namespace axe::test::linear
