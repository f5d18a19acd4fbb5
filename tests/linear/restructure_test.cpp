// sublayout, transpose, reshape, flatten, concat.
#include <gtest/gtest.h>

#include "linear_test_util.hpp"

namespace axe::test::linear {
namespace {

using namespace axe::linear;
using Sizes = std::vector<std::pair<std::string, std::int64_t>>;
using Names = std::vector<std::string>;

TEST(Reshape, TV6_Examples) {
  EXPECT_EQ(reshape_ins(LL("{in1: [1,4,8], in2: [2]} -> [out:16]"), Sizes{{"in3", 2}, {"in4", 8}}),
            LL("{in3: [1], in4: [4,8,2]} -> [out:16]"));
  EXPECT_EQ(reshape_outs(LL("{in1: [1,4,8], in2: [3]} -> [out:16]"), Sizes{{"out2", 2}, {"out3", 8}}),
            LL("{in1: [(1,0),(0,2),(0,4)], in2: [(1,1)]} -> [out2:2, out3:8]"));
  EXPECT_EQ(flatten_outs(LL("{in1: [(1,0),(4,1),(8,4)], in2: [(3,2)]} -> [out1:16, out2:8]")),
            LL("{in1: [1,20,72], in2: [35]} -> [out1:128]"));
}

TEST(Sublayout, TV9_Examples) {
  auto l1 = LL("{in1: [(1,0),(0,1),(2,0)], in2: [(0,1)]} -> [out1:4, out2:2]");
  EXPECT_EQ(sublayout(l1, Names{"in1", "in2"}, Names{"out1"}), LL("{in1: [1,0,2], in2: [0]} -> [out1:4]"));
  auto s = sublayout(l1, Names{}, Names{"out1"});
  EXPECT_EQ(s.out_size("out1"), 4);
  EXPECT_TRUE(sublayout_is_zero(l1, Names{"in2"}, Names{"out1"}));
  EXPECT_FALSE(sublayout_is_zero(l1, Names{"in2"}, Names{"out2"}));
}

// Law: reshape then reshape back is the identity; flatten keeps the columns; transpose is a
// relabelling that apply() does not see; concat_ins then sublayout gives the parts back.
TEST(Reshape, ReshapeBack_IsIdentity) {
  auto rng = make_rng(0x5e);
  for (int trial = 0; trial < 200; ++trial) {
    auto l = random_layout(rng, trial % 3);
    Sizes ins, outs;
    for (const auto& d : l.in_dims()) ins.emplace_back(d.name, d.size());
    for (const auto& d : l.out_dims()) outs.emplace_back(d.name, d.size());
    Sizes flat_in{{"f", std::int64_t{1} << l.total_in_bits()}};
    Sizes flat_out{{"g", std::int64_t{1} << l.total_out_bits()}};
    EXPECT_EQ(reshape_ins(reshape_ins(l, flat_in), ins), l);
    EXPECT_EQ(reshape_outs(reshape_outs(l, flat_out), outs), l);
    EXPECT_EQ(flatten_ins(l).columns(), l.columns());
    Names in_names = l.in_names(), out_names = l.out_names();
    Names rin(in_names.rbegin(), in_names.rend());
    Names rout(out_names.rbegin(), out_names.rend());
    auto t = transpose_outs(transpose_ins(l, rin), rout);
    EXPECT_EQ(transpose_outs(transpose_ins(t, l.in_names()), l.out_names()), l);
    if (!l.out_dims().empty()) {
      auto zz = LinearLayout::from_columns({{"extra", 2}}, l.out_dims(), {0, 0}, false);
      auto c = concat_ins(l, zz);
      EXPECT_EQ(sublayout(c, l.in_names(), l.out_names()), l);
    }
  }
}

TEST(Concat, Outs_StackOutputs) {
  auto a = LL("{i: [1,2]} -> [x:4]");
  auto b = LL("{i: [0,1]} -> [y:2]");
  EXPECT_EQ(concat_outs(a, b), LL("{i: [(1,0),(2,1)]} -> [x:4, y:2]"));
}

}  // namespace
}  // namespace axe::test::linear
