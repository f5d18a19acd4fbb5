// Plan passes (passes.hpp): hand-derived examples per pass, and the law of every pass on seeded
// random requests: simulating the passed plan gives the destination of the original plan.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "axe/core/error.hpp"
#include "axe/exec/simulate.hpp"
#include "axe/plan/passes.hpp"
#include "random_layouts.hpp"
#include "support/test_support.hpp"

namespace axe {

// Failures show plans, not bytes.
void PrintTo(const RankPlan& p, std::ostream* os) { *os << "\n" << to_string(p); }

namespace {

// Folding local slices (host only). (R,P) -> (S0,S1) of 64x128 f32 on x=2,y=2: rank 2 (x=1, y=0)
// first copies its rows 32..63 (source elements 4096..8191) into an intermediate of 4096
// elements, then reduce-scatters them over y. Folded, the local step is empty, the reduce-scatter
// reads the source itself with every source offset 4096 further on, and the intermediate is gone.
// Staging (f32): the slice copied 16384 bytes; the reduce-scatter stages its 2048-element term
// twice plus 2048 sent and 2048 received, 32768 bytes; with the 16384-byte intermediate the peak
// was 49152 bytes, folded 32768.
TEST(FoldSlices, RowSliceBeforeReduceScatter_HandDerived) {
  Mesh m = parse_mesh("x=2,y=2");
  PlanRequest r{shard({64, 128}, m, {Replicate(), Partial()}), shard({64, 128}, m, {Shard(0), Shard(1)}), DType::F32};
  const RankPlan plan = plan_rank(r, 2);
  ASSERT_EQ(plan.steps.size(), 2u);
  ASSERT_EQ(plan.steps[0].kind, StepKind::LocalCopy);
  ASSERT_EQ(plan.steps[1].in, plan.steps[0].out);
  ASSERT_EQ(plan.buffers[static_cast<std::size_t>(plan.steps[0].out)], 4096);
  const RankPlan f = fold_slices(plan);
  EXPECT_EQ(plan, plan_rank(r, 2)) << "the input changed";
  EXPECT_EQ(f.buffers, (std::vector<std::int64_t>{8192, 0, 2048}));
  EXPECT_EQ(plan.stats.staging_bytes, 49152);
  EXPECT_EQ(f.stats.staging_bytes, 32768);
  EXPECT_EQ(f.steps[0].staging_bytes, 0);
  EXPECT_EQ(f.steps[0].kind, StepKind::LocalCopy);
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
  EXPECT_EQ(fold_slices(pc), pc);
  // Folding is idempotent.
  EXPECT_EQ(fold_slices(f), f);
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
      rp = fold_slices(rp);
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

// PadOptions: the limits of padding_boxes. Writes [0,3) and [5,6) of 10 leave two gaps: with at
// most one box, or at most one written run examined, the whole buffer is to be padded.
TEST(Padding, LimitsOfPadOptions) {
  Transfer a{{3}, 0, {1}, 0, {1}, 0}, b{{1}, 0, {1}, 5, {1}, 0};
  EXPECT_EQ(padding_boxes(10, {&a, &b}, PadOptions{1 << 20, 2})->size(), 2u);
  EXPECT_FALSE(padding_boxes(10, {&a, &b}, PadOptions{1 << 20, 1}).has_value());
  EXPECT_FALSE(padding_boxes(10, {&a, &b}, PadOptions{1, 4096}).has_value());
}

// pad_unwritten, hand-derived: S(0) -> S(1) of 5x4095 f32 on gpu=2. The destination shards hold
// columns 0..2047 (rank 0) and 2048..4094 (rank 1, 2047 columns) at a pitch of 2048: rank 1's
// copies and received rows leave column 2047 of its 5 rows, one box (5,1) at 2047 with row
// stride 2048; rank 0's are covered. The source (buffer 0) is never padded; steps are unchanged.
TEST(PadUnwritten, PaddingColumnOfAnUnevenShard_HandDerived) {
  Mesh m = parse_mesh("gpu=2");
  PlanRequest r{shard({5, 4095}, m, {Shard(0)}), shard({5, 4095}, m, {Shard(1)}), DType::F32};
  const RankPlan p1 = plan_rank(r, 1), p0 = plan_rank(r, 0);
  ASSERT_EQ(p1.buffers.size(), 2u);
  ASSERT_EQ(p1.buffers[1], 5 * 2048);
  const RankPlan q1 = pad_unwritten(p1), q0 = pad_unwritten(p0);
  EXPECT_EQ(q1.steps, p1.steps);
  EXPECT_EQ(q1.buffers, p1.buffers);
  ASSERT_EQ(q1.pads.size(), 2u);
  EXPECT_TRUE(q1.pads[0].empty());
  ASSERT_EQ(q1.pads[1].size(), 1u);
  EXPECT_EQ(q1.pads[1][0], (Transfer{{5, 1}, 2047, {2048, 1}, 2047, {2048, 1}, 0}));
  EXPECT_EQ(q0.pads, (std::vector<std::vector<Transfer>>{{}, {}}));
  const std::string text = to_string(q1);
  EXPECT_NE(text.find(" pad buffer 1 (5 elements)\n  (5,1) src 2047+(2048,1) dst 2047+(2048,1)\n"), std::string::npos)
      << text;
  // The whole buffer when the gaps are not cheap to list.
  const RankPlan w = pad_unwritten(p1, PadOptions{1, 4096});
  EXPECT_EQ(w.pads[1], (std::vector<Transfer>{Transfer{{5 * 2048}, 0, {1}, 0, {1}, 0}}));
}

// pipeline, hand-derived: S(1) -> R of 64x128 f64 on gpu=2 is one all-gather of the rank's
// 64x64 block (4096 elements); in 4 chunks each sends and receives 1024 elements, records chunk
// c of 4 and keeps the step's staging_bytes; the plan now has 4 messages and 4 collectives.
TEST(Pipeline, AllGatherInFourChunks_HandDerived) {
  Mesh m = parse_mesh("gpu=2");
  PlanRequest r{shard({64, 128}, m, {Shard(1)}), shard({64, 128}, m, {Replicate()}), DType::F64};
  const RankPlan p = plan_rank(r, 0);
  ASSERT_EQ(p.steps.size(), 1u);
  ASSERT_EQ(p.steps[0].kind, StepKind::AllGather);
  ASSERT_EQ(p.steps[0].elements_sent(), 4096);
  const RankPlan q = pipeline(p, {4});
  ASSERT_EQ(q.steps.size(), 4u);
  for (std::int64_t c = 0; c < 4; ++c) {
    const Step& s = q.steps[static_cast<std::size_t>(c)];
    EXPECT_EQ(s.kind, StepKind::AllGather);
    EXPECT_EQ(s.chunk, c);
    EXPECT_EQ(s.chunks, 4);
    EXPECT_EQ(s.elements_sent(), 1024);
    EXPECT_EQ(s.elements_received(), 1024);
    EXPECT_EQ(s.staging_bytes, p.steps[0].staging_bytes);
  }
  EXPECT_EQ(q.stats.messages, 4);
  EXPECT_EQ(q.stats.collectives, 4);
  EXPECT_EQ(q.stats.bytes_sent, p.stats.bytes_sent);
  EXPECT_EQ(pipeline(p, {1}), p);
  EXPECT_EQ(pipeline(p, {}), p);
  // Wrong counts are errors naming the rank and the step.
  EXPECT_THROW(pipeline(p, {2, 2}), Error);
  EXPECT_THROW(pipeline(p, {0}), Error);
  r.staging_limit = 4096;  // the planner chunks the all-gather itself: no further split
  const RankPlan c = plan_rank(r, 0);
  ASSERT_GT(c.steps.size(), 1u);
  std::vector<std::int64_t> k(c.steps.size(), 1);
  EXPECT_EQ(pipeline(c, k), c);
  k[0] = 2;
  try {
    pipeline(c, k);
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("pipeline (rank 0): step 0 is already chunk 1 of"), std::string::npos)
        << e.what();
  }
}

// restat is the identity on the planner's plans; parse_passes knows none, cuda, fold and pad.
TEST(Passes, RestatOfPlannedPlansAndPresets) {
  Mesh m = parse_mesh("x=2,y=2");
  PlanRequest r{shard({64, 128}, m, {Replicate(), Partial()}), shard({64, 128}, m, {Shard(0), Shard(1)}), DType::F32};
  for (const auto& rp : plan_all(r).ranks) EXPECT_EQ(restat(rp), rp);
  EXPECT_EQ(parse_passes("none"), PassOptions{});
  EXPECT_EQ(parse_passes("cuda"), cuda_passes());
  EXPECT_EQ(parse_passes("pad,fold"), cuda_passes());
  EXPECT_TRUE(parse_passes("fold").fold);
  EXPECT_FALSE(parse_passes("fold").pad);
  EXPECT_THROW(parse_passes("fold,chunk"), Error);
  EXPECT_THROW(parse_passes(""), Error);
  // run_passes on a Plan: the same passes on every rank, the outline following the chunks.
  const Plan p = plan_all(r);
  PassOptions o = cuda_passes();
  o.chunks = {1, 3};
  const Plan q = run_passes(p, o);
  EXPECT_EQ(q.kinds, (std::vector<StepKind>{StepKind::LocalCopy, StepKind::ReduceScatter, StepKind::ReduceScatter,
                                            StepKind::ReduceScatter}));
  for (std::size_t i = 0; i < p.ranks.size(); ++i) EXPECT_EQ(q.ranks[i], run_passes(p.ranks[i], o));
  EXPECT_NE(to_string(q).find("pad: nothing (the steps write every element)"), std::string::npos) << to_string(q);
  EXPECT_NE(to_string(q).find("chunk 3/3"), std::string::npos) << to_string(q);
}

// Every destination slot: written by some step, or listed in the pads, never both (brute force).
std::string pads_partition_buffers(const RankPlan& p) {
  for (std::size_t b = 1; b < p.buffers.size(); ++b) {
    std::vector<int> written(static_cast<std::size_t>(p.buffers[b]), 0), padded(written.size(), 0);
    auto mark = [&](const Transfer& t, std::vector<int>& v) {
      for (auto e : t.extents)
        if (e <= 0) return;
      std::vector<std::int64_t> idx(t.extents.size(), 0);
      while (true) {
        std::int64_t off = t.dst_offset;
        for (std::size_t k = 0; k < idx.size(); ++k) off += idx[k] * t.dst_strides[k];
        v.at(static_cast<std::size_t>(off)) = 1;
        std::size_t k = idx.size();
        while (k > 0 && ++idx[k - 1] == t.extents[k - 1]) idx[--k] = 0;
        if (k == 0) return;
      }
    };
    for (const Step& s : p.steps) {
      if (static_cast<std::size_t>(s.out) != b) continue;
      for (const auto& t : s.fills) mark(t, written);
      for (const auto& t : s.copies) mark(t, written);
      for (const auto& m : s.recvs)
        for (const auto& t : m.boxes) mark(t, written);
    }
    for (const auto& t : p.pads.at(b)) mark(t, padded);
    for (std::size_t i = 0; i < written.size(); ++i)
      if (written[i] == padded[i])
        return "rank " + std::to_string(p.rank) + " buffer " + std::to_string(b) + " element " + std::to_string(i) +
               (written[i] ? " is written and padded" : " is neither written nor padded");
  }
  return "";
}

bool same_destination(const SimulationResult& a, const SimulationResult& b) {
  if (a.destination.size() != b.destination.size()) return false;
  for (const auto& [rank, x] : a.destination) {
    const auto& y = b.destination.at(rank);
    if (x.size() != y.size()) return false;
    for (std::size_t i = 0; i < x.size(); ++i)
      if (!(x[i] == y[i] || (std::isnan(x[i]) && std::isnan(y[i])))) return false;
  }
  return true;
}

// The law of the passes: for seeded random requests (placements and general layouts, uneven
// dims, replicas, partials, other meshes), the plan through fold, pad and a random pipelining
// (1-3 chunks per step the planner did not chunk, the same on every rank), simulated by the host
// executor, gives the destination of the original plan; the pads and the written elements
// partition every written buffer.
TEST(Passes, PassedPlansGiveTheSameDestination_Random) {
  auto g = test::make_rng(505);
  int folded = 0, padded = 0, split = 0;
  for (int i = 0; i < 400; ++i) {
    Mesh a = test::random_mesh(g);
    Mesh b = test::other_mesh(g, a);
    auto shape = test::random_shape(g);
    DistLayout from = g() % 2 ? test::random_placements(g, shape, a, true) : test::random_general(g, shape, a, true);
    const bool dst_partial = from.layout().partial().empty() && g() % 4 == 0;
    DistLayout to = g() % 2 ? test::random_placements(g, shape, b, dst_partial) : test::random_general(g, shape, b, dst_partial);
    if (i % 8 == 0) {  // (R,P) -> (S0,S1), whose row slices fold when they are contiguous
      Mesh m = parse_mesh(i % 16 ? "x=2,y=2" : "x=2,y=3");
      shape = {1 + static_cast<std::int64_t>(g() % 13), 1 + static_cast<std::int64_t>(g() % 13)};
      const std::vector<AxisPlacement> rp{Replicate(), Partial()}, s01{Shard(0), Shard(1)};
      from = shard(std::span<const std::int64_t>(shape), m, std::span<const AxisPlacement>(rp));
      to = shard(std::span<const std::int64_t>(shape), m, std::span<const AxisPlacement>(s01));
    }
    PlanRequest r{from, to, DType::F64};
    if (i % 5 == 0) r.staging_limit = 1;  // planner-chunked steps
    SCOPED_TRACE("case " + std::to_string(i) + ": " + to_string(from) + " -> " + to_string(to));
    const Plan p = plan_all(r);
    PassOptions o;
    o.fold = g() % 4 != 0;
    o.pad = g() % 4 != 0;
    for (std::size_t k = 0; k < p.kinds.size(); ++k)
      o.chunks.push_back(p.ranks.empty() || p.ranks[0].steps[k].chunks > 1 ? 1 : 1 + static_cast<std::int64_t>(g() % 3));
    const Plan q = run_passes(p, o);
    for (std::size_t k = 0; k < p.ranks.size(); ++k) {
      folded += q.ranks[k].buffers != p.ranks[k].buffers;
      if (o.pad) {
        ASSERT_EQ(pads_partition_buffers(q.ranks[k]), "") << to_string(q.ranks[k]);
        for (const auto& l : q.ranks[k].pads) padded += !l.empty();
      }
    }
    split += q.kinds.size() > p.kinds.size();
    const SimulationResult want = simulate(p);
    SimulationResult got;
    try {
      got = simulate(q);
    } catch (const std::exception& e) {
      FAIL() << e.what() << "\n" << to_string(q);
    }
    ASSERT_EQ(verify(r, got), "") << to_string(q);
    ASSERT_TRUE(same_destination(want, got)) << to_string(q);
  }
  EXPECT_GT(folded, 0);
  EXPECT_GT(padded, 20);
  EXPECT_GT(split, 50);
}

}  // namespace
}  // namespace axe
