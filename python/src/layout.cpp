// axe.Layout (axe::AxeLayout): immutable, hashable, == structural, repr round-trips, and the
// operations of include/axe/layout/layout.hpp and convert.hpp, as methods and free functions.
#include "axe/cute/layout.hpp"

#include <nanobind/stl/map.h>

#include <functional>

#include "axe/core/error.hpp"
#include "axe/layout/convert.hpp"
#include "axe/layout/layout.hpp"
#include "common.hpp"

namespace axe::py {
namespace {

using Iters = std::vector<std::tuple<std::int64_t, std::int64_t, std::string>>;

Iters iters_out(const std::vector<Iter>& v) {
  Iters out;
  for (const auto& it : v) out.emplace_back(it.extent, it.stride, std::string(it.axis.name()));
  return out;
}

std::vector<Iter> iters_in(nb::handle h, const char* what) {
  std::vector<Iter> v;
  for (nb::handle x : h) {
    nb::tuple t = nb::cast<nb::tuple>(x);
    if (t.size() < 2 || t.size() > 3)
      fail(std::string(what) + ": an iter is (extent, stride) or (extent, stride, axis), got " +
           nb::cast<std::string>(nb::repr(x)));
    Iter it;
    it.extent = nb::cast<std::int64_t>(t[0]);
    it.stride = nb::cast<std::int64_t>(t[1]);
    if (t.size() == 3) it.axis = Axis(nb::cast<std::string>(t[2]));
    v.push_back(it);
  }
  return v;
}

nb::dict coord_out(const PhysCoord& c) {
  nb::dict d;
  for (const auto& [a, v] : c.entries()) d[nb::str(std::string(a.name()).c_str())] = v;
  return d;
}

// A coordinate from {"lane": 8, "m": 1} or "lane=8,m=1".
PhysCoord coord_in(nb::handle h) {
  PhysCoord c;
  if (nb::isinstance<nb::str>(h)) {
    std::string s = nb::cast<std::string>(h);
    std::size_t at = 0;
    while (at <= s.size()) {
      std::size_t end = s.find(',', at);
      if (end == std::string::npos) end = s.size();
      std::string item = s.substr(at, end - at);
      std::size_t eq = item.find('=');
      if (eq == std::string::npos)
        fail("coordinate '" + s + "': expected axis=value items joined by ',', got '" + item + "'");
      std::size_t used = 0;
      std::int64_t v = 0;
      try {
        v = std::stoll(item.substr(eq + 1), &used);
      } catch (const std::exception&) {
        used = 0;
      }
      if (used == 0 || used != item.size() - eq - 1)
        fail("coordinate '" + s + "': '" + item.substr(eq + 1) + "' is not an integer");
      c.set(Axis(item.substr(0, eq)), v);
      at = end + 1;
    }
    return c;
  }
  nb::dict d = nb::cast<nb::dict>(h);
  for (auto [k, v] : d) c.set(Axis(nb::cast<std::string>(k)), nb::cast<std::int64_t>(v));
  return c;
}

std::vector<Range> region_in(nb::handle h) {
  std::vector<Range> r;
  for (nb::handle x : h) {
    if (nb::isinstance<nb::slice>(x)) {
      nb::object start = x.attr("start"), stop = x.attr("stop"), step = x.attr("step");
      if (start.is_none() || stop.is_none() ||
          !(step.is_none() || nb::cast<std::int64_t>(step) == 1))
        fail("region: a slice needs a start and a stop and no step, got " +
             nb::cast<std::string>(nb::repr(x)));
      r.push_back({nb::cast<std::int64_t>(start), nb::cast<std::int64_t>(stop)});
    } else {
      nb::tuple t = nb::cast<nb::tuple>(x);
      if (t.size() != 2)
        fail("region: each dim is a (begin, end) pair or a slice, got " +
             nb::cast<std::string>(nb::repr(x)));
      r.push_back({nb::cast<std::int64_t>(t[0]), nb::cast<std::int64_t>(t[1])});
    }
  }
  return r;
}

IndexOrder order_in(const std::string& s) {
  if (s == "coordinate") return IndexOrder::Coordinate;
  if (s == "linear") return IndexOrder::Linear;
  fail("order '" + s + "': expected 'coordinate' or 'linear'");
}

std::vector<std::pair<Axis, std::int64_t>> extents_in(nb::handle h) {
  std::vector<std::pair<Axis, std::int64_t>> e;
  if (h.is_none()) return e;
  if (nb::isinstance<Mesh>(h)) return nb::cast<const Mesh&>(h).extents();
  nb::dict d = nb::cast<nb::dict>(h);
  for (auto [k, v] : d) e.emplace_back(Axis(nb::cast<std::string>(k)), nb::cast<std::int64_t>(v));
  return e;
}

// Row-major unflattening of a logical index over `shape` (the inverse of forward's coordinates).
nb::tuple unflatten(std::int64_t x, const std::vector<std::int64_t>& shape) {
  std::vector<std::int64_t> c(shape.size());
  for (std::size_t k = shape.size(); k-- > 0;) {
    c[k] = shape[k] ? x % shape[k] : 0;
    x = shape[k] ? x / shape[k] : 0;
  }
  nb::list l;
  for (auto v : c) l.append(v);
  return nb::tuple(l);
}

}  // namespace

void bind_layout(nb::module_& m) {
  nb::class_<Placement>(m, "Placement", "Where one copy of an element lands: coord, replica, term.")
      .def_prop_ro("coord", [](const Placement& p) { return coord_out(p.coord); })
      .def_ro("replica", &Placement::replica)
      .def_ro("term", &Placement::term)
      .def("__eq__", [](const Placement& a, const Placement& b) { return a == b; })
      .def("__repr__", [](const Placement& p) {
        return "Placement(" + to_string(p.coord) + ", replica=" + std::to_string(p.replica) +
               ", term=" + std::to_string(p.term) + ")";
      });

  nb::class_<AxeLayout> L(
      m, "Layout",
      "An Axe layout: shard D, replica R, partial P and offset O over named axes.\n\n"
      "Layout('S[(8,2,4,2):(4@lane,1@warp,1@lane,1)] + R[2:4@warp] + 5@warp'). Immutable;\n"
      "== is structural (equivalent() compares canonical forms); repr round-trips.");
  L.def(
       "__init__",
       [](AxeLayout* self, std::string_view text) { new (self) AxeLayout(parse_axe_layout(text)); },
       nb::arg("text"))
      .def_static(
          "make",
          [](nb::handle shard, nb::handle replica, nb::handle partial, nb::handle offset,
             std::string_view op) {
            std::vector<std::pair<Axis, std::int64_t>> o;
            if (!offset.is_none()) {
              nb::dict d = nb::cast<nb::dict>(offset);
              for (auto [k, v] : d)
                o.emplace_back(Axis(nb::cast<std::string>(k)), nb::cast<std::int64_t>(v));
            }
            return AxeLayout(iters_in(shard, "shard"), iters_in(replica, "replica"),
                             iters_in(partial, "partial"), std::move(o), parse_reduce_op(op));
          },
          nb::arg("shard"), nb::arg("replica") = nb::tuple(), nb::arg("partial") = nb::tuple(),
          nb::arg("offset") = nb::none(), nb::arg("op") = "sum",
          "A layout from iters (extent, stride[, axis]) and offsets {axis: value}.")
      .def_prop_ro("shard", [](const AxeLayout& l) { return iters_out(l.shard()); })
      .def_prop_ro("replica", [](const AxeLayout& l) { return iters_out(l.replica()); })
      .def_prop_ro("partial", [](const AxeLayout& l) { return iters_out(l.partial()); })
      .def_prop_ro("offset",
                   [](const AxeLayout& l) {
                     nb::dict d;
                     for (const auto& [a, v] : l.offset())
                       d[nb::str(std::string(a.name()).c_str())] = v;
                     return d;
                   })
      .def_prop_ro("reduce_op",
                   [](const AxeLayout& l) { return std::string(to_string(l.reduce_op())); })
      .def_prop_ro("size", &AxeLayout::size)
      .def_prop_ro("replicas", &AxeLayout::replicas)
      .def_prop_ro("terms", &AxeLayout::terms)
      .def_prop_ro("axes",
                   [](const AxeLayout& l) {
                     std::vector<std::string> v;
                     for (auto a : l.axes()) v.emplace_back(a.name());
                     return v;
                   })
      .def(
          "span",
          [](const AxeLayout& l, std::optional<std::string> axis) -> nb::object {
            if (axis) return nb::int_(l.span(Axis(*axis)));
            nb::dict d;
            for (auto a : l.axes()) d[nb::str(std::string(a.name()).c_str())] = l.span(a);
            return d;
          },
          nb::arg("axis") = nb::none(),
          "Span on one axis, or {axis: span} over every axis (as `axe span`).")
      .def(
          "forward",
          [](const AxeLayout& l, nb::handle at, nb::handle shape) {
            if (shape.is_none()) {
              if (!nb::isinstance<nb::int_>(at)) fail("forward: a coordinate needs shape=");
              return l.forward(nb::cast<std::int64_t>(at));
            }
            auto s = to_shape(shape, "shape");
            auto c = to_shape(at, "coordinate");
            return l.forward(std::span<const std::int64_t>(c), std::span<const std::int64_t>(s));
          },
          nb::arg("at"), nb::arg("shape") = nb::none(),
          "Every placement of logical index `at` (or of coordinate `at` of `shape`), replicas "
          "outer.")
      .def(
          "eval",
          [](const AxeLayout& l, nb::handle at, nb::handle shape) {
            if (shape.is_none()) {
              if (!nb::isinstance<nb::int_>(at)) fail("eval: a coordinate needs shape=");
              return l.forward(nb::cast<std::int64_t>(at));
            }
            auto s = to_shape(shape, "shape");
            auto c = to_shape(at, "coordinate");
            return l.forward(std::span<const std::int64_t>(c), std::span<const std::int64_t>(s));
          },
          nb::arg("at"), nb::arg("shape") = nb::none(),
          "The same as forward (the calculator's `axe eval`).")
      .def("forward_first",
           [](const AxeLayout& l, std::int64_t x) { return coord_out(l.forward_first(x)); })
      .def(
          "backward",
          [](const AxeLayout& l, nb::handle coord, nb::handle shape) -> nb::object {
            auto p = l.backward(coord_in(coord));
            if (!p) return nb::none();
            nb::object index = nb::int_(p->index);
            if (!shape.is_none()) {
              auto s = to_shape(shape, "shape");
              std::int64_t n = 1;
              for (auto e : s) n = checked_mul(n, e, "shape");
              if (n != l.size())
                fail("backward: shape has " + std::to_string(n) + " elements, the layout " +
                     std::to_string(l.size()));
              index = unflatten(p->index, s);
            }
            return nb::make_tuple(index, p->replica, p->term);
          },
          nb::arg("coord"), nb::arg("shape") = nb::none(),
          "(index, replica, term) of a physical coordinate ({axis: value} or 'lane=8,m=1'), or "
          "None when\n"
          "nothing lands there; index is a coordinate tuple when shape is given.")
      .def("canonicalize", [](const AxeLayout& l) { return canonicalize(l); })
      .def("equivalent", [](const AxeLayout& a, const AxeLayout& b) { return equivalent(a, b); })
      .def("storage", [](const AxeLayout& l) { return storage(l); })
      .def("project",
           [](const AxeLayout& l, std::vector<std::string> axes) {
             std::vector<Axis> a;
             for (auto& s : axes) a.emplace_back(s);
             return project(l, a);
           })
      .def(
          "check_valid",
          [](const AxeLayout& l, nb::handle mesh) { return check_valid(l, extents_in(mesh)); },
          nb::arg("mesh") = nb::none(),
          "'' when valid (no slot clash, inside the mesh), else why not.")
      .def(
          "is_valid",
          [](const AxeLayout& l, nb::handle mesh) { return is_valid(l, extents_in(mesh)); },
          nb::arg("mesh") = nb::none())
      .def(
          "to_cute",
          [](const AxeLayout& l, nb::handle order_or_shape) {
            if (nb::isinstance<nb::str>(order_or_shape))
              return to_cute(l, order_in(nb::cast<std::string>(order_or_shape)));
            auto s = to_shape(order_or_shape, "shape");
            return to_cute(l, std::span<const std::int64_t>(s));
          },
          nb::arg("order") = "coordinate",
          "The CuTe layout (order 'coordinate' or 'linear', or a logical shape).")
      .def_static(
          "from_cute",
          [](const cute::Layout& c, const std::string& order, const std::string& axis) {
            return from_cute(c, order_in(order), Axis(axis));
          },
          nb::arg("layout"), nb::arg("order") = "coordinate", nb::arg("axis") = "m")
      .def("__str__", [](const AxeLayout& l) { return to_string(l); })
      .def("__repr__", [](const AxeLayout& l) { return py_repr_call("axe.Layout", to_string(l)); })
      .def("__eq__",
           [](const AxeLayout& a, nb::handle b) {
             return nb::isinstance<AxeLayout>(b) && a == nb::cast<const AxeLayout&>(b);
           })
      .def("__ne__",
           [](const AxeLayout& a, nb::handle b) {
             return !(nb::isinstance<AxeLayout>(b) && a == nb::cast<const AxeLayout&>(b));
           })
      .def("__hash__", [](const AxeLayout& l) { return std::hash<AxeLayout>{}(l); })
      .def("__getstate__", [](const AxeLayout& l) { return to_string(l); })
      .def("__setstate__",
           [](AxeLayout* self, const std::string& s) { new (self) AxeLayout(parse_axe_layout(s)); })
      .def("__copy__", [](const AxeLayout& l) { return l; })
      .def("__deepcopy__", [](const AxeLayout& l, nb::handle) { return l; });

  // Free functions (STYLE §1: values plus free-function algebra).
  m.def("canonicalize", [](const AxeLayout& l) { return canonicalize(l); });
  m.def("equivalent", [](const AxeLayout& a, const AxeLayout& b) { return equivalent(a, b); });
  m.def("storage", [](const AxeLayout& l) { return storage(l); });
  m.def(
      "group",
      [](const AxeLayout& l, nb::handle shape) -> nb::object {
        auto s = to_shape(shape, "shape");
        auto g = group(l, std::span<const std::int64_t>(s));
        if (!g) return nb::none();
        return nb::make_tuple(g->layout, g->boundaries);
      },
      nb::arg("layout"), nb::arg("shape"),
      "(layout, boundaries) with D split into blocks per dim of shape, or None when it does not "
      "split.");
  m.def(
      "tile",
      [](const AxeLayout& outer, nb::handle outer_shape, const AxeLayout& inner,
         nb::handle inner_shape) {
        auto a = to_shape(outer_shape, "outer_shape");
        auto b = to_shape(inner_shape, "inner_shape");
        return tile(outer, std::span<const std::int64_t>(a), inner,
                    std::span<const std::int64_t>(b));
      },
      nb::arg("outer"), nb::arg("outer_shape"), nb::arg("inner"), nb::arg("inner_shape"));
  m.def(
      "tile_of",
      [](const AxeLayout& l, nb::handle shape, const AxeLayout& inner, nb::handle inner_shape) {
        auto a = to_shape(shape, "shape");
        auto b = to_shape(inner_shape, "inner_shape");
        return tile_of(l, std::span<const std::int64_t>(a), inner,
                       std::span<const std::int64_t>(b));
      },
      nb::arg("layout"), nb::arg("shape"), nb::arg("inner"), nb::arg("inner_shape"));
  m.def(
      "slice",
      [](const AxeLayout& l, nb::handle shape, nb::handle region) {
        auto s = to_shape(shape, "shape");
        auto r = region_in(region);
        return slice(l, std::span<const std::int64_t>(s), std::span<const Range>(r));
      },
      nb::arg("layout"), nb::arg("shape"), nb::arg("region"),
      "The layout of a sub-tensor: region is one (begin, end) pair or slice per dim; None when not "
      "expressible.");
  m.def(
      "direct_sum",
      [](const AxeLayout& a, nb::handle a_shape, const AxeLayout& b, nb::handle b_shape) {
        auto x = to_shape(a_shape, "a_shape");
        auto y = to_shape(b_shape, "b_shape");
        return direct_sum(a, std::span<const std::int64_t>(x), b, std::span<const std::int64_t>(y));
      },
      nb::arg("a"), nb::arg("a_shape"), nb::arg("b"), nb::arg("b_shape"));
  m.def(
      "project",
      [](const AxeLayout& l, std::vector<std::string> axes) {
        std::vector<Axis> a;
        for (auto& s : axes) a.emplace_back(s);
        return project(l, a);
      },
      nb::arg("layout"), nb::arg("axes"));
  m.def(
      "check_valid",
      [](const AxeLayout& l, nb::handle mesh) { return check_valid(l, extents_in(mesh)); },
      nb::arg("layout"), nb::arg("mesh") = nb::none());
  m.def(
      "is_valid", [](const AxeLayout& l, nb::handle mesh) { return is_valid(l, extents_in(mesh)); },
      nb::arg("layout"), nb::arg("mesh") = nb::none());
}

}  // namespace axe::py
