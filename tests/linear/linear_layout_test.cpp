// The linear layout value: construction and its invariants, apply (TV-1, TV-2, TV-11), text form.
#include "axe/linear/linear_layout.hpp"

#include <gtest/gtest.h>

#include "axe/core/error.hpp"
#include "linear_test_util.hpp"

namespace axe::test::linear {
namespace {

using Pairs = std::vector<std::pair<std::string, std::int64_t>>;

TEST(LinearLayout, Apply_TV1_SwizzleOfThreadsAndWarps) {
  // t: [(1,1),(2,2)], w: [(0,1),(0,2)]: L(t, w) = (t, w ^ t).
  LinearLayout l({{"t", {{1, 1}, {2, 2}}}, {"w", {{0, 1}, {0, 2}}}}, std::vector<std::string>{"x", "y"});
  EXPECT_EQ(l.out_size("x"), 4);
  EXPECT_EQ(l.out_size("y"), 4);
  for (std::int64_t t = 0; t < 4; ++t) {
    for (std::int64_t w = 0; w < 4; ++w) {
      Pairs in{{"t", t}, {"w", w}};
      EXPECT_EQ(l.apply(in), (Pairs{{"x", t}, {"y", w ^ t}})) << t << "," << w;
    }
  }
  Pairs in{{"t", 3}, {"w", 1}};
  EXPECT_EQ(l.apply(in), (Pairs{{"x", 3}, {"y", 2}}));
}

TEST(LinearLayout, Apply_TV2_MatrixVectorProduct) {
  auto l = LinearLayout::from_columns({{"in", 4}}, {{"out", 4}}, {1, 2, 14, 12}, false);
  EXPECT_EQ(l.apply_flat(6), 12u);
  EXPECT_FALSE(axe::linear::is_surjective(l));
}

TEST(LinearLayout, Apply_TV11) {
  auto l = LL("{in1: [(4,2),(2,1),(1,0)], in2: [(1,2),(2,1)]} -> [out1:8, out2:4]");
  Pairs a{{"in1", 1}, {"in2", 0}}, b{{"in1", 0}, {"in2", 1}};
  EXPECT_EQ(l.apply(a), (Pairs{{"out1", 4}, {"out2", 2}}));
  EXPECT_EQ(l.apply(b), (Pairs{{"out1", 1}, {"out2", 2}}));
}

TEST(LinearLayout, Construct_InfersOutSizesStrictlyAbove) {
  // The header example: L(in1=1)=(1,0), L(in1=2)=(5,1), L(in1=4)=(2,2) -> out sizes (8,4).
  LinearLayout l({{"in1", {{1, 0}, {5, 1}, {2, 2}}}}, std::vector<std::string>{"o1", "o2"}, false);
  EXPECT_EQ(l.out_size("o1"), 8);
  EXPECT_EQ(l.out_size("o2"), 4);
  EXPECT_EQ(LinearLayout::identity_1d(8, "in", "out"), LL("{in: [1,2,4]} -> [out:8]"));
  EXPECT_EQ(LinearLayout::strided_1d(4, 2, "in", "out"), LL("{in: [2,4]} -> [out:8]"));
  EXPECT_EQ(LinearLayout::zeros_1d(4, "in", "out", 2), LL("{in: [0,0]} -> [out:2]"));
}

TEST(LinearLayout, Construct_RejectsBrokenInvariantsNamingTheDim) {
  auto throws = [](auto f, const std::string& needle) {
    try {
      f();
      ADD_FAILURE() << "no error; expected '" << needle << "'";
    } catch (const axe::Error& e) {
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    }
  };
  throws([] { LinearLayout({{"in", {{1}}}}, LinearLayout::OutSizes{{"out", 3}}); },
         "size of output dim 'out': 3 is not a power of two");
  throws([] { LinearLayout({{"in", {{4}}}}, LinearLayout::OutSizes{{"out", 4}}); },
         "value 4 of output dim 'out' is outside [0, 4)");
  throws([] { LinearLayout({{"in", {{1, 0}}}}, LinearLayout::OutSizes{{"out", 4}}); },
         "basis 0 of 'in' (1,0) has 2 values but there are 1 output dims");
  throws([] { LinearLayout({{"in", {{1}}}}, LinearLayout::OutSizes{{"out", 4}}); },
         "is not surjective");
  throws([] { LinearLayout({{"in", {}}, {"in", {}}}, LinearLayout::OutSizes{}); },
         "input dim 'in' appears twice");
  throws([] { LinearLayout({{"a b", {}}}, LinearLayout::OutSizes{}); }, "is not an identifier");
  throws([] { (void)LinearLayout::identity_1d(6, "in", "out"); }, "6 is not a power of two");
  auto l = LL("{in: [1,2]} -> [out:4]");
  throws([&] { (void)l.apply(Pairs{{"in", 4}}); }, "value 4 of input dim 'in' is outside [0, 4)");
  throws([&] { (void)l.apply(Pairs{}); }, "input dim 'in' not given");
  throws([&] { (void)l.apply(Pairs{{"lane", 0}}); }, "has no input dim 'lane'");
}

TEST(LinearLayout, Text_RoundTrips) {
  for (const char* text : {"{in1: [(1,1),(0,1)], in2: [(1,0),(1,2)]} -> [out1:4, out2:4]",
                           "{in: [2,1,4]} -> [out:8]", "{} -> []", "{in2: []} -> [out:1]",
                           "{r: [(),()]} -> []"}) {
    auto l = LL(text);
    EXPECT_EQ(axe::linear::to_string(l), text);
  }
  EXPECT_EQ(LL(" { in : [ ( 3 ) ] } -> [ out : 4 ] "), LL("{in: [3]} -> [out:4]"));
}

TEST(LinearLayout, Text_ErrorsHavePositions) {
  auto at = [](const char* text) -> std::size_t {
    try {
      (void)LL(text);
    } catch (const axe::ParseError& e) {
      return e.position();
    }
    return std::string::npos;
  };
  EXPECT_EQ(at("{in: [1,2] -> [out:4]"), 11u);
  EXPECT_EQ(at("{in: [1,x]} -> [out:4]"), 8u);
  EXPECT_EQ(at("{in: [1]} => [out:2]"), 10u);
  EXPECT_EQ(at("{in: [1]} -> [out:2] junk"), 21u);
  EXPECT_EQ(at("{in: [99999999999999999999]} -> [out:2]"), 6u);
}

TEST(LinearLayout, ApplyFlat_EqualsXorOfBases) {
  auto rng = make_rng(0x11);
  for (int trial = 0; trial < 100; ++trial) {
    auto l = random_layout(rng, 0);
    for (const auto& in : all_inputs(l)) {
      Pairs named;
      for (std::size_t k = 0; k < in.size(); ++k) named.emplace_back(l.in_dims()[k].name, in[k]);
      auto got = l.apply(named);
      auto want = brute_apply(l, in);
      for (std::size_t k = 0; k < want.size(); ++k) ASSERT_EQ(got[k].second, want[k]) << to_string(l);
    }
    EXPECT_EQ(LL(to_string(l)), l);
    EXPECT_EQ(std::hash<LinearLayout>{}(LL(to_string(l))), std::hash<LinearLayout>{}(l));
  }
}

}  // namespace
}  // namespace axe::test::linear
