// `axe validate LAYOUT [--mesh AXIS=N,...]`: exit 0 and "valid", or exit 1 and the reason.
#include <gtest/gtest.h>

#include "cli_test_util.hpp"

namespace axe::test::cli {
namespace {

constexpr const char* kMesh = "S[(2,32,2,64):(1@gpu,64,2@gpu,1)]";

TEST(ValidateCli, ShardedOverFourGpus) {
  auto r = axe({"validate", kMesh, "--mesh", "gpu=4"});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, "valid\n");
  r = axe({"validate", kMesh, "--mesh", "gpu=4", "--json"});
  Json j = parse_json(r.out);
  EXPECT_TRUE(j["valid"].boolean());
  EXPECT_FALSE(j.has("reason"));
}

TEST(ValidateCli, DeviceOutsideTheMesh) {
  // gpu reaches 3 but the mesh has 2 devices.
  auto r = axe({"validate", kMesh, "--mesh", "gpu=2"});
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.out.rfind("invalid: ", 0), 0u) << r.out;
  r = axe({"validate", kMesh, "--mesh", "gpu=2", "--json"});
  EXPECT_EQ(r.status, 1);
  Json j = parse_json(r.out);
  EXPECT_FALSE(j["valid"].boolean());
  EXPECT_FALSE(j["reason"].str().empty());
}

TEST(ValidateCli, TwoElementsOnOneSlot) {
  auto r = axe({"validate", "S[(2,2):(1,1)]"});
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.out.rfind("invalid: ", 0), 0u) << r.out;
}

TEST(ValidateCli, Errors) {
  expect_error({"validate", kMesh, "--mesh", "gpu=0"}, "must be positive");
  expect_error({"validate", kMesh, "--mesh", "gpu"}, "expected name=value");
  expect_error({"validate", kMesh, "--mesh", "9gpu=2"}, "");
}

}  // namespace
}  // namespace axe::test::cli
