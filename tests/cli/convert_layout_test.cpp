// `axe convert-layout --from THREADS --to THREADS --shape S --dtype T [--simulate]`
// (src/cli/convert_layout_command.cpp).
#include <gtest/gtest.h>

#include "cli_test_util.hpp"

namespace axe::test::cli {
namespace {

Json convert(std::initializer_list<std::string_view> args) {
  auto r = axe(args);
  EXPECT_EQ(r.status, 0) << r.err;
  return parse_json(r.out);
}

// TV-19: the 4x4 transpose across 4 lanes: by shuffles 16 selects, 3 shuffles (on one warp the
// cheapest is shared memory: ConvertPlan.IssueCost_ChoosesTheCheaperMechanism).
TEST(ConvertLayoutCli, TV19_Transpose_Shuffles) {
  Json j =
      convert({"convert-layout", "--from", "S[(4,4):(1@lane,1)]", "--to", "S[(4,4):(1,1@lane)]",
               "--shape", "4,4", "--dtype", "f32", "--choose", "shuffles", "--simulate", "--json"});
  EXPECT_EQ(j["mechanism"].str(), "shuffles");
  EXPECT_TRUE(j["simulated"].boolean());
  EXPECT_EQ(j["selects"].integer(), 16);
  EXPECT_EQ(j["shuffles"].integer(), 3);
  EXPECT_EQ(j["shared_bytes"].integer(), 0);
  EXPECT_EQ(j["barriers"].integer(), 0);
  EXPECT_EQ(j["wavefronts"].integer(), 0);
}

TEST(ConvertLayoutCli, NoneAndRegisters) {
  Json j =
      convert({"convert-layout", "--from", "S[(8,32,4):(4,1@lane,1)]", "--to",
               "S[(8,32,2,2):(4,1@lane,2,1)]", "--shape", "8,128", "--dtype", "f16", "--json"});
  EXPECT_EQ(j["mechanism"].str(), "none");
  EXPECT_FALSE(j["simulated"].boolean());
  j = convert({"convert-layout", "--from", "S[(8,32,4):(4,1@lane,1)]", "--to",
               "S[(8,32,4):(1,1@lane,8)]", "--shape", "8,128", "--dtype", "f16", "--simulate",
               "--json"});
  EXPECT_EQ(j["mechanism"].str(), "registers");
  EXPECT_TRUE(j["simulated"].boolean());
  EXPECT_GT(j["register_moves"].integer(), 0);
  EXPECT_EQ(j["selects"].integer() + j["shuffles"].integer(), 0);
}

// A source broadcast over lane bit 0, a destination that tells those lanes apart: no lane
// movement, one conditional register permutation (8 selects).
TEST(ConvertLayoutCli, BroadcastSource_RegistersWithSelects) {
  Json j = convert({"convert-layout", "--from", "S[(16,8):(2@lane,1)] + R[2:1@lane]", "--to",
                    "S[(16,2,4):(2@lane,1@lane,1)]", "--shape", "16,8", "--dtype", "f32",
                    "--simulate", "--json"});
  EXPECT_EQ(j["mechanism"].str(), "registers");
  EXPECT_TRUE(j["simulated"].boolean());
  EXPECT_EQ(j["selects"].integer(), 8);
  EXPECT_EQ(j["shuffles"].integer(), 0);
}

// A wgmma accumulator (64x64, 4 warps) to a blocked layout: rows cross warps, so shared memory.
TEST(ConvertLayoutCli, WgmmaToBlocked_Shared) {
  const char* wgmma = "S[(4,2,8,8,4,2):(1@warp,2,4@lane,4,1@lane,1)]";
  const char* blocked =
      "S[(8,4,32,4):(4,1@warp,1@lane,1)]";  // blocked 1x4 per thread, 2x16 lanes, 4x1 warps
  Json j = convert({"convert-layout", "--from", wgmma, "--to", blocked, "--shape", "64,64",
                    "--dtype", "f32", "--simulate", "--json"});
  EXPECT_EQ(j["mechanism"].str(), "shared");
  EXPECT_TRUE(j["simulated"].boolean());
  EXPECT_EQ(j["shared_bytes"].integer(), 64 * 64 * 4);
  EXPECT_EQ(j["barriers"].integer(), 1);
  EXPECT_EQ(j["wavefronts"].integer(),
            j["store_wavefronts"].integer() + j["load_wavefronts"].integer());
  EXPECT_GT(j["wavefronts"].integer(), 0);
  // With a 4 KiB budget: 4 repetitions, 7 barriers.
  j = convert({"convert-layout", "--from", wgmma, "--to", blocked, "--shape", "64,64", "--dtype",
               "f32", "--shared-budget", "4096", "--simulate", "--json"});
  EXPECT_EQ(j["shared_bytes"].integer(), 4096);
  EXPECT_EQ(j["repetitions"].integer(), 4);
  EXPECT_EQ(j["barriers"].integer(), 7);
  EXPECT_TRUE(j["simulated"].boolean());
}

// TV-15, the 16x32 f32 transpose. By shuffles: 128 selects, 16 shuffles, cost 128 + 2 x 16 =
// 160. Through the optimal swizzle (the default shared tile): 4 stores of 16 bytes and 4
// ldmatrix.x4 (16 registers, 4 per instruction), 16 + 16 wavefronts, one barrier (a
// bar.warp.sync on one warp, 4): 8 + 2 x 32 + 4 = 76, so shared wins. With --swizzle 4,1,4
// (scalar stores): 32 + 2 x 32 + 4 = 100.
TEST(ConvertLayoutCli, TV15_ChooseAndSwizzle) {
  const char* st = "S[(16,32):(1,1@lane)]";
  const char* ld = "S[(16,16,2):(1@lane,1,16@lane)]";
  Json j = convert({"convert-layout", "--from", st, "--to", ld, "--shape", "16,32", "--dtype",
                    "f32", "--choose", "shuffles", "--simulate", "--json"});
  EXPECT_EQ(j["mechanism"].str(), "shuffles");
  EXPECT_EQ(j["selects"].integer(), 128);
  EXPECT_EQ(j["issue_cost"].integer(), 160);
  j = convert({"convert-layout", "--from", st, "--to", ld, "--shape", "16,32", "--dtype", "f32",
               "--simulate", "--json"});
  EXPECT_EQ(j["mechanism"].str(), "shared");
  EXPECT_TRUE(j["simulated"].boolean());
  EXPECT_EQ(j["store_wavefronts"].integer(), 16);
  EXPECT_EQ(j["load_wavefronts"].integer(), 16);
  EXPECT_EQ(j["load_instructions"].integer(), 4);
  EXPECT_EQ(j["issue_cost"].integer(), 76);
  j = convert({"convert-layout", "--from", st, "--to", ld, "--shape", "16,32", "--dtype", "f32",
               "--swizzle", "4,1,4", "--simulate", "--json"});
  EXPECT_EQ(j["mechanism"].str(), "shared");
  EXPECT_TRUE(j["simulated"].boolean());
  EXPECT_EQ(j["wavefronts"].integer(), 32);
  EXPECT_EQ(j["issue_cost"].integer(), 100);
  expect_error({"convert-layout", "--from", st, "--to", ld, "--shape", "16,32", "--dtype", "f32",
                "--choose", "fastest"},
               "--choose: expected cheapest, shuffles or shared, got 'fastest'");
}

TEST(ConvertLayoutCli, Text) {
  auto r = axe({"convert-layout", "--from", "S[(4,4):(1@lane,1)]", "--to", "S[(4,4):(1,1@lane)]",
                "--shape", "4,4", "--dtype", "f32", "--choose", "shuffles", "--simulate"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out.rfind("mechanism: shuffles\n", 0), 0u) << r.out;
  EXPECT_NE(r.out.find("selects 16, shuffles 3"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("simulated: 1 warp(s) x 4 lanes"), std::string::npos) << r.out;
}

// --from/--to as thread-layout specs: the wgmma accumulator (wgmma:64/4,1) to the blocked layout
// 1x4 per thread, 2x16 lanes, 4x1 warps (blocked:1,4/2,16/4,1; by hand on 64x64: m -> columns
// 1,2 and rows 8,16,32, lanes -> columns 4..32 and row 1, warps -> rows 2,4, i.e.
// S[(8,4,32,4):(4,1@warp,1@lane,1)]) plan and simulate exactly as their Axe texts.
TEST(ConvertLayoutCli, ThreadSpecs_EqualAxeTexts) {
  auto spec = axe({"convert-layout", "--from", "wgmma:64/4,1", "--to", "blocked:1,4/2,16/4,1",
                   "--shape", "64,64", "--dtype", "f16", "--shared-budget", "4096", "--simulate", "--json"});
  auto text = axe({"convert-layout", "--from", "S[(4,2,8,8,4,2):(1@warp,2,4@lane,4,1@lane,1)]", "--to",
                   "S[(8,4,32,4):(4,1@warp,1@lane,1)]", "--shape", "64,64", "--dtype", "f16",
                   "--shared-budget", "4096", "--simulate", "--json"});
  ASSERT_EQ(spec.status, 0) << spec.err;
  EXPECT_EQ(spec.out, text.out);
  EXPECT_TRUE(parse_json(spec.out)["simulated"].boolean());
  // TV-19 with the destination as linear bases (coordinates [row, col]): S[(4,4):(1,1@lane)]
  // puts the columns on lanes 1, 2 and the rows on registers 1, 2.
  spec = axe({"convert-layout", "--from", "S[(4,4):(1@lane,1)]", "--to",
              R"(linear:{"reg":[[1,0],[2,0]],"lane":[[0,1],[0,2]]})", "--shape", "4,4", "--dtype", "f32",
              "--simulate", "--json"});
  text = axe({"convert-layout", "--from", "S[(4,4):(1@lane,1)]", "--to", "S[(4,4):(1,1@lane)]", "--shape",
              "4,4", "--dtype", "f32", "--simulate", "--json"});
  ASSERT_EQ(spec.status, 0) << spec.err;
  EXPECT_EQ(spec.out, text.out);
}

TEST(ConvertLayoutCli, Errors) {
  const char* a = "S[(8,32):(1,1@lane)]";
  expect_error({"convert-layout", "--from", "S[(8,16):(1,1@lane)]", "--to", a, "--shape", "8,32",
                "--dtype", "f32"},
               "--from S[(8,16):(1,1@lane)] holds 128 elements but the tile has 256");
  expect_error({"convert-layout", "--from", a, "--to", "S[(4,32):(1,1@lane)]", "--shape", "8,32",
                "--dtype", "f32"},
               "--to S[(4,32):(1,1@lane)] holds 128 elements");
  expect_error({"convert-layout", "--from", "S[(2,8,32):(1@warp,1,1@lane)]", "--to",
                "S[(16,32):(1,1@lane)]", "--shape", "16,32", "--dtype", "f32"},
               "--from S[(2,8,32):(1@warp,1,1@lane)] uses 2 warp(s) but --to");
  expect_error({"convert-layout", "--from", a, "--to", "S[(8,32):(1,1@gpu)]", "--shape", "8,32",
                "--dtype", "f32"},
               "--to S[(8,32):(1,1@gpu)] uses axis 'gpu'");
  expect_error({"convert-layout", "--from", "S[(8,32):(1,1@lane", "--to", a, "--shape", "8,32",
                "--dtype", "f32"},
               "--from 'S[(8,32):(1,1@lane'");
  expect_error({"convert-layout", "--from", "S[(8,6):(1,1@lane)]", "--to", "S[(8,6):(1,1@lane)]",
                "--shape", "8,6", "--dtype", "f32"},
               "--from S[(8,6):(1,1@lane)] is not F2-linear");
  expect_error({"convert-layout", "--from", "blocked:1,4/8,8/4,1", "--to", a, "--shape", "8,32",
                "--dtype", "f32"},
               "--from: thread layout 'blocked:1,4/8,8/4,1' on (8,32): threads per warp (8,8) multiply "
               "to 64, not 32");
  expect_error({"convert-layout", "--from", a, "--to", "mma:2", "--shape", "8,32", "--dtype", "f32"},
               "--to: thread layout 'mma:2' on (8,32): warps per CTA (2) has 1 entries but the shape has "
               "rank 2");
  expect_error({"convert-layout", "--from", "blocked:1,x/8,4/4,1", "--to", a, "--shape", "8,32",
                "--dtype", "f32"},
               "--from 'blocked:1,x/8,4/4,1': parse error at position 10: expected an integer (size per "
               "thread)");
  expect_error({"convert-layout", "--from", a, "--to", a, "--shape", "8,32", "--dtype", "f9"},
               "unknown dtype 'f9'");
  expect_error({"convert-layout", "--from", a, "--shape", "8,32", "--dtype", "f32"},
               "missing --to");
  expect_error({"convert-layout", "--from", a, "--to", a, "--shape", "8,32", "--dtype", "f32",
                "--shared-budget", "2"},
               "--shared-budget 2 is smaller than one element");
}

}  // namespace
}  // namespace axe::test::cli
