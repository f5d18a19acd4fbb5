// `axe plan` and `axe simulate` end to end.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <unistd.h>

#include "support/test_support.hpp"

namespace axe {
namespace {

test::CommandResult axe_cmd(const std::string& args) { return test::run_command(test::cli_binary() + " " + args); }

TEST(PlanCli, PrintsOneLinePerStepAndTotals) {
  auto r = axe_cmd("plan --shape 64,128 --mesh gpu=4 --from 'S(0)' --to 'S(1)'");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("step 0: all-to-all on {gpu}"), std::string::npos) << r.out;
  // 12 messages of 16x32 f32 = 2048 bytes: 24576 bytes in all, equal to the lower bound.
  EXPECT_NE(r.out.find("bytes 24576 total"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("lower bound 24576 bytes"), std::string::npos) << r.out;
}

TEST(PlanCli, PlacementsOnTwoAxesAndJson) {
  auto r = axe_cmd("plan --shape 64,128 --mesh x=2,y=2 --from 'R,P' --to 'S(0),S(1)' --json");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("\"kind\": \"local\""), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\"kind\": \"reduce-scatter\""), std::string::npos) << r.out;
  // Each rank receives one 32x64 f32 block: 4 * 8192 bytes.
  EXPECT_NE(r.out.find("\"bytes_received\": 32768"), std::string::npos) << r.out;
}

TEST(SimulateCli, VerifiesAndDumps) {
  auto dir = std::filesystem::temp_directory_path() / ("axe_sim_" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  auto r = axe_cmd("simulate --shape 5,4 --mesh gpu=4 --from 'R' --to 'S(0)' --dump " + dir.string());
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out.rfind("ok", 0), 0u) << r.out;
  // torch.chunk(5, 4): rank 2 holds row 4 (values 16..19) then a padded row (NaN).
  std::ifstream f(dir / "rank2.bin", std::ios::binary);
  std::vector<double> v(8);
  f.read(reinterpret_cast<char*>(v.data()), 64);
  ASSERT_TRUE(f.good());
  for (int i = 0; i < 4; ++i) EXPECT_EQ(v[static_cast<std::size_t>(i)], 16 + i);
  for (int i = 4; i < 8; ++i) EXPECT_TRUE(std::isnan(v[static_cast<std::size_t>(i)]));
  EXPECT_EQ(std::filesystem::file_size(dir / "rank3.bin"), 64u);
  std::filesystem::remove_all(dir);
}

TEST(SimulateCli, OkLineIsOneFullLine) {
  auto r = axe_cmd("simulate --shape 5,4 --mesh gpu=4 --from 'R' --to 'S(0)'");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, "ok: 4 ranks, 1 steps, 0 bytes moved (lower bound 0)\n");
}

// DTensor's nested chunking end to end: 5 rows over dp=2 then tp=2 -> 2,1,1,1 rows at 0,2,3,4
// (padded local buffer: 2 rows of 3).
TEST(SimulateCli, NestedUnevenDumpMatchesDTensor) {
  auto dir = std::filesystem::temp_directory_path() / ("axe_sim_nested_" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  auto r = axe_cmd("simulate --shape 5,3 --mesh dp=2,tp=2 --from R,R --to 'S(0),S(0)' --dump " + dir.string());
  ASSERT_EQ(r.status, 0) << r.err << r.out;
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const std::vector<std::vector<double>> want = {{0, 1, 2, 3, 4, 5},
                                                 {6, 7, 8, nan, nan, nan},
                                                 {9, 10, 11, nan, nan, nan},
                                                 {12, 13, 14, nan, nan, nan}};
  for (int rank = 0; rank < 4; ++rank) {
    std::ifstream f(dir / ("rank" + std::to_string(rank) + ".bin"), std::ios::binary);
    std::vector<double> v(6);
    f.read(reinterpret_cast<char*>(v.data()), 48);
    ASSERT_TRUE(f.good()) << rank;
    for (std::size_t i = 0; i < 6; ++i) {
      const double w = want[static_cast<std::size_t>(rank)][i];
      EXPECT_TRUE(std::isnan(w) ? std::isnan(v[i]) : v[i] == w) << "rank " << rank << " slot " << i;
    }
  }
  std::filesystem::remove_all(dir);
}

TEST(SimulateCli, CrossMeshAndAxeLayouts) {
  auto r = axe_cmd("simulate --shape 8,6 --mesh g=2 --from 'S[(4,2,6):(6,1@g,1)]' --to 'P(max)' --to-mesh g=3:2..4");
  ASSERT_EQ(r.status, 0) << r.err << r.out;
  EXPECT_EQ(r.out.rfind("ok", 0), 0u) << r.out;
}

TEST(PlanCli, BadInputIsAClearError) {
  auto r = axe_cmd("plan --shape 64,128 --mesh gpu=4 --from 'S(0),S(1)' --to R");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("--from 'S(0),S(1)'"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("one per axis"), std::string::npos) << r.err;
  r = axe_cmd("plan --shape 64,128 --mesh gpu=4 --from 'S[(4,16,128):(1@tp,128,1)]' --to R");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("'tp'"), std::string::npos) << r.err;
  r = axe_cmd("plan --shape 64,128 --mesh gpu=4 --from 'P(max)' --to 'P' --json");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.out.find("\"error\""), std::string::npos) << r.out;
  r = axe_cmd("plan --shape 64,128 --mesh gpu=4 --from R --to R --dtype f8");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("f8"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace axe
