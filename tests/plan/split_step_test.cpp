// split_step: a step as k chunks that together move exactly what the step moves.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <random>

#include "axe/core/error.hpp"
#include "axe/plan/plan.hpp"
#include "axe/exec/simulate.hpp"
#include "random_layouts.hpp"
#include "support/test_support.hpp"

namespace axe {
namespace {
using namespace test;

// Every element moved by a list of boxes: (src index, dst index, term) triples, in order.
std::vector<std::array<std::int64_t, 3>> moves(const std::vector<Transfer>& boxes) {
  std::vector<std::array<std::int64_t, 3>> out;
  for (const auto& b : boxes) {
    const std::size_t n = b.extents.size();
    std::vector<std::int64_t> idx(n, 0);
    const std::int64_t e = b.elements();
    for (std::int64_t i = 0; i < e; ++i) {
      std::int64_t s = b.src_offset, d = b.dst_offset;
      for (std::size_t k = 0; k < n; ++k) {
        s += idx[k] * b.src_strides[k];
        d += idx[k] * b.dst_strides[k];
      }
      out.push_back({s, d, b.term});
      for (std::size_t k = n; k-- > 0;) {
        if (++idx[k] < b.extents[k]) break;
        idx[k] = 0;
      }
    }
  }
  return out;
}

// Hand-derived: the all-gather block (64,128) src 0+(128,1) in 2 chunks: rows 0..31 then 32..63.
TEST(SplitStep, AllGatherBlockInTwo_HandDerived) {
  Step s;
  s.kind = StepKind::AllGather;
  s.group = {0, 1};
  Transfer blk{{64, 128}, 0, {128, 1}, 0, {128, 1}, 0};
  s.sends = {Message{1, {blk}}};
  Transfer got{{64, 128}, 0, {128, 1}, 8192, {128, 1}, 0};
  s.recvs = {Message{1, {got}}};
  s.copies = {blk};
  auto parts = split_step(s, 2);
  ASSERT_EQ(parts.size(), 2u);
  EXPECT_EQ(parts[1].sends[0].boxes, (std::vector<Transfer>{Transfer{{32, 128}, 4096, {128, 1}, 4096, {128, 1}, 0}}));
  EXPECT_EQ(parts[1].recvs[0].boxes,
            (std::vector<Transfer>{Transfer{{32, 128}, 4096, {128, 1}, 8192 + 4096, {128, 1}, 0}}));
  for (std::int64_t c = 0; c < 2; ++c) {
    EXPECT_EQ(parts[static_cast<std::size_t>(c)].chunk, c);
    EXPECT_EQ(parts[static_cast<std::size_t>(c)].chunks, 2);
    EXPECT_EQ(parts[static_cast<std::size_t>(c)].kind, StepKind::AllGather);
    EXPECT_EQ(parts[static_cast<std::size_t>(c)].group, s.group);
  }
  EXPECT_THROW(split_step(s, 0), Error);
  EXPECT_THROW(split_step(parts[0], 2), Error);  // already a chunk
  EXPECT_EQ(split_step(s, 1).front(), s);
}

// Law, over planned steps of random transitions: the chunks of a message (or of the local copies)
// concatenated move exactly the elements of the whole, in the same order, and chunk sizes differ
// by at most one element per box; a message missing from a chunk has no elements there.
TEST(SplitStep, ChunksConcatenateToTheStep_Property) {
  std::mt19937_64 rng = make_rng(0x5b1175);
  int checked = 0;
  for (int it = 0; it < 200; ++it) {
    Mesh m = random_mesh(rng);
    auto shape = random_shape(rng);
    PlanRequest r{it % 2 ? random_general(rng, shape, m, true) : random_placements(rng, shape, m, true),
                  random_placements(rng, shape, m, false), DType::F32};
    RankPlan rp;
    try {
      rp = plan_rank(r, 0);
    } catch (const Error&) {
      continue;
    }
    for (const Step& s : rp.steps) {
      if (s.chunks > 1) continue;
      const std::int64_t k = 1 + static_cast<std::int64_t>(rng() % 5);
      auto parts = split_step(s, k);
      ASSERT_EQ(static_cast<std::int64_t>(parts.size()), k);
      auto whole_copies = moves(s.copies);
      std::vector<std::array<std::int64_t, 3>> cat;
      for (const auto& x : parts) {
        auto m = moves(x.copies);
        cat.insert(cat.end(), m.begin(), m.end());
      }
      if (s.reduce && !is_collective(s.kind)) {  // per-box split: compare as multisets
        std::sort(cat.begin(), cat.end());
        std::sort(whole_copies.begin(), whole_copies.end());
      }
      ASSERT_EQ(cat, whole_copies);
      for (const auto* list : {&s.sends, &s.recvs}) {
        for (const auto& m : *list) {
          std::vector<std::array<std::int64_t, 3>> joined;
          for (const auto& x : parts) {
            const auto& v = list == &s.sends ? x.sends : x.recvs;
            for (const auto& y : v)
              if (y.peer == m.peer) {
                auto mv = moves(y.boxes);
                joined.insert(joined.end(), mv.begin(), mv.end());
              }
          }
          auto whole = moves(m.boxes);
          if (s.reduce && !is_collective(s.kind)) {
            std::sort(joined.begin(), joined.end());
            std::sort(whole.begin(), whole.end());
          }
          ASSERT_EQ(joined, whole) << to_string(r.from) << " -> " << to_string(r.to);
        }
      }
      ++checked;
    }
  }
  EXPECT_GT(checked, 50);
}

}  // namespace
}  // namespace axe
