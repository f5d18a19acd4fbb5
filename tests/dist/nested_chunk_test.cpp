// Uneven dims over several mesh axes: DTensor's nested torch.chunk, element for element.
//
// The reference here is written from DTensor's own rule (torch/distributed/tensor: for each mesh
// axis in order that shards dim d, the local piece is torch.chunk'ed again), independently of
// the Axe layout machinery: local size and global offset per dim, local buffer row-major over
// the padded local shape, padding NaN.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "axe/dist/placement.hpp"
#include "axe/plan/plan.hpp"
#include "axe/exec/simulate.hpp"
#include "support/test_support.hpp"

namespace axe {
namespace {

// torch.chunk(n, p)[i]: (size, offset) -- chunk c = ceil(n/p), a short or empty tail.
std::pair<std::int64_t, std::int64_t> chunk(std::int64_t n, std::int64_t p, std::int64_t i) {
  const std::int64_t c = (n + p - 1) / p;
  const std::int64_t off = std::min(n, c * i);
  return {std::clamp<std::int64_t>(n - c * i, 0, c), off};
}

struct DTensorShard {
  std::vector<std::int64_t> size, offset, padded_local;
};

// DTensor: per placement in mesh order, re-chunk the current local piece of its dim.
DTensorShard dtensor_shard(const std::vector<std::int64_t>& shape, const Mesh& m,
                           const std::vector<AxisPlacement>& ps, std::int64_t rank) {
  DTensorShard s{shape, std::vector<std::int64_t>(shape.size(), 0), shape};
  auto c = m.coord(rank);
  for (std::size_t a = 0; a < ps.size(); ++a) {
    if (ps[a].kind != AxisPlacement::Kind::Shard) continue;
    auto d = static_cast<std::size_t>(ps[a].dim);
    auto [sz, off] = chunk(s.size[d], m.sizes()[a], c[a]);
    s.size[d] = sz;
    s.offset[d] += off;
    s.padded_local[d] = (s.padded_local[d] + m.sizes()[a] - 1) / m.sizes()[a];
  }
  return s;
}

// The rank's local buffer under DTensor: value = global row-major index, padding NaN.
std::vector<double> dtensor_buffer(const std::vector<std::int64_t>& shape, const Mesh& m,
                                   const std::vector<AxisPlacement>& ps, std::int64_t rank) {
  auto s = dtensor_shard(shape, m, ps, rank);
  std::int64_t n = 1;
  for (auto e : s.padded_local) n *= e;
  std::vector<double> b(static_cast<std::size_t>(n), std::numeric_limits<double>::quiet_NaN());
  std::vector<std::int64_t> j(shape.size(), 0);
  for (std::int64_t slot = 0; slot < n; ++slot) {
    std::int64_t rem = slot;
    bool inside = true;
    std::int64_t g = 0;
    for (std::size_t d = shape.size(); d-- > 0;) {
      j[d] = rem % s.padded_local[d];
      rem /= s.padded_local[d];
    }
    for (std::size_t d = 0; d < shape.size(); ++d) {
      inside = inside && j[d] < s.size[d];
      g = g * shape[d] + s.offset[d] + j[d];
    }
    if (inside) b[static_cast<std::size_t>(slot)] = static_cast<double>(g);
  }
  return b;
}

bool same(const std::vector<double>& a, const std::vector<double>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (!((std::isnan(a[i]) && std::isnan(b[i])) || a[i] == b[i])) return false;
  return true;
}

struct Case {
  std::int64_t n;
  std::vector<std::int64_t> size, begin;  // per rank 0..3 of dp=2,tp=2
};

TEST(NestedChunk, HandDerivedShardsOnTwoByTwo) {
  // Rows over dp then tp (DTensor {Shard(0), Shard(0)}), ranks (dp,tp) = 0:(0,0) 1:(0,1) ...
  //   10: dp 5|5, tp 3,2|3,2 -> 3,2,3,2 at 0,3,5,8
  //    7: dp 4|3, tp 2,2|2,1 -> 2,2,2,1 at 0,2,4,6
  //    5: dp 3|2, tp 2,1|1,1 -> 2,1,1,1 at 0,2,3,4
  //    2: dp 1|1, tp 1,0|1,0 -> 1,0,1,0 at 0,-,1,-
  Mesh m = parse_mesh("dp=2,tp=2");
  const std::vector<Case> cases = {{10, {3, 2, 3, 2}, {0, 3, 5, 8}},
                                   {7, {2, 2, 2, 1}, {0, 2, 4, 6}},
                                   {5, {2, 1, 1, 1}, {0, 2, 3, 4}},
                                   {2, {1, 0, 1, 0}, {0, -1, 1, -1}}};
  for (const auto& c : cases) {
    SCOPED_TRACE("n = " + std::to_string(c.n));
    auto l = shard({c.n, 3}, m, {Shard(0), Shard(0)});
    const std::int64_t chunk_rows = (c.n + 3) / 4;
    EXPECT_EQ(l.padded_shape()[0], 4 * chunk_rows);
    EXPECT_EQ(l.local_elements(), chunk_rows * 3);  // padded to the per-level ceil
    for (std::int64_t r = 0; r < 4; ++r) {
      LocalShard s = local_shard(l, r);
      const auto ur = static_cast<std::size_t>(r);
      EXPECT_EQ(s.shape, (std::vector<std::int64_t>{c.size[ur], 3})) << r;
      if (c.size[ur] == 0) {
        EXPECT_TRUE(s.regions.empty()) << r;
        EXPECT_EQ(s.shape[0], 0);
        continue;
      }
      ASSERT_EQ(s.regions.size(), 1u) << r;
      EXPECT_EQ(to_string(s.regions[0]), "[" + std::to_string(c.begin[ur]) + ":" +
                                             std::to_string(c.begin[ur] + c.size[ur]) + ", 0:3]")
          << r;
    }
  }
  // 7 over 2x2 is the flat torch.chunk too: no nested bound is kept.
  EXPECT_FALSE(shard({7}, m, {Shard(0), Shard(0)}).nested());
  EXPECT_TRUE(shard({10}, m, {Shard(0), Shard(0)}).nested());
  EXPECT_FALSE(shard({8}, m, {Shard(0), Shard(0)}).nested());
}

TEST(NestedChunk, JaxStyleIsOneChunkOverTheProduct) {
  // Shard(0, {dp,tp}): torch.chunk(5, 4) = 2,2,1,0 at rows 0,2,4.
  Mesh m = parse_mesh("dp=2,tp=2");
  auto l = shard({5}, m, {Shard(0, {"dp", "tp"})});
  EXPECT_FALSE(l.nested());
  const std::vector<std::int64_t> sizes{2, 2, 1, 0};
  for (std::int64_t r = 0; r < 4; ++r)
    EXPECT_EQ(local_shard(l, r).shape[0], sizes[static_cast<std::size_t>(r)]);
  // Same Axe layout as the DTensor-style one, but a different layout: they must not compare equal
  // (plans are cached by layout).
  auto d = shard({5}, m, {Shard(0), Shard(0)});
  EXPECT_EQ(d.layout(), l.layout());
  EXPECT_FALSE(d == l);
  EXPECT_NE(to_string(d), to_string(l));
  EXPECT_NE(to_string(d).find("nested d0:(2,2)"), std::string::npos);
}

TEST(NestedChunk, ThreeRowsOverFourByTwo) {
  // dp=4: 1,1,1,0; each tp=2: 1,0. Rows 0,1,2 on (0,0),(1,0),(2,0).
  Mesh m = parse_mesh("dp=4,tp=2");
  auto l = shard({3}, m, {Shard(0), Shard(0)});
  for (std::int64_t r = 0; r < 8; ++r) {
    LocalShard s = local_shard(l, r);
    const bool holds = r % 2 == 0 && r / 2 < 3;
    EXPECT_EQ(s.shape[0], holds ? 1 : 0) << r;
    if (holds) {
      EXPECT_EQ(s.regions.at(0).begin[0], r / 2);
    }
  }
}

TEST(NestedChunk, PaddedIndex_InvertsLogicalIndex) {
  auto g = test::make_rng(11);
  for (int it = 0; it < 300; ++it) {
    std::vector<std::int64_t> parts(2 + g() % 2);
    std::vector<std::pair<std::string, std::int64_t>> axes;
    std::vector<AxisPlacement> ps;
    for (std::size_t i = 0; i < parts.size(); ++i) {
      parts[i] = 1 + static_cast<std::int64_t>(g() % 4);
      axes.emplace_back("a" + std::to_string(i), parts[i]);
      ps.push_back(Shard(0));
    }
    const std::int64_t n = 1 + static_cast<std::int64_t>(g() % 30);
    Mesh m(axes);
    std::vector<std::int64_t> shape{n};
    auto l = shard(std::span<const std::int64_t>(shape), m, std::span<const AxisPlacement>(ps));
    std::int64_t held = 0;
    for (std::int64_t i = 0; i < n; ++i) {
      auto p = l.padded_index(0, i);
      ASSERT_LT(p, l.padded_shape()[0]);
      ASSERT_EQ(l.logical_index(0, p), std::optional<std::int64_t>(i))
          << to_string(l) << " i=" << i;
    }
    for (std::int64_t p = 0; p < l.padded_shape()[0]; ++p)
      held += l.logical_index(0, p).has_value();
    EXPECT_EQ(held, n);
  }
}

// Every rank's local shard and source buffer equal DTensor's, for random meshes, shapes and
// placements with dims over several axes (uneven sizes included).
TEST(NestedChunk, LocalShardsMatchDTensor_Random) {
  auto g = test::make_rng(12);
  static const char* meshes[] = {"x=2,y=2", "x=2,y=3",     "x=3,y=2",
                                 "x=4,y=2", "x=2,y=2,z=2", "x=3,y=2,z=2"};
  for (int it = 0; it < 400; ++it) {
    Mesh m = parse_mesh(meshes[g() % std::size(meshes)]);
    std::vector<std::int64_t> shape(1 + g() % 2);
    for (auto& e : shape) e = 1 + static_cast<std::int64_t>(g() % 13);
    std::vector<AxisPlacement> ps;
    for (std::size_t a = 0; a < m.ndim(); ++a)
      ps.push_back(g() % 4 == 0 ? Replicate() : Shard(static_cast<int>(g() % shape.size())));
    auto l = shard(std::span<const std::int64_t>(shape), m, std::span<const AxisPlacement>(ps));
    for (auto r : m.ranks()) {
      auto want = dtensor_shard(shape, m, ps, r);
      LocalShard s = local_shard(l, r);
      std::string what = to_string(l) + " rank " + std::to_string(r);
      bool empty = false;
      for (auto e : want.size) empty = empty || e == 0;
      if (!empty) {
        EXPECT_EQ(s.shape, want.size) << what;
        ASSERT_FALSE(s.regions.empty()) << what;
        EXPECT_EQ(s.regions[0].begin, want.offset) << what;
      } else {
        EXPECT_TRUE(s.regions.empty()) << what;
      }
      std::int64_t local = 1;
      for (auto e : want.padded_local) local *= e;
      EXPECT_EQ(l.local_elements(), local) << what;
      ASSERT_TRUE(same(fill_source(l, r), dtensor_buffer(shape, m, ps, r))) << what;
    }
  }
}

// The natural collectives survive nested bounds (decided from each side's iters; blocks uneven).
// 10x4 f32 rows over dp then tp: shards 3,2 | 3,2 rows. (S0,S0) -> (S0,R): all-gather on tp,
// rank 0 (0,0) sends its 3 rows (48 bytes) and receives rank 1's 2 rows (32 bytes).
TEST(NestedChunk, CollectivesOnNestedDims_HandDerived) {
  Mesh m = parse_mesh("dp=2,tp=2");
  PlanRequest ag{shard({10, 4}, m, {Shard(0), Shard(0)}),
                 shard({10, 4}, m, {Shard(0), Replicate()}), DType::F32};
  Plan p = plan_all(ag);
  ASSERT_EQ(p.kinds, std::vector<StepKind>{StepKind::AllGather}) << to_string(p);
  EXPECT_EQ(p.axes[0], std::vector<Axis>{Axis("tp")});
  EXPECT_FALSE(p.equal_blocks[0]);
  EXPECT_EQ(p.find(0)->stats.bytes_sent, 48);
  EXPECT_EQ(p.find(0)->stats.bytes_received, 32);
  EXPECT_EQ(p.find(1)->stats.bytes_received, 48);
  EXPECT_EQ(verify(ag, simulate(p)), "");
  // (S0,S0) -> (R,R): one all-gather on both axes; (S0,S0) -> (S1,S0): an all-to-all.
  PlanRequest rr{ag.from, shard({10, 4}, m, {Replicate(), Replicate()}), DType::F32};
  EXPECT_EQ(plan_all(rr).kinds, std::vector<StepKind>{StepKind::AllGather});
  PlanRequest a2a{ag.from, shard({10, 4}, m, {Shard(1), Shard(0)}), DType::F32};
  Plan q = plan_all(a2a);
  EXPECT_EQ(q.kinds, std::vector<StepKind>{StepKind::AllToAll});
  EXPECT_EQ(verify(a2a, simulate(q)), "");
}

// Random transitions between DTensor-style placements with nested-uneven dims: every destination
// buffer equals DTensor's local buffer (independent reference above), padding NaN.
TEST(NestedChunk, TransitionsMatchDTensorBuffers_Random) {
  auto g = test::make_rng(13);
  static const char* meshes[] = {"x=2,y=2", "x=2,y=3", "x=4,y=2", "x=2,y=2,z=2", "x=3,y=4"};
  int nested_cases = 0;
  for (int it = 0; it < 300; ++it) {
    Mesh m = parse_mesh(meshes[g() % std::size(meshes)]);
    std::vector<std::int64_t> shape(1 + g() % 2);
    // Long dims too: many runs per level-1 piece, folded into periodic boxes by the planner.
    for (auto& e : shape) e = 1 + static_cast<std::int64_t>(g() % (it % 2 ? 13 : 97));
    auto random_ps = [&] {
      std::vector<AxisPlacement> ps;
      for (std::size_t a = 0; a < m.ndim(); ++a)
        ps.push_back(g() % 3 == 0 ? Replicate() : Shard(static_cast<int>(g() % shape.size())));
      return ps;
    };
    auto fp = random_ps(), tp = random_ps();
    PlanRequest req{
        shard(std::span<const std::int64_t>(shape), m, std::span<const AxisPlacement>(fp)),
        shard(std::span<const std::int64_t>(shape), m, std::span<const AxisPlacement>(tp)),
        DType::F32};
    nested_cases += req.from.nested() || req.to.nested();
    SCOPED_TRACE(to_string(req.from) + " -> " + to_string(req.to));
    Plan p = plan_all(req);
    SimulationResult res = simulate(p);
    ASSERT_EQ(verify(req, res), "") << to_string(p);
    for (auto r : m.ranks())
      ASSERT_TRUE(same(res.destination.at(r), dtensor_buffer(shape, m, tp, r))) << r;
    EXPECT_GE(p.totals.bytes_received, p.totals.lower_bound_bytes);
  }
  EXPECT_GT(nested_cases, 100);
}

}  // namespace
}  // namespace axe
