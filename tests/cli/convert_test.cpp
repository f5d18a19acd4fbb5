// `axe convert --from-cute A | --to-cute L`: CuTe <-> Axe layouts (include/axe/layout/convert.hpp).
#include <gtest/gtest.h>

#include "cli_test_util.hpp"

namespace axe::test::cli {
namespace {

std::string run(std::initializer_list<std::string_view> args) {
  auto r = axe(args);
  EXPECT_EQ(r.status, 0) << r.err;
  return r.out;
}

TEST(ConvertCli, FromCute_BothOrders) {
  // Row-major 8x16: the same map of (i,j) under coordinate order; modes reversed under linear.
  EXPECT_EQ(run({"convert", "--from-cute", "(8,16):(16,1)"}), "S[(8,16):(16,1)]\n");
  EXPECT_EQ(run({"convert", "--from-cute", "(8,16):(16,1)", "--order", "linear"}),
            "S[(16,8):(1,16)]\n");
  EXPECT_EQ(run({"convert", "--from-cute", "8:1", "--axis", "lane"}), "S[8:1@lane]\n");
  // Nested mode (2,3):(1,2) is flattened colexicographically, so reversed in D: (3,2):(2,1).
  EXPECT_EQ(run({"convert", "--from-cute", "((2,3),4):((1,2),6)"}), "S[(3,2,4):(2,1,6)]\n");
}

TEST(ConvertCli, ToCute_BothOrders) {
  EXPECT_EQ(run({"convert", "--to-cute", "S[(8,16):(16,1)]"}), "(8,16):(16,1)\n");
  EXPECT_EQ(run({"convert", "--to-cute", "S[(8,16):(16,1)]", "--order", "linear"}),
            "(16,8):(1,16)\n");
  auto r = axe({"convert", "--to-cute", "S[(8,16):(16,1)]", "--shape", "8,16", "--json"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(parse_json(r.out)["result"].str(), "(8,16):(16,1)");
}

TEST(ConvertCli, RoundTripAgreesWithEval) {
  // CuTe (4,8):(8,1) at (3,5) is 29; the converted Axe layout on shape (4,8) gives m 29 there.
  auto axe_text = run({"convert", "--from-cute", "(4,8):(8,1)"});
  ASSERT_FALSE(axe_text.empty());
  axe_text.pop_back();
  EXPECT_EQ(run({"eval", axe_text, "--shape", "4,8", "--at", "3,5"}), "{m 29}\n");
}

TEST(ConvertCli, Errors) {
  expect_error({"convert", "--to-cute", "S[8:1] + R[2:1@gpu]"}, "no CuTe counterpart");
  expect_error({"convert", "--to-cute", "S[(2,8):(1@gpu,1)]"}, "no CuTe counterpart");
  expect_error({"convert", "--from-cute", "(0,2):(1,1)"}, "extent");
  expect_error({"convert", "--from-cute", "(8,16):(16,1"}, "position");
  expect_error({"convert", "--from-cute", "8:1", "--order", "rowmajor"},
               "'coordinate' or 'linear'");
  expect_error({"convert"}, "exactly one of");
  expect_error({"convert", "--from-cute", "8:1", "--to-cute", "S[8:1]"}, "exactly one of");
}

}  // namespace
}  // namespace axe::test::cli
