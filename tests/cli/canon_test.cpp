// `axe canon LAYOUT`: the canonical form (paper §3.3; vectors from axe_paper_vectors.md).
#include <gtest/gtest.h>

#include "cli_test_util.hpp"

namespace axe::test::cli {
namespace {

TEST(CanonCli, PaperVectors) {
  struct Case {
    const char* in;
    const char* out;
  };
  for (const Case& c : {
           Case{"S[(8,8,8,4,2):(512,64,8,2,1)]", "S[4096:1]"},
           Case{"S[(8,8,8,4,1,1):(512,64,8,2,1,1)]", "S[2048:2]"},
           Case{"S[(3,4,5,2):(20,5,1,60)]", "S[(60,2):(1,60)]"},
           Case{"S[(8,4,8):(4@lane,1@lane,4)]", "S[(32,8):(1@lane,4)]"},
       }) {
    auto r = axe({"canon", c.in});
    EXPECT_EQ(r.status, 0) << c.in << ": " << r.err;
    EXPECT_EQ(r.out, std::string(c.out) + "\n") << c.in;
  }
}

TEST(CanonCli, ReplicasAreASet) {
  auto a = axe({"canon", "S[4:1] + R[(8,4):(4@lane,1@lane)]"});
  auto b = axe({"canon", "S[4:1] + R[(4,8):(1@lane,4@lane)]"});
  ASSERT_EQ(a.status, 0) << a.err;
  EXPECT_EQ(a.out, b.out);
}

TEST(CanonCli, Json) {
  auto r = axe({"canon", "S[(8,8,8,4,2):(512,64,8,2,1)]", "--json"});
  ASSERT_EQ(r.status, 0) << r.err;
  Json j = parse_json(r.out);
  EXPECT_EQ(j["result"].str(), "S[4096:1]");
}

TEST(CanonCli, Errors) {
  expect_error({"canon"}, "usage: axe canon");
  expect_error({"canon", "S[4:1]", "S[4:1]"}, "too many arguments");
  expect_error({"canon", "S[4:1] +"}, "position");
}

}  // namespace
}  // namespace axe::test::cli
