// The planner's strategy search (strategy.cpp), shared with per-rank plan building (build.cpp)
// and the plan cache (cache.cpp).
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "axe/plan/plan.hpp"
#include "plan/internal.hpp"

namespace axe::internal {

// Layouts are shared, never copied: a DistLayout copies its mesh's rank list (32 KiB at 4096
// ranks), and a strategy search used to copy some twenty of them.
using LayoutPtr = std::shared_ptr<const DistLayout>;

struct Strategy {
  std::vector<LayoutPtr> layouts;  // layouts[0] = from, back() = to
  std::vector<StepKind> kinds;
  std::vector<std::vector<Axis>> axes;
  std::vector<bool> equal_blocks;
  std::vector<std::int64_t> roots;
  std::vector<std::shared_ptr<Pair>> pairs;
  std::vector<std::int64_t> chunks;  // per step: how many chunked steps (staging bound)
  std::vector<bool> spread;          // per step: replicated source split over its replicas
  std::shared_ptr<Pair> direct;  // for the lower bound
  double cost = 0;
};

// The cheapest candidate for the request (rank-independent); check_request's checks first.
Strategy choose(const PlanRequest& req, const CostModel& cm);

// This rank's part of the plan of strategy s.
RankPlan build_rank(const PlanRequest& req, const Strategy& s, std::int64_t rank);

}  // namespace axe::internal
