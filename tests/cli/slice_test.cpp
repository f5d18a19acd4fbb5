// `axe slice LAYOUT --shape S --region b:e,...`: the layout of a sub-tensor.
#include <gtest/gtest.h>

#include "cli_test_util.hpp"

namespace axe::test::cli {
namespace {

constexpr const char* kLayout = "S[(2,8,3,8):(192,8,64,1)]";

TEST(SliceCli, PaperVector) {
  // Rows [0,8) x columns [8,24) of the 16x24 tensor (paper vector, checked on all elements there).
  auto r = axe({"slice", kLayout, "--shape", "16,24", "--region", "0:8,8:24"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, "S[(8,2,8):(8,64,1)] + 64\n");
}

TEST(SliceCli, AgreesWithEval) {
  // slice(c) == l(begin + c): element (3,5) of the slice is element (3,13) of the layout.
  auto s = axe({"slice", kLayout, "--shape", "16,24", "--region", "0:8,8:24", "--json"});
  ASSERT_EQ(s.status, 0) << s.err;
  Json j = parse_json(s.out);
  EXPECT_EQ(j["shape"].ints(), (std::vector<std::int64_t>{8, 16}));
  auto a = axe({"eval", j["result"].str(), "--shape", "8,16", "--at", "3,5"});
  auto b = axe({"eval", kLayout, "--shape", "16,24", "--at", "3,13"});
  ASSERT_EQ(a.status, 0) << a.err;
  EXPECT_EQ(a.out, b.out);
}

TEST(SliceCli, Errors) {
  expect_error({"slice", kLayout, "--shape", "16,24", "--region", "0:8,8:25"}, "<= 24");
  expect_error({"slice", kLayout, "--shape", "16,24", "--region", "4:4,0:24"}, "begin < end");
  expect_error({"slice", kLayout, "--shape", "16,24", "--region", "0:8"}, "rank 2");
  expect_error({"slice", kLayout, "--shape", "16,24", "--region", "0-8,0:24"}, "begin:end");
  expect_error({"slice", kLayout, "--shape", "16,24"}, "missing --region");
}

}  // namespace
}  // namespace axe::test::cli
