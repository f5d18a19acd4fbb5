// Canonical form: D0/D1, C0/C1/C2, sorted; preserves the function; equivalence.
#include <gtest/gtest.h>

#include "layout/layout_test_util.hpp"
#include "support/test_support.hpp"

namespace axe {
namespace {

using test::L;

std::string canon(const char* s) { return to_string(canonicalize(L(s))); }

TEST(Canonicalize, ShardRulesD0D1) {
  EXPECT_EQ(canon("S[(8,8,8,4,2):(512,64,8,2,1)]"), "S[4096:1]");
  EXPECT_EQ(canon("S[(8,8,1,8,4,2):(512,64,160,8,2,1)]"), "S[4096:1]");
  EXPECT_EQ(canon("S[(8,8,8,4,1,1):(512,64,8,2,1,1)]"), "S[2048:2]");
  EXPECT_EQ(canon("S[(8,2,3,6):(6,24,6,1)]"), "S[(8,2,18):(6,24,1)]");
  EXPECT_EQ(canon("S[(3,4,5,2):(20,5,1,60)]"), "S[(60,2):(1,60)]");
  EXPECT_EQ(canon("S[(8,4,8):(4@lane,1@lane,4)]"), "S[(32,8):(1@lane,4)]");
  EXPECT_EQ(canon("S[(8,4,4,8,8,8):(4@lane,1@lane,16,2,8,8)]"), "S[(32,32,8,8):(1@lane,2,8,8)]");
  // Different axes never merge; stride-0 digits land nowhere, so their axis is `m`.
  EXPECT_EQ(canon("S[(2,2):(2@x,1)]"), "S[(2,2):(2@x,1)]");
  EXPECT_EQ(canon("S[(2,3):(0@x,0)]"), "S[6:0]");
  EXPECT_EQ(canon("S[(1,1):(5,7)]"), "S[():()]");
}

TEST(Canonicalize, ReplicaRulesC0C1C2) {
  EXPECT_EQ(canon("S[2:1] + R[(8,4):(4@lane,1@lane)]"), "S[2:1] + R[32:1@lane]");
  EXPECT_EQ(canon("S[2:1] + R[(4,8):(1@lane,4@lane)]"), "S[2:1] + R[32:1@lane]");
  EXPECT_EQ(canon("S[2:1] + R[(1,3):(5@x,0@y)]"), "S[2:1]");                 // C0
  EXPECT_EQ(canon("S[2:1] + R[3:-2@x] + 1@x"), "S[2:1] + R[3:2@x] + -3@x");  // C1: 1 - 2*2
  EXPECT_EQ(canon("S[2:1] + R[3:-2@x] + 4@x"), "S[2:1] + R[3:2@x]");         // zero offset dropped
  EXPECT_EQ(canon("S[2:1] + R[(2,2):(1@y,1@x)] + 0@x"), "S[2:1] + R[(2,2):(1@x,1@y)]");  // sorted
  EXPECT_EQ(canon("S[2:1] + P<max>[(2,2):(2@gpu,1@gpu)]"), "S[2:1] + P<max>[4:1@gpu]");
  EXPECT_EQ(canon("S[2:1] + 3@y + 1@x"), "S[2:1] + 1@x + 3@y");
}

TEST(Canonicalize, ReplicasAreASet) {
  EXPECT_TRUE(equivalent(L("S[4:1] + R[(8,4):(4@lane,1@lane)]"),
                         L("S[4:1] + R[(4,8):(1@lane,4@lane)]")));
  EXPECT_FALSE(equivalent(L("S[4:1] + R[2:1@lane]"), L("S[4:1] + R[2:2@lane]")));
  EXPECT_FALSE(equivalent(L("S[4:1] + P[2:1@lane]"), L("S[4:1] + R[2:1@lane]")));
  EXPECT_FALSE(equivalent(L("S[4:1] + P[2:1@lane]"), L("S[4:1] + P<max>[2:1@lane]")));
}

TEST(Canonicalize, IsIdempotent) {
  auto rng = test::make_rng(401);
  for (int i = 0; i < 3000; ++i) {
    AxeLayout c = canonicalize(test::random_layout(rng));
    ASSERT_EQ(canonicalize(c), c) << to_string(c);
  }
}

TEST(Canonicalize, PreservesFunction) {
  auto rng = test::make_rng(402);
  for (int i = 0; i < 3000; ++i) {
    AxeLayout l = test::random_layout(rng);
    ASSERT_TRUE(test::SameFunction(l, canonicalize(l)));
  }
}

// Soundness of `equivalent` on layouts built to be equal: reorder R/P, split iters, flip signs.
TEST(Canonicalize, EquivalentLayoutsHaveEqualCanonicalForms) {
  auto rng = test::make_rng(403);
  for (int i = 0; i < 2000; ++i) {
    AxeLayout l = test::random_layout(rng);
    // Split every D iter with an even extent into (2 : 2... ) pieces: e:s -> (e/2 : 2s, 2 : s).
    std::vector<Iter> d;
    for (const Iter& it : l.shard()) {
      if (it.extent % 2 == 0 && it.extent > 2) {
        d.push_back(Iter{it.extent / 2, 2 * it.stride, it.axis});
        d.push_back(Iter{2, it.stride, it.axis});
      } else {
        d.push_back(it);
        d.push_back(Iter{1, 99, Axis("junk")});
      }
    }
    // Reverse R and flip the sign of each R iter, compensating in the offset.
    std::vector<Iter> r(l.replica().rbegin(), l.replica().rend());
    auto off = l.offset();
    for (Iter& it : r) {
      std::int64_t shift = it.stride * (it.extent - 1);
      bool found = false;
      for (auto& [a, v] : off) {
        if (a == it.axis) {
          v += shift;
          found = true;
        }
      }
      if (!found) off.emplace_back(it.axis, shift);
      it.stride = -it.stride;
    }
    AxeLayout l2(d, r, l.partial(), off, l.reduce_op());
    ASSERT_TRUE(test::SameFunction(l, l2));
    ASSERT_TRUE(equivalent(l, l2)) << to_string(canonicalize(l)) << " vs "
                                   << to_string(canonicalize(l2));
  }
}

// Whenever equivalent says yes, the functions agree (oracle on random pairs, many collisions
// forced by a small generator).
TEST(Canonicalize, EquivalentImpliesSameFunction) {
  auto rng = test::make_rng(404);
  test::RandomOptions o;
  o.max_d = 2;
  o.max_r = 1;
  o.max_p = 0;
  o.max_stride = 3;
  o.axes = {"m", "x"};
  int hits = 0;
  for (int i = 0; i < 20000; ++i) {
    AxeLayout a = test::random_layout(rng, o), b = test::random_layout(rng, o);
    if (equivalent(a, b)) {
      ++hits;
      ASSERT_TRUE(test::SameFunction(a, b));
    }
  }
  EXPECT_GT(hits, 10);
}

}  // namespace
}  // namespace axe
