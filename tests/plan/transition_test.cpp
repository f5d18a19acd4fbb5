// The DTensor transition table: chosen step kinds and byte counts against hand-derived values.
// Global tensor 64x128 f32 (8192 elements, 32768 bytes) unless stated; uneven meshes (3 ranks)
// follow torch.chunk: 64 rows over 3 -> 22,22,20; 128 columns over 3 -> 43,43,42.
#include <gtest/gtest.h>

#include <random>

#include "axe/core/error.hpp"
#include "axe/plan/plan.hpp"
#include "axe/exec/simulate.hpp"

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

namespace axe {
namespace {

// P -> R: one all-reduce, or reduce-scatter + all-gather, as the alpha-beta model decides. The
// model below has a latency-optimised all-reduce (5 us, 10 GB/s) and bandwidth-optimised
// reduce-scatter/all-gather (20 us, 100 GB/s each). On gpu=4 with N bytes:
//   all-reduce: 5 us + 1.5 N / 10 GB/s;  RS + AG: 40 us + 2 * 0.75 N / 100 GB/s.
// 8x8 f32 (256 B): 5.04 us vs 40.004 us -> all-reduce.
// 1024x1024 f32 (4 MiB): 634 us vs 103 us -> reduce-scatter + all-gather (plus pack/unpack at
// 200 GB/s: 2N for the all-reduce, 2N + 2N/4 for the pair, which does not change either choice).
TEST(CostModelChoice, AllReduceForSmallReduceScatterAllGatherForLarge) {
  CostModel cm;
  cm.set(StepKind::AllReduce, {5e-6, 1.0 / 10e9});
  cm.set(StepKind::ReduceScatter, {20e-6, 1.0 / 100e9});
  cm.set(StepKind::AllGather, {20e-6, 1.0 / 100e9});
  Mesh m = parse_mesh("gpu=4");
  for (std::int64_t n : {8, 1024}) {
    PlanRequest r{shard({n, n}, m, {Partial()}), shard({n, n}, m, {Replicate()}), DType::F32};
    r.staging_limit = std::int64_t{1} << 30;  // no chunking here: the choice of kinds is tested
    Plan p = plan_all(r, cm);
    if (n == 8) {
      EXPECT_EQ(p.kinds, std::vector<StepKind>{StepKind::AllReduce}) << to_string(p);
    } else {
      ASSERT_EQ(p.kinds, (std::vector<StepKind>{StepKind::ReduceScatter, StepKind::AllGather})) << to_string(p);
      // Each rank receives 3/4 N in each step: 1.5 N, the ring all-reduce's bytes.
      EXPECT_EQ(p.max_bytes_received, 2 * 3 * (n * n * 4 / 4));
    }
    if (n == 8) {
      EXPECT_EQ(verify(r, simulate(p)), "");
    }
  }
  // With the default model (one alpha-beta for every collective) the single all-reduce wins.
  PlanRequest big{shard({1024, 1024}, m, {Partial()}), shard({1024, 1024}, m, {Replicate()}), DType::F32};
  big.staging_limit = std::int64_t{1} << 30;  // the default limit (4 MiB) would chunk it in 3
  EXPECT_EQ(plan_all(big).kinds, std::vector<StepKind>{StepKind::AllReduce});
  // The two-step form is correct (small shape, same model forced by a huge all-reduce alpha).
  CostModel no_ar;
  no_ar.set(StepKind::AllReduce, {1.0, 1e-9});
  PlanRequest small{shard({6, 5}, m, {Partial(ReduceOp::Avg)}), shard({6, 5}, m, {Replicate()}), DType::F64};
  Plan p = plan_all(small, no_ar);
  ASSERT_EQ(p.kinds, (std::vector<StepKind>{StepKind::ReduceScatter, StepKind::AllGather}));
  EXPECT_EQ(verify(small, simulate(p)), "");
}

// Data held at one coordinate of a group, replicated over it afterwards: a broadcast from that
// member. Mesh x=2,y=4; the 4x8 tensor is split in row halves over x and held at y=2 only.
TEST(Broadcast, HeldOnOneCoordinateToReplicas) {
  Mesh m = parse_mesh("x=2,y=4");
  DistLayout from({4, 8}, parse_axe_layout("S[(2,2,8):(1@x,8,1)] + 2@y"), m);
  DistLayout to({4, 8}, parse_axe_layout("S[(2,2,8):(1@x,8,1)] + R[4:1@y]"), m);
  PlanRequest r{from, to, DType::F32};
  Plan p = plan_all(r);
  ASSERT_EQ(p.kinds, std::vector<StepKind>{StepKind::Broadcast}) << to_string(p);
  EXPECT_EQ(p.axes[0], std::vector<Axis>{Axis("y")});
  // Rank (x,y) = 4x + y; roots are ranks 2 and 6, each sending its 16 elements to 3 members.
  EXPECT_EQ(p.find(5)->steps[0].root, 6);
  EXPECT_EQ(p.find(1)->steps[0].root, 2);
  EXPECT_EQ(p.find(6)->steps[0].sends.size(), 3u);
  EXPECT_EQ(p.totals.bytes_received, 6 * 16 * 4);
  EXPECT_EQ(p.totals.lower_bound_bytes, 6 * 16 * 4);
  EXPECT_EQ(verify(r, simulate(p)), "");
}

}  // namespace
}  // namespace axe

