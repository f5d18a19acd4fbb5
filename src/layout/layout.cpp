// AxeLayout: construction, validation, size/span and the forward map.
#include <algorithm>
#include <string>

#include "axe/layout/layout.hpp"
#include "axe/core/error.hpp"
#include "layout/internal.hpp"

namespace axe {
namespace internal {

std::int64_t extent_product(std::span<const Iter> iters, std::string_view what) {
  std::int64_t p = 1;
  for (const Iter& it : iters) p = checked_mul(p, it.extent, what);
  return p;
}

std::vector<std::int64_t> unflatten(std::int64_t x, std::span<const Iter> iters) {
  std::vector<std::int64_t> c(iters.size());
  for (std::size_t k = iters.size(); k-- > 0;) {
    c[k] = x % iters[k].extent;
    x /= iters[k].extent;
  }
  return c;
}

std::string iters_to_string(std::span<const Iter> iters) {
  auto stride = [](const Iter& it) {
    std::string s = std::to_string(it.stride);
    if (!it.axis.is_memory()) s += "@" + std::string(it.axis.name());
    return s;
  };
  if (iters.size() == 1) return std::to_string(iters[0].extent) + ":" + stride(iters[0]);
  std::string e = "(", s = "(";
  for (std::size_t i = 0; i < iters.size(); ++i) {
    if (i) {
      e += ",";
      s += ",";
    }
    e += std::to_string(iters[i].extent);
    s += stride(iters[i]);
  }
  return e + "):" + s + ")";
}

std::string shape_to_string(std::span<const std::int64_t> shape) {
  std::string s = "(";
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (i) s += ",";
    s += std::to_string(shape[i]);
  }
  return s + ")";
}

void check_shape(std::span<const std::int64_t> shape, std::int64_t size, std::string_view what,
                 const AxeLayout& l) {
  std::int64_t p = 1;
  for (std::size_t k = 0; k < shape.size(); ++k) {
    if (shape[k] <= 0) {
      fail(std::string(what) + ": shape " + shape_to_string(shape) + " has extent " +
           std::to_string(shape[k]) + " <= 0 in dim " + std::to_string(k));
    }
    p = checked_mul(p, shape[k], std::string(what) + ": product of shape " + shape_to_string(shape));
  }
  if (p != size) {
    fail(std::string(what) + ": shape " + shape_to_string(shape) + " has " + std::to_string(p) +
         " elements but layout " + to_string(l) + " has size " + std::to_string(size));
  }
}

std::vector<Digit> digits_on(const AxeLayout& l, Axis a) {
  std::vector<Digit> out;
  const std::vector<Iter>* groups[3] = {&l.shard(), &l.replica(), &l.partial()};
  for (int g = 0; g < 3; ++g) {
    const auto& v = *groups[g];
    for (std::size_t i = 0; i < v.size(); ++i) {
      if (v[i].axis == a && v[i].extent > 1) out.push_back({v[i].extent, v[i].stride, g, i});
    }
  }
  return out;
}

AxeLayout with_shard(const AxeLayout& l, std::vector<Iter> d) {
  return AxeLayout(std::move(d), l.replica(), l.partial(), l.offset(), l.reduce_op());
}

std::int64_t shard_value(std::span<const Iter> d, std::span<const std::int64_t> digits, Axis a) {
  std::int64_t v = 0;
  for (std::size_t k = 0; k < d.size(); ++k) {
    if (d[k].axis == a) v = checked_add(v, checked_mul(digits[k], d[k].stride, "shard value"),
                                        "shard value");
  }
  return v;
}

std::pair<std::int64_t, std::int64_t> coordinate_range(const AxeLayout& l, Axis a) {
  std::int64_t lo = l.offset(a), hi = l.offset(a);
  for (const auto* g : {&l.shard(), &l.replica(), &l.partial()}) {
    for (const Iter& it : *g) {
      if (it.axis != a) continue;
      std::int64_t t = checked_mul(it.stride, it.extent - 1, "coordinate range");
      if (t < 0) lo = checked_add(lo, t, "coordinate range");
      else hi = checked_add(hi, t, "coordinate range");
    }
  }
  return {lo, hi};
}

}  // namespace internal

