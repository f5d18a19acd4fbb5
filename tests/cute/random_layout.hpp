// Seeded random CuTe layouts for property tests: nested shapes (depth <= 3), extent-1 modes,
// non-powers of two, and several stride kinds.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <numeric>
#include <random>
#include <set>
#include <vector>

#include "axe/cute/layout.hpp"

namespace axe::cute::testing {

enum class StrideKind {
  kColMajor,   // compact, leftmost fastest
  kPermuted,   // compact, modes in a random order
  kGapped,     // injective with padding between modes
  kBroadcast,  // compact with some stride-0 modes
  kRandom,     // arbitrary non-negative strides (often non-injective)
};

inline std::int64_t uniform(std::mt19937_64& rng, std::int64_t lo, std::int64_t hi) {
  return std::uniform_int_distribution<std::int64_t>(lo, hi)(rng);
}

// A random shape with flat extents drawn from {1..max_extent}, total size <= max_size.
inline IntTuple random_shape(std::mt19937_64& rng, int max_depth = 3, std::int64_t max_extent = 8,
                             std::int64_t max_size = 2048) {
  std::int64_t budget = max_size;
  auto leaf = [&]() -> IntTuple {
    std::int64_t hi = std::max<std::int64_t>(1, std::min(max_extent, budget));
    std::int64_t e = uniform(rng, 1, hi);
    budget = std::max<std::int64_t>(1, budget / e);
    return e;
  };
  std::function<IntTuple(int)> node = [&](int d) -> IntTuple {
    if (d >= max_depth || uniform(rng, 0, 2) == 0) return leaf();
    std::int64_t r = uniform(rng, 1, 3);
    std::vector<IntTuple> e;
    for (std::int64_t i = 0; i < r; ++i) e.push_back(node(d + 1));
    return IntTuple::tuple(std::move(e));
  };
  // Top level: an int or a tuple of rank 1..4.
  if (uniform(rng, 0, 4) == 0) return leaf();
  std::int64_t r = uniform(rng, 1, 4);
  std::vector<IntTuple> e;
  for (std::int64_t i = 0; i < r; ++i) e.push_back(node(1));
  return IntTuple::tuple(std::move(e));
}

// Rebuilds a tuple congruent to `shape` from flat leaf values.
inline IntTuple unflatten_like(const IntTuple& shape, const std::vector<std::int64_t>& flat,
                               std::size_t& k) {
  if (!shape.is_tuple()) return flat[k++];
  std::vector<IntTuple> e;
  for (const IntTuple& s : shape.elems()) e.push_back(unflatten_like(s, flat, k));
  return IntTuple::tuple(std::move(e));
}

inline Layout random_layout(std::mt19937_64& rng, StrideKind kind, int max_depth = 3,
                            std::int64_t max_size = 2048) {
  IntTuple shape = random_shape(rng, max_depth, 8, max_size);
  std::vector<std::int64_t> ext;
  for (const IntTuple& e : flatten_leaves(shape)) ext.push_back(e.value());
  const std::size_t n = ext.size();
  std::vector<std::size_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  if (kind != StrideKind::kColMajor && kind != StrideKind::kRandom) {
    std::shuffle(order.begin(), order.end(), rng);
  }
  std::vector<std::int64_t> stride(n, 0);
  std::int64_t current = 1;
  for (std::size_t k : order) {
    if (kind == StrideKind::kGapped) current *= uniform(rng, 1, 3);
    stride[k] = current;
    current *= ext[k];
  }
  if (kind == StrideKind::kBroadcast) {
    for (std::size_t k = 0; k < n; ++k) {
      if (uniform(rng, 0, 2) == 0) stride[k] = 0;
    }
  }
  if (kind == StrideKind::kRandom) {
    for (std::size_t k = 0; k < n; ++k) stride[k] = uniform(rng, 0, 40);
  }
  std::size_t k = 0;
  return Layout(shape, unflatten_like(shape, stride, k));
}

inline StrideKind random_kind(std::mt19937_64& rng) {
  return static_cast<StrideKind>(uniform(rng, 0, 4));
}

// A random injective "tile" B of the domain of `a` for which composition(a, B) is exact function
// composition: a's flat extents are its mixed-radix digits; B's modes take disjoint runs of
// whole digits (the last one possibly cut to a divisor), in random order, with the prefix-product
// stride of the run's first digit. Some modes may be broadcast (stride 0).
inline Layout digit_tile(std::mt19937_64& rng, const Layout& a, bool allow_broadcast = true) {
  std::vector<std::int64_t> ext;
  for (const IntTuple& e : flatten_leaves(a.shape())) ext.push_back(e.value());
  std::vector<std::int64_t> prefix{1};
  for (std::int64_t e : ext) prefix.push_back(prefix.back() * e);
  std::vector<Layout> modes;
  std::size_t k = 0;
  while (k < ext.size()) {
    std::size_t len = static_cast<std::size_t>(
        uniform(rng, 1, std::min<std::int64_t>(3, static_cast<std::int64_t>(ext.size() - k))));
    std::int64_t extent = 1;
    for (std::size_t j = k; j + 1 < k + len; ++j) extent *= ext[j];
    // The last digit of the run: keep a divisor of it.
    std::int64_t last = ext[k + len - 1];
    std::vector<std::int64_t> divisors;
    for (std::int64_t d = 1; d <= last; ++d) {
      if (last % d == 0) divisors.push_back(d);
    }
    extent *= divisors[static_cast<std::size_t>(
        uniform(rng, 0, static_cast<std::int64_t>(divisors.size()) - 1))];
    if (uniform(rng, 0, 3) != 0) {  // skip some runs entirely
      std::int64_t stride = prefix[k];
      if (allow_broadcast && uniform(rng, 0, 7) == 0) stride = 0;
      modes.push_back(Layout(extent, stride));
    }
    k += len;
  }
  if (modes.empty()) modes.push_back(Layout(1, 0));
  std::shuffle(modes.begin(), modes.end(), rng);
  if (modes.size() == 1 && uniform(rng, 0, 1) == 0) return modes[0];
  // Optionally nest: group the first two modes.
  if (modes.size() >= 3 && uniform(rng, 0, 1) == 0) {
    Layout g = make_layout({modes[0], modes[1]});
    modes.erase(modes.begin(), modes.begin() + 2);
    modes.insert(modes.begin(), g);
  }
  return make_layout(modes);
}

inline bool is_injective(const Layout& l) {
  std::set<std::int64_t> seen;
  for (std::int64_t i = 0; i < size(l); ++i) {
    if (!seen.insert(l(i)).second) return false;
  }
  return true;
}

inline std::set<std::int64_t> image(const Layout& l) {
  std::set<std::int64_t> out;
  for (std::int64_t i = 0; i < size(l); ++i) out.insert(l(i));
  return out;
}

}  // namespace axe::cute::testing
