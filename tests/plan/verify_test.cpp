// verify(request, result): replicas and padding exact; a partial destination only has to hold
// terms that reduce to each element's value (the semantics of P), whichever term holds which part.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "axe/core/error.hpp"
#include "axe/exec/simulate.hpp"
#include "axe/plan/plan.hpp"
#include "random_layouts.hpp"
#include "support/test_support.hpp"

namespace axe {
namespace {

DistLayout placed(std::vector<std::int64_t> shape, const Mesh& m, const char* placements) {
  auto p = parse_placements(placements);
  return shard(std::span<const std::int64_t>(shape), m, std::span<const AxisPlacement>(p));
}

// Shape (2) on gpu=2, destination P (sum): rank t holds term t of elements 0 and 1 at slots 0, 1.
// Any split of 0 and 1 over the two terms is correct; anything else is not.
TEST(Verify, PartialSumDestination_AnySplitThatSumsIsCorrect) {
  Mesh m = parse_mesh("gpu=2");
  PlanRequest r{placed({2}, m, "R"), placed({2}, m, "P"), DType::F64};
  SimulationResult res;
  res.destination = {{0, {0, 1}}, {1, {0, 0}}};  // everything on term 0
  EXPECT_EQ(verify(r, res), "");
  res.destination = {{0, {5, -2}}, {1, {-5, 3}}};  // 5 + -5 = 0, -2 + 3 = 1
  EXPECT_EQ(verify(r, res), "");
  res.destination = {{0, {0, 1}}, {1, {0, 1}}};  // element 1: 1 + 1 = 2
  const std::string e = verify(r, res);
  EXPECT_NE(e.find("element 1"), std::string::npos) << e;
  EXPECT_NE(e.find("reduce to 2, expected 1"), std::string::npos) << e;
}

// P(max) on gpu=2: the larger of the two terms is the value.
TEST(Verify, PartialMaxDestination_TheLargestTermIsTheValue) {
  Mesh m = parse_mesh("gpu=2");
  PlanRequest r{placed({2}, m, "R"), placed({2}, m, "P(max)"), DType::F64};
  SimulationResult res;
  res.destination = {{0, {0, -4}}, {1, {-3, 1}}};  // max(0,-3) = 0, max(-4,1) = 1
  EXPECT_EQ(verify(r, res), "");
  res.destination = {{0, {0, 7}}, {1, {-3, 1}}};  // max(7,1) = 7
  EXPECT_NE(verify(r, res).find("reduce to 7, expected 1"), std::string::npos);
}

// Without partial terms every slot is exact: replicas that would "sum" right are still wrong.
TEST(Verify, ReplicatedDestination_IsExact) {
  Mesh m = parse_mesh("gpu=2");
  PlanRequest r{placed({2}, m, "S(0)"), placed({2}, m, "R"), DType::F64};
  SimulationResult res;
  res.destination = {{0, {0, 1}}, {1, {0, 1}}};
  EXPECT_EQ(verify(r, res), "");
  res.destination = {{0, {1, 0}}, {1, {0, 1}}};
  EXPECT_NE(verify(r, res).find("rank 0 slot 0: expected 0"), std::string::npos);
}

// A partial destination with replicas (P,R on x=2,y=2, rank = 2x + y) checks each replica's terms
// on their own: replica y=0 is ranks 0 and 2 (its terms x=0,1), replica y=1 ranks 1 and 3.
TEST(Verify, PartialWithReplicas_EachReplicaReduces) {
  Mesh m = parse_mesh("x=2,y=2");
  PlanRequest r{placed({2}, m, "R,R"), placed({2}, m, "P,R"), DType::F64};
  SimulationResult res;
  res.destination = {{0, {0, 1}}, {2, {0, 0}}, {1, {3, 0}}, {3, {-3, 1}}};
  EXPECT_EQ(verify(r, res), "");
  res.destination = {{0, {0, 1}}, {2, {0, 0}}, {1, {3, 0}}, {3, {-3, 0}}};  // replica y=1, element 1: 0
  EXPECT_NE(verify(r, res).find("element 1"), std::string::npos);
}

// The cases of issue 15: a correct plan between partial layouts verifies (it printed MISMATCH
// because the checker wanted each term to keep its index).
TEST(Verify, PartialToPartial_IssueCasesVerify) {
  Mesh m = parse_mesh("x=2,y=2");
  const char* cases[][2] = {{"P,R", "R,P"}, {"P,S(0)", "S(1),P"}, {"P,S(0)", "R,P"}, {"S(0),P", "P,S(1)"}};
  for (std::vector<std::int64_t> shape : {std::vector<std::int64_t>{3, 2}, {2, 2}, {4, 6}, {5, 3}})
    for (auto& c : cases) {
      PlanRequest r{placed(shape, m, c[0]), placed(shape, m, c[1]), DType::F64};
      SCOPED_TRACE(std::string(c[0]) + " -> " + c[1] + " shape " + std::to_string(shape[0]) + "," +
                   std::to_string(shape[1]));
      Plan p = plan_all(r);
      EXPECT_EQ(verify(r, simulate(p)), "") << to_string(p);
    }
}

// A corrupted term still fails: one term off by one changes its element's sum.
TEST(Verify, PartialToPartial_CorruptedTermFails) {
  Mesh m = parse_mesh("x=2,y=2");
  PlanRequest r{placed({3, 2}, m, "P,R"), placed({3, 2}, m, "R,P"), DType::F64};
  SimulationResult res = simulate(plan_all(r));
  ASSERT_EQ(verify(r, res), "");
  for (auto& [rank, buf] : res.destination)
    for (std::size_t i = 0; i < buf.size(); ++i) {
      SimulationResult bad = res;
      bad.destination[rank][i] += 1;
      EXPECT_NE(verify(r, bad).find("reduce to"), std::string::npos) << "rank " << rank << " slot " << i;
      bad.destination[rank][i] = std::numeric_limits<double>::quiet_NaN();
      EXPECT_NE(verify(r, bad), "") << "rank " << rank << " slot " << i;
    }
}

// Seeded random partial -> partial requests (random meshes, shapes, placements, ops): the plan
// simulates to a destination that verifies. Pairs the planner rejects (different reduce ops) are
// skipped; enough must remain.
TEST(Verify, RandomPartialToPartial_Verifies) {
  auto g = test::make_rng(1515);
  int checked = 0;
  for (int i = 0; i < 3000; ++i) {
    Mesh a = test::random_mesh(g);
    Mesh b = g() % 3 == 0 ? test::other_mesh(g, a) : a;
    auto shape = test::random_shape(g);
    DistLayout from = test::random_placements(g, shape, a, true);
    DistLayout to = test::random_placements(g, shape, b, true);
    if (from.layout().partial().empty() || to.layout().partial().empty()) continue;
    PlanRequest r{from, to, DType::F64};
    Plan p;
    try {
      p = plan_all(r);
    } catch (const Error&) {
      continue;  // e.g. P(sum) -> P(max): not a redistribution
    }
    SCOPED_TRACE("case " + std::to_string(i) + ": " + to_string(from) + " -> " + to_string(to));
    ASSERT_EQ(verify(r, simulate(p)), "") << to_string(p);
    ++checked;
  }
  EXPECT_GT(checked, 100);
}

}  // namespace
}  // namespace axe
