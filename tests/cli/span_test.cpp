// `axe span LAYOUT`: per-axis span 1 + sum |s|(e-1) over D, R and P (the offset excluded).
#include <gtest/gtest.h>

#include "cli_test_util.hpp"

namespace axe::test::cli {
namespace {

constexpr const char* kTensorCore = "S[(8,2,4,2):(4@lane,1@warp,1@lane,1)] + R[2:4@warp] + 5@warp";

TEST(SpanCli, TensorCoreTile) {
  // lane: 1 + 4*7 + 1*3 = 32; warp: 1 + 1*1 + 4*1 = 6 (offset 5 excluded); m: 1 + 1 = 2.
  auto r = axe({"span", kTensorCore});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, "{lane 32, warp 6, m 2}\n");
}

TEST(SpanCli, Json) {
  auto r = axe({"span", kTensorCore, "--json"});
  ASSERT_EQ(r.status, 0) << r.err;
  Json j = parse_json(r.out);
  EXPECT_EQ(j["span"]["lane"].integer(), 32);
  EXPECT_EQ(j["span"]["warp"].integer(), 6);
  EXPECT_EQ(j["span"]["m"].integer(), 2);
  EXPECT_EQ(j["size"].integer(), 128);
  EXPECT_EQ(j["replicas"].integer(), 2);
  EXPECT_EQ(j["terms"].integer(), 1);
}

TEST(SpanCli, NegativeStrideCountsItsMagnitude) {
  // 1 + |-3|*(4-1) = 10.
  auto r = axe({"span", "S[4:-3]"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, "{m 10}\n");
}

TEST(SpanCli, Errors) {
  expect_error({"span", "S[4:1]", "--shape", "4"}, "unknown option");
}

}  // namespace
}  // namespace axe::test::cli
