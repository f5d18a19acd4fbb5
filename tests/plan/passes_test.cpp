// Plan passes (passes.hpp), moved from tests/cuda/executor_test.cpp.
#include <gtest/gtest.h>

#include <random>

#include "axe/core/error.hpp"
#include "axe/exec/simulate.hpp"
#include "axe/plan/passes.hpp"

namespace axe {
namespace {

// Folding local slices (host only). (R,P) -> (S0,S1) of 64x128 f32 on x=2,y=2: rank 2 (x=1, y=0)
// first copies its rows 32..63 (source elements 4096..8191) into an intermediate of 4096
// elements, then reduce-scatters them over y. Folded, the local step is empty, the reduce-scatter
// reads the source itself with every source offset 4096 further on, and the intermediate is gone.
TEST(FoldSlices, RowSliceBeforeReduceScatter_HandDerived) {
  Mesh m = parse_mesh("x=2,y=2");
  PlanRequest r{shard({64, 128}, m, {Replicate(), Partial()}), shard({64, 128}, m, {Shard(0), Shard(1)}), DType::F32};
  const RankPlan plan = plan_rank(r, 2);
  ASSERT_EQ(plan.steps.size(), 2u);
  ASSERT_EQ(plan.steps[0].kind, StepKind::LocalCopy);
  ASSERT_EQ(plan.steps[1].in, plan.steps[0].out);
  ASSERT_EQ(plan.buffers[static_cast<std::size_t>(plan.steps[0].out)], 4096);
  RankPlan f = plan;
  fold_slices(f);
  EXPECT_TRUE(f.steps[0].copies.empty());
  EXPECT_EQ(f.steps[1].in, 0);
  EXPECT_EQ(f.buffers[static_cast<std::size_t>(plan.steps[0].out)], 0);
  ASSERT_EQ(f.steps[1].copies.size(), plan.steps[1].copies.size());
  for (std::size_t i = 0; i < f.steps[1].copies.size(); ++i) {
    EXPECT_EQ(f.steps[1].copies[i].src_offset, plan.steps[1].copies[i].src_offset + 4096);
    EXPECT_EQ(f.steps[1].copies[i].dst_offset, plan.steps[1].copies[i].dst_offset);
  }
  ASSERT_EQ(f.steps[1].sends.size(), 1u);
  for (std::size_t i = 0; i < f.steps[1].sends[0].boxes.size(); ++i)
    EXPECT_EQ(f.steps[1].sends[0].boxes[i].src_offset, plan.steps[1].sends[0].boxes[i].src_offset + 4096);
  EXPECT_EQ(f.steps[1].recvs, plan.steps[1].recvs);
  // A column slice (R,P) -> (S1,S0) is strided: nothing folds.
  PlanRequest c{shard({64, 128}, m, {Replicate(), Partial()}), shard({64, 128}, m, {Shard(1), Shard(0)}), DType::F32};
  const RankPlan pc = plan_rank(c, 2);
  RankPlan fc = pc;
  fold_slices(fc);
  EXPECT_EQ(fc.buffers, pc.buffers);
  EXPECT_TRUE(fc.steps == pc.steps);
}

// Oracle: seeded random 2-D transitions (R, S0, S1, P on either axis) of random shapes, even and
// uneven, on 2x2, 1x2 and 2x3 meshes. Every rank's plan folded and run by the host executor
// gives the destination layout; some of them fold.
TEST(FoldSlices, FoldedPlansMatchDestinationLayout_Random) {
  std::mt19937 rng(20261122);
  const char* meshes[] = {"x=2,y=2", "x=1,y=2", "x=2,y=3"};
  const AxisPlacement choices[] = {Replicate(), Shard(0), Shard(1), Partial()};
  int folded = 0;
  for (int trial = 0; trial < 200; ++trial) {
    Mesh m = parse_mesh(meshes[trial % 3]);
    const std::vector<std::int64_t> shape{static_cast<std::int64_t>(1 + rng() % 13), static_cast<std::int64_t>(1 + rng() % 13)};
    std::vector<AxisPlacement> from{choices[rng() % 4], choices[rng() % 4]}, to{choices[rng() % 3], choices[rng() % 3]};
    if (trial % 4 == 0) from = {Replicate(), Partial()}, to = {Shard(0), Shard(1)};
    PlanRequest r;
    try {
      r = PlanRequest{shard(std::span<const std::int64_t>(shape), m, std::span<const AxisPlacement>(from)),
                      shard(std::span<const std::int64_t>(shape), m, std::span<const AxisPlacement>(to)), DType::F64};
      check_request(r);
    } catch (const Error&) {
      continue;  // e.g. a dim sharded twice
    }
    Plan plan = plan_all(r);
    for (auto& rp : plan.ranks) {
      const RankPlan before = rp;
      fold_slices(rp);
      folded += rp.buffers != before.buffers || rp.steps != before.steps;
    }
    EXPECT_EQ(verify(r, simulate(plan)), "") << to_string(plan);
  }
  EXPECT_GT(folded, 0);
}

// Padding, hand-derived (host only). An uneven S(1) shard of 5 rows x 2047 columns stored with a
// pitch of 2048: the copies write columns 0..2046 of each row, so the padding is column 2047 of
// rows 0..4, one 2-D box (5,1) at 2047 with row stride 2048.
TEST(Padding, EqualGapsAtAConstantSpacingAreOneBox) {
  Transfer w{{5, 2047}, 0, {2047, 1}, 0, {2048, 1}, 0};
  auto p = padding_boxes(5 * 2048, {&w});
  ASSERT_TRUE(p.has_value());
  ASSERT_EQ(p->size(), 1u);
  EXPECT_EQ(to_string((*p)[0]), to_string(Transfer{{5, 1}, 2047, {2048, 1}, 2047, {2048, 1}, 0}));
  // fully covered: nothing to pad
  Transfer all{{5, 2048}, 0, {2048, 1}, 0, {2048, 1}, 0};
  EXPECT_TRUE(padding_boxes(5 * 2048, {&all})->empty());
  // gaps of different lengths stay 1-D: writes [0,3) and [5,6) of 10 leave [3,5) and [6,10)
  Transfer a{{3}, 0, {1}, 0, {1}, 0}, b{{1}, 0, {1}, 5, {1}, 0};
  p = padding_boxes(10, {&a, &b});
  ASSERT_TRUE(p.has_value());
  ASSERT_EQ(p->size(), 2u);
  EXPECT_EQ(to_string((*p)[0]), to_string(Transfer{{2}, 3, {1}, 3, {1}, 0}));
  EXPECT_EQ(to_string((*p)[1]), to_string(Transfer{{4}, 6, {1}, 6, {1}, 0}));
  // 65537 rows of an uneven shard (more than the 4096 boxes that a list of 1-D gaps would allow):
  // still one box
  Transfer tall{{65537, 2047}, 0, {2047, 1}, 0, {2048, 1}, 0};
  p = padding_boxes(65537 * 2048, {&tall});
  ASSERT_TRUE(p.has_value());
  ASSERT_EQ(p->size(), 1u);
  EXPECT_EQ((*p)[0].extents, (std::vector<std::int64_t>{65537, 1}));
  // 5000 gaps of growing length cannot merge: over 4096 boxes, the whole buffer is padded
  std::vector<Transfer> ws;
  std::int64_t at = 0;
  for (std::int64_t i = 0; i < 5000; ++i) {
    ws.push_back(Transfer{{1}, 0, {1}, at, {1}, 0});
    at += 2 + i;  // a gap of 1 + i after each written element
  }
  std::vector<const Transfer*> ptrs;
  for (const auto& t : ws) ptrs.push_back(&t);
  EXPECT_FALSE(padding_boxes(at, ptrs).has_value());
}

}  // namespace
}  // namespace axe
