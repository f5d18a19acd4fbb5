// F2 utilities: exact examples, seeded random laws, and brute-force oracles over small spaces.
#include "axe/linear/f2.hpp"

#include <gtest/gtest.h>

#include <bit>
#include <set>

#include "linear_test_util.hpp"

namespace axe::test::linear {
namespace {

namespace f2 = axe::linear::f2;
using f2::Vec;

// Every element of span(vs), by enumerating all combinations (vs small).
std::set<Vec> span_of(const std::vector<Vec>& vs) {
  std::set<Vec> s;
  for (std::uint64_t m = 0; m < (std::uint64_t{1} << vs.size()); ++m) {
    Vec x = 0;
    for (std::size_t j = 0; j < vs.size(); ++j) {
      if (m >> j & 1) x ^= vs[j];
    }
    s.insert(x);
  }
  return s;
}

std::vector<Vec> random_vecs(std::mt19937_64& rng, int count, int n) {
  std::vector<Vec> v;
  for (int i = 0; i < count; ++i) {
    v.push_back(std::uniform_int_distribution<Vec>(0, (Vec{1} << n) - 1)(rng));
  }
  return v;
}

TEST(F2, RowEchelon_Examples) {
  EXPECT_EQ(f2::row_echelon(std::vector<Vec>{0b011, 0b110, 0b101}), (std::vector<Vec>{0b101, 0b110}));
  EXPECT_EQ(f2::row_echelon(std::vector<Vec>{0, 0}), std::vector<Vec>{});
  EXPECT_EQ(f2::rank(std::vector<Vec>{1, 1, 2}), 2);
  EXPECT_TRUE(f2::in_span(std::vector<Vec>{0b011, 0b110}, 0b101));
  EXPECT_FALSE(f2::in_span(std::vector<Vec>{0b011, 0b110}, 0b001));
}

// combine is the linear map of its columns: bits 0 and 1 of 0b011 select 1 ^ 6 = 7; it is
// additive over XOR (checked over every pair of 4-bit inputs).
TEST(F2, Combine_IsTheLinearMapOfItsColumns) {
  const std::vector<Vec> cols{1, 6, 8, 0b1010};
  EXPECT_EQ(f2::combine(cols, 0b011), 7u);
  EXPECT_EQ(f2::combine(cols, 0), 0u);
  for (std::uint64_t x = 0; x < 16; ++x) {
    for (std::uint64_t y = 0; y < 16; ++y) {
      EXPECT_EQ(f2::combine(cols, x ^ y), f2::combine(cols, x) ^ f2::combine(cols, y));
    }
  }
}

TEST(F2, Solve_FreeVariablesAreZero) {
  EXPECT_EQ(f2::solve(std::vector<Vec>{1, 1, 2}, 3), Vec{0b101});
  EXPECT_EQ(f2::solve(std::vector<Vec>{1, 1, 2}, 4), std::nullopt);
  EXPECT_EQ(f2::free_columns(std::vector<Vec>{1, 1, 2}), Vec{0b010});
  EXPECT_EQ(f2::free_columns(std::vector<Vec>{2, 0, 2}), Vec{0b110});
  EXPECT_EQ(f2::null_space(std::vector<Vec>{1, 1, 2}), std::vector<Vec>{0b011});
}

TEST(F2, Complement_Examples) {
  // TV-12: complement((2,2):(2,1), 8) -> [4]; complement(4:2, 32) -> [1,8,16].
  EXPECT_EQ(f2::complement(std::vector<Vec>{2, 1}, 3), std::vector<Vec>{4});
  EXPECT_EQ(f2::complement(std::vector<Vec>{2, 4}, 5), (std::vector<Vec>{1, 8, 16}));
  // TV-15: bank = complement of span(vector [32,64] + segment [8,16,130,260]) on 9 bits.
  EXPECT_EQ(f2::complement(std::vector<Vec>{32, 64, 8, 16, 130, 260}, 9),
            (std::vector<Vec>{1, 128, 256}));
}

TEST(F2, Intersection_Examples) {
  EXPECT_EQ(f2::intersection(std::vector<Vec>{0b011, 0b100}, std::vector<Vec>{0b111}),
            std::vector<Vec>{0b111});
  EXPECT_EQ(f2::intersection(std::vector<Vec>{1}, std::vector<Vec>{2}), std::vector<Vec>{});
}

// Laws over random vector sets in F2^6, checked against enumeration of the spans.
TEST(F2, RandomLaws_AgreeWithEnumeration) {
  auto rng = make_rng(0xf2);
  for (int trial = 0; trial < 300; ++trial) {
    int n = uniform(rng, 1, 6);
    auto a = random_vecs(rng, uniform(rng, 0, 5), n);
    auto b = random_vecs(rng, uniform(rng, 0, 5), n);
    auto sa = span_of(a), sb = span_of(b);
    SCOPED_TRACE("trial " + std::to_string(trial));
    // rank == log2 |span|; row_echelon spans the same space with distinct pivots.
    int r = f2::rank(a);
    EXPECT_EQ(std::size_t{1} << r, sa.size());
    auto e = f2::row_echelon(a);
    EXPECT_EQ(span_of(e), sa);
    for (std::size_t i = 0; i < e.size(); ++i) {
      for (std::size_t j = 0; j < e.size(); ++j) {
        if (i != j) {
          EXPECT_FALSE(e[j] >> f2::pivot(e[i]) & 1) << "not reduced";
        }
      }
    }
    // rank + nullity == number of columns; every null vector combines to 0.
    auto ns = f2::null_space(a);
    EXPECT_EQ(r + static_cast<int>(ns.size()), static_cast<int>(a.size()));
    EXPECT_EQ(std::popcount(f2::free_columns(a)), static_cast<int>(ns.size()));
    for (Vec x : ns) {
      Vec y = 0;
      for (std::size_t j = 0; j < a.size(); ++j) {
        if (x >> j & 1) y ^= a[j];
      }
      EXPECT_EQ(y, 0u);
    }
    // solve finds a solution exactly for the span, using pivot columns only.
    Vec free = f2::free_columns(a);
    for (Vec t = 0; t < (Vec{1} << n); ++t) {
      auto x = f2::solve(a, t);
      ASSERT_EQ(x.has_value(), sa.count(t) > 0);
      if (!x) continue;
      EXPECT_EQ(*x & free, 0u);
      Vec y = 0;
      for (std::size_t j = 0; j < a.size(); ++j) {
        if (*x >> j & 1) y ^= a[j];
      }
      EXPECT_EQ(y, t);
    }
    // intersection == set intersection of the spans.
    std::set<Vec> both;
    for (Vec v : sa) {
      if (sb.count(v)) both.insert(v);
    }
    EXPECT_EQ(span_of(f2::intersection(a, b)), both);
    // complement: a direct sum with span(a) that fills F2^n.
    auto c = f2::complement(a, n);
    EXPECT_EQ(r + static_cast<int>(c.size()), n);
    auto all = a;
    all.insert(all.end(), c.begin(), c.end());
    EXPECT_EQ(f2::rank(all), n);
  }
}

}  // namespace
}  // namespace axe::test::linear
