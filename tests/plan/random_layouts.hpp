// Random distributed layouts for property tests: placements, interleaved and block-cyclic
// shards, permuted local storage, memory offsets, replicas/partials/offsets on some axes, nested
// (DTensor) uneven bounds on dims over several axes.
#pragma once

#include <algorithm>
#include <random>

#include "axe/dist/placement.hpp"

namespace axe::test {

inline Mesh random_mesh(std::mt19937_64& g) {
  static const char* meshes[] = {"g=1", "g=2", "g=3", "g=4", "g=6", "g=8", "x=2,y=2", "x=2,y=3", "x=2,y=4", "x=4,y=2", "x=3,y=2"};
  return parse_mesh(meshes[g() % std::size(meshes)]);
}

// Another mesh for the destination: the same, reordered ranks, shifted ranks, or another shape.
inline Mesh other_mesh(std::mt19937_64& g, const Mesh& a) {
  switch (g() % 5) {
    case 0:
    case 1: return a;
    case 2: {
      std::vector<std::int64_t> r = a.ranks();
      std::shuffle(r.begin(), r.end(), g);
      std::vector<std::pair<std::string, std::int64_t>> ax;
      for (std::size_t i = 0; i < a.ndim(); ++i) ax.emplace_back(std::string(a.axes()[i].name()), a.sizes()[i]);
      return Mesh(ax, r);
    }
    case 3: {
      std::vector<std::int64_t> r;
      std::int64_t shift = static_cast<std::int64_t>(g() % 5);
      for (auto x : a.ranks()) r.push_back(x + shift);
      std::vector<std::pair<std::string, std::int64_t>> ax;
      for (std::size_t i = 0; i < a.ndim(); ++i) ax.emplace_back(std::string(a.axes()[i].name()), a.sizes()[i]);
      return Mesh(ax, r);
    }
    default: return random_mesh(g);
  }
}

inline std::vector<std::int64_t> random_shape(std::mt19937_64& g) {
  std::vector<std::int64_t> s(1 + g() % 3);
  for (auto& e : s) e = 1 + static_cast<std::int64_t>(g() % 9);
  return s;
}

inline ReduceOp random_op(std::mt19937_64& g) {
  static const ReduceOp ops[] = {ReduceOp::Sum, ReduceOp::Avg, ReduceOp::Max, ReduceOp::Min, ReduceOp::Prod};
  return ops[g() % 5];
}

// Placements, one per mesh axis.
inline DistLayout random_placements(std::mt19937_64& g, const std::vector<std::int64_t>& shape, const Mesh& m,
                                    bool allow_partial) {
  std::vector<AxisPlacement> ps;
  ReduceOp op = random_op(g);
  for (std::size_t a = 0; a < m.ndim(); ++a) {
    int k = static_cast<int>(g() % (allow_partial ? 3 : 2));
    if (k == 0) ps.push_back(Shard(static_cast<int>(g() % shape.size())));
    else if (k == 1) ps.push_back(Replicate());
    else ps.push_back(Partial(op));
  }
  return shard(std::span<const std::int64_t>(shape), m, std::span<const AxisPlacement>(ps));
}

// A general layout: each dim split over some device axes, blocked / cyclic / block-cyclic,
// local digits stored in a random order, a memory offset; each unused axis replicates, holds
// partial terms, or holds the data at one coordinate only (an offset on that axis).
inline DistLayout random_general(std::mt19937_64& g, const std::vector<std::int64_t>& shape, const Mesh& m,
                                 bool allow_partial) {
  std::vector<std::size_t> axes(m.ndim());
  for (std::size_t i = 0; i < axes.size(); ++i) axes[i] = i;
  std::shuffle(axes.begin(), axes.end(), g);
  std::vector<std::vector<std::size_t>> dim_axes(shape.size());
  std::vector<bool> used(m.ndim(), false);
  for (auto a : axes)
    if (g() % 3 != 0) {
      dim_axes[g() % shape.size()].push_back(a);
      used[a] = true;
    }
  struct It {
    std::int64_t e;
    int kind;  // 0 memory digit, 1 device
    std::size_t axis;
    std::int64_t dev_stride;
  };
  std::vector<It> D;
  std::vector<std::int64_t> padded;
  std::vector<std::size_t> mem_ids;  // indices into D of memory digits
  for (std::size_t d = 0; d < shape.size(); ++d) {
    std::int64_t p = 1;
    for (auto a : dim_axes[d]) p *= m.sizes()[a];
    std::int64_t c = (shape[d] + p - 1) / p;
    padded.push_back(c * p);
    std::vector<It> dev;
    for (auto a : dim_axes[d]) dev.push_back({m.sizes()[a], 1, a, 1});
    int style = static_cast<int>(g() % 3);
    if (dev.empty()) style = 0;
    if (style == 2 && c % 2 != 0) style = 0;
    std::vector<It> local;
    if (style == 2) {
      local = {{c / 2, 0, 0, 0}, {2, 0, 0, 0}};
    } else {
      local = {{c, 0, 0, 0}};
    }
    if (style == 0) {
      D.insert(D.end(), dev.begin(), dev.end());
      D.insert(D.end(), local.begin(), local.end());
    } else if (style == 1) {
      D.insert(D.end(), local.begin(), local.end());
      D.insert(D.end(), dev.begin(), dev.end());
    } else {
      D.push_back(local[0]);
      D.insert(D.end(), dev.begin(), dev.end());
      D.push_back(local[1]);
    }
  }
  for (std::size_t i = 0; i < D.size(); ++i)
    if (D[i].kind == 0) mem_ids.push_back(i);
  std::vector<std::size_t> order = mem_ids;
  if (g() % 2) std::shuffle(order.begin(), order.end(), g);
  std::vector<std::int64_t> mstride(D.size(), 0);
  std::int64_t st = 1;
  for (std::size_t k = order.size(); k-- > 0;) {
    mstride[order[k]] = st;
    st *= D[order[k]].e;
  }
  std::vector<Iter> d_iters, r_iters, p_iters;
  for (std::size_t i = 0; i < D.size(); ++i) {
    if (D[i].kind == 0) d_iters.push_back({D[i].e, mstride[i], Axis()});
    else d_iters.push_back({D[i].e, 1, m.axes()[D[i].axis]});
  }
  std::vector<std::pair<Axis, std::int64_t>> off;
  std::int64_t moff = static_cast<std::int64_t>(g() % 3);
  if (moff) off.emplace_back(Axis(), moff);
  ReduceOp op = random_op(g);
  for (std::size_t a = 0; a < m.ndim(); ++a) {
    if (used[a]) continue;
    int k = static_cast<int>(g() % (allow_partial ? 3 : 2));
    if (k == 0) r_iters.push_back({m.sizes()[a], 1, m.axes()[a]});
    else if (k == 1) {
      std::int64_t at = static_cast<std::int64_t>(g() % static_cast<std::uint64_t>(m.sizes()[a]));
      if (at) off.emplace_back(m.axes()[a], at);
    } else {
      p_iters.push_back({m.sizes()[a], 1, m.axes()[a]});
    }
  }
  // Dims over several device axes: half the time DTensor's nested chunk bounds (the padding sits
  // at the end of every level's piece instead of at the end of the dim).
  std::vector<std::vector<std::int64_t>> nest(shape.size());
  for (std::size_t d = 0; d < shape.size(); ++d)
    if (dim_axes[d].size() >= 2 && g() % 2)
      for (auto a : dim_axes[d]) nest[d].push_back(m.sizes()[a]);
  return DistLayout(shape, AxeLayout(d_iters, r_iters, p_iters, off, op), m, padded, nest);
}

}  // namespace axe::test
