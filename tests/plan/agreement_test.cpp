// Rank agreement: what MPI/NCCL need from a plan. Every rank records the same step kinds, axes
// and equal_blocks; every member of a collective's group records the same group; messages stay
// inside the group; and for collectives with equal blocks every member moves blocks of one size.
// Planned on every rank of meshes up to 64 ranks, from random (seeded) placements, even and
// uneven shapes.
#include <gtest/gtest.h>

#include <map>

#include "axe/plan/plan.hpp"
#include "axe/exec/simulate.hpp"
#include "random_layouts.hpp"
#include "support/test_support.hpp"

namespace axe {
namespace {

// "" when the plan satisfies the agreement laws, else the first violation.
std::string agreement(const Plan& p) {
  const Mesh& mesh = p.request.from.mesh();
  std::map<std::int64_t, const RankPlan*> by_rank;
  for (const auto& rp : p.ranks) by_rank[rp.rank] = &rp;
  auto where = [&](std::int64_t r, std::size_t i) {
    return "rank " + std::to_string(r) + " step " + std::to_string(i) + " (" + std::string(to_string(p.kinds[i])) + "): ";
  };
  for (const auto& rp : p.ranks) {
    if (rp.steps.size() != p.kinds.size()) return "rank " + std::to_string(rp.rank) + ": step count differs";
    for (std::size_t i = 0; i < rp.steps.size(); ++i) {
      const Step& s = rp.steps[i];
      if (s.kind != p.kinds[i] || s.axes != p.axes[i] || s.equal_blocks != p.equal_blocks[i])
        return where(rp.rank, i) + "kind, axes or equal_blocks differ from the plan's outline";
      // Point-to-point consistency: what rank r sends to q is what q expects from r.
      for (const auto& m : s.sends) {
        const Step& o = by_rank.at(m.peer)->steps[i];
        auto it = std::find_if(o.recvs.begin(), o.recvs.end(), [&](const Message& x) { return x.peer == rp.rank; });
        if (it == o.recvs.end() || it->elements() != m.elements())
          return where(rp.rank, i) + "sends " + std::to_string(m.elements()) + " elements to " +
                 std::to_string(m.peer) + " which does not expect them";
      }
      if (!is_collective(s.kind) || !mesh.contains(rp.rank)) continue;
      if (s.group != mesh.group(rp.rank, s.axes)) return where(rp.rank, i) + "group is not Mesh::group";
      for (auto m : s.group)
        if (by_rank.at(m)->steps[i].group != s.group) return where(rp.rank, i) + "member " + std::to_string(m) + " records another group";
      auto inside = [&](const std::vector<Message>& v) {
        for (const auto& m : v)
          if (std::find(s.group.begin(), s.group.end(), m.peer) == s.group.end()) return false;
        return true;
      };
      if (!inside(s.sends) || !inside(s.recvs)) return where(rp.rank, i) + "a message leaves the group";
      if (s.kind == StepKind::Broadcast && std::find(s.group.begin(), s.group.end(), s.root) == s.group.end())
        return where(rp.rank, i) + "root outside the group";
      if (!s.equal_blocks || s.group.size() < 2) continue;
      // One block size for the whole group.
      std::int64_t block = -1;
      auto same = [&](std::int64_t n) {
        if (block < 0) block = n;
        return block == n;
      };
      // Missing messages count as empty blocks (e.g. a group whose members all hold nothing).
      for (auto m : s.group) {
        const Step& o = by_rank.at(m)->steps[i];
        std::int64_t copies = 0;
        for (const auto& c : o.copies) copies += c.elements();
        auto to = [&](std::int64_t q) -> std::int64_t {
          for (const auto& x : o.sends)
            if (x.peer == q) return x.elements();
          return 0;
        };
        bool ok = true;
        if (s.kind == StepKind::ReduceScatter || s.kind == StepKind::AllReduce) ok = same(copies);
        for (auto q : s.group) {
          if (q == m) continue;
          if (s.kind == StepKind::Broadcast && m != o.root) ok = ok && to(q) == 0;
          else ok = ok && same(to(q));
        }
        if (!ok) return where(m, i) + "blocks of unequal size in an equal-blocks collective";
      }
    }
  }
  return "";
}

const char* kMeshes[] = {"g=2",      "g=3",      "g=5",      "g=8",      "g=16",         "g=64",
                         "x=2,y=2",  "x=4,y=4",  "x=8,y=8",  "x=2,y=32", "x=16,y=4",     "a=2,b=4,c=8",
                         "a=4,b=2,c=2", "a=2,b=3,c=2",
                         // Rank lists that are not 0..n-1 in row-major order (groups are then not
                         // ascending runs of ranks).
                         "g=6:7,3,5,1,9,11", "x=2,y=3:5,3,1,0,2,4", "x=4,y=2:2..9", "a=2,b=2,c=2:7,6,5,4,3,2,1,0"};

TEST(PlanAgreement, EveryRankOfEveryGroupAgrees) {
  auto g = test::make_rng(404);
  for (int i = 0; i < 300; ++i) {
    Mesh m = parse_mesh(kMeshes[g() % std::size(kMeshes)]);
    std::vector<std::int64_t> shape(1 + g() % 3);
    const bool even = g() % 2 == 0;
    for (auto& e : shape) e = even ? m.size() * (1 + static_cast<std::int64_t>(g() % 2)) : 1 + static_cast<std::int64_t>(g() % 70);
    DistLayout from = test::random_placements(g, shape, m, true);
    DistLayout to = test::random_placements(g, shape, m, from.layout().partial().empty() && g() % 4 == 0);
    PlanRequest r{from, to, DType::F32};
    Plan p = plan_all(r);
    ASSERT_EQ(agreement(p), "") << to_string(from) << " -> " << to_string(to) << "\n" << to_string(p);
    if (m.size() <= 16) {
      SimulationResult res;
      ASSERT_NO_THROW(res = simulate(p)) << to_string(p);
      ASSERT_EQ(verify(r, res), "") << to_string(p);
    }
  }
}

// The collectives of the DTensor table are recognised with equal blocks on even shapes and
// keep their kind (with unequal blocks) on uneven ones, on every rank alike.
TEST(PlanAgreement, UnevenCollectivesKeepTheirKind) {
  Mesh m = parse_mesh("g=8");
  for (auto [from, to, kind] : {std::tuple{Shard(0), Replicate(), StepKind::AllGather},
                                {Partial(), Shard(0), StepKind::ReduceScatter},
                                {Shard(0), Shard(1), StepKind::AllToAll}}) {
    for (std::int64_t rows : {64, 10}) {
      PlanRequest r{shard({rows, 16}, m, {from}), shard({rows, 16}, m, {to}), DType::F32};
      Plan p = plan_all(r);
      ASSERT_EQ(p.kinds, std::vector<StepKind>{kind}) << to_string(p);
      EXPECT_EQ(p.equal_blocks[0], rows == 64) << to_string(p);
      EXPECT_EQ(agreement(p), "");
      EXPECT_EQ(verify(r, simulate(p)), "");
    }
  }
}

}  // namespace
}  // namespace axe
