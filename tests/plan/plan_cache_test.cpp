// The plan cache: the same request and rank give the same plan object; anything else in the
// key (layouts, dtype, rank, mesh) gives another plan.
#include <gtest/gtest.h>

#include "axe/plan/plan.hpp"

namespace axe {
namespace {

PlanRequest req(const char* mesh, std::vector<AxisPlacement> from, std::vector<AxisPlacement> to,
                DType dt = DType::F32, std::vector<std::int64_t> shape = {64, 128}) {
  Mesh m = parse_mesh(mesh);
  return {shard(std::span<const std::int64_t>(shape), m, std::span<const AxisPlacement>(from)),
          shard(std::span<const std::int64_t>(shape), m, std::span<const AxisPlacement>(to)), dt};
}

TEST(PlanCache, SameRequestSamePointer) {
  clear_plan_cache();
  auto a = cached_plan_rank(req("gpu=4", {Shard(0)}, {Replicate()}), 1);
  auto b = cached_plan_rank(req("gpu=4", {Shard(0)}, {Replicate()}), 1);  // equal, not the same object
  EXPECT_EQ(a.get(), b.get());
  // The cached plan is the uncached plan.
  RankPlan fresh = plan_rank(req("gpu=4", {Shard(0)}, {Replicate()}), 1);
  EXPECT_EQ(a->steps, fresh.steps);
  EXPECT_EQ(a->buffers, fresh.buffers);
}

TEST(PlanCache, DifferentRequestDifferentPlan) {
  clear_plan_cache();
  auto base = cached_plan_rank(req("gpu=4", {Shard(0)}, {Replicate()}), 1);
  auto other_rank = cached_plan_rank(req("gpu=4", {Shard(0)}, {Replicate()}), 2);
  auto other_to = cached_plan_rank(req("gpu=4", {Shard(0)}, {Shard(1)}), 1);
  auto other_dtype = cached_plan_rank(req("gpu=4", {Shard(0)}, {Replicate()}, DType::BF16), 1);
  auto other_shape = cached_plan_rank(req("gpu=4", {Shard(0)}, {Replicate()}, DType::F32, {64, 64}), 1);
  auto other_mesh = cached_plan_rank(req("gpu=4:4..7", {Shard(0)}, {Replicate()}), 5);
  for (const auto& p : {other_rank, other_to, other_dtype, other_shape, other_mesh}) EXPECT_NE(p.get(), base.get());
  EXPECT_EQ(other_rank->rank, 2);
  EXPECT_EQ(other_to->steps[0].kind, StepKind::AllToAll);
  EXPECT_EQ(other_dtype->dtype, DType::BF16);
  EXPECT_EQ(other_shape->buffers.back(), 64 * 64);
  EXPECT_EQ(other_mesh->steps[0].group, (std::vector<std::int64_t>{4, 5, 6, 7}));
}

TEST(PlanCache, CostModelIsPartOfTheKey) {
  clear_plan_cache();
  PlanRequest r = req("gpu=4", {Partial()}, {Replicate()});
  CostModel slow;
  slow.set(StepKind::AllReduce, {1e-3, 1e-9});
  auto a = cached_plan_rank(r, 0);
  auto b = cached_plan_rank(r, 0, slow);
  auto c = cached_plan_rank(r, 0, slow);
  EXPECT_NE(a.get(), b.get());
  EXPECT_EQ(b.get(), c.get());
  EXPECT_EQ(CostModel().fingerprint(), CostModel().fingerprint());
  EXPECT_NE(CostModel().fingerprint(), slow.fingerprint());
}

// A model equal to the default (the same coefficients set again) shares the default's entry; one
// differing only in local_beta does not. Equality agrees with the fingerprints.
TEST(PlanCache, ModelEqualToTheDefaultSharesItsEntry) {
  clear_plan_cache();
  PlanRequest r = req("gpu=4", {Partial()}, {Replicate()});
  CostModel same;
  same.set(StepKind::AllReduce, CostModel().coeffs(StepKind::AllReduce, {}));
  CostModel local;
  local.local_beta *= 2;
  EXPECT_TRUE(same == CostModel());
  EXPECT_FALSE(local == CostModel());
  EXPECT_EQ(same.fingerprint(), CostModel().fingerprint());
  EXPECT_NE(local.fingerprint(), CostModel().fingerprint());
  auto a = cached_plan_rank(r, 0);
  EXPECT_EQ(cached_plan_rank(r, 0, same).get(), a.get());
  EXPECT_NE(cached_plan_rank(r, 0, local).get(), a.get());
}

TEST(PlanCache, ClearDropsPlans) {
  clear_plan_cache();
  auto a = cached_plan_rank(req("gpu=2", {Partial()}, {Replicate()}), 0);
  std::weak_ptr<const RankPlan> w = a;
  a.reset();
  clear_plan_cache();
  EXPECT_TRUE(w.expired());
  auto b = cached_plan_rank(req("gpu=2", {Partial()}, {Replicate()}), 0);
  EXPECT_EQ(b->steps[0].kind, StepKind::AllReduce);
}

}  // namespace
}  // namespace axe
