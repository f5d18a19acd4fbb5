// Text form: exact parse and print, round trips, whitespace tolerance, ParseError positions.
#include <gtest/gtest.h>

#include "layout/layout_test_util.hpp"
#include "support/test_support.hpp"

namespace axe {
namespace {

using test::L;

TEST(ParsePrint, PrintedFormRoundTripsExactly) {
  for (const char* s : {
           "S[(8,2,4,2):(4@lane,1@warp,1@lane,1)] + R[2:4@warp] + 5@warp",
           "S[(2,32,2,64):(1@gpu,64,2@gpu,1)]",
           "S[(64,128):(128,1)] + P[4:1@gpu]",
           "S[(64,128):(128,1)] + P<max>[4:1@gpu]",
           "S[(8,16):(16,1)] + 64",
           "S[8:-1] + R[(2,3):(0,-5@x)] + P<avg>[(2,2):(1@a_1,2@a_1)] + -3@warp + 7",
           "S[():()]",
           "S[4:0]",
       }) {
    EXPECT_EQ(to_string(L(s)), s);
  }
}

TEST(ParsePrint, ParsesComponents) {
  AxeLayout l = L("S[(8,2,4,2):(4@lane,1@warp,1@lane,1)] + R[2:4@warp] + 5@warp");
  ASSERT_EQ(l.shard().size(), 4u);
  EXPECT_EQ(l.shard()[0], (Iter{8, 4, Axis("lane")}));
  EXPECT_EQ(l.shard()[1], (Iter{2, 1, Axis("warp")}));
  EXPECT_EQ(l.shard()[3], (Iter{2, 1, Axis()}));
  ASSERT_EQ(l.replica().size(), 1u);
  EXPECT_EQ(l.replica()[0], (Iter{2, 4, Axis("warp")}));
  EXPECT_EQ(l.offset(Axis("warp")), 5);
  EXPECT_EQ(l.offset(Axis()), 0);
  AxeLayout p = L("S[(64,128):(128,1)] + P<max>[4:1@gpu]");
  EXPECT_EQ(p.reduce_op(), ReduceOp::Max);
  EXPECT_EQ(p.terms(), 4);
  EXPECT_EQ(L("S[2:1] + 64").offset(Axis::memory()), 64);
}

TEST(ParsePrint, ToleratesWhitespace) {
  AxeLayout a = L("  S [ ( 8 , 2 ) : ( 4 @ lane , 1 ) ]+R[ 2 : 4@warp ]  +  5 @warp ");
  EXPECT_EQ(to_string(a), "S[(8,2):(4@lane,1)] + R[2:4@warp] + 5@warp");
  EXPECT_EQ(L("S[\t8:1\n]"), L("S[8:1]"));
}

TEST(ParsePrint, ExplicitMemoryAxisPrintsBare) {
  EXPECT_EQ(to_string(L("S[(2,3):(3@m,1@m)] + 4@m")), "S[(2,3):(3,1)] + 4");
}

TEST(ParsePrint, RoundTripOfRandomLayouts) {
  auto rng = test::make_rng(101);
  for (int i = 0; i < 3000; ++i) {
    AxeLayout l = test::random_layout(rng);
    std::string s = to_string(l);
    AxeLayout back = L(s);
    ASSERT_EQ(back, l) << s;
    ASSERT_EQ(to_string(back), s);
    ASSERT_EQ(std::hash<AxeLayout>()(back), std::hash<AxeLayout>()(l));
  }
}

size_t error_position(std::string_view text) {
  try {
    parse_axe_layout(text);
  } catch (const ParseError& e) {
    return e.position();
  }
  ADD_FAILURE() << "no ParseError for '" << text << "'";
  return SIZE_MAX;
}

TEST(ParsePrint, MalformedTextNamesPositionAndExpectation) {
  EXPECT_EQ(error_position(""), 0u);
  EXPECT_EQ(error_position("X[8:1]"), 0u);
  EXPECT_EQ(error_position("S[8;1]"), 3u);
  EXPECT_EQ(error_position("S[(8,2):(1)]"), 8u);       // stride count mismatch
  EXPECT_EQ(error_position("S[8:1@]"), 6u);            // missing axis name
  EXPECT_EQ(error_position("S[8:1@9a]"), 6u);          // bad identifier
  EXPECT_EQ(error_position("S[0:1]"), 2u);             // extent must be positive
  EXPECT_EQ(error_position("S[(4,-2):(1,1)]"), 5u);
  EXPECT_EQ(error_position("S[8:1] + Q[2:1]"), 9u);
  EXPECT_EQ(error_position("S[8:1] + P<foo>[2:1]"), 11u);
  EXPECT_EQ(error_position("S[8:1] + 3@x + 4@x"), 15u);  // offset axis twice
  EXPECT_EQ(error_position("S[8:1] + R[2:1] + R[2:2]"), 18u);
  EXPECT_EQ(error_position("S[8:1] 3"), 7u);
  EXPECT_EQ(error_position("S[99999999999999999999:1]"), 2u);
  try {
    parse_axe_layout("S[8;1]");
  } catch (const ParseError& e) {
    EXPECT_NE(std::string(e.what()).find("':'"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("position 3"), std::string::npos) << e.what();
  }
}

// Random single-character edits of valid text: either a layout that prints back to a parseable
// equal layout, or an axe::Error (ParseError for syntax) -- never a crash or another exception.
TEST(ParsePrint, MutatedTextParsesOrThrowsError) {
  auto rng = test::make_rng(102);
  const std::string alphabet = "SRP<>[](),:@+- 0123456789mxlane_";
  for (int i = 0; i < 5000; ++i) {
    std::string s = to_string(test::random_layout(rng));
    for (int k = static_cast<int>(test::pick(rng, 1, 3)); k-- > 0;) {
      std::size_t at = static_cast<std::size_t>(test::pick(rng, 0, static_cast<std::int64_t>(s.size()) - 1));
      char c = alphabet[static_cast<std::size_t>(test::pick(rng, 0, static_cast<std::int64_t>(alphabet.size()) - 1))];
      switch (test::pick(rng, 0, 2)) {
        case 0: s[at] = c; break;
        case 1: s.insert(s.begin() + static_cast<std::ptrdiff_t>(at), c); break;
        default: s.erase(at, 1);
      }
    }
    try {
      AxeLayout l = parse_axe_layout(s);
      ASSERT_EQ(parse_axe_layout(to_string(l)), l) << s;
    } catch (const ParseError& e) {
      ASSERT_LE(e.position(), s.size()) << s;
    } catch (const Error&) {
    }
  }
}

TEST(ParsePrint, OverflowingLayoutIsAnError) {
  EXPECT_THROW(L("S[(4294967296,4294967296):(1,1)]"), Error);  // size 2^64
  EXPECT_THROW(L("S[3:4611686018427387904]"), Error);            // 2 * 2^62 overflows
  EXPECT_THROW(L("S[2:1] + 9223372036854775807"), Error);        // offset + span
}

TEST(ParsePrint, AxisNamesAreIdentifiers) {
  EXPECT_THROW(Axis(""), Error);
  EXPECT_THROW(Axis("1x"), Error);
  EXPECT_THROW(Axis("a-b"), Error);
  EXPECT_EQ(Axis("_a9").name(), "_a9");
  EXPECT_TRUE(Axis("m").is_memory());
  EXPECT_LT(Axis("gpu"), Axis("lane"));
  EXPECT_EQ(Axis("lane"), Axis("lane"));
}

TEST(ParsePrint, ReduceOpNames) {
  for (ReduceOp op : {ReduceOp::Sum, ReduceOp::Avg, ReduceOp::Max, ReduceOp::Min, ReduceOp::Prod}) {
    EXPECT_EQ(parse_reduce_op(to_string(op)), op);
  }
  EXPECT_THROW(parse_reduce_op("mean"), Error);
}

TEST(ParsePrint, PhysCoordPrintsInOrderWithMemoryLast) {
  PhysCoord c;
  c.set(Axis(), 1);
  c.set(Axis("lane"), 8);
  c.set(Axis("warp"), 6);
  EXPECT_EQ(to_string(c), "{lane 8, warp 6, m 1}");
  EXPECT_EQ(c, test::pc({{"warp", 6}, {"m", 1}, {"lane", 8}, {"gpu", 0}}));
}

}  // namespace
}  // namespace axe
