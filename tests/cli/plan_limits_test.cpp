// `axe plan` / `axe simulate` --staging-limit and --spread-min (PlanRequest::staging_limit and
// PlanRequest::spread_min_bytes): hand-derived plans through the CLI, and bad values.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "cli_test_util.hpp"

namespace axe::test::cli {
namespace {

// S(0) -> R of 64x128 f32 on gpu=4 (the PlanRequest example): each rank holds 16 rows (2048
// elements, 8192 bytes). One all-gather stages a packed block, 3 received blocks and the local
// copy: 5 * 8192 = 40960 bytes. With a 32768-byte limit it is 2 all-gathers of half blocks
// (1024 elements): 5 * 4096 = 20480 bytes each, the same 98304 bytes moved in all.
const std::vector<std::string_view> kGather = {"--shape", "64,128", "--mesh", "gpu=4",
                                               "--from",  "S(0)",   "--to",   "R"};

Json plan_json(std::vector<std::string_view> args) {
  std::string cmd = shell_quote(cli_binary()) + " plan";
  for (auto a : args) cmd += " " + shell_quote(a);
  auto r = run_command(cmd + " --json");
  EXPECT_EQ(r.status, 0) << r.err;
  return parse_json(r.out);
}

std::vector<std::string_view> with(std::vector<std::string_view> v,
                                   std::initializer_list<std::string_view> more) {
  v.insert(v.end(), more.begin(), more.end());
  return v;
}

TEST(PlanLimitsCli, DefaultStagesOneAllGather_HandDerived) {
  Json p = plan_json(kGather);
  ASSERT_EQ(p["steps"].array().size(), 1u);
  EXPECT_EQ(p["steps"][0]["kind"].str(), "all-gather");
  EXPECT_EQ(p["steps"][0]["chunks"].integer(), 1);
  EXPECT_EQ(p["steps"][0]["staging_bytes"].integer(), 40960);
  EXPECT_EQ(p["staging_bytes"].integer(), 40960);
  EXPECT_EQ(p["bytes_sent"].integer(), 98304);
}

TEST(PlanLimitsCli, StagingLimitSplitsTheAllGatherInTwo_HandDerived) {
  for (std::string_view limit : {"32768", "32K", "32k", "32KiB"}) {
    SCOPED_TRACE(std::string(limit));
    Json p = plan_json(with(kGather, {"--staging-limit", limit}));
    ASSERT_EQ(p["steps"].array().size(), 2u);
    for (std::size_t i = 0; i < 2; ++i) {
      const Json& s = p["steps"][i];
      EXPECT_EQ(s["kind"].str(), "all-gather");
      EXPECT_EQ(s["chunk"].integer(), static_cast<std::int64_t>(i));
      EXPECT_EQ(s["chunks"].integer(), 2);
      EXPECT_EQ(s["staging_bytes"].integer(), 20480);
      EXPECT_EQ(s["bytes"].integer(), 49152);  // 12 messages of 1024 f32
      ASSERT_EQ(s["messages"].array().size(), 12u);
      EXPECT_EQ(s["messages"][0].ints(), (std::vector<std::int64_t>{0, 1, 4096}));
    }
    EXPECT_EQ(p["staging_bytes"].integer(), 20480);
    EXPECT_EQ(p["bytes_sent"].integer(), 98304);
    EXPECT_EQ(p["collectives"].integer(), 8);  // 2 chunks on each of 4 ranks
  }
  // The text form shows the chunks and the peak staging.
  auto r = axe({"plan", "--shape", "64,128", "--mesh", "gpu=4", "--from", "S(0)", "--to", "R",
                "--staging-limit", "32K"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("step 0: all-gather on {gpu} (1 groups of 4) chunk 1/2"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("step 1: all-gather on {gpu} (1 groups of 4) chunk 2/2"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("staging 20480 bytes/rank"), std::string::npos) << r.out;
}

TEST(PlanLimitsCli, StagingLimitZeroIsTheDefault) {
  Json p = plan_json(with(kGather, {"--staging-limit", "0"}));
  ASSERT_EQ(p["steps"].array().size(), 1u);
  EXPECT_EQ(p["staging_bytes"].integer(), 40960);
}

TEST(PlanLimitsCli, SimulateVerifiesTheChunkedPlan) {
  auto r = axe({"simulate", "--shape", "64,128", "--mesh", "gpu=4", "--from", "S(0)", "--to", "R",
                "--staging-limit", "32K"});
  ASSERT_EQ(r.status, 0) << r.err << r.out;
  EXPECT_EQ(r.out, "ok: 4 ranks, 2 steps, 98304 bytes moved (lower bound 98304)\n");
  // A tighter limit: 4 chunks (each 5 * 512 elements * 4 = 10240 bytes <= 3/4 of 16384).
  r = axe({"simulate", "--shape", "64,128", "--mesh", "gpu=4", "--from", "S(0)", "--to", "R",
           "--staging-limit", "16K"});
  ASSERT_EQ(r.status, 0) << r.err << r.out;
  EXPECT_EQ(r.out, "ok: 4 ranks, 4 steps, 98304 bytes moved (lower bound 98304)\n");
}

// (S0,R) -> (R,S0) of 256x256 f32 on x=2,y=2 written as Axe layouts, so the planner has only the
// direct exchange (the PlanRequest::spread_min_bytes example). Rank (x,y) = 2x + y holds row
// block x (128 rows, 128 KiB) and needs row block y; ranks 1 and 2 need a block held by two
// replicas. The destination shard over R = 2 replicas is 64 KiB: at or under the threshold each
// replica sends half (64 KiB from every rank); above it the one holder whose coordinate matches
// sends all 128 KiB (ranks 0 and 3) and ranks 1, 2 send nothing.
const std::vector<std::string_view> kSpread = {"--shape", "256,256",
                                               "--mesh",  "x=2,y=2",
                                               "--from",  "S[(2,128,256):(1@x,256,1)] + R[2:1@y]",
                                               "--to",    "S[(2,128,256):(1@y,256,1)] + R[2:1@x]"};

std::vector<std::vector<std::int64_t>> messages(const Json& p) {
  std::vector<std::vector<std::int64_t>> out;
  for (const auto& m : p["steps"][0]["messages"].array()) out.push_back(m.ints());
  return out;
}

TEST(PlanLimitsCli, SpreadMinDecidesWhetherReplicasSplitTheLoad_HandDerived) {
  const std::vector<std::vector<std::int64_t>> split = {
      {0, 2, 65536}, {1, 2, 65536}, {2, 1, 65536}, {3, 1, 65536}};
  const std::vector<std::vector<std::int64_t>> whole = {{0, 2, 131072}, {3, 1, 131072}};
  for (auto [flag, want] :
       std::vector<std::pair<std::string_view, const std::vector<std::vector<std::int64_t>>*>>{
           {"", &split},
           {"16K", &split},
           {"65536", &split},
           {"64K", &split},
           {"65537", &whole},
           {"128K", &whole},
           {"1M", &whole},
           {"0", &split}}) {
    SCOPED_TRACE(std::string(flag));
    Json p = plan_json(flag.empty() ? kSpread : with(kSpread, {"--spread-min", flag}));
    ASSERT_EQ(p["steps"].array().size(), 1u);
    EXPECT_EQ(p["steps"][0]["kind"].str(), "send-recv");
    EXPECT_EQ(messages(p), *want);
    EXPECT_EQ(p["bytes_sent"].integer(), 262144);  // the lower bound either way
    EXPECT_EQ(p["lower_bound_bytes"].integer(), 262144);
  }
  for (std::string_view flag : {"64K", "128K"}) {
    auto r = axe({"simulate", kSpread[0], kSpread[1], kSpread[2], kSpread[3], kSpread[4],
                  kSpread[5], kSpread[6], kSpread[7], "--spread-min", flag});
    ASSERT_EQ(r.status, 0) << r.err << r.out;
    EXPECT_EQ(r.out, "ok: 4 ranks, 1 steps, 262144 bytes moved (lower bound 262144)\n") << flag;
  }
}

TEST(PlanLimitsCli, BadByteCountsAreClearErrors) {
  for (std::string_view flag : {"--staging-limit", "--spread-min"}) {
    for (std::string_view cmd : {"plan", "simulate"}) {
      const std::string name(flag);
      // `cmd` S(0) -> R on gpu=4 with `flag value`: exit 2, `needle` on stderr
      auto bad = [&](std::string_view value, std::string_view needle) {
        expect_error({cmd, "--shape", "64,128", "--mesh", "gpu=4", "--from", "S(0)", "--to", "R", flag, value},
                     needle);
      };
      bad("abc", name + ": expected a byte count");
      bad("abc", "'abc'");
      bad("-4096", "'-4096' (negative)");
      bad("12T", "'12T' (unknown suffix 'T')");
      bad("1.5M", "'1.5M' (unknown suffix '.5M')");
      bad("", "'' (no digits)");
      bad("9999999999G", "'9999999999G' (does not fit in 64 bits)");
      bad("99999999999999999999", "(does not fit in 64 bits)");
      auto r =
          axe({cmd, "--shape", "64,128", "--mesh", "gpu=4", "--from", "S(0)", "--to", "R", flag});
      EXPECT_EQ(r.status, 2);
      EXPECT_NE(r.err.find("option " + name + " needs a value"), std::string::npos) << r.err;
      bad("-", "'-' (no digits)");
    }
  }
}

// 10^10 elements: refused at once with exit 2 and the simulator's limit, while `plan` of the
// same request is instant (plans are symbolic).
TEST(PlanLimitsCli, SimulateBeyondTheSimulatorsLimitIsAClearError) {
  auto r = axe({"simulate", "--shape", "100000,100000", "--mesh", "gpu=4", "--from", "S(0)", "--to", "R"});
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_NE(r.err.find("more than the simulator's 67108864"), std::string::npos) << r.err;
  auto p = axe({"plan", "--shape", "100000,100000", "--mesh", "gpu=4", "--from", "S(0)", "--to", "R"});
  EXPECT_EQ(p.status, 0) << p.err;
}

TEST(PlanLimitsCli, HelpDocumentsTheFlags) {
  for (std::string_view cmd : {"plan", "simulate"}) {
    auto r = axe({cmd, "--help"});
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_NE(r.out.find("--staging-limit BYTES"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("--spread-min BYTES"), std::string::npos) << r.out;
  }
  auto r = axe({"--help"});
  EXPECT_NE(r.out.find("1K = 1024"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace axe::test::cli
