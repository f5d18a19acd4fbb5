// `axe backward LAYOUT --shape S --at AXIS=V,...`: which logical element (and replica / partial
// term) sits at a physical coordinate.
#include <gtest/gtest.h>

#include "cli_test_util.hpp"

namespace axe::test::cli {
namespace {

constexpr const char* kTensorCore = "S[(8,2,4,2):(4@lane,1@warp,1@lane,1)] + R[2:4@warp] + 5@warp";

TEST(BackwardCli, InvertsForward_BothReplicas) {
  // Paper vector: (2,9) lands on {lane 8, warp 6, m 1} (replica 0) and warp 10 (replica 1).
  auto r = axe({"backward", kTensorCore, "--shape", "8,16", "--at", "lane=8,warp=6,m=1"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, "(2,9)  replica 0\n");
  r = axe({"backward", kTensorCore, "--shape", "8,16", "--at", "lane=8,warp=10,m=1"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, "(2,9)  replica 1\n");
}

TEST(BackwardCli, Json) {
  auto r =
      axe({"backward", kTensorCore, "--shape", "8,16", "--at", "m=1,warp=10,lane=8", "--json"});
  ASSERT_EQ(r.status, 0) << r.err;
  Json j = parse_json(r.out);
  EXPECT_TRUE(j["held"].boolean());
  EXPECT_EQ(j["at"].ints(), (std::vector<std::int64_t>{2, 9}));
  EXPECT_EQ(j["index"].integer(), 41);
  EXPECT_EQ(j["replica"].integer(), 1);
  EXPECT_EQ(j["term"].integer(), 0);
}

TEST(BackwardCli, MeshLayout_AbsentAxesAreZero) {
  // {gpu 3, m 518} is (40,70) on the 2x2 mesh (paper vector); {m 0} alone is gpu 0, m 0: (0,0).
  constexpr const char* kMesh = "S[(2,32,2,64):(1@gpu,64,2@gpu,1)]";
  auto r = axe({"backward", kMesh, "--shape", "64,128", "--at", "gpu=3,m=518"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, "(40,70)\n");
  r = axe({"backward", kMesh, "--shape", "64,128", "--at", "m=0"});
  EXPECT_EQ(r.out, "(0,0)\n");
}

TEST(BackwardCli, NotHeld_ExitOne) {
  // Warps 5,6 (+4 for the replica) are used; warp 7 holds nothing.
  auto r = axe({"backward", kTensorCore, "--shape", "8,16", "--at", "lane=8,warp=7,m=1"});
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_EQ(r.out, "not held\n");
  r = axe({"backward", kTensorCore, "--at", "lane=8,warp=7,m=1", "--json"});
  EXPECT_EQ(r.status, 1);
  Json j = parse_json(r.out);
  EXPECT_FALSE(j["held"].boolean());
}

TEST(BackwardCli, Errors) {
  // Two elements on m 1: index 1 (1*1 + 0*1) and index 2.
  expect_error({"backward", "S[(2,2):(1,1)]", "--at", "m=1"}, "not invertible");
  expect_error({"backward", kTensorCore, "--shape", "8,16"}, "missing --at");
  expect_error({"backward", kTensorCore, "--at", "lane=8,lane=9"}, "given twice");
  expect_error({"backward", kTensorCore, "--at", "lane8"}, "expected name=value");
  expect_error({"backward", kTensorCore, "--at", "lane=x"}, "expected an integer");
  expect_error({"backward", kTensorCore, "--shape", "8,8", "--at", "lane=0"}, "has 64 elements");
  expect_error({"backward", "S[8:1", "--at", "m=0"}, "position");
}

}  // namespace
}  // namespace axe::test::cli