namespace axe {
namespace {

// Staging: per step what the executor allocates, and the peak law.
TEST(Staging, HandDerivedPerStepAndPeak) {
  Mesh m = parse_mesh("gpu=4");
  // S(0) -> R, 64x128 f32: 2048-element block packed once, 3 blocks received, the own block
  // copied through one 2048-element buffer: 5 * 2048 * 4 bytes.
  PlanRequest ag{shard({64, 128}, m, {Shard(0)}), shard({64, 128}, m, {Replicate()}), DType::F32};
  Plan p = plan_all(ag);
  EXPECT_EQ(p.find(1)->steps[0].staging_bytes, 5 * 2048 * 4);
  EXPECT_EQ(p.find(1)->stats.staging_bytes, 5 * 2048 * 4);
  // P -> R: the local term and the reduced result, 8192 elements each.
  PlanRequest ar{shard({64, 128}, m, {Partial()}), shard({64, 128}, m, {Replicate()}), DType::F32};
  EXPECT_EQ(plan_all(ar).find(0)->steps[0].staging_bytes, 2 * 8192 * 4);
}

TEST(Staging, PeakIsIntermediateBuffersPlusLargestStep) {
  auto g = std::mt19937_64(505);
  const char* meshes[] = {"g=4", "x=2,y=2", "x=2,y=4"};
  for (int i = 0; i < 200; ++i) {
    Mesh m = parse_mesh(meshes[g() % 3]);
    std::vector<std::int64_t> shape{1 + static_cast<std::int64_t>(g() % 12), 1 + static_cast<std::int64_t>(g() % 12)};
    auto pl = [&](bool partial) {
      std::vector<AxisPlacement> v;
      for (std::size_t a = 0; a < m.ndim(); ++a) {
        auto k = g() % (partial ? 3 : 2);
        v.push_back(k == 0 ? Shard(static_cast<int>(g() % 2)) : k == 1 ? Replicate() : Partial());
      }
      return shard(std::span<const std::int64_t>(shape), m, std::span<const AxisPlacement>(v));
    };
    PlanRequest r{pl(true), pl(false), DType::F32};
    Plan p = plan_all(r);
    for (const auto& rp : p.ranks) {
      std::int64_t mid = 0, largest = 0;
      for (std::size_t b = 1; b + 1 < rp.buffers.size(); ++b) mid += rp.buffers[b] * 4;
      for (const auto& s : rp.steps) {
        largest = std::max(largest, s.staging_bytes);
        // Every byte sent or received passes through a staging buffer once; an all-reduce stages
        // its local term and the result (its listed messages are not materialised).
        if (s.kind == StepKind::AllReduce && s.group.size() > 1) {
          std::int64_t c = 0;
          for (const auto& t : s.copies) c += t.elements();
          EXPECT_EQ(s.staging_bytes, 2 * c * 4);
        } else if ((s.kind == StepKind::AllGather || s.kind == StepKind::Broadcast) && s.group.size() > 1) {
          // One packed block serves every peer.
          const std::int64_t one = s.sends.empty() ? 0 : s.sends[0].elements();
          EXPECT_GE(s.staging_bytes, (one + s.elements_received()) * 4) << to_string(p);
        } else {
          EXPECT_GE(s.staging_bytes, (s.elements_sent() + s.elements_received()) * 4) << to_string(p);
        }
      }
      EXPECT_EQ(rp.stats.staging_bytes, mid + largest) << to_string(p);
    }
  }
}

}  // namespace
}  // namespace axe
