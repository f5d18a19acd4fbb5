// Direct sum, tile (paper Alg. 2) and tile-of recognition (paper Alg. 3).
//
// tile(O, I) is the direct sum of O scaled by I's span (per axis) and I: on dim k the logical
// coordinate is x_k * inner_shape[k] + y_k, whose row-major digits are x_k's digits followed by
// y_k's, so D is, per dim, O's block (scaled) then I's block.
#include <algorithm>
#include <string>

#include "axe/layout/layout.hpp"
#include "axe/core/error.hpp"
#include "layout/internal.hpp"

namespace axe {
namespace {

Grouped must_group(const AxeLayout& l, std::span<const std::int64_t> shape, std::string_view what,
                   std::string_view role) {
  auto g = group(l, shape);
  if (!g) {
    fail(std::string(what) + ": " + std::string(role) + " layout " + to_string(l) +
         " cannot be grouped by its shape " + internal::shape_to_string(shape) +
         " (an iter extent does not split along the dims)");
  }
  return *g;
}

ReduceOp merged_op(const AxeLayout& a, const AxeLayout& b, std::string_view what) {
  if (!a.partial().empty() && !b.partial().empty() && a.reduce_op() != b.reduce_op()) {
    fail(std::string(what) + ": partial reductions differ (" + std::string(to_string(a.reduce_op())) +
         " in " + to_string(a) + ", " + std::string(to_string(b.reduce_op())) + " in " +
         to_string(b) + ")");
  }
  return a.partial().empty() ? b.reduce_op() : a.reduce_op();
}

std::vector<std::pair<Axis, std::int64_t>> add_offsets(const AxeLayout& a, const AxeLayout& b,
                                                       std::string_view what) {
  std::vector<std::pair<Axis, std::int64_t>> o = a.offset();
  for (const auto& off : b.offset()) {
    auto it = std::find_if(o.begin(), o.end(), [&](const auto& e) { return e.first == off.first; });
    if (it == o.end()) o.emplace_back(off);
    else it->second = checked_add(it->second, off.second, what);
  }
  return o;
}

template <class T>
std::vector<T> concat(const std::vector<T>& a, const std::vector<T>& b) {
  std::vector<T> v = a;
  v.insert(v.end(), b.begin(), b.end());
  return v;
}

// Every stride and offset of `l` multiplied by span(axis) of `inner`.
AxeLayout scaled_by_span(const AxeLayout& l, const AxeLayout& inner) {
  auto scale = [&](std::vector<Iter> v) {
    for (Iter& it : v) it.stride = checked_mul(it.stride, inner.span(it.axis), "tile: outer stride");
    return v;
  };
  auto o = l.offset();
  for (auto& [a, v] : o) v = checked_mul(v, inner.span(a), "tile: outer offset");
  return AxeLayout(scale(l.shard()), scale(l.replica()), scale(l.partial()), o, l.reduce_op());
}

// Removes `sub` from the canonical multiset `set` (splitting a merged iter when `sub` is its low
// part); returns false when `sub` is not contained.
bool remove_iter(std::vector<Iter>& set, const Iter& sub) {
  for (std::size_t i = 0; i < set.size(); ++i) {
    Iter& it = set[i];
    if (it.axis != sub.axis || it.stride != sub.stride || it.extent % sub.extent != 0) continue;
    std::int64_t rest = it.extent / sub.extent;
    if (rest == 1) {
      set.erase(set.begin() + static_cast<std::ptrdiff_t>(i));
    } else {
      it = Iter{rest, checked_mul(sub.stride, sub.extent, "tile_of"), sub.axis};
    }
    return true;
  }
  return false;
}

// The outer part of a canonical multiset: `whole` minus `inner`, strides divided by inner spans.
std::optional<std::vector<Iter>> outer_set(std::vector<Iter> whole, const std::vector<Iter>& inner,
                                           const AxeLayout& inner_layout) {
  for (const Iter& it : inner) {
    if (!remove_iter(whole, it)) return std::nullopt;
  }
  for (Iter& it : whole) {
    std::int64_t sp = inner_layout.span(it.axis);
    if (it.stride % sp != 0) return std::nullopt;
    it.stride /= sp;
  }
  return whole;
}

}  // namespace

AxeLayout direct_sum(const AxeLayout& a, std::span<const std::int64_t> a_shape, const AxeLayout& b,
                     std::span<const std::int64_t> b_shape) {
  if (a_shape.size() != b_shape.size()) {
    fail("direct_sum: shapes " + internal::shape_to_string(a_shape) + " and " +
         internal::shape_to_string(b_shape) + " have different ranks");
  }
  Grouped ga = must_group(a, a_shape, "direct_sum", "first");
  Grouped gb = must_group(b, b_shape, "direct_sum", "second");
  std::vector<Iter> d;
  for (std::size_t k = 0; k < a_shape.size(); ++k) {
    const auto& da = ga.layout.shard();
    const auto& db = gb.layout.shard();
    d.insert(d.end(), da.begin() + static_cast<std::ptrdiff_t>(ga.boundaries[k]),
             da.begin() + static_cast<std::ptrdiff_t>(ga.boundaries[k + 1]));
    d.insert(d.end(), db.begin() + static_cast<std::ptrdiff_t>(gb.boundaries[k]),
             db.begin() + static_cast<std::ptrdiff_t>(gb.boundaries[k + 1]));
  }
  ReduceOp op = merged_op(a, b, "direct_sum");
  return AxeLayout(std::move(d), concat(a.replica(), b.replica()), concat(a.partial(), b.partial()),
                   add_offsets(a, b, "direct_sum: offset"), op);
}

AxeLayout tile(const AxeLayout& outer, std::span<const std::int64_t> outer_shape,
               const AxeLayout& inner, std::span<const std::int64_t> inner_shape) {
  if (outer_shape.size() != inner_shape.size()) {
    fail("tile: outer shape " + internal::shape_to_string(outer_shape) + " and inner shape " +
         internal::shape_to_string(inner_shape) + " have different ranks");
  }
  internal::check_shape(outer_shape, outer.size(), "tile (outer)", outer);
  internal::check_shape(inner_shape, inner.size(), "tile (inner)", inner);
  must_group(outer, outer_shape, "tile", "outer");
  return direct_sum(scaled_by_span(outer, inner), outer_shape, inner, inner_shape);
}

std::optional<AxeLayout> tile_of(const AxeLayout& l, std::span<const std::int64_t> shape,
                                 const AxeLayout& inner,
                                 std::span<const std::int64_t> inner_shape) {
  if (shape.size() != inner_shape.size()) {
    fail("tile_of: shape " + internal::shape_to_string(shape) + " and inner shape " +
         internal::shape_to_string(inner_shape) + " have different ranks");
  }
  internal::check_shape(shape, l.size(), "tile_of", l);
  internal::check_shape(inner_shape, inner.size(), "tile_of (inner)", inner);
  std::vector<std::int64_t> outer_shape, both;
  for (std::size_t k = 0; k < shape.size(); ++k) {
    if (shape[k] % inner_shape[k] != 0) return std::nullopt;
    outer_shape.push_back(shape[k] / inner_shape[k]);
    both.push_back(outer_shape.back());
    both.push_back(inner_shape[k]);
  }
  // D: split each dim into (outer, inner) blocks; the inner blocks must be inner's D.
  auto g = group(l, both);
  if (!g) return std::nullopt;
  std::vector<Iter> od, id;
  const auto& d = g->layout.shard();
  for (std::size_t k = 0; k < shape.size(); ++k) {
    od.insert(od.end(), d.begin() + static_cast<std::ptrdiff_t>(g->boundaries[2 * k]),
              d.begin() + static_cast<std::ptrdiff_t>(g->boundaries[2 * k + 1]));
    id.insert(id.end(), d.begin() + static_cast<std::ptrdiff_t>(g->boundaries[2 * k + 1]),
              d.begin() + static_cast<std::ptrdiff_t>(g->boundaries[2 * k + 2]));
  }
  if (canonicalize(AxeLayout(id)).shard() != canonicalize(AxeLayout(inner.shard())).shard()) {
    return std::nullopt;
  }
  std::erase_if(od, [](const Iter& it) { return it.extent == 1; });
  for (Iter& it : od) {
    std::int64_t sp = inner.span(it.axis);
    if (it.stride % sp != 0) return std::nullopt;
    it.stride /= sp;
  }
  // R and P: canonical multisets, inner's removed; O: what is left after inner's, unscaled.
  AxeLayout cl = canonicalize(l), ci = canonicalize(inner);
  auto orr = outer_set(cl.replica(), ci.replica(), inner);
  auto op = outer_set(cl.partial(), ci.partial(), inner);
  if (!orr || !op) return std::nullopt;
  if (!ci.partial().empty() && !cl.partial().empty() && ci.reduce_op() != cl.reduce_op()) {
    return std::nullopt;
  }
  std::vector<Axis> axes = cl.axes();
  for (Axis a : ci.axes()) {
    if (std::find(axes.begin(), axes.end(), a) == axes.end()) axes.push_back(a);
  }
  std::vector<std::pair<Axis, std::int64_t>> oo;
  for (Axis a : axes) {
    std::int64_t diff;
    if (__builtin_sub_overflow(cl.offset(a), ci.offset(a), &diff)) return std::nullopt;
    std::int64_t sp = inner.span(a);
    if (diff % sp != 0) return std::nullopt;
    if (diff != 0) oo.emplace_back(a, diff / sp);
  }
  try {
    AxeLayout outer(std::move(od), std::move(*orr), std::move(*op), std::move(oo), cl.reduce_op());
    if (!equivalent(tile(outer, outer_shape, inner, inner_shape), l)) return std::nullopt;
    return outer;
  } catch (const Error&) {
    return std::nullopt;
  }
}

}  // namespace axe
