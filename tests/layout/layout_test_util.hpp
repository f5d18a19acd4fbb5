// Shared helpers for the Axe layout tests: a "same function" checker, brute-force images and a
// seeded random layout generator.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "axe/layout/layout.hpp"
#include "axe/core/error.hpp"

namespace axe::test {

inline AxeLayout L(std::string_view text) { return parse_axe_layout(text); }

// A coordinate as a name -> value map without zeros, so it orders and compares as a map.
using Coord = std::map<std::string, std::int64_t>;

inline Coord to_map(const PhysCoord& c) {
  Coord m;
  for (const auto& [a, v] : c.entries()) {
    if (v != 0) m[std::string(a.name())] = v;
  }
  return m;
}

inline PhysCoord pc(std::initializer_list<std::pair<const char*, std::int64_t>> entries) {
  PhysCoord c;
  for (const auto& [n, v] : entries) c.set(Axis(n), v);
  return c;
}

inline std::string coord_string(const Coord& c) {
  std::string s = "{";
  for (const auto& [a, v] : c) s += a + " " + std::to_string(v) + ", ";
  return s + "}";
}

// The set of coordinates of x (replica/term indices ignored).
inline std::set<Coord> image(const AxeLayout& l, std::int64_t x) {
  std::set<Coord> s;
  for (const Placement& p : l.forward(x)) s.insert(to_map(p.coord));
  return s;
}

// Same size and the same set of coordinates for every logical index.
inline ::testing::AssertionResult SameFunction(const AxeLayout& a, const AxeLayout& b) {
  if (a.size() != b.size()) {
    return ::testing::AssertionFailure() << to_string(a) << " has size " << a.size() << ", "
                                         << to_string(b) << " has size " << b.size();
  }
  for (std::int64_t x = 0; x < a.size(); ++x) {
    auto ia = image(a, x), ib = image(b, x);
    if (ia != ib) {
      std::string sa, sb;
      for (const auto& c : ia) sa += coord_string(c);
      for (const auto& c : ib) sb += coord_string(c);
      return ::testing::AssertionFailure()
             << "at x = " << x << ": " << to_string(a) << " -> " << sa << " but " << to_string(b)
             << " -> " << sb;
    }
  }
  return ::testing::AssertionSuccess();
}

// Every placement of every element: coordinate -> list of (index, replica, term).
inline std::map<Coord, std::vector<Preimage>> enumerate(const AxeLayout& l) {
  std::map<Coord, std::vector<Preimage>> m;
  for (std::int64_t x = 0; x < l.size(); ++x) {
    for (const Placement& p : l.forward(x)) m[to_map(p.coord)].push_back({x, p.replica, p.term});
  }
  return m;
}

struct RandomOptions {
  int max_d = 4;
  int max_r = 2;
  int max_p = 1;
  bool offsets = true;
  bool negative = true;
  bool zero_stride = true;
  std::int64_t max_stride = 12;
  std::vector<std::string> axes = {"m", "lane", "warp", "gpu"};
};

inline std::int64_t pick(std::mt19937_64& rng, std::int64_t lo, std::int64_t hi) {
  return std::uniform_int_distribution<std::int64_t>(lo, hi)(rng);
}

inline Iter random_iter(std::mt19937_64& rng, const RandomOptions& o) {
  static const std::int64_t ext[] = {1, 2, 2, 3, 4, 4, 5, 6, 8};
  Iter it;
  it.extent = ext[pick(rng, 0, 8)];
  std::int64_t s = pick(rng, o.zero_stride ? 0 : 1, o.max_stride);
  if (o.negative && pick(rng, 0, 3) == 0) s = -s;
  it.stride = s;
  std::string a = o.axes[static_cast<std::size_t>(pick(rng, 0, static_cast<std::int64_t>(o.axes.size()) - 1))];
  it.axis = Axis(a);
  return it;
}

// Random D/R/P/O with several axes, stride 0, negative strides, non-powers of two.
inline AxeLayout random_layout(std::mt19937_64& rng, const RandomOptions& o = {}) {
  std::vector<Iter> d, r, p;
  for (int n = static_cast<int>(pick(rng, 0, o.max_d)); n-- > 0;) d.push_back(random_iter(rng, o));
  for (int n = static_cast<int>(pick(rng, 0, o.max_r)); n-- > 0;) r.push_back(random_iter(rng, o));
  for (int n = static_cast<int>(pick(rng, 0, o.max_p)); n-- > 0;) p.push_back(random_iter(rng, o));
  std::vector<std::pair<Axis, std::int64_t>> off;
  if (o.offsets) {
    for (const auto& a : o.axes) {
      if (pick(rng, 0, 2) == 0) off.emplace_back(Axis(a), pick(rng, -20, 20));
    }
  }
  static const ReduceOp ops[] = {ReduceOp::Sum, ReduceOp::Max, ReduceOp::Avg};
  return AxeLayout(d, r, p, off, ops[pick(rng, 0, 2)]);
}

// A random invertible-by-construction layout: per axis, nested strides (each iter's stride is the
// span of the ones placed before it on that axis, times 1 or 2), order of iters shuffled, signs
// random.
inline AxeLayout random_nested_layout(std::mt19937_64& rng, const RandomOptions& o = {}) {
  std::vector<Iter> all;
  int nd = static_cast<int>(pick(rng, 0, o.max_d)), nr = static_cast<int>(pick(rng, 0, o.max_r)),
      np = static_cast<int>(pick(rng, 0, o.max_p));
  std::map<std::string, std::int64_t> reach;
  for (int i = 0; i < nd + nr + np; ++i) {
    static const std::int64_t ext[] = {2, 3, 4, 5, 6, 8};
    std::string a = o.axes[static_cast<std::size_t>(pick(rng, 0, static_cast<std::int64_t>(o.axes.size()) - 1))];
    std::int64_t e = ext[pick(rng, 0, 5)];
    std::int64_t& span = reach.try_emplace(a, 1).first->second;
    std::int64_t s = span * pick(rng, 1, 2);
    span = s * (e - 1) + span;  // stays nested: next stride >= this reach
    if (o.negative && pick(rng, 0, 3) == 0) s = -s;
    all.push_back(Iter{e, s, Axis(a)});
  }
  std::shuffle(all.begin(), all.end(), rng);
  std::vector<Iter> d(all.begin(), all.begin() + nd), r(all.begin() + nd, all.begin() + nd + nr),
      p(all.begin() + nd + nr, all.end());
  std::vector<std::pair<Axis, std::int64_t>> off;
  if (o.offsets) {
    for (const auto& a : o.axes) {
      if (pick(rng, 0, 2) == 0) off.emplace_back(Axis(a), pick(rng, -20, 20));
    }
  }
  return AxeLayout(d, r, p, off);
}

// A random shape with the given size: split the prime factors of n over `rank` dims.
inline std::vector<std::int64_t> random_shape(std::mt19937_64& rng, std::int64_t n, int rank) {
  std::vector<std::int64_t> shape(static_cast<std::size_t>(rank), 1);
  for (std::int64_t f = 2; n > 1;) {
    if (n % f == 0) {
      shape[static_cast<std::size_t>(pick(rng, 0, rank - 1))] *= f;
      n /= f;
    } else {
      ++f;
    }
  }
  return shape;
}

}  // namespace axe::test
