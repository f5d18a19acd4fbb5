// choose_transport (peer_comm.hpp): which transport carries a job, from every rank's node and GPU;
// and, with both, which steps run on the peer transport (executor.hpp: step_transport_costs,
// choose_step_transports). Host logic only: runs without a GPU.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "axe/core/error.hpp"
#include "axe/cuda/executor.hpp"
#include "axe/cuda/peer_comm.hpp"
#include "axe/plan/passes.hpp"
#include "support/test_support.hpp"

namespace axe::cuda {
namespace {

std::string error_of(int setting, std::vector<RankPlace> p) {
  try {
    choose_transport(setting, p);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

std::string error_of_choice(const std::vector<std::int64_t>& nccl, const std::vector<std::int64_t>& peer) {
  try {
    choose_step_transports(nccl, peer, StepTransport::Model);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

const std::vector<RankPlace> kOwnGpus = {{"a", "g0"}, {"a", "g1"}, {"a", "g2"}, {"a", "g3"}};
const std::vector<RankPlace> kOneGpu = {{"a", "g0"}, {"a", "g0"}, {"a", "g0"}, {"a", "g0"}};
// Two nodes whose GPUs have distinct UUIDs (UUIDs are unique, so a shared GPU is one node's).
const std::vector<RankPlace> kTwoNodes = {{"a", "g0"}, {"a", "g1"}, {"b", "g2"}, {"b", "g3"}};

TEST(TransportChoice, OwnGpuPerRankIsNcclUnlessAskedForPeers) {
  for (int setting : {0, 1}) {
    const auto c = choose_transport(setting, kOwnGpus);
    EXPECT_FALSE(c.peer);
    EXPECT_FALSE(c.shared);
    EXPECT_EQ(c.note, "");
  }
  const auto c = choose_transport(2, kOwnGpus);
  EXPECT_TRUE(c.peer);
  EXPECT_FALSE(c.shared);
}

// Per step (NCCL, and the peer transport where the cost model prices it lower): setting 1, a GPU
// per rank, one node, more than one rank. Not with a shared GPU (the peer transport carries
// everything), several nodes, setting 0 (NCCL only) or 2 (the peer transport for every step).
TEST(TransportChoice, PerStepOnlyWithAGpuPerRankOnOneNodeUnderSetting1) {
  EXPECT_TRUE(choose_transport(1, kOwnGpus).per_step);
  EXPECT_FALSE(choose_transport(0, kOwnGpus).per_step);
  EXPECT_FALSE(choose_transport(2, kOwnGpus).per_step);
  EXPECT_FALSE(choose_transport(1, kOneGpu).per_step);
  EXPECT_FALSE(choose_transport(1, kTwoNodes).per_step);
  EXPECT_FALSE(choose_transport(1, std::vector<RankPlace>{{"a", "g0"}}).per_step);
}

TEST(TransportChoice, RanksSharingAGpuTakeThePeerTransport) {
  for (int setting : {1, 2}) {
    const auto c = choose_transport(setting, kOneGpu);
    EXPECT_TRUE(c.peer);
    EXPECT_TRUE(c.shared);
  }
  // Round-robin 3 ranks on 2 GPUs: ranks 0 and 2 share g0.
  const auto c = choose_transport(1, std::vector<RankPlace>{{"a", "g0"}, {"a", "g1"}, {"a", "g0"}});
  EXPECT_TRUE(c.peer && c.shared);
}

TEST(TransportChoice, SharedGpuWithoutThePeerTransportIsAClearError) {
  const std::string e = error_of(0, kOneGpu);
  EXPECT_NE(e.find("ranks 0 and 1 share GPU g0 on a"), std::string::npos) << e;
  EXPECT_NE(e.find("AXE_PEER_TRANSPORT=0"), std::string::npos) << e;
  const std::string m = error_of(1, {{"a", "g0"}, {"a", "g0"}, {"b", "g1"}});
  EXPECT_NE(m.find("spans 2 nodes"), std::string::npos) << m;
}

TEST(TransportChoice, SeveralNodesFallBackToNcclWithOneLine) {
  const auto c = choose_transport(2, kTwoNodes);
  EXPECT_FALSE(c.peer);
  EXPECT_NE(c.note.find("spans 2 nodes"), std::string::npos) << c.note;
  EXPECT_FALSE(choose_transport(1, kTwoNodes).peer);
}

TEST(TransportChoice, SettingOutOfRangeIsRefused) {
  EXPECT_NE(error_of(3, kOwnGpus).find("AXE_PEER_TRANSPORT=3"), std::string::npos);
  // One rank alone: nothing shared, NCCL (or peers with setting 2, trivially one node).
  EXPECT_FALSE(choose_transport(1, std::vector<RankPlace>{{"a", "g0"}}).peer);
}

// The agreed maxima decide: the peer transport where it is strictly cheaper, NCCL on ties, where
// the model has no peer price, and for steps that move nothing; forcing overrides.
TEST(StepTransports, CheaperPeerStepsOnlyAndForcing) {
  const std::vector<std::int64_t> nccl = {17000, 0, 5000, 8000};
  const std::vector<std::int64_t> peer = {9000, 0, 5000, kNoPeerPrice};
  EXPECT_EQ(choose_step_transports(nccl, peer, StepTransport::Model), (std::vector<char>{1, 0, 0, 0}));
  EXPECT_EQ(choose_step_transports(nccl, peer, StepTransport::Peer), (std::vector<char>{1, 1, 1, 1}));
  EXPECT_EQ(choose_step_transports(nccl, peer, StepTransport::Network), (std::vector<char>{0, 0, 0, 0}));
  EXPECT_NE(error_of_choice(nccl, std::vector<std::int64_t>{1}).find("4 NCCL costs but 1 peer costs"), std::string::npos);
}

// S(0) -> S(1) of 64x128 f32 on gpu=2 is one all-to-all: each rank sends and receives a 32x64
// block, 8192 bytes. "all-to-all 10 20": 10 us + 8192 B / 20 GB/s = 10409.6 ns -> 10410;
// "peer all-to-all 1 100": 1 us + 8192 B / 100 GB/s = 1081.92 ns -> 1082.
TEST(StepTransports, CostsOfAPlanHandDerived) {
  const std::vector<std::int64_t> shape = {64, 128};
  const Mesh mesh = parse_mesh("gpu=2");
  const auto from = parse_placements("S(0)"), to = parse_placements("S(1)");
  const PlanRequest r{shard(std::span<const std::int64_t>(shape), mesh, std::span<const AxisPlacement>(from)),
                      shard(std::span<const std::int64_t>(shape), mesh, std::span<const AxisPlacement>(to)),
                      DType::F32};
  const RankPlan plan = run_passes(plan_rank(r, 0), cuda_passes());
  ASSERT_EQ(plan.steps.size(), 1u);
  ASSERT_EQ(plan.steps[0].kind, StepKind::AllToAll);
  const CostModel model = CostModel::parse("all-to-all 10 20\npeer all-to-all 1 100\n");
  const StepCostsNs c = step_transport_costs(&model, plan);
  EXPECT_EQ(c.network, (std::vector<std::int64_t>{10410}));
  EXPECT_EQ(c.peer, (std::vector<std::int64_t>{1082}));
  EXPECT_EQ(choose_step_transports(c.network, c.peer, StepTransport::Model), (std::vector<char>{1}));
  // Without a model, or without a peer line for the kind: no peer price, NCCL.
  const StepCostsNs none = step_transport_costs(nullptr, plan);
  EXPECT_EQ(none.network, (std::vector<std::int64_t>{0}));
  EXPECT_EQ(none.peer, (std::vector<std::int64_t>{kNoPeerPrice}));
  const CostModel other = CostModel::parse("peer all-gather 1 100\n");
  EXPECT_EQ(step_transport_costs(&other, plan).peer, (std::vector<std::int64_t>{kNoPeerPrice}));
}

// The destination bytes of the cases below: far above their staging (no staging bound).
constexpr std::int64_t kDst = std::int64_t{1} << 40;

// The same all-to-all sends and receives 8192 bytes per rank: ceil(8192 / chunk) chunks, at most
// 16 (kMaxPipelineChunks), none without a chunk size.
TEST(PeerChunks, ChunksOfAPlannedAllToAllHandDerived) {
  const std::vector<std::int64_t> shape = {64, 128};
  const Mesh mesh = parse_mesh("gpu=2");
  auto step_of = [&](const char* a, const char* b) {
    const auto from = parse_placements(a), to = parse_placements(b);
    const PlanRequest r{shard(std::span<const std::int64_t>(shape), mesh, std::span<const AxisPlacement>(from)),
                        shard(std::span<const std::int64_t>(shape), mesh, std::span<const AxisPlacement>(to)),
                        DType::F32};
    const RankPlan plan = run_passes(plan_rank(r, 0), cuda_passes());
    EXPECT_EQ(plan.steps.size(), 1u);
    return plan.steps.front();
  };
  const Step a2a = step_of("S(0)", "S(1)");
  EXPECT_EQ(peer_step_chunks(a2a, DType::F32, 8192, kDst), 1);
  EXPECT_EQ(peer_step_chunks(a2a, DType::F32, 8191, kDst), 2);
  EXPECT_EQ(peer_step_chunks(a2a, DType::F32, 4096, kDst), 2);
  EXPECT_EQ(peer_step_chunks(a2a, DType::F32, 3000, kDst), 3);
  EXPECT_EQ(peer_step_chunks(a2a, DType::F32, 100, kDst), CudaExecutor::kMaxPipelineChunks);  // 82, clamped
  EXPECT_EQ(peer_step_chunks(a2a, DType::F32, 0, kDst), 1);
  // A reduction is read straight from the senders' staging, not chunked.
  const Step reduce = step_of("P", "R");
  ASSERT_TRUE(reduce.reduce);
  EXPECT_EQ(peer_step_chunks(reduce, DType::F32, 1024, kDst), 1);
}

// The larger side counts: 10 f64 sent, 100 received (800 bytes) in chunks of 100 bytes -> 8.
TEST(PeerChunks, TheLargerOfSentAndReceivedCounts) {
  Step s;
  s.kind = StepKind::SendRecv;
  s.sends.push_back(Message{1, {Transfer{{10}, 0, {1}, 0, {1}, 0}}});
  s.recvs.push_back(Message{1, {Transfer{{100}, 0, {1}, 0, {1}, 0}}});
  EXPECT_EQ(peer_step_chunks(s, DType::F64, 100, kDst), 8);
  std::swap(s.sends, s.recvs);
  EXPECT_EQ(peer_step_chunks(s, DType::F64, 100, kDst), 8);
  s.chunks = 2;  // the planner's chunk: not split again
  EXPECT_EQ(peer_step_chunks(s, DType::F64, 100, kDst), 1);
}

// The staging bound: 100 MiB of f32 packed for a 60 MiB destination -> 2 * ceil(100 / 60) = 4
// chunks without a chunk size; 64 MiB into 40 MiB -> 4; 63 MiB (under kStagingBoundMin, 64 MiB)
// into 1 MiB -> 1; 100 MiB into 100 MiB (not above it) -> 1; 100 MiB into 1 MiB -> 200, clamped to 16.
TEST(PeerChunks, StagingAboveTheDestinationIsChunked) {
  constexpr std::int64_t MiB = std::int64_t{1} << 20;
  auto sending = [](std::int64_t bytes) {
    Step s;
    s.kind = StepKind::SendRecv;
    s.sends.push_back(Message{1, {Transfer{{bytes / 4}, 0, {1}, 0, {1}, 0}}});
    return s;
  };
  EXPECT_EQ(peer_step_chunks(sending(100 * MiB), DType::F32, 0, 60 * MiB), 4);
  EXPECT_EQ(peer_step_chunks(sending(64 * MiB), DType::F32, 0, 40 * MiB), 4);
  EXPECT_EQ(peer_step_chunks(sending(63 * MiB), DType::F32, 0, 1 * MiB), 1);
  EXPECT_EQ(peer_step_chunks(sending(100 * MiB), DType::F32, 0, 100 * MiB), 1);
  EXPECT_EQ(peer_step_chunks(sending(100 * MiB), DType::F32, 0, 1 * MiB), CudaExecutor::kMaxPipelineChunks);
  // The larger of the two rules: 100 MiB in 10 MiB chunks -> 10, above the bound's 4.
  EXPECT_EQ(peer_step_chunks(sending(100 * MiB), DType::F32, 10 * MiB, 60 * MiB), 10);
}

// Posts (peer_comm.hpp, PostRing): a ring of 4 slots over plain memory.
PeerPost post_number(std::uint64_t n) {
  PeerPost p;
  p.buffer = n;
  p.base = 5 * n;
  p.size = 11 * n;
  p.offset = 3 * n;
  for (std::size_t i = 0; i < sizeof p.handle.reserved; ++i) p.handle.reserved[i] = static_cast<char>(n * 7 + i);
  return p;
}

bool same_post(const PeerPost& a, const PeerPost& b) {
  return a.buffer == b.buffer && a.base == b.base && a.size == b.size && a.offset == b.offset &&
         std::memcmp(a.handle.reserved, b.handle.reserved, sizeof a.handle.reserved) == 0;
}

TEST(PostRing, FullAfterDepthPostsUntilTheReceiverTakes) {
  std::vector<std::uint64_t> slots(4 * kPostWords, 0);
  std::uint64_t taken = 0;
  PostRing ring(slots.data(), &taken, 4);
  PeerPost got;
  EXPECT_FALSE(ring.try_take(1, got));  // nothing posted yet
  for (std::uint64_t n = 1; n <= 4; ++n) EXPECT_TRUE(ring.try_put(n, post_number(n)));
  EXPECT_FALSE(ring.try_put(5, post_number(5)));  // slot of post 1, not taken yet
  ASSERT_TRUE(ring.try_take(1, got));
  EXPECT_TRUE(same_post(got, post_number(1)));
  EXPECT_EQ(taken, 1u);
  EXPECT_TRUE(ring.try_put(5, post_number(5)));
  EXPECT_FALSE(ring.try_put(6, post_number(6)));
  for (std::uint64_t n = 2; n <= 5; ++n) {
    ASSERT_TRUE(ring.try_take(n, got));
    EXPECT_TRUE(same_post(got, post_number(n))) << n;
  }
  EXPECT_FALSE(ring.try_take(6, got));
  EXPECT_EQ(taken, 5u);
}

// A sender and a receiver thread, 20,000 posts through 4 slots: every post arrives whole, in
// order, none overwritten before it was taken.
TEST(PostRing, ThreadsPassEveryPostInOrder) {
  std::vector<std::uint64_t> slots(4 * kPostWords, 0);
  std::uint64_t taken = 0;
  constexpr std::uint64_t kPosts = 20000;
  std::thread sender([&] {
    PostRing ring(slots.data(), &taken, 4);
    for (std::uint64_t n = 1; n <= kPosts; ++n)
      while (!ring.try_put(n, post_number(n))) std::this_thread::yield();
  });
  PostRing ring(slots.data(), &taken, 4);
  std::uint64_t wrong = 0;
  for (std::uint64_t n = 1; n <= kPosts; ++n) {
    PeerPost got;
    while (!ring.try_take(n, got)) std::this_thread::yield();
    if (!same_post(got, post_number(n))) ++wrong;
  }
  sender.join();
  EXPECT_EQ(wrong, 0u);
  EXPECT_EQ(taken, kPosts);
}

// plan_mapping (peer_comm.hpp): what a receiver unmaps before mapping a peer's allocation.
MappedRange range(std::uint64_t buffer, std::uint64_t base, std::uint64_t size, int pins = 0) {
  return MappedRange{buffer, base, size, pins};
}

PeerPost post_of(std::uint64_t buffer, std::uint64_t base, std::uint64_t size) {
  PeerPost p;
  p.buffer = buffer;
  p.base = base;
  p.size = size;
  return p;
}

TEST(PlanMapping, HandDerived) {
  // The header's example: A [0,100) unpinned, B [100,200) pinned; a post over [50,150).
  const std::vector<MappedRange> ab = {range(1, 0, 100), range(2, 100, 100, 1)};
  MapStep s = plan_mapping(ab, post_of(3, 50, 100), false, 16);
  EXPECT_EQ(s.reuse, -1);
  EXPECT_EQ(s.unmap, (std::vector<std::size_t>{0}));
  EXPECT_TRUE(s.conflict);
  // The same allocation again: reused, nothing unmapped.
  s = plan_mapping(ab, post_of(2, 100, 100), false, 16);
  EXPECT_EQ(s.reuse, 1);
  EXPECT_TRUE(s.unmap.empty());
  // A new allocation at A's address (A was freed): A goes.
  s = plan_mapping(ab, post_of(7, 0, 40), false, 16);
  EXPECT_EQ(s.reuse, -1);
  EXPECT_EQ(s.unmap, (std::vector<std::size_t>{0}));
  EXPECT_FALSE(s.conflict);
  // Beside both: nothing to do.
  s = plan_mapping(ab, post_of(8, 200, 10), false, 16);
  EXPECT_TRUE(s.unmap.empty());
  EXPECT_FALSE(s.conflict);
}

TEST(PlanMapping, LeastRecentlyUsedUnpinnedGoesWhenFull) {
  std::vector<MappedRange> m = {range(100, 0, 10, 1)};  // pinned staging first
  for (std::uint64_t i = 0; i < 4; ++i) m.push_back(range(i + 1, 1000 + 100 * i, 100));
  // 4 unpinned of at most 4: an input evicts the least recently used unpinned (index 1) ...
  EXPECT_EQ(plan_mapping(m, post_of(9, 5000, 10), false, 4).unmap, (std::vector<std::size_t>{1}));
  // ... staging evicts nothing (pinned mappings do not count) ...
  EXPECT_TRUE(plan_mapping(m, post_of(9, 5000, 10), true, 4).unmap.empty());
  // ... and an input over index 3 replaces it, leaving 3 unpinned: no eviction besides.
  EXPECT_EQ(plan_mapping(m, post_of(9, 1250, 10), false, 4).unmap, (std::vector<std::size_t>{3}));
  // Under the limit: nothing.
  EXPECT_TRUE(plan_mapping(m, post_of(9, 5000, 10), false, 5).unmap.empty());
}

// Seeded random mappings (disjoint live ranges) and posts: the rules hold.
TEST(PlanMapping, RandomLaws) {
  std::mt19937_64 g = test::make_rng(4404);
  for (int t = 0; t < 3000; ++t) {
    std::vector<MappedRange> m;
    std::uint64_t at = 0;
    const int n = static_cast<int>(g() % 8);
    for (int i = 0; i < n; ++i) {
      at += g() % 3 * 64;
      const std::uint64_t size = 64 * (1 + g() % 4);
      m.push_back(range(1 + g() % 6, at, size, g() % 4 == 0 ? 1 : 0));
      at += size;
    }
    const PeerPost p = post_of(1 + g() % 6, 64 * (g() % 20), 64 * (1 + g() % 5));
    const bool pin = g() % 2;
    const std::size_t max_unpinned = 1 + g() % 4;
    // map() keeps at most max_unpinned unpinned: the state it starts from.
    std::size_t unpinned = 0;
    for (auto& r : m)
      if (r.pins == 0 && ++unpinned > max_unpinned) r.pins = 1;
    const MapStep s = plan_mapping(m, p, pin, max_unpinned);
    auto overlaps = [&](const MappedRange& r) { return r.base < p.base + p.size && p.base < r.base + r.size; };
    std::ptrdiff_t same = -1;
    for (std::size_t i = 0; i < m.size(); ++i)
      if (m[i].base == p.base && m[i].buffer == p.buffer && same < 0) same = static_cast<std::ptrdiff_t>(i);
    ASSERT_EQ(s.reuse, same);
    if (same >= 0) continue;
    bool conflict = false;
    std::size_t left_unpinned = 0;
    for (std::size_t i = 0; i < m.size(); ++i) {
      const bool gone = std::find(s.unmap.begin(), s.unmap.end(), i) != s.unmap.end();
      if (overlaps(m[i]) && m[i].pins > 0) conflict = true;
      if (overlaps(m[i]) && m[i].pins == 0) {
        EXPECT_TRUE(gone) << "an overlapping mapping stays";
      }
      if (m[i].pins > 0) {
        EXPECT_FALSE(gone) << "a pinned mapping goes";
      }
      if (!gone && m[i].pins == 0) ++left_unpinned;
    }
    EXPECT_EQ(s.conflict, conflict);
    EXPECT_TRUE(std::is_sorted(s.unmap.begin(), s.unmap.end()));
    // An input leaves room for itself; only what must go goes (overlaps, then one when full).
    if (!pin) {
      EXPECT_LT(left_unpinned, max_unpinned);
    }
    std::size_t overlapped = 0;
    for (const auto& r : m) overlapped += overlaps(r) && r.pins == 0 ? 1 : 0;
    EXPECT_LE(s.unmap.size(), overlapped + 1);
    if (pin) {
      EXPECT_EQ(s.unmap.size(), overlapped);
    }
    if (HasFailure()) return;
  }
}

}  // namespace
}  // namespace axe::cuda
