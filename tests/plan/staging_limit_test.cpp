// Staging bound (PlanRequest::staging_limit): steps whose staging could exceed it are split into
// chunked steps of the same kind, the same number on every rank; simulation still verifies.
#include <gtest/gtest.h>

#include <map>

#include "axe/core/error.hpp"
#include "axe/plan/plan.hpp"
#include "axe/exec/simulate.hpp"
#include "random_layouts.hpp"
#include "support/test_support.hpp"

namespace axe {
namespace {

TEST(StagingLimit, DefaultIsFourTimesSourcePlusDestinationWithOneMiBFloor) {
  Mesh m = parse_mesh("gpu=4");
  PlanRequest small{shard({64, 128}, m, {Shard(0)}), shard({64, 128}, m, {Replicate()}),
                    DType::F32};
  EXPECT_EQ(staging_limit_bytes(small), 1 << 20);  // 4 * (8 + 32) KiB: the floor
  PlanRequest big{shard({1024, 1024}, m, {Shard(0)}), shard({1024, 1024}, m, {Replicate()}),
                  DType::F64};
  EXPECT_EQ(staging_limit_bytes(big), 4 * (256 + 1024) * 1024 * 8);
  big.staging_limit = 12345;
  EXPECT_EQ(staging_limit_bytes(big), 12345);
  big.staging_limit = -1;
  EXPECT_THROW(plan_all(big), Error);
}

// S(0) -> R of 64x128 f32 on gpu=4 (PLANNER_EXAMPLES-style numbers): unchunked, the all-gather
// stages 5 * 2048 elements = 40960 bytes. With a 32 KiB limit: the estimate A + B = 2048 + 8192
// elements over 7/8 of 8192 -> 2 chunks, each a whole all-gather of half blocks: 1024 packed,
// 3 * 1024 received, 1024 copied = 20480 bytes. Bytes moved are unchanged.
TEST(StagingLimit, AllGatherInTwoChunks_HandDerived) {
  Mesh m = parse_mesh("gpu=4");
  PlanRequest r{shard({64, 128}, m, {Shard(0)}), shard({64, 128}, m, {Replicate()}), DType::F32};
  r.staging_limit = 32768;
  Plan p = plan_all(r);
  ASSERT_EQ(p.kinds, (std::vector<StepKind>{StepKind::AllGather, StepKind::AllGather}))
      << to_string(p);
  for (const auto& rp : p.ranks) {
    ASSERT_EQ(rp.steps.size(), 2u);
    for (std::int64_t c = 0; c < 2; ++c) {
      const Step& s = rp.steps[static_cast<std::size_t>(c)];
      EXPECT_EQ(s.chunk, c);
      EXPECT_EQ(s.chunks, 2);
      EXPECT_EQ(s.staging_bytes, 5 * 1024 * 4);
      EXPECT_EQ(s.elements_received(), 3 * 1024);
      EXPECT_TRUE(s.equal_blocks);
    }
    EXPECT_EQ(rp.stats.bytes_received, 3 * 2048 * 4);
    EXPECT_EQ(rp.stats.collectives, 2);
  }
  EXPECT_EQ(verify(r, simulate(p)), "");
  // The default limit (1 MiB) keeps one step.
  r.staging_limit = 0;
  EXPECT_EQ(plan_all(r).kinds.size(), 1u);
}

// Law: every step's staging <= the limit (when the limit is at least 8 * (boxes + messages) *
// element size of the step's chunks: the documented rounding floor); chunk counts agree on every
// rank; equal_blocks chunks really are equal; the simulation verifies.
TEST(StagingLimit, EveryStepWithinLimit_Random) {
  auto g = test::make_rng(404);
  int chunked = 0, checked = 0;
  for (int i = 0; i < 600; ++i) {
    Mesh a = test::random_mesh(g);
    Mesh b = g() % 3 == 0 ? test::other_mesh(g, a) : a;
    std::vector<std::int64_t> shape(1 + g() % 2);
    for (auto& e : shape) e = 1 + static_cast<std::int64_t>(g() % 40);
    const bool general = g() % 3 == 0;
    DistLayout from = general ? test::random_general(g, shape, a, true)
                              : test::random_placements(g, shape, a, true);
    const bool dp = from.layout().partial().empty() && g() % 4 == 0;
    DistLayout to =
        general ? test::random_general(g, shape, b, dp) : test::random_placements(g, shape, b, dp);
    PlanRequest r{from, to, g() % 2 ? DType::F32 : DType::F64};
    static const std::int64_t limits[] = {256, 1024, 2048, 4096, 16384};
    r.staging_limit = limits[g() % std::size(limits)];
    if (g() % 2) r.spread_min_bytes = 1;  // chunking and spreading together
    SCOPED_TRACE(to_string(from) + " -> " + to_string(to) + " limit " +
                 std::to_string(r.staging_limit));
    Plan p = plan_all(r);
    const std::int64_t es = size_of(r.dtype);
    for (const auto& rp : p.ranks) {
      ASSERT_EQ(rp.steps.size(), p.kinds.size());
      std::size_t j = 0;
      while (j < rp.steps.size()) {
        const std::int64_t k = rp.steps[j].chunks;
        std::int64_t pieces = 1;
        for (std::int64_t c = 0; c < k; ++c) {
          const Step& s = rp.steps[j + static_cast<std::size_t>(c)];
          ASSERT_EQ(s.chunk, c);
          ASSERT_EQ(s.chunks, k);
          ASSERT_EQ(s.kind, p.kinds[j + static_cast<std::size_t>(c)]);
          pieces += static_cast<std::int64_t>(s.copies.size() + s.sends.size() + s.recvs.size());
          for (const auto& m : s.sends) pieces += static_cast<std::int64_t>(m.boxes.size());
          for (const auto& m : s.recvs) pieces += static_cast<std::int64_t>(m.boxes.size());
        }
        chunked += k > 1;
        if (r.staging_limit >= 8 * pieces * es) {
          ++checked;
          for (std::int64_t c = 0; c < k; ++c)
            EXPECT_LE(rp.steps[j + static_cast<std::size_t>(c)].staging_bytes, r.staging_limit)
                << "rank " << rp.rank << " step " << j + static_cast<std::size_t>(c) << "\n"
                << to_string(p);
        }
        j += static_cast<std::size_t>(k);
      }
    }
    // equal_blocks: every message of the step (all ranks) has one size.
    for (std::size_t j = 0; j < p.kinds.size(); ++j) {
      if (!p.equal_blocks[j] || !is_collective(p.kinds[j])) continue;
      std::map<std::vector<std::int64_t>, std::int64_t> size_of_group;
      for (const auto& rp : p.ranks) {
        const Step& s = rp.steps[j];
        for (const auto* list : {&s.sends, &s.recvs})
          for (const auto& m : *list) {
            auto [it, fresh] = size_of_group.emplace(s.group, m.elements());
            EXPECT_EQ(it->second, m.elements()) << "step " << j << " rank " << rp.rank << "\n"
                                                << to_string(p);
          }
      }
    }
    SimulationResult res;
    ASSERT_NO_THROW(res = simulate(p)) << to_string(p);
    ASSERT_EQ(verify(r, res), "") << to_string(p);
  }
  EXPECT_GT(chunked, 200);
  EXPECT_GT(checked, 500);
}

}  // namespace
}  // namespace axe
