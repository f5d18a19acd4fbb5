// Text forms: printing matches CuTe, parsing is its inverse, malformed text is a ParseError that
// names the position and what was expected.
#include <gtest/gtest.h>

#include <random>

#include "axe/core/error.hpp"
#include "axe/cute/int_tuple.hpp"
#include "axe/cute/layout.hpp"
#include "axe/cute/swizzle.hpp"
#include "support/test_support.hpp"

namespace axe::cute {
namespace {

// Expects `f` to throw ParseError at `pos` whose message mentions `expected`.
template <class F>
void expect_parse_error(F&& f, std::size_t pos, std::string_view expected) {
  try {
    f();
    ADD_FAILURE() << "no ParseError";
  } catch (const ParseError& e) {
    EXPECT_EQ(e.position(), pos) << e.what();
    EXPECT_NE(std::string(e.what()).find(expected), std::string::npos) << e.what();
  }
}

TEST(Text, PrintsLikeCuTe) {
  EXPECT_EQ(to_string(parse_layout("((2,3),4):((1,2),6)")), "((2,3),4):((1,2),6)");
  EXPECT_EQ(to_string(parse_layout("4:1")), "4:1");
  EXPECT_EQ(to_string(parse_layout("(4):(1)")), "(4):(1)");
  EXPECT_EQ(to_string(parse_layout("8")), "8:1");
  EXPECT_EQ(to_string(parse_layout(" ( 2 , 3 ) : ( 1 , -2 ) ")), "(2,3):(1,-2)");
  EXPECT_EQ(to_string(parse_int_tuple("-9223372036854775808")), "-9223372036854775808");
}

TEST(Text, TilerRoundTrips) {
  for (std::string s :
       {"<8:1,_>", "<_,4:1>", "<<2:1,_>,4:1>", "(2,2):(1,4)", "_", "8", "<3,8>", "<1:1,2>"}) {
    EXPECT_EQ(to_string(parse_tiler(s)), s);
  }
  Tiler t = parse_tiler("<8,(2,2):(1,4),_>");
  ASSERT_TRUE(t.is_tuple());
  EXPECT_TRUE(t.elems()[0].is_int());
  EXPECT_TRUE(t.elems()[0].is_layout());
  EXPECT_EQ(t.elems()[0].layout(), parse_layout("8:1"));
  EXPECT_TRUE(t.elems()[2].is_none());
  EXPECT_THROW(t.layout(), Error);
}

TEST(Text, ComposedLayoutRoundTrips) {
  ComposedLayout c = parse_composed_layout("Sw<3,4,3> o 0 o (8,64):(64,1)");
  EXPECT_EQ(to_string(c), "Sw<3,4,3> o 0 o (8,64):(64,1)");
  EXPECT_EQ(to_pycute_string(c), "SW_3_4_3 o 0 o (8,64):(64,1)");
  EXPECT_EQ(parse_composed_layout("SW_3_4_3 o 0 o (8,64):(64,1)"), c);
  EXPECT_EQ(parse_composed_layout("Sw<2,1,-3>o5o8:1").offset, 5);
}

TEST(Text, MalformedIntTuple) {
  expect_parse_error([] { parse_int_tuple("(2,3"); }, 4, "',' or ')'");
  expect_parse_error([] { parse_int_tuple("(2,,3)"); }, 3, "an integer or '('");
  expect_parse_error([] { parse_int_tuple(""); }, 0, "an integer or '('");
  expect_parse_error([] { parse_int_tuple("(2,3))"); }, 5, "end of input");
  expect_parse_error([] { parse_int_tuple("99999999999999999999"); }, 0, "fits in 64 bits");
  expect_parse_error([] { parse_int_tuple("(1,_)"); }, 3, "an integer or '('");
  expect_parse_error([] { parse_int_tuple("-"); }, 0, "an integer");
}

TEST(Text, MalformedLayout) {
  expect_parse_error([] { parse_layout("(2,3)"); }, 5, "':'");
  expect_parse_error([] { parse_layout("(2,3):(1,2"); }, 10, "',' or ')'");
  expect_parse_error([] { parse_layout("(2,3):(1,2,3)"); }, 6, "congruent");
  expect_parse_error([] { parse_layout("(2,-3):(1,2)"); }, 0, "negative extent");
  expect_parse_error([] { parse_layout("4:1 x"); }, 4, "end of input");
  expect_parse_error([] { parse_layout("a:1"); }, 0, "an integer or '('");
}

TEST(Text, MalformedTilerCoordSwizzle) {
  expect_parse_error([] { parse_tiler("<8:1,"); }, 5, "a layout, '_' or '<'");
  expect_parse_error([] { parse_tiler("<8:1 4:1>"); }, 5, "',' or '>'");
  expect_parse_error([] { parse_tiler("<-2>"); }, 1, "non-negative integer tiler");
  expect_parse_error([] { parse_coord("(1,_,)"); }, 5, "an integer, '_' or '('");
  expect_parse_error([] { parse_swizzle("Sw<3,4>"); }, 6, "','");
  expect_parse_error([] { parse_swizzle("Swizzle<3,4,3>"); }, 0, "'Sw<' or 'SW_'");
  expect_parse_error([] { parse_swizzle("Sw<3,0,2>"); }, 0, "abs(SShift)");
  expect_parse_error([] { parse_composed_layout("Sw<3,4,3> x 0 o 8:1"); }, 10, "'o'");
}

// Random printable garbage never crashes the parsers: it parses or throws ParseError/Error.
TEST(Text, GarbageNeverCrashes) {
  auto rng = axe::test::make_rng(31);
  const std::string alphabet = "()<>,:_-0123456789 oSwW";
  std::uniform_int_distribution<std::size_t> pick(0, alphabet.size() - 1);
  std::uniform_int_distribution<int> len(0, 16);
  for (int t = 0; t < 20000; ++t) {
    std::string s;
    for (int k = len(rng); k > 0; --k) s += alphabet[pick(rng)];
    for (auto parse : {+[](std::string_view x) { (void)parse_layout(x); },
                       +[](std::string_view x) { (void)parse_tiler(x); },
                       +[](std::string_view x) { (void)parse_coord(x); },
                       +[](std::string_view x) { (void)parse_composed_layout(x); }}) {
      try {
        parse(s);
      } catch (const Error&) {
      }
    }
  }
}

}  // namespace
}  // namespace axe::cute
