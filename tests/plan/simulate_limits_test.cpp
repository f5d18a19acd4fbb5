// simulate(plan) refuses, before allocating, a plan beyond kMaxSimulatedRanks ranks or
// kMaxSimulatedElements float64 elements (simulation_elements), and runs everything within them.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "axe/core/error.hpp"
#include "axe/exec/simulate.hpp"
#include "axe/plan/plan.hpp"

namespace axe {
namespace {

Plan plan_of(std::vector<std::int64_t> shape, const char* mesh, const char* from, const char* to) {
  Mesh m = parse_mesh(mesh);
  auto pf = parse_placements(from), pt = parse_placements(to);
  PlanRequest r{shard(std::span<const std::int64_t>(shape), m, std::span<const AxisPlacement>(pf)),
                shard(std::span<const std::int64_t>(shape), m, std::span<const AxisPlacement>(pt)), DType::F64};
  CostModel cost;
  return plan_all(r, cost);
}

std::string error_of(const Plan& p) {
  try {
    simulate(p);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

// The count is at least what the simulation must hold: every source shard, every destination
// buffer and the reference's destination slots; S(0)->S(0) of 8x8 on gpu=2 holds 2 x 32 source,
// at least 2 x 32 destination and 2 x 32 reference elements.
TEST(SimulateLimits, ElementsCountSourcesDestinationsAndReference) {
  Plan p = plan_of({8, 8}, "gpu=2", "S(0)", "S(0)");
  EXPECT_GE(simulation_elements(p), 3 * 64);
  Plan g = plan_of({8, 8}, "gpu=2", "S(0)", "R");  // destinations 2 x 64, reference 2 x 64
  EXPECT_GE(simulation_elements(g), 2 * 32 + 2 * 64 + 2 * 64);
}

// 8192 x 8192 = 2^26 elements: the source shards alone reach the limit, the rest passes it.
TEST(SimulateLimits, TooManyElementsIsRefusedWithTheNumbers) {
  Plan p = plan_of({8192, 8192}, "gpu=4", "S(0)", "R");
  EXPECT_GT(simulation_elements(p), kMaxSimulatedElements);
  const std::string e = error_of(p);
  EXPECT_NE(e.find("simulate: the plan needs"), std::string::npos) << e;
  EXPECT_NE(e.find("more than the simulator's 67108864"), std::string::npos) << e;
  // 100000 x 100000 (10^10 elements) is refused the same way, not attempted.
  EXPECT_NE(error_of(plan_of({100000, 100000}, "gpu=4", "S(0)", "S(1)")).find("more than the simulator's"),
            std::string::npos);
}

TEST(SimulateLimits, TooManyRanksIsRefused) {
  Plan p = plan_of({4}, "gpu=5000", "R", "R");
  const std::string e = error_of(p);
  EXPECT_NE(e.find("the plan has 5000 ranks, more than the simulator's 4096"), std::string::npos) << e;
}

// Within the limits the simulation runs and verifies (a sum over 64 ranks and a larger tensor).
TEST(SimulateLimits, WithinTheLimitsSimulationRuns) {
  PlanRequest r = plan_of({512, 512}, "gpu=64", "S(0)", "S(1)").request;
  CostModel cost;
  Plan p = plan_all(r, cost);
  ASSERT_LE(simulation_elements(p), kMaxSimulatedElements);
  EXPECT_EQ(verify(r, simulate(p)), "");
}

}  // namespace
}  // namespace axe
