// `axe tile OUTER INNER --outer-shape A --inner-shape B` (paper Alg. 2).
#include <gtest/gtest.h>

#include "cli_test_util.hpp"

namespace axe::test::cli {
namespace {

TEST(TileCli, PaperVectors_Canonical) {
  struct Case {
    const char *outer, *outer_shape, *inner, *inner_shape, *canonical;
    std::vector<std::int64_t> shape;
  };
  for (const Case& c : {
           Case{"S[8:1]", "8", "S[8:1]", "8", "S[64:1]", {64}},
           Case{"S[(8,8):(8,1)]", "8,8", "S[(2,4):(1,2)]", "2,4", "S[(8,2,32):(64,1,2)]", {16, 32}},
           Case{"S[(8,8):(8,1)]",
                "8,8",
                "S[(2,3):(3,1)]",
                "2,3",
                "S[(8,2,8,3):(48,3,6,1)]",
                {16, 24}},
       }) {
    auto r = axe({"tile", c.outer, c.inner, "--outer-shape", c.outer_shape, "--inner-shape",
                  c.inner_shape, "--json"});
    ASSERT_EQ(r.status, 0) << r.err;
    Json j = parse_json(r.out);
    EXPECT_EQ(j["canonical"].str(), c.canonical) << c.outer << " x " << c.inner;
    EXPECT_EQ(j["shape"].ints(), c.shape);
    // The plain output is the layout itself, and it is equivalent to the canonical form.
    auto plain = axe(
        {"tile", c.outer, c.inner, "--outer-shape", c.outer_shape, "--inner-shape", c.inner_shape});
    ASSERT_EQ(plain.status, 0) << plain.err;
    EXPECT_EQ(plain.out, j["result"].str() + "\n");
    auto canon = axe({"canon", j["result"].str()});
    EXPECT_EQ(canon.out, std::string(c.canonical) + "\n");
  }
}

TEST(TileCli, WarpTileOfLanes) {
  // The 8x4 lane tile tiled over an 8x8 grid: lanes stay in the inner iters.
  auto r = axe({"tile", "S[(8,8):(8,1)]", "S[(8,4):(4@lane,1@lane)]", "--outer-shape", "8,8",
                "--inner-shape", "8,4", "--json"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(parse_json(r.out)["canonical"].str(), "S[(8,8,8,4):(8,4@lane,1,1@lane)]");
}

TEST(TileCli, Errors) {
  expect_error({"tile", "S[8:1]", "S[8:1]", "--outer-shape", "8", "--inner-shape", "2,4"},
               "same rank");
  expect_error({"tile", "S[8:1]", "S[8:1]", "--outer-shape", "4", "--inner-shape", "8"},
               "has 4 elements");
  expect_error({"tile", "S[8:1]"}, "usage: axe tile");
}

}  // namespace
}  // namespace axe::test::cli
