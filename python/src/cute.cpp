// axe.cute: CuTe layouts (axe::cute::Layout), their algebra, swizzles and composed layouts.
// Int tuples are Python ints and (nested) tuples; CuTe's underscore `_` is None.
#include <functional>

#include "axe/core/error.hpp"
#include "axe/cute/int_tuple.hpp"
#include "axe/cute/layout.hpp"
#include "axe/cute/swizzle.hpp"
#include "common.hpp"

namespace axe::py {
namespace {
using cute::ComposedLayout;
using cute::IntTuple;
using cute::Layout;
using cute::Swizzle;
using cute::Tiler;

nb::object tuple_out(const IntTuple& t) {
  if (t.is_underscore_leaf()) return nb::none();
  if (t.is_int()) return nb::int_(t.value());
  nb::list l;
  for (const auto& e : t.elems()) l.append(tuple_out(e));
  return nb::tuple(l);
}

IntTuple tuple_in(nb::handle h) {
  if (h.is_none()) return cute::underscore();
  if (nb::isinstance<nb::str>(h)) return cute::parse_coord(nb::cast<std::string>(h));
  if (nb::isinstance<nb::int_>(h)) return IntTuple(nb::cast<std::int64_t>(h));
  if (nb::isinstance<nb::tuple>(h) || nb::isinstance<nb::list>(h)) {
    std::vector<IntTuple> v;
    for (nb::handle x : h) v.push_back(tuple_in(x));
    return IntTuple::tuple(std::move(v));
  }
  fail("expected an int, a (nested) tuple of ints or None, got " +
       nb::cast<std::string>(nb::repr(h)));
}

Tiler tiler_in(nb::handle h) {
  if (h.is_none()) return Tiler::none();
  if (nb::isinstance<Layout>(h)) return Tiler(nb::cast<const Layout&>(h));
  if (nb::isinstance<nb::str>(h)) return cute::parse_tiler(nb::cast<std::string>(h));
  if (nb::isinstance<nb::int_>(h)) return Tiler::of_int(nb::cast<std::int64_t>(h));
  if (nb::isinstance<nb::tuple>(h) || nb::isinstance<nb::list>(h)) {
    std::vector<Tiler> v;
    for (nb::handle x : h) v.push_back(tiler_in(x));
    return Tiler::tuple(std::move(v));
  }
  fail("expected a tiler (a cute.Layout, an int, None or a tuple of them, or tiler text), got " +
       nb::cast<std::string>(nb::repr(h)));
}

std::int64_t eval(const Layout& l, nb::handle at) {
  if (nb::isinstance<nb::int_>(at)) return l(nb::cast<std::int64_t>(at));
  return l(tuple_in(at));
}

}  // namespace

void bind_cute(nb::module_& m) {
  nb::class_<Layout>(
      m, "Layout",
      "A CuTe layout Shape:Stride (colexicographic). Layout('((2,3),4):((1,2),6)'),\n"
      "Layout(shape, stride) with nested tuples, or Layout(shape) (compact column-major).")
      .def(
          "__init__",
          [](Layout* self, nb::handle shape, nb::handle stride) {
            if (nb::isinstance<nb::str>(shape) && stride.is_none())
              new (self) Layout(cute::parse_layout(nb::cast<std::string>(shape)));
            else if (stride.is_none())
              new (self) Layout(cute::make_layout(tuple_in(shape)));
            else
              new (self) Layout(tuple_in(shape), tuple_in(stride));
          },
          nb::arg("shape"), nb::arg("stride") = nb::none())
      .def_prop_ro("shape", [](const Layout& l) { return tuple_out(l.shape()); })
      .def_prop_ro("stride", [](const Layout& l) { return tuple_out(l.stride()); })
      .def_prop_ro("size", [](const Layout& l) { return cute::size(l); })
      .def_prop_ro("cosize", [](const Layout& l) { return cute::cosize(l); })
      .def_prop_ro("rank", [](const Layout& l) { return cute::rank(l); })
      .def_prop_ro("depth", [](const Layout& l) { return cute::depth(l); })
      .def("__call__", &eval, nb::arg("at"),
           "The index of an int (colexicographic) or a coordinate tuple.")
      .def("mode", &Layout::mode)
      .def("__len__", [](const Layout& l) { return cute::rank(l); })
      .def("__str__", [](const Layout& l) { return cute::to_string(l); })
      .def("__repr__",
           [](const Layout& l) { return py_repr_call("axe.cute.Layout", cute::to_string(l)); })
      .def("__eq__",
           [](const Layout& a, nb::handle b) {
             return nb::isinstance<Layout>(b) && a == nb::cast<const Layout&>(b);
           })
      .def("__ne__",
           [](const Layout& a, nb::handle b) {
             return !(nb::isinstance<Layout>(b) && a == nb::cast<const Layout&>(b));
           })
      .def("__hash__", [](const Layout& l) { return cute::hash_value(l); })
      .def("__getstate__", [](const Layout& l) { return cute::to_string(l); })
      .def("__setstate__",
           [](Layout* self, const std::string& s) { new (self) Layout(cute::parse_layout(s)); });

  m.def("size", [](const Layout& l) { return cute::size(l); });
  m.def("cosize", [](const Layout& l) { return cute::cosize(l); });
  m.def("rank", [](const Layout& l) { return cute::rank(l); });
  m.def("depth", [](const Layout& l) { return cute::depth(l); });
  m.def("flatten", [](const Layout& l) { return cute::flatten(l); });
  m.def(
      "coalesce",
      [](const Layout& l, nb::handle profile) {
        return profile.is_none() ? cute::coalesce(l) : cute::coalesce(l, tuple_in(profile));
      },
      nb::arg("layout"), nb::arg("profile") = nb::none());
  m.def("filter", [](const Layout& l) { return cute::filter(l); });
  m.def("composition",
        [](const Layout& a, nb::handle b) { return cute::composition(a, tiler_in(b)); });
  m.def(
      "complement",
      [](const Layout& a, nb::handle cotarget) {
        if (cotarget.is_none()) return cute::complement(a);
        if (nb::isinstance<nb::int_>(cotarget))
          return cute::complement(a, nb::cast<std::int64_t>(cotarget));
        return cute::complement(a, tuple_in(cotarget));
      },
      nb::arg("layout"), nb::arg("cotarget") = nb::none());
  m.def("logical_divide",
        [](const Layout& a, nb::handle b) { return cute::logical_divide(a, tiler_in(b)); });
  m.def("zipped_divide",
        [](const Layout& a, nb::handle b) { return cute::zipped_divide(a, tiler_in(b)); });
  m.def("tiled_divide",
        [](const Layout& a, nb::handle b) { return cute::tiled_divide(a, tiler_in(b)); });
  m.def("logical_product",
        [](const Layout& a, nb::handle b) { return cute::logical_product(a, tiler_in(b)); });
  m.def("zipped_product",
        [](const Layout& a, nb::handle b) { return cute::zipped_product(a, tiler_in(b)); });
  m.def("tiled_product",
        [](const Layout& a, nb::handle b) { return cute::tiled_product(a, tiler_in(b)); });
  m.def("blocked_product",
        [](const Layout& a, nb::handle b) { return cute::blocked_product(a, tiler_in(b)); });
  m.def("raked_product",
        [](const Layout& a, nb::handle b) { return cute::raked_product(a, tiler_in(b)); });
  m.def("right_inverse", [](const Layout& l) { return cute::right_inverse(l); });
  m.def("left_inverse", [](const Layout& l) { return cute::left_inverse(l); });
  m.def(
      "slice", [](nb::handle coord, const Layout& l) { return cute::slice(tuple_in(coord), l); },
      nb::arg("coord"), nb::arg("layout"),
      "The sub-layout at coord, None (or '_') marking the kept modes.");
  m.def("slice_offset",
        [](nb::handle coord, const Layout& l) { return cute::slice_offset(tuple_in(coord), l); });
  m.def("tile_to_shape", [](const Layout& block, nb::handle shape) {
    return cute::tile_to_shape(block, tuple_in(shape));
  });
  m.def("idx2crd", [](std::int64_t i, nb::handle shape) {
    return tuple_out(cute::idx2crd(i, tuple_in(shape)));
  });
  m.def(
      "crd2idx",
      [](nb::handle crd, nb::handle shape, nb::handle stride) {
        return stride.is_none() ? cute::crd2idx(tuple_in(crd), tuple_in(shape))
                                : cute::crd2idx(tuple_in(crd), tuple_in(shape), tuple_in(stride));
      },
      nb::arg("coord"), nb::arg("shape"), nb::arg("stride") = nb::none());

  nb::class_<Swizzle>(m, "Swizzle",
                      "CuTe's Swizzle<B,M,S>: Swizzle(3, 4, 3) or Swizzle('Sw<3,4,3>').")
      .def(
          "__init__",
          [](Swizzle* self, nb::handle b, std::optional<int> base, std::optional<int> shift) {
            if (nb::isinstance<nb::str>(b)) {
              if (base || shift) fail("Swizzle: text or (bits, base, shift), not both");
              new (self) Swizzle(cute::parse_swizzle(nb::cast<std::string>(b)));
              return;
            }
            if (!base || !shift) fail("Swizzle: expected (bits, base, shift)");
            new (self) Swizzle(nb::cast<int>(b), *base, *shift);
          },
          nb::arg("bits"), nb::arg("base") = nb::none(), nb::arg("shift") = nb::none())
      .def_ro("bits", &Swizzle::bits)
      .def_ro("base", &Swizzle::base)
      .def_ro("shift", &Swizzle::shift)
      .def("__call__", [](const Swizzle& s, std::int64_t x) { return s(x); })
      .def_prop_ro("size", &Swizzle::size)
      .def_prop_ro("yyy_mask", &Swizzle::yyy_mask)
      .def_prop_ro("zzz_mask", &Swizzle::zzz_mask)
      .def("__str__", [](const Swizzle& s) { return cute::to_string(s); })
      .def("__repr__",
           [](const Swizzle& s) { return py_repr_call("axe.cute.Swizzle", cute::to_string(s)); })
      .def("__eq__",
           [](const Swizzle& a, nb::handle b) {
             return nb::isinstance<Swizzle>(b) && a == nb::cast<const Swizzle&>(b);
           })
      .def("__ne__",
           [](const Swizzle& a, nb::handle b) {
             return !(nb::isinstance<Swizzle>(b) && a == nb::cast<const Swizzle&>(b));
           })
      .def("__hash__",
           [](const Swizzle& s) { return std::hash<std::string>{}(cute::to_string(s)); })
      .def("__getstate__", [](const Swizzle& s) { return cute::to_string(s); })
      .def("__setstate__",
           [](Swizzle* self, const std::string& t) { new (self) Swizzle(cute::parse_swizzle(t)); });

  nb::class_<ComposedLayout>(
      m, "ComposedLayout",
      "swizzle o offset o layout: ComposedLayout('Sw<3,4,3> o 0 o (8,64):(64,1)') or\n"
      "ComposedLayout(swizzle, offset, layout).")
      .def(
          "__init__",
          [](ComposedLayout* self, nb::handle a, std::optional<std::int64_t> offset,
             std::optional<Layout> layout) {
            if (nb::isinstance<nb::str>(a)) {
              if (offset || layout)
                fail("ComposedLayout: text or (swizzle, offset, layout), not both");
              new (self) ComposedLayout(cute::parse_composed_layout(nb::cast<std::string>(a)));
              return;
            }
            if (!offset || !layout) fail("ComposedLayout: expected (swizzle, offset, layout)");
            new (self) ComposedLayout(nb::cast<Swizzle>(a), *offset, *layout);
          },
          nb::arg("swizzle"), nb::arg("offset") = nb::none(), nb::arg("layout") = nb::none())
      .def_ro("swizzle", &ComposedLayout::swizzle)
      .def_ro("offset", &ComposedLayout::offset)
      .def_ro("layout", &ComposedLayout::layout)
      .def_prop_ro("size", [](const ComposedLayout& c) { return cute::size(c); })
      .def("__call__",
           [](const ComposedLayout& c, nb::handle at) {
             if (nb::isinstance<nb::int_>(at)) return c(nb::cast<std::int64_t>(at));
             return c(tuple_in(at));
           })
      .def("__str__", [](const ComposedLayout& c) { return cute::to_string(c); })
      .def("__repr__",
           [](const ComposedLayout& c) {
             return py_repr_call("axe.cute.ComposedLayout", cute::to_string(c));
           })
      .def("__eq__",
           [](const ComposedLayout& a, nb::handle b) {
             return nb::isinstance<ComposedLayout>(b) && a == nb::cast<const ComposedLayout&>(b);
           })
      .def("__ne__",
           [](const ComposedLayout& a, nb::handle b) {
             return !(nb::isinstance<ComposedLayout>(b) && a == nb::cast<const ComposedLayout&>(b));
           })
      .def("__hash__",
           [](const ComposedLayout& c) { return std::hash<std::string>{}(cute::to_string(c)); })
      .def("__getstate__", [](const ComposedLayout& c) { return cute::to_string(c); })
      .def("__setstate__", [](ComposedLayout* self, const std::string& t) {
        new (self) ComposedLayout(cute::parse_composed_layout(t));
      });
}

}  // namespace axe::py
