#include <gtest/gtest.h>

#include "axe/plan/plan.hpp"
#include "axe/exec/simulate.hpp"

namespace axe {
namespace {

TEST(Smoke, S0ToS1) {
  Mesh m = parse_mesh("gpu=4");
  PlanRequest r{shard({64, 128}, m, {Shard(0)}), shard({64, 128}, m, {Shard(1)}), DType::F32};
  Plan p = plan_all(r);
  std::cout << to_string(p) << to_string(p.ranks[1]);
  auto res = simulate(p);
  EXPECT_EQ(verify(r, res), "");
}

}  // namespace
}  // namespace axe
