// Helpers for the linear-layout tests: text shorthand, a seeded random layout generator and a
// brute-force evaluator (XOR of bases, written independently of apply_flat).
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "axe/core/error.hpp"
#include "axe/linear/linear_layout.hpp"
#include "axe/linear/thread_layouts.hpp"
#include "support/test_support.hpp"

namespace axe::test::linear {

using axe::linear::Dim;
using axe::linear::LinearLayout;

// Expects f() to throw axe::Error whose message contains `needle`.
template <class F>
void expect_error(F f, const std::string& needle) {
  try {
    f();
    ADD_FAILURE() << "expected an error containing: " << needle;
  } catch (const axe::Error& e) {
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
  }
}

inline LinearLayout LL(std::string_view text) { return axe::linear::parse_linear_layout(text); }

inline int uniform(std::mt19937_64& rng, int lo, int hi) {
  return std::uniform_int_distribution<int>(lo, hi)(rng);
}

// Random dims drawn from `pool` (in pool order, a random subset unless `all`), each of
// 0..max_bits bits.
inline std::vector<Dim> random_dims(std::mt19937_64& rng, const std::vector<std::string>& pool,
                                    int max_bits, bool all = false) {
  std::vector<Dim> dims;
  for (const auto& n : pool) {
    if (!all && uniform(rng, 0, 2) == 0) continue;
    dims.push_back({n, uniform(rng, 0, max_bits)});
  }
  return dims;
}

inline int total(const std::vector<Dim>& dims) {
  int t = 0;
  for (const auto& d : dims) t += d.bits;
  return t;
}

// A random layout; kind 0: arbitrary columns, 1: distributed (each column a unit vector or 0),
// 2: surjective (arbitrary columns, retried until the rank is full; in bits >= out bits).
// `all_dims`: every name of `ins` and `outs` is a dim (some of size 1), so that products of such
// layouts never meet conflicting dim orders.
inline LinearLayout random_layout(std::mt19937_64& rng, int kind,
                                  const std::vector<std::string>& ins = {"r", "l", "w"},
                                  const std::vector<std::string>& outs = {"d1", "d0"},
                                  int max_bits = 3, bool all_dims = false) {
  while (true) {
    auto in = random_dims(rng, ins, max_bits, all_dims);
    auto out = random_dims(rng, outs, max_bits, all_dims);
    int tin = total(in), tout = total(out);
    if (kind == 2 && tin < tout) continue;
    std::vector<std::uint64_t> cols;
    for (int j = 0; j < tin; ++j) {
      std::uint64_t c = 0;
      if (kind == 1) {
        int b = uniform(rng, -1, tout - 1);
        if (b >= 0 && uniform(rng, 0, 3) > 0) c = std::uint64_t{1} << b;
      } else if (tout > 0) {
        c = std::uniform_int_distribution<std::uint64_t>(0, (std::uint64_t{1} << tout) - 1)(rng);
      }
      cols.push_back(c);
    }
    auto l = LinearLayout::from_columns(in, out, cols, false);
    if (kind == 2 && !axe::linear::is_surjective(l)) continue;
    return l;
  }
}

// L(x) by definition: XOR of basis(d, i) over the set bits, per output dim.
inline std::vector<std::int64_t> brute_apply(const LinearLayout& l,
                                             const std::vector<std::int64_t>& in) {
  std::vector<std::int64_t> out(l.out_dims().size(), 0);
  for (std::size_t k = 0; k < l.in_dims().size(); ++k) {
    const auto& d = l.in_dims()[k];
    for (int i = 0; i < d.bits; ++i) {
      if (!(in[k] >> i & 1)) continue;
      auto b = l.basis(d.name, i);
      for (std::size_t j = 0; j < out.size(); ++j) out[j] ^= b[j];
    }
  }
  return out;
}

// Every input of l as a vector of per-dim values (for brute-force checks; l small).
inline std::vector<std::vector<std::int64_t>> all_inputs(const LinearLayout& l) {
  std::vector<std::vector<std::int64_t>> all{{}};
  for (const auto& d : l.in_dims()) {
    std::vector<std::vector<std::int64_t>> next;
    for (const auto& p : all) {
      for (std::int64_t v = 0; v < d.size(); ++v) {
        auto q = p;
        q.push_back(v);
        next.push_back(q);
      }
    }
    all = std::move(next);
  }
  return all;
}

// The value of output dim `name` in brute_apply's result.
inline std::int64_t out_of(const LinearLayout& l, const std::vector<std::int64_t>& values,
                           const std::string& name) {
  for (std::size_t k = 0; k < l.out_dims().size(); ++k) {
    if (l.out_dims()[k].name == name) return values[k];
  }
  return 0;
}

// ---- random thread layouts (conversion plans, generated kernels) -------------------------------

inline std::int64_t pick_pow2(std::mt19937_64& rng, int max_log) {
  return std::int64_t{1} << uniform(rng, 0, max_log);
}

// A random blocked layout on `shape` with `warps` warps.
inline LinearLayout random_blocked(std::mt19937_64& rng, const std::vector<std::int64_t>& shape,
                                   std::int64_t warps) {
  std::vector<std::int64_t> spt(2), tpw(2), wpc(2), order{1, 0};
  for (std::size_t d = 0; d < 2; ++d) spt[d] = std::min(shape[d], pick_pow2(rng, 3));
  tpw[0] = pick_pow2(rng, 5);
  tpw[1] = 32 / tpw[0];
  wpc[0] = std::int64_t{1} << uniform(rng, 0, std::countr_zero(static_cast<std::uint64_t>(warps)));
  wpc[1] = warps / wpc[0];
  if (uniform(rng, 0, 1)) order = {0, 1};
  return axe::linear::blocked_layout(shape, spt, tpw, wpc, order);
}

// l with the bases of in-dim `dim` shuffled.
inline LinearLayout permute_dim(std::mt19937_64& rng, const LinearLayout& l, const char* dim) {
  LinearLayout::InBases in;
  for (const auto& d : l.in_dims()) {
    auto b = l.bases(d.name);
    if (d.name == dim) std::shuffle(b.begin(), b.end(), rng);
    in.push_back({d.name, b});
  }
  LinearLayout::OutSizes outs;
  for (const auto& d : l.out_dims()) outs.push_back({d.name, d.size()});
  return LinearLayout(in, outs, false);
}

}  // namespace axe::test::linear
