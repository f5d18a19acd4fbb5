// ModeVector (a Transfer's extents and strides): behaves as std::vector<std::int64_t> for what
// the plan's consumers do with it, inline up to 4 entries and on the heap beyond.
#include <gtest/gtest.h>

#include <numeric>
#include <span>
#include <utility>
#include <vector>

#include "axe/plan/plan.hpp"
#include "support/test_support.hpp"

namespace axe {
namespace {

std::vector<std::int64_t> as_vector(const ModeVector& m) { return m; }

// A Transfer built as the executors do (aggregate init with braced lists) reads back the same.
TEST(ModeVector, TransferAggregateInit_Example) {
  Transfer t{{16, 32}, 64, {128, 1}, 512, {32, 1}, 0};
  EXPECT_EQ(to_string(t), "(16,32) src 64+(128,1) dst 512+(32,1)");
  EXPECT_EQ(t.extents.size(), 2u);
  EXPECT_EQ(t.extents[0], 16);
  EXPECT_EQ(t.extents.back(), 32);
  EXPECT_EQ(t.elements(), 512);
  Transfer one{{7}, 3, {1}, 5, {1}, 0};
  EXPECT_EQ(to_string(one), "7 src 3+1 dst 5+1");
  Transfer empty{{}, 0, {}, 0, {}, 0};
  EXPECT_TRUE(empty.extents.empty());
  EXPECT_EQ(empty.elements(), 1);
  EXPECT_EQ(t, (Transfer{{16, 32}, 64, {128, 1}, 512, {32, 1}, 0}));
  EXPECT_NE(t, (Transfer{{16, 32}, 64, {128, 1}, 512, {32, 2}, 0}));
}

// Converts both ways and compares equal to a vector with the same entries, at every length
// (inline and heap).
TEST(ModeVector, MatchesStdVector_EveryLength) {
  for (std::size_t n = 0; n <= 12; ++n) {
    std::vector<std::int64_t> v(n);
    std::iota(v.begin(), v.end(), 5);
    ModeVector m = v;
    EXPECT_EQ(m.size(), n);
    EXPECT_EQ(m.empty(), n == 0);
    EXPECT_TRUE(m == v);
    EXPECT_EQ(as_vector(m), v);
    std::vector<std::int64_t> back = m;
    EXPECT_EQ(back, v);
    std::vector<std::int64_t> assigned;
    assigned = m;
    EXPECT_EQ(assigned, v);
    std::int64_t sum = 0;
    for (auto x : m) sum += x;
    EXPECT_EQ(sum, std::accumulate(v.begin(), v.end(), std::int64_t{0}));
    std::span<const std::int64_t> s = m;
    EXPECT_EQ(s.size(), n);
    // Copies and moves keep the entries; the moved-from list is empty.
    ModeVector c = m;
    EXPECT_EQ(c, m);
    ModeVector d = std::move(c);
    EXPECT_EQ(d, m);
    EXPECT_TRUE(c.empty());  // NOLINT(bugprone-use-after-move): the documented state
    ModeVector e{1, 2};
    e = d;
    EXPECT_EQ(e, m);
    e = std::move(d);
    EXPECT_EQ(e, m);
    e = e;  // self-assignment keeps it
    EXPECT_EQ(e, m);
  }
}

TEST(ModeVector, MutatorsAsOnStdVector) {
  ModeVector m;
  std::vector<std::int64_t> v;
  for (std::int64_t i = 0; i < 10; ++i) {
    m.push_back(i * i);
    v.push_back(i * i);
    EXPECT_EQ(m, v);
  }
  m.back() *= 2;
  v.back() *= 2;
  m.pop_back();
  v.pop_back();
  EXPECT_EQ(m, v);
  m.assign(3, 7);
  v.assign(3, 7);
  EXPECT_EQ(m, v);
  m.resize(6, 1);
  v.resize(6, 1);
  EXPECT_EQ(m, v);
  m.resize(2);
  v.resize(2);
  EXPECT_EQ(m, v);
  const std::vector<std::int64_t> more{9, 8, 7, 6, 5};
  m.insert(m.begin() + 1, more.begin(), more.end());
  v.insert(v.begin() + 1, more.begin(), more.end());
  EXPECT_EQ(m, v);
  m.insert(m.end(), 4);
  v.insert(v.end(), 4);
  EXPECT_EQ(m, v);
  m.erase(m.begin() + 1);
  v.erase(v.begin() + 1);
  EXPECT_EQ(m, v);
  m.erase(m.begin() + 2, m.begin() + 4);
  v.erase(v.begin() + 2, v.begin() + 4);
  EXPECT_EQ(m, v);
  m.emplace_back(11);
  v.emplace_back(11);
  EXPECT_EQ(m, v);
  m.assign(v.begin() + 2, v.end());
  EXPECT_EQ(m, std::vector<std::int64_t>(v.begin() + 2, v.end()));
  m = {1};
  EXPECT_EQ(m, std::vector<std::int64_t>{1});
  m.clear();
  EXPECT_TRUE(m.empty());
  ModeVector sized(3);
  EXPECT_EQ(sized, (std::vector<std::int64_t>{0, 0, 0}));
  // A list that spilled to the heap and shrank copies into inline storage.
  ModeVector big{1, 2, 3, 4, 5, 6};
  big.resize(2);
  ModeVector small = big;
  EXPECT_EQ(small, (std::vector<std::int64_t>{1, 2}));
  EXPECT_EQ(small.capacity(), ModeVector::inline_capacity);
  EXPECT_GT(big.capacity(), ModeVector::inline_capacity);
}

// contiguous_run, hand-derived: rows 4..7 then 8..9 of an 8-wide source (elements 32..79) into
// elements 0..47 of the destination, as two boxes, are one run: src 32, dst 0, n 48. An empty box
// between them is skipped; a gap, a strided box or a second box out of order is no run.
TEST(ContiguousRun, RowBlocksJoin_HandDerived) {
  const Transfer a{{4, 8}, 32, {8, 1}, 0, {8, 1}, 0}, b{{2, 8}, 64, {8, 1}, 32, {8, 1}, 0};
  const Transfer empty{{0, 8}, 7, {8, 1}, 3, {8, 1}, 0};
  auto r = contiguous_run({a, empty, b});
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->src, 32);
  EXPECT_EQ(r->dst, 0);
  EXPECT_EQ(r->n, 48);
  EXPECT_FALSE(contiguous_run({b, a}).has_value());                                     // out of order
  EXPECT_FALSE(contiguous_run({a, Transfer{{2, 8}, 72, {8, 1}, 32, {8, 1}, 0}}).has_value());  // source gap
  EXPECT_FALSE(contiguous_run({Transfer{{4, 4}, 0, {8, 1}, 0, {4, 1}, 0}}).has_value());     // strided source
  EXPECT_FALSE(contiguous_run({empty}).has_value());                                    // no element
  // extent-1 modes do not count: a (1, 8) box with any outer stride is a run of 8
  r = contiguous_run({Transfer{{1, 8}, 5, {999, 1}, 9, {-3, 1}, 0}});
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->n, 8);
}

}  // namespace
}  // namespace axe
