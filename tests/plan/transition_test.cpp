// The DTensor transition table: chosen step kinds and byte counts against hand-derived values.
// Global tensor 64x128 f32 (8192 elements, 32768 bytes) unless stated; uneven meshes (3 ranks)
// follow torch.chunk: 64 rows over 3 -> 22,22,20; 128 columns over 3 -> 43,43,42.
#include <gtest/gtest.h>

#include "axe/error.hpp"
#include "axe/plan.hpp"
#include "axe/simulate.hpp"

namespace axe {
namespace {

constexpr std::int64_t kRows = 64, kCols = 128, kN = kRows * kCols, kEs = 4;

std::vector<std::int64_t> chunks(std::int64_t n, std::int64_t p) {
  std::int64_t c = (n + p - 1) / p;
  std::vector<std::int64_t> v;
  for (std::int64_t i = 0; i < p; ++i) v.push_back(std::max<std::int64_t>(0, std::min(c, n - i * c)));
  return v;
}

Plan plan_of(const char* mesh, std::vector<AxisPlacement> from, std::vector<AxisPlacement> to,
             std::vector<std::int64_t> shape = {kRows, kCols}) {
  Mesh m = parse_mesh(mesh);
  PlanRequest r{shard(std::span<const std::int64_t>(shape), m, std::span<const AxisPlacement>(from)),
                shard(std::span<const std::int64_t>(shape), m, std::span<const AxisPlacement>(to)), DType::F32};
  Plan p = plan_all(r);
  EXPECT_EQ(verify(r, simulate(p)), "") << to_string(p);
  return p;
}

std::vector<StepKind> kinds(const Plan& p) { return p.kinds; }

class OneD : public ::testing::TestWithParam<int> {};

TEST_P(OneD, ShardToReplicateIsAllGather) {
  const std::int64_t n = GetParam();
  std::string mesh = "gpu=" + std::to_string(n);
  Plan p = plan_of(mesh.c_str(), {Shard(0)}, {Replicate()});
  EXPECT_EQ(kinds(p), std::vector<StepKind>{StepKind::AllGather});
  // Every rank receives everything it does not hold: (n-1) * N elements over all ranks.
  EXPECT_EQ(p.totals.bytes_received, (n - 1) * kN * kEs);
  EXPECT_EQ(p.totals.lower_bound_bytes, (n - 1) * kN * kEs);
  EXPECT_EQ(p.totals.collectives, n);
}

TEST_P(OneD, PartialToReplicateIsAllReduce) {
  const std::int64_t n = GetParam();
  std::string mesh = "gpu=" + std::to_string(n);
  Plan p = plan_of(mesh.c_str(), {Partial()}, {Replicate()});
  EXPECT_EQ(kinds(p), std::vector<StepKind>{StepKind::AllReduce});
  // Ring all-reduce: 2(n-1)/n of the tensor per rank; lower bound: N per rank.
  EXPECT_EQ(p.totals.bytes_received, n * (2 * (n - 1) * kN * kEs / n));
  EXPECT_EQ(p.totals.lower_bound_bytes, n * kN * kEs);
}

TEST_P(OneD, PartialToShardIsReduceScatter) {
  const std::int64_t n = GetParam();
  std::string mesh = "gpu=" + std::to_string(n);
  Plan p = plan_of(mesh.c_str(), {Partial(ReduceOp::Max)}, {Shard(0)});
  EXPECT_EQ(kinds(p), std::vector<StepKind>{StepKind::ReduceScatter});
  // Rank r receives its rows from the n-1 others.
  EXPECT_EQ(p.totals.bytes_received, (n - 1) * kN * kEs);
}

TEST_P(OneD, ShardToShardIsAllToAll) {
  const std::int64_t n = GetParam();
  std::string mesh = "gpu=" + std::to_string(n);
  Plan p = plan_of(mesh.c_str(), {Shard(0)}, {Shard(1)});
  EXPECT_EQ(kinds(p), std::vector<StepKind>{StepKind::AllToAll});
  auto rows = chunks(kRows, n), cols = chunks(kCols, n);
  std::int64_t expect = 0;  // rank r gets rows_p x cols_r from every p != r
  for (std::int64_t r = 0; r < n; ++r)
    for (std::int64_t q = 0; q < n; ++q)
      if (q != r) expect += rows[static_cast<std::size_t>(q)] * cols[static_cast<std::size_t>(r)];
  EXPECT_EQ(p.totals.bytes_received, expect * kEs);
  EXPECT_EQ(p.totals.lower_bound_bytes, expect * kEs);
}

TEST_P(OneD, ReplicateToShardIsALocalSlice) {
  std::string mesh = "gpu=" + std::to_string(GetParam());
  Plan p = plan_of(mesh.c_str(), {Replicate()}, {Shard(1)});
  EXPECT_EQ(kinds(p), std::vector<StepKind>{StepKind::LocalCopy});
  EXPECT_EQ(p.totals.bytes_received, 0);
  EXPECT_EQ(p.totals.lower_bound_bytes, 0);
}

TEST_P(OneD, ReplicateToPartialIsLocal) {
  std::string mesh = "gpu=" + std::to_string(GetParam());
  Plan p = plan_of(mesh.c_str(), {Replicate()}, {Partial()});
  EXPECT_EQ(kinds(p), std::vector<StepKind>{StepKind::LocalCopy});
  EXPECT_EQ(p.totals.bytes_received, 0);
}

TEST_P(OneD, UnevenShardToReplicate) {
  // 10 x 6 over n: rows torch.chunk'ed; every rank still ends with all 60 elements.
  const std::int64_t n = GetParam();
  std::string mesh = "gpu=" + std::to_string(n);
  Plan p = plan_of(mesh.c_str(), {Shard(0)}, {Replicate()}, {10, 6});
  EXPECT_EQ(kinds(p), std::vector<StepKind>{StepKind::AllGather});
  EXPECT_EQ(p.totals.bytes_received, (n - 1) * 60 * kEs);
}

INSTANTIATE_TEST_SUITE_P(Ranks, OneD, ::testing::Values(2, 3, 4, 8));

TEST(TwoD, FullyShardedToReplicatedIsOneAllGatherOnBothAxes) {
  for (auto [mesh, n] : {std::pair<const char*, std::int64_t>{"x=2,y=2", 4}, {"x=2,y=4", 8}, {"x=4,y=2", 8}}) {
    Plan p = plan_of(mesh, {Shard(0), Shard(1)}, {Replicate(), Replicate()});
    ASSERT_EQ(kinds(p), std::vector<StepKind>{StepKind::AllGather}) << mesh;
    EXPECT_EQ(p.axes[0].size(), 2u);
    EXPECT_EQ(p.totals.bytes_received, (n - 1) * kN * kEs) << mesh;
  }
}

TEST(TwoD, PartialBothAxesIsOneAllReduce) {
  Plan p = plan_of("x=2,y=4", {Partial(), Partial()}, {Replicate(), Replicate()});
  ASSERT_EQ(kinds(p), std::vector<StepKind>{StepKind::AllReduce});
  EXPECT_EQ(p.axes[0].size(), 2u);
  EXPECT_EQ(p.totals.bytes_received, 8 * (2 * 7 * kN * kEs / 8));
}

TEST(TwoD, TransposeOfMeshIsAPermute) {
  // PLANNER_EXAMPLES §1: ranks 1 and 2 swap their 2048-element shards; 0 and 3 keep theirs.
  Plan p = plan_of("x=2,y=2", {Shard(0), Shard(1)}, {Shard(1), Shard(0)});
  ASSERT_EQ(kinds(p), std::vector<StepKind>{StepKind::Permute});
  EXPECT_EQ(p.totals.bytes_received, 2 * 2048 * kEs);
  EXPECT_EQ(p.totals.messages, 2);
  EXPECT_EQ(p.totals.lower_bound_bytes, 2 * 2048 * kEs);
  EXPECT_TRUE(p.find(0)->steps[0].sends.empty());
  ASSERT_EQ(p.find(1)->steps[0].sends.size(), 1u);
  EXPECT_EQ(p.find(1)->steps[0].sends[0].peer, 2);
}

TEST(TwoD, SliceBeforeReduceScatter) {
  // PLANNER_EXAMPLES §3: slice rows locally, then reduce-scatter 32x128 over y: each rank
  // receives one 32x64 block (2048 elements) from its y peer; the naive order moves twice that.
  Plan p = plan_of("x=2,y=2", {Replicate(), Partial()}, {Shard(0), Shard(1)});
  ASSERT_EQ(kinds(p), (std::vector<StepKind>{StepKind::LocalCopy, StepKind::ReduceScatter}));
  EXPECT_EQ(p.axes[1], std::vector<Axis>{Axis("y")});
  EXPECT_EQ(p.totals.bytes_received, 4 * 2048 * kEs);
  EXPECT_EQ(p.totals.lower_bound_bytes, 4 * 2048 * kEs);
}

TEST(TwoD, AddingAShardAxisIsLocal) {
  Plan p = plan_of("x=2,y=4", {Shard(0), Replicate()}, {Shard(0), Shard(1)});
  EXPECT_EQ(kinds(p), std::vector<StepKind>{StepKind::LocalCopy});
  EXPECT_EQ(p.totals.bytes_received, 0);
}

TEST(TwoD, GatherOneAxis) {
  // (S0,S1) -> (S0,R) on 2x4: each rank gets 3 blocks of 32x32 from its y group.
  Plan p = plan_of("x=2,y=4", {Shard(0), Shard(1)}, {Shard(0), Replicate()});
  ASSERT_EQ(kinds(p), std::vector<StepKind>{StepKind::AllGather});
  EXPECT_EQ(p.axes[0], std::vector<Axis>{Axis("y")});
  EXPECT_EQ(p.totals.bytes_received, 8 * 3 * 32 * 32 * kEs);
  EXPECT_EQ(p.find(5)->steps[0].group, (std::vector<std::int64_t>{4, 5, 6, 7}));
}

TEST(TwoD, ShardToShardOnOneAxisStaysInItsGroup) {
  // (S0,S0) -> (S0,S1) on 4x2: the y pairs exchange halves of their 16-row block: all-to-all
  // on {y}, each rank receiving 8x64 elements.
  Plan p = plan_of("x=4,y=2", {Shard(0), Shard(0)}, {Shard(0), Shard(1)});
  ASSERT_EQ(kinds(p), std::vector<StepKind>{StepKind::AllToAll});
  EXPECT_EQ(p.axes[0], std::vector<Axis>{Axis("y")});
  EXPECT_EQ(p.totals.bytes_received, 8 * 8 * 64 * kEs);
}

TEST(BadInput, PartialDestinationThatCannotBeProduced) {
  Mesh m = parse_mesh("gpu=2");
  PlanRequest r{shard({4, 4}, m, {Partial(ReduceOp::Max)}), shard({4, 4}, m, {Partial(ReduceOp::Sum)}), DType::F32};
  try {
    plan_all(r);
    FAIL();
  } catch (const Error& e) {
    std::string w = e.what();
    EXPECT_NE(w.find("P<max>"), std::string::npos) << w;
    EXPECT_NE(w.find("reductions differ"), std::string::npos) << w;
  }
  PlanRequest s{shard({4, 4}, m, {Shard(0)}), shard({4, 8}, m, {Shard(0)}), DType::F32};
  EXPECT_THROW(plan_all(s), Error);
}

}  // namespace
}  // namespace axe
