// Replicated sources spread the sending load (PlanRequest::spread_min_bytes): a box a receiver
// needs and does not hold is split over all source replicas, one contiguous part each.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>

#include "axe/plan/plan.hpp"
#include "axe/exec/simulate.hpp"
#include "random_layouts.hpp"
#include "support/test_support.hpp"

namespace axe {
namespace {

// Collectives priced out: the planner takes the direct exchange.
CostModel direct_only() {
  CostModel cm;
  for (auto k : {StepKind::AllGather, StepKind::ReduceScatter, StepKind::AllReduce,
                 StepKind::AllToAll, StepKind::Broadcast})
    cm.set(k, {1.0, 1e-9});
  return cm;
}

std::int64_t sent_bytes(const RankPlan& rp) {
  return rp.stats.bytes_sent;
}

// (S0,R) -> (R,S0) of 256x256 f32 on x=2,y=2 (rank = 2x + y). Source: rank (x,y) holds row block
// x (128 rows, 128 KiB); destination: rank (x,y) needs row block y. Ranks 0 (0,0) and 3 (1,1)
// hold what they need. Rank 1 needs block 1 from ranks 2 and 3 (replicas over y): 64 rows from
// each, rank 2 (replica y=0) rows 128..191, rank 3 rows 192..255; rank 2 needs block 0: rows
// 0..63 from rank 0, 64..127 from rank 1. Every rank sends 64 KiB (the lower bound's 256 KiB over
// four ranks); unsplit, ranks 0 and 3 would send 128 KiB and ranks 1, 2 nothing.
TEST(Spread, RowBlocksTransposedOnTwoByTwo_HandDerived) {
  Mesh m = parse_mesh("x=2,y=2");
  PlanRequest r{shard({256, 256}, m, {Shard(0), Replicate()}),
                shard({256, 256}, m, {Replicate(), Shard(0)}), DType::F32};
  Plan p = plan_all(r, direct_only());
  ASSERT_EQ(p.kinds, std::vector<StepKind>{StepKind::SendRecv}) << to_string(p);
  for (std::int64_t rank = 0; rank < 4; ++rank) EXPECT_EQ(sent_bytes(*p.find(rank)), 65536) << rank;
  EXPECT_EQ(p.find(0)->stats.bytes_received, 0);
  EXPECT_EQ(p.find(1)->stats.bytes_received, 131072);
  EXPECT_EQ(p.find(2)->stats.bytes_received, 131072);
  EXPECT_EQ(p.totals.lower_bound_bytes, 2 * 131072);
  // Rank 2's receives: from rank 0 the rows 0..63 at its buffer's start, from rank 1 rows 64..127.
  const Step& s2 = p.find(2)->steps[0];
  ASSERT_EQ(s2.recvs.size(), 2u);
  EXPECT_EQ(s2.recvs[0].peer, 0);
  EXPECT_EQ(s2.recvs[1].peer, 1);
  ASSERT_EQ(s2.recvs[1].boxes.size(), 1u);
  EXPECT_EQ(s2.recvs[1].boxes[0].elements(), 64 * 256);
  EXPECT_EQ(s2.recvs[1].boxes[0].dst_offset, 64 * 256);
  EXPECT_EQ(s2.recvs[1].boxes[0].src_offset, 64 * 256);  // rank 1's second half of block 0
  EXPECT_EQ(verify(r, simulate(p)), "");
  // Above the threshold nothing is split: one holder per receiver.
  r.spread_min_bytes = 1 << 20;
  Plan q = plan_all(r, direct_only());
  EXPECT_EQ(sent_bytes(*q.find(0)), 131072);
  EXPECT_EQ(sent_bytes(*q.find(1)), 0);
  EXPECT_EQ(sent_bytes(*q.find(2)), 0);
  EXPECT_EQ(sent_bytes(*q.find(3)), 131072);
  EXPECT_EQ(verify(r, simulate(q)), "");
}

// Random replicated sources (direct exchanges, every box spread): simulation verifies; spreading
// moves the same bytes; for plans that are one send-recv exchange: within each replica group
// (source ranks holding the same data) the bytes sent differ by at most R elements per box received
// from the group (each split box: at most one element between parts; a box of fewer than R elements
// is not split); the busiest sender never sends more than without spreading (plus that rounding).
TEST(Spread, ReplicatedSourcesBalanced_Random) {
  auto g = test::make_rng(606);
  static const char* meshes[] = {"x=2,y=2", "x=2,y=3", "x=3,y=2",
                                 "x=2,y=4", "x=4,y=2", "x=2,y=2,z=2"};
  int spread_cases = 0, direct = 0;
  for (int i = 0; i < 300; ++i) {
    Mesh m = parse_mesh(meshes[g() % std::size(meshes)]);
    std::vector<std::int64_t> shape(1 + g() % 2);
    for (auto& e : shape) e = 1 + static_cast<std::int64_t>(g() % 24);
    std::vector<AxisPlacement> fp, tp;
    bool any_r = false;
    for (std::size_t a = 0; a < m.ndim(); ++a) {
      const bool rep = g() % 2 == 0;
      any_r = any_r || rep;
      fp.push_back(rep ? Replicate() : Shard(static_cast<int>(g() % shape.size())));
      tp.push_back(g() % 3 == 0 ? Replicate() : Shard(static_cast<int>(g() % shape.size())));
    }
    if (!any_r) fp[g() % fp.size()] = Replicate();
    PlanRequest r{
        shard(std::span<const std::int64_t>(shape), m, std::span<const AxisPlacement>(fp)),
        shard(std::span<const std::int64_t>(shape), m, std::span<const AxisPlacement>(tp)),
        DType::F64};
    r.spread_min_bytes = 1;
    SCOPED_TRACE(to_string(r.from) + " -> " + to_string(r.to));
    Plan p = plan_all(r, direct_only());
    ASSERT_EQ(verify(r, simulate(p)), "") << to_string(p);
    PlanRequest u = r;
    u.spread_min_bytes = std::int64_t{1} << 40;
    Plan q = plan_all(u, direct_only());
    EXPECT_EQ(p.totals.bytes_sent, q.totals.bytes_sent);
    // The law is about one exchange from the replicated source (a permute, or a staged plan whose
    // later steps start from another layout, is not spread).
    if (p.kinds != std::vector<StepKind>{StepKind::SendRecv}) continue;
    ++direct;
    // Replica groups: source ranks with equal coordinates on the non-replicated axes.
    std::map<std::vector<std::int64_t>, std::vector<std::int64_t>> groups;
    for (auto rank : m.ranks()) {
      auto c = m.coord(rank);
      for (std::size_t a = 0; a < m.ndim(); ++a)
        if (fp[a].kind == AxisPlacement::Kind::Replicate) c[a] = -1;
      groups[c].push_back(rank);
    }
    std::int64_t R = 1;
    for (std::size_t a = 0; a < m.ndim(); ++a)
      if (fp[a].kind == AxisPlacement::Kind::Replicate) R *= m.sizes()[a];
    std::int64_t slack_all = 0, max_p = 0, max_q = 0;
    for (const auto& [key, members] : groups) {
      std::int64_t boxes = 0, lo = std::int64_t{1} << 62, hi = 0;
      for (const auto& rp : p.ranks)
        for (const auto& s : rp.steps)
          for (const auto& msg : s.recvs)
            if (std::find(members.begin(), members.end(), msg.peer) != members.end())
              boxes += static_cast<std::int64_t>(msg.boxes.size());
      for (auto rank : members) {
        lo = std::min(lo, sent_bytes(*p.find(rank)));
        hi = std::max(hi, sent_bytes(*p.find(rank)));
      }
      EXPECT_LE(hi - lo, 8 * R * boxes) << to_string(p);
      slack_all = std::max(slack_all, 8 * R * boxes);
    }
    for (const auto& rp : p.ranks) max_p = std::max(max_p, sent_bytes(rp));
    for (const auto& rp : q.ranks) max_q = std::max(max_q, sent_bytes(rp));
    EXPECT_LE(max_p, max_q + slack_all);
    spread_cases += p.totals.messages > q.totals.messages;
  }
  EXPECT_GT(spread_cases, 50);
  EXPECT_GT(direct, 50);
}

}  // namespace
}  // namespace axe