using internal::extent_product;

AxeLayout::AxeLayout(std::vector<Iter> d, std::vector<Iter> r, std::vector<Iter> p,
                     std::vector<std::pair<Axis, std::int64_t>> offset, ReduceOp op)
    : d_(std::move(d)), r_(std::move(r)), p_(std::move(p)), o_(std::move(offset)), op_(op) {
  // A layout without partial terms has nothing to reduce: keep one spelling of it.
  if (p_.empty()) op_ = ReduceOp::Sum;
  const char* names[3] = {"S", "R", "P"};
  const std::vector<Iter>* groups[3] = {&d_, &r_, &p_};
  for (int g = 0; g < 3; ++g) {
    for (std::size_t i = 0; i < groups[g]->size(); ++i) {
      const Iter& it = (*groups[g])[i];
      if (it.extent <= 0) {
        fail(std::string("Axe layout: ") + names[g] + " iter " + std::to_string(i) + " (" +
             std::to_string(it.extent) + ":" + std::to_string(it.stride) + "@" +
             std::string(it.axis.name()) + ") has extent " + std::to_string(it.extent) +
             " <= 0");
      }
    }
  }
  for (std::size_t i = 0; i < o_.size(); ++i) {
    for (std::size_t j = 0; j < i; ++j) {
      if (o_[i].first == o_[j].first) {
        fail("Axe layout: offset on axis '" + std::string(o_[i].first.name()) +
             "' given twice (" + std::to_string(o_[j].second) + " and " +
             std::to_string(o_[i].second) + ")");
      }
    }
  }
  extent_product(d_, "Axe layout: size (product of S extents)");
  extent_product(r_, "Axe layout: replica count (product of R extents)");
  extent_product(p_, "Axe layout: term count (product of P extents)");
  // Every coordinate the layout can produce lies in [offset + negative part, offset + positive
  // part] per axis; checking both ends once makes every later forward evaluation overflow-free.
  for (Axis a : axes()) {
    try {
      internal::coordinate_range(*this, a);
      span(a);
    } catch (const Error& e) {
      fail("Axe layout " + to_string(*this) + ": coordinates on axis '" + std::string(a.name()) +
           "' do not fit in 64 bits (" + e.what() + ")");
    }
  }
}

std::int64_t AxeLayout::offset(Axis a) const {
  for (const auto& [ax, v] : o_) {
    if (ax == a) return v;
  }
  return 0;
}

std::int64_t AxeLayout::size() const { return extent_product(d_, "size"); }
std::int64_t AxeLayout::replicas() const { return extent_product(r_, "replicas"); }
std::int64_t AxeLayout::terms() const { return extent_product(p_, "terms"); }

std::vector<Axis> AxeLayout::axes() const {
  std::vector<Axis> out;
  bool has_m = false;
  auto note = [&](Axis a) {
    if (a.is_memory()) {
      has_m = true;
      return;
    }
    if (std::find(out.begin(), out.end(), a) == out.end()) out.push_back(a);
  };
  for (const Iter& it : d_) note(it.axis);
  for (const Iter& it : r_) note(it.axis);
  for (const Iter& it : p_) note(it.axis);
  for (const auto& [a, v] : o_) note(a);
  if (has_m) out.push_back(Axis::memory());
  return out;
}

std::int64_t AxeLayout::span(Axis a) const {
  std::int64_t s = 1;
  for (const auto* g : {&d_, &r_, &p_}) {
    for (const Iter& it : *g) {
      if (it.axis != a) continue;
      std::int64_t t = checked_mul(it.stride, it.extent - 1, "span");
      s = checked_add(s, t < 0 ? checked_sub(0, t, "span") : t, "span");
    }
  }
  return s;
}

