// check_collective: the shape check every executor runs on a collective step (step_check.hpp).
// Well-formed steps from plan_rank pass with hand-derived shapes; each planner-bug message is
// triggered by one deliberately malformed step.
#include <gtest/gtest.h>

#include <string>

#include "axe/core/error.hpp"
#include "axe/plan/step_check.hpp"
#include "random_layouts.hpp"
#include "support/test_support.hpp"

namespace axe {
namespace {

Step step_of(const PlanRequest& r, std::int64_t rank, StepKind kind) {
  const RankPlan p = plan_rank(r, rank);
  EXPECT_EQ(p.steps.size(), 1u);
  EXPECT_EQ(p.steps.at(0).kind, kind);
  return p.steps.at(0);
}

PlanRequest request(const char* mesh, std::vector<std::int64_t> shape, std::vector<AxisPlacement> from,
                    std::vector<AxisPlacement> to) {
  Mesh m = parse_mesh(mesh);
  return PlanRequest{shard(std::span<const std::int64_t>(shape), m, std::span<const AxisPlacement>(from)),
                     shard(std::span<const std::int64_t>(shape), m, std::span<const AxisPlacement>(to)), DType::F32};
}

CollectiveShape shape(std::size_t me, std::size_t root, std::int64_t count, std::int64_t largest = 0,
                      std::int64_t total = 0) {
  CollectiveShape s;
  s.me = me;
  s.root = root;
  s.count = count;
  s.largest = largest;
  s.total = total;
  return s;
}

// 64x128 f32 on gpu=4, rank 1 (group {0,1,2,3}, index 1): S(0)->R sends its 16 rows (2048
// elements) to 0, 2, 3 and receives 2048 from each; P->S(0) reduces its 2048-element row block;
// P->R all 8192 elements; S(0)->S(1) is an all-to-all (no block count).
TEST(CheckCollective, PlannedSteps_HandDerivedShapes) {
  const Step ag = step_of(request("gpu=4", {64, 128}, {Shard(0)}, {Replicate()}), 1, StepKind::AllGather);
  EXPECT_EQ(check_collective(1, ag, 0), shape(1, 0, 2048, 2048, 8192));
  const Step rs = step_of(request("gpu=4", {64, 128}, {Partial()}, {Shard(0)}), 1, StepKind::ReduceScatter);
  EXPECT_EQ(check_collective(1, rs, 0), shape(1, 0, 2048));
  const Step ar = step_of(request("gpu=4", {64, 128}, {Partial()}, {Replicate()}), 1, StepKind::AllReduce);
  EXPECT_EQ(check_collective(1, ar, 0), shape(1, 0, 8192));
  const Step a2a = step_of(request("gpu=4", {64, 128}, {Shard(0)}, {Shard(1)}), 1, StepKind::AllToAll);
  EXPECT_EQ(check_collective(1, a2a, 0), shape(1, 0, 0));
  // Uneven S(0)->R of 63x130 on gpu=2: rank 0 holds 32 rows (4160 elements), rank 1 31 rows
  // (4030); seen from rank 1: own block 4030, largest 4160, both 8190.
  const Step un = step_of(request("gpu=2", {63, 130}, {Shard(0)}, {Replicate()}), 1, StepKind::AllGather);
  EXPECT_FALSE(un.equal_blocks);
  EXPECT_EQ(check_collective(1, un, 0), shape(1, 0, 4030, 4160, 8190));
  // Broadcast (transition_test's HeldOnOneCoordinateToReplicas): x=2,y=4, 4x8 held at y=2; rank
  // 5's group is {4,5,6,7} with root 6 (index 2), the root sends 16 elements to each member.
  Mesh m = parse_mesh("x=2,y=4");
  PlanRequest b{DistLayout({4, 8}, parse_axe_layout("S[(2,2,8):(1@x,8,1)] + 2@y"), m),
                DistLayout({4, 8}, parse_axe_layout("S[(2,2,8):(1@x,8,1)] + R[4:1@y]"), m), DType::F32};
  EXPECT_EQ(check_collective(5, step_of(b, 5, StepKind::Broadcast), 0), shape(1, 2, 16));
  EXPECT_EQ(check_collective(6, step_of(b, 6, StepKind::Broadcast), 0), shape(2, 2, 16));
  // The RankPlan overload checks plan.steps[index].
  RankPlan p = plan_rank(request("gpu=4", {64, 128}, {Shard(0)}, {Replicate()}), 2);
  EXPECT_EQ(check_collective(p, 0), shape(2, 0, 2048, 2048, 8192));
}

// Every collective step of every rank of seeded random plans passes.
TEST(CheckCollective, RandomPlans_EveryCollectiveStepPasses) {
  auto g = test::make_rng(404);
  int checked = 0;
  for (int i = 0; i < 400; ++i) {
    Mesh a = test::random_mesh(g);
    Mesh b = test::other_mesh(g, a);
    auto shape = test::random_shape(g);
    DistLayout from = test::random_placements(g, shape, a, true);
    DistLayout to = test::random_placements(g, shape, b, from.layout().partial().empty() && g() % 4 == 0);
    const Plan p = plan_all({from, to, DType::F32});
    for (const auto& rp : p.ranks)
      for (std::size_t k = 0; k < rp.steps.size(); ++k) {
        const Step& s = rp.steps[k];
        if (!is_collective(s.kind) || s.group.size() < 2) continue;
        EXPECT_NO_THROW(check_collective(rp, k)) << to_string(from) << " -> " << to_string(to) << "\n"
                                                 << to_string(rp);
        ++checked;
      }
  }
  EXPECT_GT(checked, 500);
}

// `step` on `rank` is a planner bug whose message names rank, step index, kind and group size,
// and says `why`.
void expect_bug(std::int64_t rank, const Step& step, const std::string& why) {
  try {
    check_collective(rank, step, 7, "tester");
    ADD_FAILURE() << "no error for: " << why;
  } catch (const Error& e) {
    const std::string m = e.what();
    const std::string head = "tester: rank " + std::to_string(rank) + " step 7 (" + std::string(to_string(step.kind)) +
                             " on a group of " + std::to_string(step.group.size()) + "): ";
    EXPECT_EQ(m.rfind(head, 0), 0u) << m;
    EXPECT_NE(m.find(why), std::string::npos) << m;
    EXPECT_NE(m.find("(a planner bug: every member must run the collective)"), std::string::npos) << m;
  }
}

TEST(CheckCollective, MalformedSteps_EveryPlannerBugMessage) {
  const Step ag = step_of(request("gpu=4", {64, 128}, {Shard(0)}, {Replicate()}), 1, StepKind::AllGather);
  const Step rs = step_of(request("gpu=4", {64, 128}, {Partial()}, {Shard(0)}), 1, StepKind::ReduceScatter);
  const Step ar = step_of(request("gpu=4", {64, 128}, {Partial()}, {Replicate()}), 1, StepKind::AllReduce);
  const Step a2a = step_of(request("gpu=4", {64, 128}, {Shard(0)}, {Shard(1)}), 1, StepKind::AllToAll);
  Mesh m = parse_mesh("x=2,y=4");
  PlanRequest b{DistLayout({4, 8}, parse_axe_layout("S[(2,2,8):(1@x,8,1)] + 2@y"), m),
                DistLayout({4, 8}, parse_axe_layout("S[(2,2,8):(1@x,8,1)] + R[4:1@y]"), m), DType::F32};
  const Step root = step_of(b, 6, StepKind::Broadcast), leaf = step_of(b, 5, StepKind::Broadcast);
  ASSERT_EQ(ag.sends.size(), 3u);
  ASSERT_EQ(ag.recvs.size(), 3u);
  const Transfer other{{4}, 0, {1}, 0, {1}, 0};

  Step s = ag;
  s.kind = StepKind::LocalCopy;
  expect_bug(1, s, "not a collective");
  expect_bug(9, ag, "this rank is not a member of its own group");
  s = a2a;
  s.sends[0].peer = 5;
  expect_bug(1, s, "sends to rank 5 outside the group");
  s = a2a;
  s.recvs.back().peer = 8;
  expect_bug(1, s, "receives from rank 8 outside the group");
  s = ag;
  std::swap(s.recvs[0], s.recvs[1]);
  expect_bug(1, s, "its messages are not in ascending peer order");

  // all-gather
  s = ag;
  s.reduce = true;
  expect_bug(1, s, "an all-gather cannot reduce");
  s = ag;
  s.sends[2].boxes = {other};
  expect_bug(1, s, "sends different blocks to different members");
  s = ag;
  s.sends.pop_back();
  expect_bug(1, s, "does not send its block to every member");
  s = ag;
  s.recvs[1].boxes = {other};
  expect_bug(1, s,
             "blocks of different sizes in a step recorded with equal_blocks (own block 2048 elements, rank 2's 4)");
  s.equal_blocks = false;  // the same blocks without equal_blocks: fine
  EXPECT_EQ(check_collective(1, s, 0), shape(1, 0, 2048, 2048, 3 * 2048 + 4));

  // all-to-all
  s = a2a;
  s.reduce = true;
  expect_bug(1, s, "an all-to-all cannot reduce");

  // broadcast
  s = root;
  s.reduce = true;
  expect_bug(6, s, "a broadcast cannot reduce");
  s = root;
  s.root = 1;
  expect_bug(6, s, "its root 1 is not a member");
  s = root;
  s.sends[1].boxes = {other};
  expect_bug(6, s, "the root sends different blocks");
  s = root;
  s.recvs = {Message{4, {other}}};
  expect_bug(6, s, "the root receives");
  s = root;
  s.sends.pop_back();
  expect_bug(6, s, "the root does not send to every member");
  s = leaf;
  s.sends = {Message{4, {other}}};
  expect_bug(5, s, "a non-root member sends or receives twice");
  s = leaf;
  s.recvs[0].peer = 4;
  expect_bug(5, s, "receives from a member other than the root");

  // reduce-scatter and all-reduce
  s = rs;
  s.reduce = false;
  expect_bug(1, s, "nothing to reduce");
  s = rs;
  s.copies.push_back(s.copies[0]);
  s.copies.back().term = s.copies[0].term + 1;
  expect_bug(1, s, "holds several terms of one element");
  s = rs;
  s.recvs[0].boxes[0].dst_offset += 1;
  expect_bug(1, s, "a received term does not match the local term");
  s = rs;
  s.recvs.pop_back();
  expect_bug(1, s, "does not receive a term from every member");
  s = ar;
  s.sends[0].boxes[0].src_offset += 1;
  expect_bug(1, s, "sends a block other than its own term");
  s = ar;
  s.sends.pop_back();
  expect_bug(1, s, "does not send to every member");
  s = rs;
  s.sends[1].boxes = {other};
  expect_bug(1, s,
             "blocks of different sizes in a step recorded with equal_blocks (own block 2048 elements, the block for "
             "rank 2 4)");
}

}  // namespace
}  // namespace axe
