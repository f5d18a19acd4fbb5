// choose_transport (peer_comm.hpp): which transport carries a job, from every rank's node and GPU.
// Host logic only: runs without a GPU.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "axe/core/error.hpp"
#include "axe/cuda/peer_comm.hpp"

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

}  // namespace
}  // namespace axe::cuda
