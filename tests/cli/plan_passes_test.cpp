// `axe plan` / `axe simulate` --passes, --chunks and --rank (plan/passes.hpp): the printed plan is
// the plan an executor runs. Hand-derived plans through the CLI, and bad values.
#include <gtest/gtest.h>

#include <string>

#include "cli_test_util.hpp"

namespace axe::test::cli {
namespace {

// (R,P) -> (S0,S1) of 64x128 f32 on x=2,y=2: a local row slice into a 4096-element intermediate,
// then a reduce-scatter over y. With the CUDA passes the slice folds: step 0 copies nothing, the
// intermediate (16384 bytes) is gone, so the peak staging drops from 49152 to the
// reduce-scatter's 32768 bytes, and the steps write every element (nothing to pad).
TEST(PlanPassesCli, CudaPassesFoldTheSlice_HandDerived) {
  auto plain = axe({"plan", "--shape", "64,128", "--mesh", "x=2,y=2", "--from", "R,P", "--to", "S(0),S(1)"});
  ASSERT_EQ(plain.status, 0) << plain.err;
  EXPECT_NE(plain.out.find("step 0: local  bytes 0 total, 0 max/rank, local 65536"), std::string::npos) << plain.out;
  EXPECT_NE(plain.out.find("staging 49152 bytes/rank"), std::string::npos) << plain.out;
  EXPECT_EQ(plain.out.find("pad"), std::string::npos) << plain.out;
  auto r = axe({"plan", "--shape", "64,128", "--mesh", "x=2,y=2", "--from", "R,P", "--to", "S(0),S(1)", "--passes",
                "cuda"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("step 0: local  bytes 0 total, 0 max/rank, local 0"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("pad: nothing (the steps write every element)\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("staging 32768 bytes/rank"), std::string::npos) << r.out;
  auto s = axe({"simulate", "--shape", "64,128", "--mesh", "x=2,y=2", "--from", "R,P", "--to", "S(0),S(1)",
                "--passes", "fold,pad"});
  EXPECT_EQ(s.status, 0) << s.err << s.out;
  EXPECT_EQ(s.out.rfind("ok: 4 ranks, 2 steps", 0), 0u) << s.out;
}

// S(0) -> S(1) of 5x4095 f32 on gpu=2: rank 1's destination shard has 2047 columns at a pitch
// of 2048, so column 2047 of its 5 rows is padding: one box, listed per rank with --rank and
// summed in the plan and its JSON.
TEST(PlanPassesCli, PadsOfAnUnevenShard_HandDerived) {
  std::string cmd = shell_quote(cli_binary());
  for (std::string_view a : {"plan", "--shape", "5,4095", "--mesh", "gpu=2", "--from", "S(0)", "--to", "S(1)", "--passes",
                             "pad"})
    cmd += " " + shell_quote(a);
  auto r = run_command(cmd);
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("pad buffer 1 (destination): 5 elements on 1 ranks, 1 boxes max/rank\n"), std::string::npos)
      << r.out;
  auto j = run_command(cmd + " --json");
  ASSERT_EQ(j.status, 0) << j.err;
  Json p = parse_json(j.out);
  ASSERT_EQ(p["pads"].array().size(), 1u);
  EXPECT_EQ(p["pads"][0]["buffer"].integer(), 1);
  EXPECT_EQ(p["pads"][0]["elements"].integer(), 5);
  EXPECT_EQ(p["pads"][0]["ranks"].integer(), 1);
  EXPECT_EQ(p["pads"][0]["max_boxes"].integer(), 1);
  auto one = run_command(cmd + " --rank 1");
  ASSERT_EQ(one.status, 0) << one.err;
  EXPECT_NE(one.out.find(" pad buffer 1 (5 elements)\n  (5,1) src 2047+(2048,1) dst 2047+(2048,1)\n"),
            std::string::npos)
      << one.out;
  // Without the pass nothing is listed (executors pad whole buffers).
  auto none = axe({"plan", "--shape", "5,4095", "--mesh", "gpu=2", "--from", "S(0)", "--to", "S(1)", "--json"});
  EXPECT_FALSE(parse_json(none.out).has("pads")) << none.out;
}

// --chunks: S(1) -> R of 64x128 f32 on gpu=4 as 3 all-gathers, chunk c of 3 each; the chunked
// plan simulates correctly.
TEST(PlanPassesCli, ChunksPipelineTheSteps_HandDerived) {
  auto r = axe({"plan", "--shape", "64,128", "--mesh", "gpu=4", "--from", "S(1)", "--to", "R", "--chunks", "3"});
  ASSERT_EQ(r.status, 0) << r.err;
  for (int c = 1; c <= 3; ++c)
    EXPECT_NE(r.out.find("step " + std::to_string(c - 1) + ": all-gather on {gpu} (1 groups of 4) chunk " +
                         std::to_string(c) + "/3"),
              std::string::npos)
        << r.out;
  auto s = axe({"simulate", "--shape", "64,128", "--mesh", "gpu=4", "--from", "S(1)", "--to", "R", "--passes", "cuda",
                "--chunks", "3"});
  ASSERT_EQ(s.status, 0) << s.err << s.out;
  EXPECT_EQ(s.out.rfind("ok: 4 ranks, 3 steps", 0), 0u) << s.out;
}

TEST(PlanPassesCli, BadValuesAreClearErrors) {
  for (std::string_view cmd : {"plan", "simulate"}) {
    auto bad = [&](std::string_view flag, std::string_view value, std::string_view needle) {
      expect_error({cmd, "--shape", "64,128", "--mesh", "gpu=4", "--from", "S(0)", "--to", "R", flag, value}, needle);
    };
    bad("--passes", "fold,chunk", "--passes: passes 'fold,chunk': unknown pass 'chunk'");
    bad("--passes", "", "unknown pass ''");
    bad("--chunks", "2,2", "--chunks '2,2': 2 counts for a plan of 1 steps (one per step)");
    bad("--chunks", "0", "--chunks '0': 0 chunks (each count must be >= 1)");
    bad("--chunks", "x", "--chunks");
  }
  expect_error({"plan", "--shape", "64,128", "--mesh", "gpu=4", "--from", "S(0)", "--to", "R", "--rank", "9"},
               "--rank 9: not a rank of either mesh");
  expect_error({"plan", "--shape", "64,128", "--mesh", "gpu=4", "--from", "S(0)", "--to", "R", "--rank", "1,2"},
               "--rank '1,2': expected one rank");
  // The planner already chunked the all-gather for its staging limit: it cannot be pipelined.
  expect_error({"plan", "--shape", "64,128", "--mesh", "gpu=4", "--from", "S(0)", "--to", "R", "--staging-limit", "32K",
                "--chunks", "2,1"},
               "step 0 is already chunk 1 of 2");
}

TEST(PlanPassesCli, HelpDocumentsTheFlags) {
  auto r = axe({"plan", "--help"});
  ASSERT_EQ(r.status, 0) << r.err;
  for (std::string_view flag : {"--passes PASSES", "--chunks K,K,...", "--rank R", "cuda (those of the CUDA executor"})
    EXPECT_NE(r.out.find(flag), std::string::npos) << flag << "\n" << r.out;
  r = axe({"simulate", "--help"});
  EXPECT_NE(r.out.find("--passes"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace axe::test::cli
