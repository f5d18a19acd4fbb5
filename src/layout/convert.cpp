// Conversions between CuTe layouts (colexicographic) and Axe layouts (row-major D).
#include <string>

#include "axe/layout/convert.hpp"
#include "axe/core/error.hpp"
#include "layout/internal.hpp"

namespace axe {
namespace {

// The leaves of a (shape, stride) pair, depth-first left to right.
void leaves(const cute::IntTuple& shape, const cute::IntTuple& stride, std::vector<Iter>& out,
            Axis axis) {
  if (shape.is_int()) {
    if (shape.value() <= 0) {
      fail("from_cute: mode of extent " + std::to_string(shape.value()) +
           " has no Axe counterpart (Axe extents must be > 0)");
    }
    out.push_back(Iter{shape.value(), stride.value(), axis});
    return;
  }
  for (std::size_t i = 0; i < shape.elems().size(); ++i) {
    leaves(shape.elems()[i], stride.elems()[i], out, axis);
  }
}

cute::IntTuple leaf_or_tuple(std::vector<cute::IntTuple> v) {
  if (v.size() == 1) return v[0];
  return cute::IntTuple::tuple(std::move(v));
}

// A CuTe mode whose colexicographic 1-D index runs over `block` (row-major): the iters reversed.
std::pair<cute::IntTuple, cute::IntTuple> mode_of(std::span<const Iter> block) {
  if (block.empty()) return {cute::IntTuple(1), cute::IntTuple(0)};
  std::vector<cute::IntTuple> s, d;
  for (std::size_t i = block.size(); i-- > 0;) {
    s.emplace_back(block[i].extent);
    d.emplace_back(block[i].stride);
  }
  return {leaf_or_tuple(std::move(s)), leaf_or_tuple(std::move(d))};
}

void check_convertible(const AxeLayout& l) {
  std::string why;
  if (!l.replica().empty()) why = "it has replicas R (CuTe layouts hold one copy)";
  else if (!l.partial().empty()) why = "it has partial terms P (CuTe layouts hold values)";
  for (const auto& [a, v] : l.offset()) {
    if (why.empty() && v != 0) {
      why = "it has offset " + std::to_string(v) + " on axis '" + std::string(a.name()) +
            "' (CuTe layouts start at 0)";
    }
  }
  std::optional<Axis> axis;
  for (const Iter& it : l.shard()) {
    if (it.stride == 0 || it.extent == 1 || !why.empty()) continue;
    if (!axis) axis = it.axis;
    else if (*axis != it.axis) {
      why = "its shard spans axes '" + std::string(axis->name()) + "' and '" +
            std::string(it.axis.name()) + "' (a CuTe layout has one codomain)";
    }
  }
  if (!why.empty()) fail("to_cute: layout " + to_string(l) + " has no CuTe counterpart: " + why);
}

}  // namespace

AxeLayout from_cute(const cute::Layout& l, IndexOrder order, Axis axis) {
  std::vector<Iter> d;
  if (order == IndexOrder::Linear) {
    std::vector<Iter> all;
    leaves(l.shape(), l.stride(), all, axis);
    d.assign(all.rbegin(), all.rend());
  } else {
    const std::size_t r = l.shape().is_int() ? 1 : l.shape().elems().size();
    for (std::size_t k = 0; k < r; ++k) {
      std::vector<Iter> mode;
      if (l.shape().is_int()) leaves(l.shape(), l.stride(), mode, axis);
      else leaves(l.shape().elems()[k], l.stride().elems()[k], mode, axis);
      d.insert(d.end(), mode.rbegin(), mode.rend());
    }
  }
  return AxeLayout(std::move(d));
}

cute::Layout to_cute(const AxeLayout& l, IndexOrder order) {
  check_convertible(l);
  const auto& d = l.shard();
  if (d.empty()) return cute::Layout();
  if (order == IndexOrder::Linear) {
    auto [s, t] = mode_of(d);
    return cute::Layout(s, t);
  }
  std::vector<cute::IntTuple> s, t;
  for (const Iter& it : d) {
    s.emplace_back(it.extent);
    t.emplace_back(it.stride);
  }
  return cute::Layout(leaf_or_tuple(std::move(s)), leaf_or_tuple(std::move(t)));
}

cute::Layout to_cute(const AxeLayout& l, std::span<const std::int64_t> shape) {
  check_convertible(l);
  auto g = group(l, shape);
  if (!g) {
    fail("to_cute: layout " + to_string(l) + " cannot be grouped by shape " +
         internal::shape_to_string(shape) + " (an iter extent does not split along the dims)");
  }
  const auto& d = g->layout.shard();
  std::vector<cute::IntTuple> s, t;
  for (std::size_t k = 0; k < shape.size(); ++k) {
    auto [ms, mt] = mode_of(std::span<const Iter>(d).subspan(
        g->boundaries[k], g->boundaries[k + 1] - g->boundaries[k]));
    s.push_back(std::move(ms));
    t.push_back(std::move(mt));
  }
  if (s.size() == 1 && s[0].is_int()) return cute::Layout(s[0], t[0]);
  return cute::Layout(cute::IntTuple::tuple(std::move(s)), cute::IntTuple::tuple(std::move(t)));
}

}  // namespace axe
