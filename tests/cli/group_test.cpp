// `axe group LAYOUT --shape S` (paper Alg. 1).
#include <gtest/gtest.h>

#include "cli_test_util.hpp"

namespace axe::test::cli {
namespace {

TEST(GroupCli, SplitsAnIter) {
  // The extent-4 iter splits into 2 (stride 12, dim 0) x 2 (stride 6); 2*6 == 12 is dim 1.
  auto r = axe({"group", "S[(4,6):(6,1)]", "--shape", "2,12"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, "S[(2,2,6):(12,6,1)]\nboundaries [0,1,3]\n");
}

TEST(GroupCli, KeepsItersThatAlreadyFit) {
  auto r = axe({"group", "S[(8,8,8,8):(512,8,64,1)]", "--shape", "64,64", "--json"});
  ASSERT_EQ(r.status, 0) << r.err;
  Json j = parse_json(r.out);
  EXPECT_EQ(j["result"].str(), "S[(8,8,8,8):(512,8,64,1)]");
  EXPECT_EQ(j["boundaries"].ints(), (std::vector<std::int64_t>{0, 2, 4}));
}

TEST(GroupCli, Errors) {
  // The first iter has extent 2, which does not split along a first dim of 3 (and the iters do
  // not merge: 1 != 3*2).
  expect_error({"group", "S[(2,3):(1,2)]", "--shape", "3,2"}, "cannot be grouped");
  expect_error({"group", "S[(2,3):(1,2)]", "--shape", "4,2"}, "8 elements");
  expect_error({"group", "S[(2,3):(3,1)]"}, "missing --shape");
  expect_error({"group", "S[(2,3):(3,1)]", "--shape", "0,6"}, "must be positive");
}

}  // namespace
}  // namespace axe::test::cli
