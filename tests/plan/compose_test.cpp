// compose_message (axe/plan/compose.hpp): hand-derived joins, the brute-force law on random box
// lists (element k of the result reads the sender's k-th address and writes the receiver's), and
// every message of random plans.
#include "axe/plan/compose.hpp"

#include <gtest/gtest.h>

#include <cstdio>
#include <utility>

#include "axe/exec/simulate.hpp"
#include "axe/plan/step_check.hpp"
#include "random_layouts.hpp"
#include "support/test_support.hpp"

namespace axe {
namespace {

// The addresses of one side of `boxes` in packed order (row-major within a box).
std::vector<std::int64_t> addresses(const std::vector<Transfer>& boxes, bool src) {
  std::vector<std::int64_t> out;
  for (const auto& t : boxes) {
    if (t.elements() == 0) continue;
    std::vector<std::int64_t> idx(t.extents.size(), 0);
    while (true) {
      std::int64_t a = src ? t.src_offset : t.dst_offset;
      for (std::size_t i = 0; i < idx.size(); ++i) a += idx[i] * (src ? t.src_strides[i] : t.dst_strides[i]);
      out.push_back(a);
      std::size_t k = idx.size();
      while (k > 0 && ++idx[k - 1] == t.extents[k - 1]) idx[--k] = 0;
      if (k == 0) break;
    }
  }
  return out;
}

// The law: the joined boxes move the sender's k-th element to the receiver's k-th slot, in order.
void expect_joins(const std::vector<Transfer>& send, const std::vector<Transfer>& recv,
                  const std::vector<Transfer>& joined, const std::string& what) {
  EXPECT_EQ(addresses(joined, true), addresses(send, true)) << what;
  EXPECT_EQ(addresses(joined, false), addresses(recv, false)) << what;
}

Transfer box(std::vector<std::int64_t> extents, std::int64_t off, std::vector<std::int64_t> strides) {
  return Transfer{extents, off, strides, off, strides, 0};
}

TEST(ComposeMessage, SameBoxesJoinAsOneBox_HandDerived) {
  // 4 rows of 8 from a 16-wide matrix, received as 32 consecutive elements at 100.
  const auto got = compose_message({box({4, 8}, 0, {16, 1})}, {box({32}, 100, {1})});
  ASSERT_TRUE(got);
  EXPECT_EQ(*got, (std::vector<Transfer>{Transfer{{4, 8}, 0, {16, 1}, 100, {8, 1}, 0}}));
}

TEST(ComposeMessage, ShapesJoinOnTheUnionOfTheirSuffixProducts_HandDerived) {
  // (4,8) src 0+(16,1) against (2,16) dst 0+(40,1): suffix products {32,8,1} and {32,16,1} give
  // modes (2,2,8): src strides (32,16,1), dst strides (40,8,1).
  const auto got = compose_message({box({4, 8}, 0, {16, 1})}, {box({2, 16}, 0, {40, 1})});
  ASSERT_TRUE(got);
  EXPECT_EQ(*got, (std::vector<Transfer>{Transfer{{2, 2, 8}, 0, {32, 16, 1}, 0, {40, 8, 1}, 0}}));
}

TEST(ComposeMessage, BoxBoundariesAreCut_HandDerived) {
  // Sender: 20 then 12 consecutive elements at 0 and 50. Receiver: one (4,8) box at 200 with rows
  // 10 apart. Cut at 20: rows 0-1 (16), then 4 elements of row 2; the sender's second box: the
  // rest of row 2 (4), then row 3 (8).
  const std::vector<Transfer> send = {box({20}, 0, {1}), box({12}, 50, {1})};
  const std::vector<Transfer> recv = {box({4, 8}, 200, {10, 1})};
  const auto got = compose_message(send, recv);
  ASSERT_TRUE(got);
  EXPECT_EQ(*got, (std::vector<Transfer>{Transfer{{2, 8}, 0, {8, 1}, 200, {10, 1}, 0},
                                         Transfer{{4}, 16, {1}, 220, {1}, 0},
                                         Transfer{{4}, 50, {1}, 224, {1}, 0},
                                         Transfer{{8}, 54, {1}, 230, {1}, 0}}));
  expect_joins(send, recv, *got, "cut");
}

TEST(ComposeMessage, ShapesWithoutACommonRefinementAreCutRowByRow) {
  // (3,4) against (2,6): 4 does not divide 6, so no join of the whole; the result is still exact.
  const std::vector<Transfer> send = {box({3, 4}, 7, {9, 2})}, recv = {box({2, 6}, 3, {11, 1})};
  const auto got = compose_message(send, recv);
  ASSERT_TRUE(got);
  expect_joins(send, recv, *got, "(3,4) against (2,6)");
  EXPECT_LE(got->size(), 12u);
}

TEST(ComposeMessage, TermsAndEmptyBoxes) {
  // The receiver's term is kept; empty boxes move nothing and are dropped.
  Transfer r{{6}, 0, {1}, 0, {1}, 2};
  const auto got = compose_message({box({0, 4}, 0, {4, 1}), box({2, 3}, 5, {3, 1})}, {r, box({0}, 9, {1})});
  ASSERT_TRUE(got);
  ASSERT_EQ(got->size(), 1u);
  EXPECT_EQ(got->front(), (Transfer{{2, 3}, 5, {3, 1}, 0, {3, 1}, 2}));
}

TEST(ComposeMessage, DifferentCountsOrTooManyBoxesAreNullopt) {
  EXPECT_FALSE(compose_message({box({4}, 0, {1})}, {box({5}, 0, {1})}));
  // (7) with stride 2 against (7) joins as one box, which max_boxes 0 does not allow.
  EXPECT_FALSE(compose_message({box({7}, 0, {2})}, {box({7}, 0, {1})}, 0));
  EXPECT_TRUE(compose_message({}, {}));
  EXPECT_TRUE(compose_message({}, {})->empty());
}

// Seeded random lists: random boxes (1-3 modes, extents 1-5, strides and offsets) with the same
// total, cut into random pieces on each side.
TEST(ComposeMessage, RandomListsKeepTheLaw) {
  auto g = test::make_rng(4401);
  auto random_list = [&](std::int64_t total) {
    std::vector<Transfer> out;
    while (total > 0) {
      Transfer t;
      const int modes = 1 + static_cast<int>(g() % 3);
      std::int64_t n = 1;
      for (int i = 0; i < modes; ++i) {
        std::int64_t e = 1 + static_cast<std::int64_t>(g() % 5);
        while (n * e > total && e > 1) --e;
        t.extents.push_back(e);
        n *= e;
      }
      std::int64_t s = 1;
      t.src_strides.resize(t.extents.size());
      for (std::size_t i = t.extents.size(); i-- > 0;) {
        t.src_strides[i] = s;
        s *= t.extents[i] + static_cast<std::int64_t>(g() % 3);
      }
      t.src_offset = static_cast<std::int64_t>(g() % 50);
      t.dst_offset = t.src_offset;
      t.dst_strides = t.src_strides;
      out.push_back(t);
      total -= n;
    }
    return out;
  };
  for (int i = 0; i < 2000; ++i) {
    const std::int64_t total = 1 + static_cast<std::int64_t>(g() % 120);
    const auto send = random_list(total), recv = random_list(total);
    const auto got = compose_message(send, recv, 1 << 20);
    ASSERT_TRUE(got) << "case " << i;
    expect_joins(send, recv, *got, "case " + std::to_string(i));
    if (HasFailure()) return;
  }
}

// A random plan (meshes, shape and layouts from `g`) and its text form.
struct RandomPlan {
  Plan plan;
  std::string text;
};
RandomPlan random_plan(std::mt19937_64& g) {
  Mesh a = test::random_mesh(g);
  Mesh b = test::other_mesh(g, a);
  auto shape = test::random_shape(g);
  DistLayout from = g() % 2 ? test::random_placements(g, shape, a, true) : test::random_general(g, shape, a, true);
  DistLayout to = g() % 2 ? test::random_placements(g, shape, b, false) : test::random_general(g, shape, b, false);
  return {plan_all({from, to, DType::F32}), to_string(from) + " -> " + to_string(to)};
}

// Every message of the plan with its receiver's side: (send message, the matching receive in the
// same step). A send whose receiver has no matching receive is a test failure (and left out).
std::vector<std::pair<const Message*, const Message*>> message_pairs(const Plan& p) {
  std::vector<std::pair<const Message*, const Message*>> pairs;
  for (const auto& rp : p.ranks)
    for (std::size_t k = 0; k < rp.steps.size(); ++k)
      for (const auto& m : rp.steps[k].sends) {
        const RankPlan* q = p.find(m.peer);
        const Message* r = q ? find_message(q->steps[k].recvs, rp.rank) : nullptr;
        if (!r) {
          ADD_FAILURE() << "rank " << m.peer << " step " << k << " receives nothing from " << rp.rank;
          continue;
        }
        pairs.push_back({&m, r});
      }
  return pairs;
}

// Every message of random plans: the sender's send boxes to a peer joined with the peer's
// receive boxes from it, in the same step.
TEST(ComposeMessage, MessagesOfRandomPlansKeepTheLaw) {
  auto g = test::make_rng(4402);
  std::int64_t messages = 0, boxes_in = 0, boxes_out = 0;
  for (int i = 0; i < 300; ++i) {
    const RandomPlan rp = random_plan(g);
    for (const auto& [m, r] : message_pairs(rp.plan)) {
      const auto got = compose_message(m->boxes, r->boxes, 1 << 20);
      ASSERT_TRUE(got);
      expect_joins(m->boxes, r->boxes, *got, rp.text);
      ++messages;
      boxes_in += static_cast<std::int64_t>(std::max(m->boxes.size(), r->boxes.size()));
      boxes_out += static_cast<std::int64_t>(got->size());
      if (HasFailure()) return;
    }
    if (HasFailure()) return;
  }
  EXPECT_GT(messages, 500);
  // How many boxes the joins took against the larger side's (information, not a law).
  std::printf("%lld messages: %lld boxes on the larger side, %lld joined\n", static_cast<long long>(messages),
              static_cast<long long>(boxes_in), static_cast<long long>(boxes_out));
}

// The sender's side as words (encode_send_boxes / decode_send_boxes).
TEST(SendBoxWords, HandDerived) {
  std::vector<std::int64_t> w;
  Transfer t = box({4, 8}, 16, {16, 1});
  t.term = 2;
  encode_send_boxes({t}, w);
  EXPECT_EQ(w, (std::vector<std::int64_t>{1, 2, 4, 8, 16, 16, 1, 2}));
  std::size_t at = 0;
  const auto back = decode_send_boxes(w, at);
  ASSERT_TRUE(back);
  EXPECT_EQ(at, w.size());
  ASSERT_EQ(back->size(), 1u);
  EXPECT_EQ((*back)[0].extents, t.extents);
  EXPECT_EQ((*back)[0].src_offset, 16);
  EXPECT_EQ((*back)[0].src_strides, t.src_strides);
  EXPECT_EQ((*back)[0].term, 2);
  EXPECT_EQ((*back)[0].dst_strides, (ModeVector{0, 0}));
  // Two lists back to back, read one after the other.
  encode_send_boxes({}, w);
  encode_send_boxes({box({3}, 5, {2}), box({}, 7, {})}, w);
  at = 0;
  ASSERT_TRUE(decode_send_boxes(w, at));
  const auto empty = decode_send_boxes(w, at);
  ASSERT_TRUE(empty);
  EXPECT_TRUE(empty->empty());
  const auto two = decode_send_boxes(w, at);
  ASSERT_TRUE(two);
  ASSERT_EQ(two->size(), 2u);
  EXPECT_EQ((*two)[0].src_offset, 5);
  EXPECT_EQ((*two)[1].extents.size(), 0u);
  EXPECT_EQ((*two)[1].src_offset, 7);
  EXPECT_EQ(at, w.size());
}

// Malformed words: every truncation of a valid table, and bad counts, are nullopt (never a crash
// or a huge allocation).
TEST(SendBoxWords, MalformedWordsAreNullopt) {
  std::vector<std::int64_t> w;
  encode_send_boxes({box({4, 8}, 16, {16, 1}), box({2, 3, 5}, 1, {30, 10, 2})}, w);
  for (std::size_t n = 0; n < w.size(); ++n) {
    std::size_t at = 0;
    EXPECT_FALSE(decode_send_boxes(std::span<const std::int64_t>(w.data(), n), at)) << n << " words";
  }
  auto bad = [](std::vector<std::int64_t> words) {
    std::size_t at = 0;
    return !decode_send_boxes(words, at);
  };
  EXPECT_TRUE(bad({-1}));                                   // a negative box count
  EXPECT_TRUE(bad({std::int64_t{1} << 60, 0, 0, 0}));       // more boxes than words
  EXPECT_TRUE(bad({1, 65, 0, 0, 0}));                       // more than 64 modes
  EXPECT_TRUE(bad({1, -2, 0, 0}));                          // negative modes
  EXPECT_TRUE(bad({1, 1, -4, 0, 1, 0}));                    // a negative extent
}

// Every message of random plans: its send boxes through the words join with the receiver's boxes
// exactly as the send boxes themselves do.
TEST(SendBoxWords, RandomPlansJoinAlikeThroughWords) {
  auto g = test::make_rng(4403);
  std::int64_t messages = 0;
  for (int i = 0; i < 200; ++i) {
    const RandomPlan rp = random_plan(g);
    const auto pairs = message_pairs(rp.plan);
    ASSERT_FALSE(HasFailure());
    std::vector<std::int64_t> words;
    for (const auto& [m, r] : pairs) encode_send_boxes(m->boxes, words);
    std::size_t at = 0;
    for (const auto& [m, r] : pairs) {
      const auto back = decode_send_boxes(words, at);
      ASSERT_TRUE(back);
      EXPECT_EQ(compose_message(*back, r->boxes, 1 << 20), compose_message(m->boxes, r->boxes, 1 << 20));
      ++messages;
      if (HasFailure()) return;
    }
    EXPECT_EQ(at, words.size());
  }
  EXPECT_GT(messages, 300);
}

}  // namespace
}  // namespace axe
