// `axe cute OP ARG...`: the CuTe algebra on text operands. Every expected value is derived by hand
// in the comment next to it (CuTe evaluates colexicographically: leftmost mode fastest).
#include <gtest/gtest.h>

#include <numeric>

#include "cli_test_util.hpp"

namespace axe::test::cli {
namespace {

// Runs `axe cute ... --json` and checks the common fields: result text, size and values.
Json cute_json(std::initializer_list<std::string_view> args, const std::string& result,
               const std::vector<std::int64_t>& values) {
  std::vector<std::string_view> v{"cute"};
  v.insert(v.end(), args.begin(), args.end());
  v.push_back("--json");
  std::string cmd = shell_quote(cli_binary());
  for (auto a : v) cmd += " " + shell_quote(a);
  auto r = run_command(cmd);
  EXPECT_EQ(r.status, 0) << cmd << "\n" << r.err;
  Json j = parse_json(r.out);
  if (!j.is_object()) return j;
  EXPECT_EQ(j["result"].str(), result) << cmd;
  EXPECT_EQ(j["size"].integer(), static_cast<std::int64_t>(values.size())) << cmd;
  EXPECT_EQ(j["values"].ints(), values) << cmd;
  EXPECT_TRUE(j["values_complete"].boolean());
  return j;
}

std::vector<std::int64_t> iota(std::int64_t n, std::int64_t step = 1) {
  std::vector<std::int64_t> v(n);
  for (std::int64_t i = 0; i < n; ++i) v[i] = i * step;
  return v;
}

TEST(CuteCli, Coalesce) {
  // ((2,3),4):((1,2),6) is contiguous: strides 1, 2 (=2*1), 6 (=3*2) -> 24:1.
  auto r = axe({"cute", "coalesce", "((2,3),4):((1,2),6)"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, "24:1\n");
  Json j = cute_json({"coalesce", "((2,3),4):((1,2),6)"}, "24:1", iota(24));
  EXPECT_EQ(j["cosize"].integer(), 24);
  EXPECT_EQ(j["rank"].integer(), 1);
  EXPECT_EQ(j["depth"].integer(), 0);
}

TEST(CuteCli, Composition) {
  // B = 3:3 picks A(0), A(3), A(6) of (8,8):(8,1): coordinates (0,0), (3,0), (6,0) -> 0, 24, 48.
  cute_json({"composition", "(8,8):(8,1)", "3:3"}, "3:24", {0, 24, 48});
  // 8:2 o 4:2 = 4:4.
  cute_json({"composition", "8:2", "4:2"}, "4:4", {0, 4, 8, 12});
  // An integer operand n is n:1: 8:2 o 4 = 4:2.
  cute_json({"composition", "8:2", "4"}, "4:2", {0, 2, 4, 6});
}

TEST(CuteCli, Complement) {
  // 4:1 covers 0..3; the rest of 24 is 6 copies at stride 4.
  cute_json({"complement", "4:1", "24"}, "6:4", iota(6, 4));
  // (2,2):(1,6): gap 2 at stride 2 (filling up to 6), then 24/12 = 2 at stride 12.
  cute_json({"complement", "(2,2):(1,6)", "24"}, "(3,2):(2,12)", {0, 2, 4, 12, 14, 16});
}

TEST(CuteCli, Divides) {
  // logical_divide(24:1, 4:1) = 24:1 o (4:1, complement(4:1, 24) = 6:4) = (4,6):(1,4).
  cute_json({"logical_divide", "24:1", "4:1"}, "(4,6):(1,4)", iota(24));
  // Mode by mode on (8,8):(1,8): 8:1 / 4:1 = (4,2):(1,4); 8:8 / 2:1 = (2,4):(8,16).
  auto r = axe({"cute", "logical_divide", "(8,8):(1,8)", "<4:1,2:1>"});
  EXPECT_EQ(r.out, "((4,2),(2,4)):((1,4),(8,16))\n") << r.err;
  // zipped: ((tiles),(rests)); tiled: ((tiles),rests...).
  r = axe({"cute", "zipped_divide", "(8,8):(1,8)", "<4:1,2:1>"});
  EXPECT_EQ(r.out, "((4,2),(2,4)):((1,8),(4,16))\n") << r.err;
  r = axe({"cute", "tiled_divide", "(8,8):(1,8)", "<4:1,2:1>"});
  EXPECT_EQ(r.out, "((4,2),2,4):((1,8),4,16)\n") << r.err;
  // "_" leaves mode 1 alone.
  r = axe({"cute", "logical_divide", "(8,8):(1,8)", "<4:1,_>"});
  EXPECT_EQ(r.out, "((4,2),8):((1,4),8)\n") << r.err;
}

TEST(CuteCli, Products) {
  // logical_product(A, 3:1) = (A, complement(A, 4*3) o 3:1) = (A, 3:4).
  cute_json({"logical_product", "(2,2):(1,2)", "3:1"}, "((2,2),3):((1,2),4)", iota(12));
  // blocked: logical product ((2,2),(2,3)):((1,2),(4,8)) zipped as ((A0,B0),(A1,B1)).
  auto r = axe({"cute", "blocked_product", "(2,2):(1,2)", "(2,3):(1,2)"});
  EXPECT_EQ(r.out, "((2,2),(2,3)):((1,4),(2,8))\n") << r.err;
  // raked: ((B0,A0),(B1,A1)).
  r = axe({"cute", "raked_product", "(2,2):(1,2)", "(2,3):(1,2)"});
  EXPECT_EQ(r.out, "((2,2),(3,2)):((4,1),(8,2))\n") << r.err;
}

TEST(CuteCli, Inverses) {
  // (4,2):(2,1) maps i0 + 4 i1 to 2 i0 + i1, a bijection of 0..7; j = b + 2a -> a + 4b.
  cute_json({"right_inverse", "(4,2):(2,1)"}, "(2,4):(4,1)", {0, 4, 1, 5, 2, 6, 3, 7});
  cute_json({"left_inverse", "(4,2):(2,1)"}, "(2,4):(4,1)", {0, 4, 1, 5, 2, 6, 3, 7});
}

TEST(CuteCli, Slice) {
  // Row 2 of (4,8):(1,4): the 8 columns at stride 4, starting at offset 2.
  auto r = axe({"cute", "slice", "(4,8):(1,4)", "(2,_)"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, "(8):(4)\noffset 2\n");
  Json j = cute_json({"slice", "(4,8):(1,4)", "(2,_)"}, "(8):(4)", iota(8, 4));
  EXPECT_EQ(j["offset"].integer(), 2);
}

TEST(CuteCli, Eval_Rank2IsPrintLayout) {
  // (2,3):(3,1): cell (i,j) = 3i + j. Same text as CuTe's print_layout.
  auto r = axe({"cute", "eval", "(2,3):(3,1)"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out,
            "(2,3):(3,1)\n"
            "      0   1   2 \n"
            "    +---+---+---+\n"
            " 0  | 0 | 1 | 2 |\n"
            "    +---+---+---+\n"
            " 1  | 3 | 4 | 5 |\n"
            "    +---+---+---+\n");
  cute_json({"eval", "(2,3):(3,1)"}, "(2,3):(3,1)", {0, 3, 1, 4, 2, 5});
}

TEST(CuteCli, Eval_OtherRanksListNaturalCoordinates) {
  auto r = axe({"cute", "eval", "(2,1,2):(1,0,2)"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, "(2,1,2):(1,0,2)\n(0,0,0) -> 0\n(1,0,0) -> 1\n(0,0,1) -> 2\n(1,0,1) -> 3\n");
  r = axe({"cute", "eval", "4:2"});
  EXPECT_EQ(r.out, "4:2\n0 -> 0\n1 -> 2\n2 -> 4\n3 -> 6\n");
}

TEST(CuteCli, Swizzle) {
  // Sw<1,0,1>: x ^ ((x & 2) >> 1): 0,1,3,2.
  auto r = axe({"cute", "swizzle", "1", "0", "1", "0", "1", "2", "3"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, "Sw<1,0,1>\n0 -> 0\n1 -> 1\n2 -> 3\n3 -> 2\n");
  // Sw<3,4,3>: yyy mask 0b1110000000; 128 -> 128 ^ 16 = 144.
  r = axe({"cute", "swizzle", "3", "4", "3", "128", "--json"});
  ASSERT_EQ(r.status, 0) << r.err;
  Json j = parse_json(r.out);
  EXPECT_EQ(j["result"].str(), "Sw<3,4,3>");
  EXPECT_EQ(j["size"].integer(), 1024);
  EXPECT_EQ(j["values"].ints(), (std::vector<std::int64_t>{144}));
}

TEST(CuteCli, SwizzledLayout) {
  // Sw<1,0,1> o (2,2):(2,1): L = 0,2,1,3 -> swizzled 0,3,1,2; cell (i,j) = value[i + 2j].
  auto r = axe({"cute", "swizzle", "1", "0", "1", "(2,2):(2,1)"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out,
            "Sw<1,0,1> o 0 o (2,2):(2,1)\n"
            "      0   1 \n"
            "    +---+---+\n"
            " 0  | 0 | 1 |\n"
            "    +---+---+\n"
            " 1  | 3 | 2 |\n"
            "    +---+---+\n");
  cute_json({"eval", "Sw<1,0,1> o 0 o (2,2):(2,1)"}, "Sw<1,0,1> o 0 o (2,2):(2,1)", {0, 3, 1, 2});
  // The paper's smem tile: Sw<3,3,3> o (8,64):(64,1); element 1 is row 1, column 0: 64 ^ 8 = 72.
  Json j = parse_json(axe({"cute", "eval", "Sw<3,3,3> o 0 o (8,64):(64,1)", "--json"}).out);
  EXPECT_EQ(j["values"][1].integer(), 72);
}

TEST(CuteCli, Errors) {
  expect_error({"cute", "composition", "(8,8):(8,1)"}, "usage: axe cute composition A B");
  expect_error({"cute", "frobnicate", "4:1"}, "unknown cute operation 'frobnicate'");
  expect_error({"cute"}, "missing OP");
  // Malformed text: position and what was expected.
  expect_error({"cute", "coalesce", "((2,3),4):((1,2),6"}, "position");
  expect_error({"cute", "coalesce", "(2,3):(1,2,3)"}, "");
  expect_error({"cute", "composition", "8:1", "<4:1,"}, "position");
  expect_error({"cute", "slice", "(4,8):(1,4)", "(2,_"}, "position");
  expect_error({"cute", "slice", "(4,8):(1,4)", "(4,_)"}, "");  // 4 is outside mode 0
  expect_error({"cute", "coalesce", "(-2,3):(1,2)"}, "negative extent");
  expect_error({"cute", "eval", "(0,3):(1,2)"}, "extents must be positive");
  expect_error({"cute", "composition", "8:1", "<0:1,_>"}, "extents must be positive");
  expect_error({"cute", "coalesce", "99999999999999999999:1"}, "64 bits");
  expect_error({"cute", "eval", "1000000000:1000000000000"}, "overflow");
  expect_error({"cute", "complement", "4:1", "0"}, "must be positive");
  expect_error({"cute", "complement", "(2,2):(1,1)", "8"}, "");  // not injective
  // Invalid swizzles: |S| < B.
  expect_error({"cute", "swizzle", "3", "4", "1", "0"}, "");
  expect_error({"cute", "swizzle", "-1", "4", "3", "0"}, "");
  expect_error({"cute", "swizzle", "3", "4", "3", "-5"}, "non-negative");
  expect_error({"cute", "eval", "Sw<3,4,3> o 0 o (8,64):(64,1"}, "position");
}

}  // namespace
}  // namespace axe::test::cli
