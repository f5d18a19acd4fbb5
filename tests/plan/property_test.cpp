// Seeded random property tests: simulation equals the destination layout applied to the global
// tensor; bytes received never below the lower bound; no rank sends data it does not hold.
#include <gtest/gtest.h>

#include <cmath>

#include "axe/plan/plan.hpp"
#include "axe/exec/simulate.hpp"
#include "random_layouts.hpp"
#include "support/test_support.hpp"

namespace axe {
namespace {

// Every source slot read by step 0 (sends and local copies) holds data (not padding).
std::string reads_only_held(const Plan& p) {
  for (const auto& rp : p.ranks) {
    if (rp.steps.empty() || !p.request.from.mesh().contains(rp.rank)) continue;
    std::vector<double> src = fill_source(p.request.from, rp.rank);
    const Step& s = rp.steps[0];
    auto check = [&](const Transfer& t) -> bool {
      std::vector<std::int64_t> idx(t.extents.size(), 0);
      for (auto e : t.extents)
        if (e == 0) return true;
      while (true) {
        std::int64_t off = t.src_offset;
        for (std::size_t i = 0; i < idx.size(); ++i) off += idx[i] * t.src_strides[i];
        if (off < 0 || off >= static_cast<std::int64_t>(src.size()) || std::isnan(src[static_cast<std::size_t>(off)]))
          return false;
        std::size_t k = idx.size();
        while (k > 0 && ++idx[k - 1] == t.extents[k - 1]) idx[--k] = 0;
        if (k == 0) return true;
      }
    };
    for (const auto& m : s.sends)
      for (const auto& b : m.boxes)
        if (!check(b)) return "rank " + std::to_string(rp.rank) + " sends " + to_string(b) + " to " + std::to_string(m.peer) + " which it does not hold";
    for (const auto& b : s.copies)
      if (!check(b)) return "rank " + std::to_string(rp.rank) + " copies " + to_string(b) + " which it does not hold";
  }
  return "";
}

void check_one(const PlanRequest& r, const std::string& what) {
  SCOPED_TRACE(what + ": " + to_string(r.from) + " -> " + to_string(r.to));
  Plan p = plan_all(r);
  SimulationResult res;
  try {
    res = simulate(p);
  } catch (const std::exception& e) {
    FAIL() << e.what() << "\n" << to_string(p);
  }
  ASSERT_EQ(verify(r, res), "") << to_string(p);
  EXPECT_GE(p.totals.bytes_received, p.totals.lower_bound_bytes) << to_string(p);
  EXPECT_EQ(reads_only_held(p), "") << to_string(p);
  // Sends and receives agree: every byte sent is received.
  std::int64_t sent = 0, recv = 0;
  for (const auto& rp : p.ranks)
    for (const auto& s : rp.steps) {
      sent += s.elements_sent();
      recv += s.elements_received();
    }
  EXPECT_EQ(sent, recv);
}

TEST(PlanProperty, Placements_SimulationMatchesLayout) {
  auto g = test::make_rng(101);
  int nested = 0;
  for (int i = 0; i < 1500; ++i) {
    Mesh a = test::random_mesh(g);
    Mesh b = g() % 3 == 0 ? test::other_mesh(g, a) : a;
    auto shape = test::random_shape(g);
    DistLayout from = test::random_placements(g, shape, a, true);
    DistLayout to = test::random_placements(g, shape, b, from.layout().partial().empty() && g() % 4 == 0);
    nested += from.nested() || to.nested();
    check_one({from, to, DType::F32}, "case " + std::to_string(i));
    if (HasFatalFailure()) return;
  }
  EXPECT_GT(nested, 50);  // nested-uneven dims (DTensor's several axes on one dim) are covered
}

TEST(PlanProperty, GeneralLayouts_SimulationMatchesLayout) {
  auto g = test::make_rng(202);
  for (int i = 0; i < 1500; ++i) {
    Mesh a = test::random_mesh(g);
    Mesh b = test::other_mesh(g, a);
    auto shape = test::random_shape(g);
    DistLayout from = g() % 4 == 0 ? test::random_placements(g, shape, a, true) : test::random_general(g, shape, a, true);
    bool dst_partial = from.layout().partial().empty() && g() % 4 == 0;
    DistLayout to = g() % 4 == 0 ? test::random_placements(g, shape, b, dst_partial) : test::random_general(g, shape, b, dst_partial);
    PlanRequest r{from, to, DType::F64};
    if (i % 2) r.spread_min_bytes = 1;  // replicated sources split every box over the replicas
    check_one(r, "case " + std::to_string(i));
    if (HasFatalFailure()) return;
  }
}

// Brute-force oracle: the element-by-element reference exchange fills the same buffers.
TEST(PlanOracle, ReferenceExchangeAgrees) {
  auto g = test::make_rng(303);
  int nested = 0;
  for (int i = 0; i < 300; ++i) {
    Mesh a = test::random_mesh(g);
    Mesh b = test::other_mesh(g, a);
    auto shape = test::random_shape(g);
    DistLayout from = test::random_general(g, shape, a, true);
    DistLayout to = test::random_general(g, shape, b, false);
    PlanRequest r{from, to, DType::F32};
    nested += from.nested() || to.nested();
    auto ref = reference_destination(from, to);
    SimulationResult res = simulate(plan_all(r));
    for (const auto& [rank, want] : ref) {
      const auto& got = res.destination.at(rank);
      ASSERT_EQ(got.size(), want.size());
      for (std::size_t k = 0; k < want.size(); ++k)
        ASSERT_TRUE((std::isnan(want[k]) && std::isnan(got[k])) || want[k] == got[k])
            << to_string(from) << " -> " << to_string(to) << " rank " << rank << " slot " << k;
    }
  }
  EXPECT_GT(nested, 10);
}

}  // namespace
}  // namespace axe
