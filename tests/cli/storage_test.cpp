// `axe storage LAYOUT`: the per-owner memory layout (every non-memory iter dropped).
#include <gtest/gtest.h>

#include "cli_test_util.hpp"

namespace axe::test::cli {
namespace {

TEST(StorageCli, DropsDeviceIters) {
  auto r = axe({"storage", "S[(2,32,2,64):(1@gpu,64,2@gpu,1)]"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, "S[(32,64):(64,1)]\n");
  r = axe({"storage", "S[(2,32,2,64):(1@gpu,64,2@gpu,1)]", "--json"});
  EXPECT_EQ(parse_json(r.out)["result"].str(), "S[(32,64):(64,1)]");
}

TEST(StorageCli, Errors) {
  expect_error({"storage", "S[(2,32):(1@gpu)]"}, "position");
}

}  // namespace
}  // namespace axe::test::cli
