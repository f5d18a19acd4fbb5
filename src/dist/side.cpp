// A distributed layout grouped by its padded shape (a side), its padded shape when none is given,
// and its validity against its mesh.
#include <algorithm>
#include <string>

#include "axe/core/error.hpp"
#include "dist/internal.hpp"

namespace axe::internal {

std::string shape_text(const std::vector<std::int64_t>& v) {
  std::string s = "(";
  for (std::size_t i = 0; i < v.size(); ++i) s += (i ? "," : "") + std::to_string(v[i]);
  return s + ")";
}

std::string layout_name(const DistLayout& l) { return "'" + to_string(l.layout()) + "'"; }

namespace {

int axis_of(const Mesh& mesh, Axis a, const AxeLayout& l) {
  if (a.is_memory()) return static_cast<int>(mesh.ndim());
  auto i = mesh.axis_index(a);
  if (!i)
    fail("layout '" + to_string(l) + "' uses axis '" + std::string(a.name()) +
         "' which is not an axis of mesh " + to_string(mesh));
  return static_cast<int>(*i);
}

}  // namespace

std::vector<std::int64_t> infer_padded(const AxeLayout& l, const std::vector<std::int64_t>& shape) {
  std::int64_t n = 1;
  for (auto e : shape) {
    if (e < 1) fail("global shape " + shape_text(shape) + " has a dim < 1");
    n = checked_mul(n, e, "global shape size");
  }
  if (n == l.size()) return shape;
  std::vector<std::int64_t> padded(shape.size(), 1);
  std::vector<std::int64_t> ext;
  for (const auto& it : l.shard())
    if (it.extent > 1) ext.push_back(it.extent);
  std::size_t j = ext.size();
  for (std::size_t k = shape.size(); k-- > 0;) {
    std::int64_t prod = 1;
    while (prod < shape[k] && j > 0) prod *= ext[--j];
    if (prod < shape[k]) break;
    padded[k] = prod;
  }
  std::int64_t m = 1;
  for (auto e : padded) m *= e;
  if (j != 0 || m != l.size())
    fail("layout '" + to_string(l) + "' of size " + std::to_string(l.size()) +
         " does not admit global shape " + shape_text(shape) +
         " (no padded shape >= it groups the layout's iters)");
  return padded;
}

Side make_side(const DistLayout& dl) {
  const AxeLayout& l = dl.layout();
  const Mesh& mesh = dl.mesh();
  Side s;
  s.layout = &dl;
  s.naxes = static_cast<int>(mesh.ndim());
  const auto& padded = dl.padded_shape();
  s.dims.resize(padded.size());
  std::vector<std::int64_t> need = padded;
  int k = static_cast<int>(padded.size()) - 1;
  auto skip = [&] {
    while (k >= 0 && need[static_cast<std::size_t>(k)] == 1) --k;
  };
  skip();
  const auto& d = l.shard();
  for (std::size_t j = d.size(); j-- > 0;) {
    std::int64_t e = d[j].extent, stride = d[j].stride;
    int axis = axis_of(mesh, d[j].axis, l);
    while (e > 1) {
      if (k < 0)
        fail("layout " + layout_name(dl) + " does not group by padded shape " +
             shape_text(padded) + " (iters left over)");
      std::int64_t& rem = need[static_cast<std::size_t>(k)];
      auto& out = s.dims[static_cast<std::size_t>(k)];
      if (rem % e == 0) {
        out.push_back({e, axis, stride});
        rem /= e;
        e = 1;
      } else if (e % rem == 0) {
        out.push_back({rem, axis, stride});
        stride = checked_mul(stride, rem, "split stride");
        e /= rem;
        rem = 1;
      } else {
        fail("layout " + layout_name(dl) + " does not group by padded shape " +
             shape_text(padded) + ": iter extent " + std::to_string(e) +
             " straddles dim " + std::to_string(k) + " (remaining " + std::to_string(rem) + ")");
      }
      skip();
    }
  }
  for (auto& v : s.dims) std::reverse(v.begin(), v.end());
  for (const auto& it : l.replica())
    if (it.extent > 1) s.rep.push_back({it.extent, axis_of(mesh, it.axis, l), it.stride});
  for (const auto& it : l.partial())
    if (it.extent > 1) s.part.push_back({it.extent, axis_of(mesh, it.axis, l), it.stride});
  s.offset.assign(static_cast<std::size_t>(s.naxes + 1), 0);
  for (const auto& [a, v] : l.offset()) s.offset[static_cast<std::size_t>(axis_of(mesh, a, l))] += v;
  for (const auto& it : s.rep) s.replicas *= it.extent;
  for (const auto& it : s.part) s.terms *= it.extent;
  s.op = l.reduce_op();
  return s;
}

std::int64_t check_side(const Side& s) {
  const DistLayout& dl = *s.layout;
  const Mesh& mesh = dl.mesh();
  std::vector<std::vector<std::pair<std::int64_t, std::int64_t>>> per(
      static_cast<std::size_t>(s.naxes + 1));
  for (const auto& dim : s.dims)
    for (const auto& it : dim) per[static_cast<std::size_t>(it.axis)].push_back({it.extent, it.stride});
  for (const auto& it : s.rep) per[static_cast<std::size_t>(it.axis)].push_back({it.extent, it.stride});
  for (const auto& it : s.part) per[static_cast<std::size_t>(it.axis)].push_back({it.extent, it.stride});
  std::int64_t buffer = 1;
  for (int a = 0; a <= s.naxes; ++a) {
    auto& v = per[static_cast<std::size_t>(a)];
    std::string aname = a == s.naxes ? "m" : std::string(mesh.axes()[static_cast<std::size_t>(a)].name());
    std::int64_t lo = s.offset[static_cast<std::size_t>(a)], hi = lo;
    for (auto [e, st] : v) {
      std::int64_t span = checked_mul(st, e - 1, "span");
      if (span < 0) lo += span; else hi += span;
    }
    if (a < s.naxes) {
      std::int64_t size = mesh.sizes()[static_cast<std::size_t>(a)];
      if (lo < 0 || hi >= size)
        fail("layout " + layout_name(dl) + " puts coordinates [" + std::to_string(lo) + ", " +
             std::to_string(hi) + "] on axis '" + aname + "' of size " + std::to_string(size) +
             " in mesh " + to_string(mesh));
    } else {
      if (lo < 0)
        fail("layout " + layout_name(dl) + " has a negative memory offset " + std::to_string(lo));
      buffer = hi + 1;
    }
    // Injectivity on this axis: nested strides (each at least the span of the smaller ones)
    // are injective; otherwise enumerate.
    std::sort(v.begin(), v.end(), [](auto x, auto y) { return std::abs(x.second) < std::abs(y.second); });
    std::int64_t reach = 1;
    bool nested = true;
    for (auto [e, st] : v) {
      if (st == 0) {
        fail("layout " + layout_name(dl) + " puts " + std::to_string(e) +
             " elements, replicas or terms on one slot (stride 0 on axis '" + aname + "')");
      }
      if (std::abs(st) < reach) nested = false;
      reach += std::abs(st) * (e - 1);
    }
    if (!nested) {
      std::int64_t count = 1;
      for (auto [e, st] : v) count = checked_mul(count, e, "digit count");
      if (count > (std::int64_t{1} << 22))
        fail("layout " + layout_name(dl) + ": cannot prove axis '" + aname +
             "' injective (interleaved strides over " + std::to_string(count) + " slots)");
      std::vector<std::int64_t> vals{0};
      for (auto [e, st] : v) {
        std::vector<std::int64_t> next;
        next.reserve(vals.size() * static_cast<std::size_t>(e));
        for (auto x : vals)
          for (std::int64_t i = 0; i < e; ++i) next.push_back(x + i * st);
        vals.swap(next);
      }
      std::sort(vals.begin(), vals.end());
      if (std::adjacent_find(vals.begin(), vals.end()) != vals.end())
        fail("layout " + layout_name(dl) + " puts two (element, replica, term) on one slot of axis '" +
             aname + "'");
    }
  }
  return buffer;
}

}  // namespace axe::internal