PhysCoord AxeLayout::forward_first(std::int64_t x) const {
  std::int64_t n = size();
  if (x < 0 || x >= n) {
    fail("forward: logical index " + std::to_string(x) + " out of range [0, " +
         std::to_string(n) + ") of " + to_string(*this));
  }
  PhysCoord c;
  for (Axis a : axes()) c.set(a, offset(a));
  auto digits = internal::unflatten(x, d_);
  for (std::size_t k = 0; k < d_.size(); ++k) c.add(d_[k].axis, digits[k] * d_[k].stride);
  return c;
}

std::vector<Placement> AxeLayout::forward(std::int64_t x) const {
  PhysCoord base = forward_first(x);
  std::int64_t nr = replicas(), np = terms();
  std::vector<Placement> out;
  out.reserve(static_cast<std::size_t>(checked_mul(nr, np, "forward: placements")));
  for (std::int64_t r = 0; r < nr; ++r) {
    PhysCoord cr = base;
    auto rd = internal::unflatten(r, r_);
    for (std::size_t k = 0; k < r_.size(); ++k) cr.add(r_[k].axis, rd[k] * r_[k].stride);
    for (std::int64_t p = 0; p < np; ++p) {
      PhysCoord cp = cr;
      auto pd = internal::unflatten(p, p_);
      for (std::size_t k = 0; k < p_.size(); ++k) cp.add(p_[k].axis, pd[k] * p_[k].stride);
      out.push_back({std::move(cp), r, p});
    }
  }
  return out;
}

std::vector<Placement> AxeLayout::forward(std::span<const std::int64_t> coord,
                                          std::span<const std::int64_t> shape) const {
  internal::check_shape(shape, size(), "forward", *this);
  if (coord.size() != shape.size()) {
    fail("forward: coordinate has rank " + std::to_string(coord.size()) + " but shape " +
         internal::shape_to_string(shape) + " has rank " + std::to_string(shape.size()));
  }
  std::int64_t x = 0;
  for (std::size_t k = 0; k < shape.size(); ++k) {
    if (coord[k] < 0 || coord[k] >= shape[k]) {
      fail("forward: coordinate " + internal::shape_to_string(coord) + " out of range in dim " +
           std::to_string(k) + " of shape " + internal::shape_to_string(shape));
    }
    x = x * shape[k] + coord[k];
  }
  return forward(x);
}

bool AxeLayout::operator==(const AxeLayout& o) const {
  if (d_ != o.d_ || r_ != o.r_ || p_ != o.p_ || op_ != o.op_) return false;
  for (const auto& [a, v] : o_) {
    if (o.offset(a) != v) return false;
  }
  for (const auto& [a, v] : o.o_) {
    if (offset(a) != v) return false;
  }
  return true;
}

}  // namespace axe

std::size_t std::hash<axe::AxeLayout>::operator()(const axe::AxeLayout& l) const noexcept {
  auto mix = [](std::size_t h, std::size_t v) {
    return h ^ (v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2));
  };
  std::size_t h = 0;
  std::hash<axe::Axis> ha;
  std::size_t group = 1;
  for (const auto* g : {&l.shard(), &l.replica(), &l.partial()}) {
    h = mix(h, group++ * 0x51ed27);
    for (const auto& it : *g) {
      h = mix(h, std::hash<std::int64_t>()(it.extent));
      h = mix(h, std::hash<std::int64_t>()(it.stride));
      h = mix(h, ha(it.axis));
    }
  }
  h = mix(h, static_cast<std::size_t>(l.reduce_op()));
  // Offsets are compared as a map with absent == 0: combine order-independently, skip zeros.
  std::size_t o = 0;
  for (const auto& [a, v] : l.offset()) {
    if (v != 0) o += mix(ha(a), std::hash<std::int64_t>()(v));
  }
  return mix(h, o);
}
