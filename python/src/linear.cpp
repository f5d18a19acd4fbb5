// axe.linear: F2 linear layouts (include/axe/linear/): axe.linear.LinearLayout (immutable,
// hashable, == structural, repr round-trips, pickles by its text form) with its algebra as methods
// and free functions under the C++ names; the bridges to Axe and CuTe layouts; the thread layouts
// (blocked, mma, wgmma, slice and the spec text of `axe thread-layout`); the bank model (`axe
// banks`), the optimal swizzle (`axe swizzle`) and conversion plans (`axe convert-layout`), whose
// results print as those commands do.
#include <nanobind/stl/map.h>

#include <algorithm>
#include <functional>
#include <optional>

#include "axe/core/dtype.hpp"
#include "axe/core/error.hpp"
#include "axe/cute/layout.hpp"
#include "axe/cute/swizzle.hpp"
#include "axe/linear/banks.hpp"
#include "axe/linear/bridge.hpp"
#include "axe/linear/convert_plan.hpp"
#include "axe/linear/linear_layout.hpp"
#include "axe/linear/swizzle.hpp"
#include "axe/linear/thread_layouts.hpp"
#include "axe/linear/thread_spec.hpp"
#include "common.hpp"

namespace axe::py {
namespace {

using linear::LinearLayout;

// Guard on enumerations done here (every element of a layout): 2^24 elements.
constexpr int kMaxEnumeratedBits = 24;

std::string repr_of(nb::handle h) {
  return nb::cast<std::string>(nb::repr(h));
}

std::string ints_text(const std::vector<std::int64_t>& v) {
  std::string s = "(";
  for (std::size_t i = 0; i < v.size(); ++i) s += (i ? "," : "") + std::to_string(v[i]);
  return s + ")";
}

nb::tuple ints_out(const std::vector<std::int64_t>& v) {
  nb::list l;
  for (auto x : v) l.append(x);
  return nb::tuple(l);
}

// The logical coordinate (row-major dims) of a basis in [dim{n-1}, ..., dim0] order, as the CLI
// prints it.
nb::tuple coordinate_out(const LinearLayout::Basis& b) {
  return ints_out(std::vector<std::int64_t>(b.rbegin(), b.rend()));
}

// A (name, value) pair from any sequence of two items (a tuple, or a list as JSON gives).
nb::tuple pair_in(nb::handle x, const char* what) {
  if (nb::isinstance<nb::str>(x) || !nb::isinstance<nb::sequence>(x) || nb::len(x) != 2)
    fail(std::string(what) + ": expected a (name, value) pair, got " + repr_of(x));
  return nb::tuple(nb::steal(PySequence_Tuple(x.ptr())));
}

// One name or a sequence of names.
std::vector<std::string> names_in(nb::handle h, const char* what) {
  if (nb::isinstance<nb::str>(h)) return {nb::cast<std::string>(h)};
  std::vector<std::string> v;
  try {
    for (nb::handle x : h) {
      if (!nb::isinstance<nb::str>(x))
        fail(std::string(what) + ": expected dim names (strings), got " + repr_of(x));
      v.push_back(nb::cast<std::string>(x));
    }
  } catch (const nb::python_error&) {
    throw nb::type_error(
        (std::string(what) + ": expected a name or a sequence of names, got " + repr_of(h))
            .c_str());
  }
  return v;
}

// (name, size) pairs from a dict {name: size} or a sequence of (name, size) pairs.
std::vector<std::pair<std::string, std::int64_t>> dims_in(nb::handle h, const char* what) {
  std::vector<std::pair<std::string, std::int64_t>> v;
  if (nb::isinstance<nb::dict>(h)) {
    for (auto [k, s] : nb::cast<nb::dict>(h))
      v.emplace_back(nb::cast<std::string>(k), nb::cast<std::int64_t>(s));
    return v;
  }
  if (nb::isinstance<nb::str>(h))
    throw nb::type_error(
        (std::string(what) + ": expected {name: size} or (name, size) pairs, got a string")
            .c_str());
  for (nb::handle x : h) {
    nb::tuple t = pair_in(x, what);
    v.emplace_back(nb::cast<std::string>(t[0]), nb::cast<std::int64_t>(t[1]));
  }
  return v;
}

nb::list dims_out(const std::vector<linear::Dim>& dims) {
  nb::list l;
  for (const auto& d : dims) l.append(nb::make_tuple(d.name, d.size()));
  return l;
}

nb::dict masks_out(const std::vector<std::pair<std::string, std::uint64_t>>& masks) {
  nb::dict d;
  for (const auto& [n, m] : masks) d[nb::str(n.c_str())] = m;
  return d;
}

// A basis: an int (one output dim) or a sequence of ints, one per output dim.
LinearLayout::Basis basis_in(nb::handle h) {
  if (nb::isinstance<nb::int_>(h)) return {nb::cast<std::int64_t>(h)};
  LinearLayout::Basis b;
  for (nb::handle x : h) b.push_back(nb::cast<std::int64_t>(x));
  return b;
}

LinearLayout::InBases bases_in(nb::handle h) {
  LinearLayout::InBases v;
  auto one = [&](nb::handle name, nb::handle list) {
    std::vector<LinearLayout::Basis> bs;
    if (nb::isinstance<nb::str>(list))
      throw nb::type_error("LinearLayout: the bases of a dim are a sequence, got a string");
    for (nb::handle b : list) bs.push_back(basis_in(b));
    v.emplace_back(nb::cast<std::string>(name), std::move(bs));
  };
  if (nb::isinstance<nb::dict>(h)) {
    for (auto [k, list] : nb::cast<nb::dict>(h)) one(k, list);
    return v;
  }
  for (nb::handle x : h) {
    nb::tuple t = pair_in(x, "LinearLayout: an input dim");
    one(t[0], t[1]);
  }
  return v;
}

nb::dict bases_out(const LinearLayout& l) {
  nb::dict d;
  for (const auto& dim : l.in_dims()) {
    nb::list bs;
    for (const auto& b : l.bases(dim.name)) bs.append(ints_out(b));
    d[nb::str(dim.name.c_str())] = bs;
  }
  return d;
}

std::vector<std::int64_t> shape_or_size(const AxeLayout& l, nb::handle shape) {
  if (shape.is_none()) return {l.size()};
  return to_shape(shape, "shape");
}

// A thread layout: an axe.Layout, a spec ("blocked:...", "mma:...", ..., or Axe layout text)
// parsed on `shape`, or a distributed LinearLayout (printed with from_linear).
AxeLayout threads_in(nb::handle h, const std::vector<std::int64_t>& shape, const char* what) {
  if (nb::isinstance<AxeLayout>(h)) return nb::cast<const AxeLayout&>(h);
  if (nb::isinstance<LinearLayout>(h))
    return linear::from_linear(nb::cast<const LinearLayout&>(h)).layout;
  if (nb::isinstance<nb::str>(h))
    return linear::parse_thread_layout(nb::cast<std::string>(h), shape);
  throw nb::type_error((std::string(what) +
                        ": expected an axe.Layout, a thread-layout spec (str) or an "
                        "axe.linear.LinearLayout, got " +
                        repr_of(h))
                           .c_str());
}

// Bytes per element from a dtype name ("f32", "bf16", ...) or a byte count.
std::int64_t element_bytes_in(nb::handle h) {
  if (nb::isinstance<nb::str>(h)) return size_of(parse_dtype(nb::cast<std::string>(h)));
  if (nb::isinstance<nb::int_>(h) && !nb::isinstance<nb::bool_>(h))
    return nb::cast<std::int64_t>(h);
  throw nb::type_error(
      ("dtype: expected a dtype name such as 'f32' or a byte count, got " + repr_of(h)).c_str());
}

// A swizzle from an axe.cute.Swizzle, its text "Sw<B,M,S>" or a (B, M, S) triple.
std::optional<cute::Swizzle> swizzle_in(nb::handle h) {
  if (h.is_none()) return std::nullopt;
  if (nb::isinstance<cute::Swizzle>(h)) return nb::cast<const cute::Swizzle&>(h);
  if (nb::isinstance<nb::str>(h)) return cute::parse_swizzle(nb::cast<std::string>(h));
  std::vector<std::int64_t> v;
  for (nb::handle x : h) v.push_back(nb::cast<std::int64_t>(x));
  if (v.size() != 3) fail("swizzle: expected (B, M, S), got " + repr_of(h));
  for (auto x : v)
    if (x < -64 || x > 64) fail("swizzle: " + std::to_string(x) + " is out of range");
  return cute::Swizzle(static_cast<int>(v[0]), static_cast<int>(v[1]), static_cast<int>(v[2]));
}

// ---- LinearLayout operations, bound both as methods and as module functions -----------------

nb::dict apply(const LinearLayout& l, nb::handle coords, nb::kwargs kw) {
  std::vector<std::pair<std::string, std::int64_t>> ins;
  if (!coords.is_none()) {
    if (!nb::isinstance<nb::dict>(coords))
      throw nb::type_error(("apply: expected {input dim: value}, got " + repr_of(coords)).c_str());
    for (auto [k, v] : nb::cast<nb::dict>(coords))
      ins.emplace_back(nb::cast<std::string>(k), nb::cast<std::int64_t>(v));
  }
  for (auto [k, v] : kw) ins.emplace_back(nb::cast<std::string>(k), nb::cast<std::int64_t>(v));
  nb::dict d;
  for (const auto& [n, v] : l.apply(ins)) d[nb::str(n.c_str())] = v;
  return d;
}

LinearLayout sublayout(const LinearLayout& l, nb::handle ins, nb::handle outs) {
  return linear::sublayout(l, names_in(ins, "sublayout ins"), names_in(outs, "sublayout outs"));
}
bool sublayout_is_zero(const LinearLayout& l, nb::handle ins, nb::handle outs) {
  return linear::sublayout_is_zero(l, names_in(ins, "sublayout_is_zero ins"),
                                   names_in(outs, "sublayout_is_zero outs"));
}
LinearLayout transpose_ins(const LinearLayout& l, nb::handle order) {
  return linear::transpose_ins(l, names_in(order, "transpose_ins"));
}
LinearLayout transpose_outs(const LinearLayout& l, nb::handle order) {
  return linear::transpose_outs(l, names_in(order, "transpose_outs"));
}
LinearLayout reshape_ins(const LinearLayout& l, nb::handle dims) {
  return linear::reshape_ins(l, dims_in(dims, "reshape_ins"));
}
LinearLayout reshape_outs(const LinearLayout& l, nb::handle dims) {
  return linear::reshape_outs(l, dims_in(dims, "reshape_outs"));
}
bool is_trivial_over(const LinearLayout& l, nb::handle dims) {
  return linear::is_trivial_over(l, names_in(dims, "is_trivial_over"));
}
std::optional<LinearLayout> quotient(const LinearLayout& l, nb::handle dims) {
  return linear::quotient(l, names_in(dims, "quotient"));
}

LinearLayout from_cute(nb::handle c, const std::string& in, const std::string& out) {
  if (nb::isinstance<cute::Layout>(c))
    return linear::from_cute(nb::cast<const cute::Layout&>(c), in, out);
  if (nb::isinstance<cute::ComposedLayout>(c))
    return linear::from_cute(nb::cast<const cute::ComposedLayout&>(c), in, out);
  if (nb::isinstance<nb::str>(c)) {
    std::string t = nb::cast<std::string>(c);
    if (t.find(" o ") != std::string::npos)
      return linear::from_cute(cute::parse_composed_layout(t), in, out);
    return linear::from_cute(cute::parse_layout(t), in, out);
  }
  throw nb::type_error(
      ("from_cute: expected an axe.cute.Layout, an axe.cute.ComposedLayout or their text, got " +
       repr_of(c))
          .c_str());
}

// (axe.Layout, shape) of a distributed linear layout (from_linear).
nb::tuple to_axe(const LinearLayout& l, nb::handle offset) {
  std::vector<std::pair<std::string, std::int64_t>> o;
  if (!offset.is_none()) {
    for (auto [k, v] : nb::cast<nb::dict>(offset))
      o.emplace_back(nb::cast<std::string>(k), nb::cast<std::int64_t>(v));
  }
  auto r = linear::from_linear(l, o);
  return nb::make_tuple(r.layout, ints_out(r.shape));
}

// ---- results ------------------------------------------------------------------------------

struct Banks {
  linear::BankReport report;
  std::optional<std::int64_t> f2;
};

std::string banks_text(const Banks& b) {
  const auto& r = b.report;
  std::string s = std::to_string(r.warps) + " warp(s) x " + std::to_string(r.instructions) +
                  " instruction(s) of " + std::to_string(r.vector_bytes) + " bytes per lane\n";
  s += "wavefronts per instruction: " + ints_text(r.per_instruction) + "\n";
  s += "total " + std::to_string(r.wavefronts) + " wavefronts, ideal " + std::to_string(r.ideal);
  if (b.f2) s += "\nF2 formula: " + std::to_string(*b.f2) + " per instruction";
  return s;
}

std::string swizzle_text(const linear::SwizzlePlan& p) {
  const auto& ll = p.shared;
  std::string s = "shared layout (" + p.origin + "): offset bit -> logical coordinate\n  m: [";
  for (int i = 0; i < ll.in_bits("m"); ++i) {
    auto b = ll.basis("m", i);
    s += (i ? ", " : "") + ints_text(std::vector<std::int64_t>(b.rbegin(), b.rend()));
  }
  s += "]\n";
  if (p.axe) {
    s += "as Swizzle o Axe layout: " + cute::to_string(p.axe->swizzle) + " o " +
         to_string(p.axe->layout) + "\n";
  } else {
    s += "as Swizzle o Axe layout: not expressible (no Sw<B,M,S> leaves a bit permutation)\n";
  }
  s += "chosen:    " + linear::to_string(p.cost) + "\n";
  s += "row-major: " + linear::to_string(p.row_major) + "\n";
  if (p.best_swizzle) {
    s += "best " + cute::to_string(*p.best_swizzle) +
         " over row-major: " + linear::to_string(p.best_swizzle_cost);
  } else {
    s += "best Sw<B,M,S> over row-major: none fits the tile";
  }
  return s;
}

// A conversion plan with what simulate() needs.
struct Conversion {
  linear::ConvertPlan plan;
  AxeLayout from, to;
  std::vector<std::int64_t> shape;
  bool simulated = false;
};

std::string conversion_text(const Conversion& cv) {
  const auto& plan = cv.plan;
  const auto& c = plan.counts;
  std::string s = linear::to_string(plan);
  s += "register moves " + std::to_string(c.register_moves) + ", selects " +
       std::to_string(c.selects) + ", shuffles " + std::to_string(c.shuffles) + ", shared bytes " +
       std::to_string(c.shared_bytes) + ", barriers " + std::to_string(c.barriers) +
       ", wavefronts " + std::to_string(c.wavefronts());
  if (plan.mechanism == linear::Mechanism::shared) {
    s += " (store " + std::to_string(c.store_wavefronts) + ", load " +
         std::to_string(c.load_wavefronts) + ", " + std::to_string(c.repetitions) +
         " repetition(s))";
  }
  if (cv.simulated) {
    s += "\nsimulated: " + std::to_string(plan.warps) + " warp(s) x " + std::to_string(plan.lanes) +
         " lanes produce the destination layout";
  }
  return s;
}

std::string simulate_conversion(const Conversion& cv) {
  return linear::simulate(cv.plan, cv.from, cv.to, cv.shape);
}

// The shared layout of a conversion: a LinearLayout (m -> the tile's logical dims, invertible),
// an axe.Layout over m or its text, optionally with a swizzle; nullopt leaves the planner's choice.
std::optional<linear::SharedLayout> shared_in(nb::handle shared, nb::handle swizzle,
                                              const std::vector<std::int64_t>& shape) {
  auto sw = swizzle_in(swizzle);
  if (nb::isinstance<LinearLayout>(shared)) {
    if (sw)
      fail("convert_plan: a linear shared layout takes no swizzle (write it into the layout)");
    const auto& l = nb::cast<const LinearLayout&>(shared);
    auto dims = linear::logical_dims(shape);
    if (l.in_dims().size() != 1 || l.in_dims()[0].name != "m" || l.out_dims() != dims ||
        !linear::is_invertible(l))
      fail("convert_plan: the shared layout " + linear::to_string(l) +
           " is not an invertible layout from m to the tile's logical dims");
    linear::SharedLayout s;
    s.linear = l;
    return s;
  }
  if (shared.is_none() && !sw) return std::nullopt;
  linear::SharedLayout s = linear::row_major_shared(shape);
  if (nb::isinstance<AxeLayout>(shared))
    s.smem = nb::cast<const AxeLayout&>(shared);
  else if (nb::isinstance<nb::str>(shared))
    s.smem = parse_axe_layout(nb::cast<std::string>(shared));
  else if (!shared.is_none())
    throw nb::type_error(("convert_plan: shared: expected an axe.Layout, its text or an "
                          "axe.linear.LinearLayout, got " +
                          repr_of(shared))
                             .c_str());
  s.swizzle = sw;
  return s;
}

linear::ConvertOptions::Choice choice_in(const std::string& c) {
  using Choice = linear::ConvertOptions::Choice;
  if (c == "cheapest") return Choice::cheapest;
  if (c == "shuffles") return Choice::shuffles;
  if (c == "shared") return Choice::shared;
  fail("choose: expected 'cheapest', 'shuffles' or 'shared', got '" + c + "'");
}

Conversion convert_plan(nb::handle src, nb::handle dst, nb::handle shape, nb::handle dtype,
                        std::optional<std::int64_t> shared_budget, nb::handle swizzle,
                        nb::handle shared, const std::string& choose, bool simulate) {
  Conversion cv;
  cv.shape = to_shape(shape, "shape");
  cv.from = threads_in(src, cv.shape, "src");
  cv.to = threads_in(dst, cv.shape, "dst");
  linear::ConvertOptions opts;
  opts.element_bytes = element_bytes_in(dtype);
  if (shared_budget) {
    if (*shared_budget < opts.element_bytes)
      fail("convert_plan: shared_budget " + std::to_string(*shared_budget) +
           " is smaller than one element (" + std::to_string(opts.element_bytes) + " bytes)");
    opts.shared_budget_bytes = *shared_budget;
  }
  opts.shared = shared_in(shared, swizzle, cv.shape);
  opts.choice = choice_in(choose);
  cv.plan = linear::plan_conversion(cv.from, cv.to, cv.shape, opts);
  if (simulate) {
    auto why = simulate_conversion(cv);
    if (!why.empty()) fail("the plan failed its simulation (a bug): " + why);
    cv.simulated = true;
  }
  return cv;
}

template <class T>
bool same(const T& a, nb::handle b) {
  return nb::isinstance<T>(b) && a == nb::cast<const T&>(b);
}

}  // namespace

void bind_linear(nb::module_& m) {
  nb::class_<LinearLayout> L(
      m, "LinearLayout",
      "An F2 linear layout (Triton's LinearLayout): named input dims (hardware: m, lane, warp, "
      "...)\n"
      "to named output dims (logical), linear over XOR; include/axe/linear/linear_layout.hpp.\n\n"
      "LinearLayout('{in1: [(1,1),(0,1)], in2: [(1,0),(1,2)]} -> [out1:4, out2:4]') (the text "
      "form),\n"
      "LinearLayout({'in': [1, 2]}, ['out']) (output sizes inferred) or\n"
      "LinearLayout({'in': [1, 2]}, [('out', 8)], require_surjective=False). Dims are listed\n"
      "minor-to-major; the text form is taken as written (it need not be surjective).\n"
      "Immutable; == is structural (dims, sizes, order, bases); repr round-trips.");
  L.def(
       "__init__",
       [](LinearLayout* self, nb::handle bases, nb::handle outs, bool require_surjective) {
         if (bases.is_none() && outs.is_none()) {
           new (self) LinearLayout();
           return;
         }
         if (nb::isinstance<nb::str>(bases)) {
           if (!outs.is_none()) fail("LinearLayout: the text form or (bases, outs), not both");
           new (self) LinearLayout(linear::parse_linear_layout(nb::cast<std::string>(bases)));
           return;
         }
         if (!nb::isinstance<nb::dict>(bases) && !nb::isinstance<nb::sequence>(bases))
           throw nb::type_error(
               ("LinearLayout: expected the text form or (bases, outs), got " + repr_of(bases))
                   .c_str());
         if (outs.is_none()) fail("LinearLayout: (bases, outs) needs the output dims");
         auto in = bases_in(bases);
         bool names = !nb::isinstance<nb::dict>(outs) && !nb::isinstance<nb::str>(outs);
         if (names) {
           for (nb::handle x : outs) names = names && nb::isinstance<nb::str>(x);
         }
         if (nb::isinstance<nb::str>(outs)) {
           new (self)
               LinearLayout(std::move(in), std::vector<std::string>{nb::cast<std::string>(outs)},
                            require_surjective);
         } else if (names) {
           new (self) LinearLayout(std::move(in), names_in(outs, "outs"), require_surjective);
         } else {
           new (self) LinearLayout(std::move(in), dims_in(outs, "outs"), require_surjective);
         }
       },
       nb::arg("bases") = nb::none(), nb::arg("outs") = nb::none(),
       nb::arg("require_surjective") = true)
      .def_static("identity_1d", &LinearLayout::identity_1d, nb::arg("size"), nb::arg("in_"),
                  nb::arg("out"), "L(x) = x on one dim of `size` (a power of two).")
      .def_static("zeros_1d", &LinearLayout::zeros_1d, nb::arg("size"), nb::arg("in_"),
                  nb::arg("out"), nb::arg("out_size") = 1, "L(x) = 0.")
      .def_static("strided_1d", &LinearLayout::strided_1d, nb::arg("size"), nb::arg("stride"),
                  nb::arg("in_"), nb::arg("out"), "L(x) = stride * x, output size inferred.")
      .def_static(
          "from_axe",
          [](const AxeLayout& l, nb::handle shape) {
            return linear::to_linear(l, shape_or_size(l, shape)).layout;
          },
          nb::arg("layout"), nb::arg("shape") = nb::none(),
          "The linear layout of an axe.Layout on a logical shape (default: its size), as `axe "
          "linear`;\n"
          "the offset is the layout's own .offset (to_linear returns both). axe.Error with the\n"
          "reason when the layout is not F2-linear.")
      .def_static(
          "from_cute", &from_cute, nb::arg("layout"), nb::arg("in_") = "in", nb::arg("out") = "out",
          "A CuTe layout (or Swizzle o 0 o layout) as a linear layout from its 1-D index to the "
          "offset.")
      .def_static(
          "from_swizzle",
          [](nb::handle sw, int bits, const std::string& in, const std::string& out) {
            return linear::from_swizzle(*swizzle_in(sw), bits, in, out);
          },
          nb::arg("swizzle"), nb::arg("bits"), nb::arg("in_") = "offset", nb::arg("out") = "offset",
          "Swizzle<B,M,S> on `bits` offset bits.")
      .def_prop_ro(
          "in_dims", [](const LinearLayout& l) { return dims_out(l.in_dims()); },
          "[(name, size)] of the input dims, minor-to-major.")
      .def_prop_ro(
          "out_dims", [](const LinearLayout& l) { return dims_out(l.out_dims()); },
          "[(name, size)] of the output dims, minor-to-major.")
      .def_prop_ro("in_names", &LinearLayout::in_names)
      .def_prop_ro("out_names", &LinearLayout::out_names)
      .def("in_size", &LinearLayout::in_size, nb::arg("name"))
      .def("out_size", &LinearLayout::out_size, nb::arg("name"))
      .def("in_bits", &LinearLayout::in_bits, nb::arg("name"))
      .def("out_bits", &LinearLayout::out_bits, nb::arg("name"))
      .def("has_in_dim", &LinearLayout::has_in_dim, nb::arg("name"))
      .def("has_out_dim", &LinearLayout::has_out_dim, nb::arg("name"))
      .def_prop_ro("total_in_bits", &LinearLayout::total_in_bits)
      .def_prop_ro("total_out_bits", &LinearLayout::total_out_bits)
      .def_prop_ro(
          "columns", &LinearLayout::columns,
          "One packed int per input bit (input dims in order), the first output dim in the "
          "low bits.")
      .def_prop_ro("bases", &bases_out,
                   "{input dim: [basis tuple per bit]}, tuples in output-dim order.")
      .def(
          "basis",
          [](const LinearLayout& l, const std::string& in, int i) {
            return ints_out(l.basis(in, i));
          },
          nb::arg("in_"), nb::arg("i"), "L(in_ = 2^i, every other input 0), in output-dim order.")
      .def("apply", &apply, nb::arg("coords") = nb::none(), nb::arg("kwargs"),
           "L(x) as {output dim: value}: every input dim given once, from a dict and/or keywords.\n"
           "l.apply(in1=1, in2=0) or l.apply({'in1': 1, 'in2': 0}).")
      .def("__call__", &apply, nb::arg("coords") = nb::none(), nb::arg("kwargs"))
      .def(
          "apply_flat",
          [](const LinearLayout& l, std::uint64_t x) {
            if (l.total_in_bits() < 64 && (x >> l.total_in_bits()) != 0)
              fail("apply_flat: " + std::to_string(x) + " has bits beyond the " +
                   std::to_string(l.total_in_bits()) + " input bits");
            return l.apply_flat(x);
          },
          nb::arg("x"), "L on the packed input (first input dim lowest) to the packed output.")
      .def_prop_ro("rank", [](const LinearLayout& l) { return linear::rank(l); })
      .def_prop_ro("is_surjective", [](const LinearLayout& l) { return linear::is_surjective(l); })
      .def_prop_ro("is_injective", [](const LinearLayout& l) { return linear::is_injective(l); })
      .def_prop_ro("is_invertible", [](const LinearLayout& l) { return linear::is_invertible(l); })
      .def("free_variable_masks",
           [](const LinearLayout& l) { return masks_out(linear::free_variable_masks(l)); })
      .def("broadcast_masks",
           [](const LinearLayout& l) { return masks_out(linear::broadcast_masks(l)); })
      .def("compose", &linear::compose, nb::arg("then"),
           "then o self (Triton's self.compose(then)).")
      .def("product", &linear::product, nb::arg("outer"), "The direct sum, self minor.")
      .def("__mul__", &linear::product)
      .def("invert", &linear::invert)
      .def("invert_and_compose", &linear::invert_and_compose, nb::arg("b"),
           "C with self == C.compose(b).")
      .def("pseudo_invert", &linear::pseudo_invert)
      .def("sublayout", &sublayout, nb::arg("ins"), nb::arg("outs"))
      .def("sublayout_is_zero", &sublayout_is_zero, nb::arg("ins"), nb::arg("outs"))
      .def("transpose_ins", &transpose_ins, nb::arg("order"))
      .def("transpose_outs", &transpose_outs, nb::arg("order"))
      .def("reshape_ins", &reshape_ins, nb::arg("dims"))
      .def("reshape_outs", &reshape_outs, nb::arg("dims"))
      .def("flatten_ins", &linear::flatten_ins)
      .def("flatten_outs", &linear::flatten_outs)
      .def("concat_ins", &linear::concat_ins, nb::arg("b"))
      .def("concat_outs", &linear::concat_outs, nb::arg("b"))
      .def("divide_left", &linear::divide_left, nb::arg("b"), "C with self == b * C, or None.")
      .def("divide_right", &linear::divide_right, nb::arg("b"), "C with self == C * b, or None.")
      .def("is_trivial_over", &is_trivial_over, nb::arg("dims"))
      .def("quotient", &quotient, nb::arg("dims"))
      .def("num_consecutive_in_out", &linear::num_consecutive_in_out,
           "The vector width: consecutive first-input values landing on consecutive first-output "
           "values.")
      .def("remove_duplicates", &linear::remove_duplicates)
      .def("to_axe", &to_axe, nb::arg("offset") = nb::none(),
           "(axe.Layout, shape) of a distributed layout whose input dims are axes (from_linear).")
      .def("__str__", [](const LinearLayout& l) { return linear::to_string(l); })
      .def("__repr__",
           [](const LinearLayout& l) {
             return py_repr_call("axe.linear.LinearLayout", linear::to_string(l));
           })
      .def("__eq__", [](const LinearLayout& a, nb::handle b) { return same(a, b); })
      .def("__ne__", [](const LinearLayout& a, nb::handle b) { return !same(a, b); })
      .def("__hash__", [](const LinearLayout& l) { return std::hash<LinearLayout>{}(l); })
      .def("__getstate__", [](const LinearLayout& l) { return linear::to_string(l); })
      .def("__setstate__",
           [](LinearLayout* self, const std::string& s) {
             new (self) LinearLayout(linear::parse_linear_layout(s));
           })
      .def("__copy__", [](const LinearLayout& l) { return l; })
      .def("__deepcopy__", [](const LinearLayout& l, nb::handle) { return l; });

  // Free functions under the C++ names (STYLE §1).
  m.def("parse_linear_layout", &linear::parse_linear_layout, nb::arg("text"));
  m.def("identity_1d", &LinearLayout::identity_1d, nb::arg("size"), nb::arg("in_"), nb::arg("out"));
  m.def("zeros_1d", &LinearLayout::zeros_1d, nb::arg("size"), nb::arg("in_"), nb::arg("out"),
        nb::arg("out_size") = 1);
  m.def("strided_1d", &LinearLayout::strided_1d, nb::arg("size"), nb::arg("stride"), nb::arg("in_"),
        nb::arg("out"));
  m.def("rank", [](const LinearLayout& l) { return linear::rank(l); });
  m.def("is_surjective", [](const LinearLayout& l) { return linear::is_surjective(l); });
  m.def("is_injective", [](const LinearLayout& l) { return linear::is_injective(l); });
  m.def("is_invertible", [](const LinearLayout& l) { return linear::is_invertible(l); });
  m.def("free_variable_masks",
        [](const LinearLayout& l) { return masks_out(linear::free_variable_masks(l)); });
  m.def("broadcast_masks",
        [](const LinearLayout& l) { return masks_out(linear::broadcast_masks(l)); });
  m.def("compose", &linear::compose, nb::arg("first"), nb::arg("then"),
        "then o first (Triton's first.compose(then)).");
  m.def("product", &linear::product, nb::arg("inner"), nb::arg("outer"));
  m.def("invert", &linear::invert);
  m.def("invert_and_compose", &linear::invert_and_compose, nb::arg("a"), nb::arg("b"),
        "C with a == compose(C, b) (C = b^-1 o a).");
  m.def("pseudo_invert", &linear::pseudo_invert);
  m.def("sublayout", &sublayout, nb::arg("layout"), nb::arg("ins"), nb::arg("outs"));
  m.def("sublayout_is_zero", &sublayout_is_zero, nb::arg("layout"), nb::arg("ins"),
        nb::arg("outs"));
  m.def("transpose_ins", &transpose_ins, nb::arg("layout"), nb::arg("order"));
  m.def("transpose_outs", &transpose_outs, nb::arg("layout"), nb::arg("order"));
  m.def("reshape_ins", &reshape_ins, nb::arg("layout"), nb::arg("dims"));
  m.def("reshape_outs", &reshape_outs, nb::arg("layout"), nb::arg("dims"));
  m.def("flatten_ins", &linear::flatten_ins);
  m.def("flatten_outs", &linear::flatten_outs);
  m.def("concat_ins", &linear::concat_ins, nb::arg("a"), nb::arg("b"));
  m.def("concat_outs", &linear::concat_outs, nb::arg("a"), nb::arg("b"));
  m.def("divide_left", &linear::divide_left, nb::arg("a"), nb::arg("b"));
  m.def("divide_right", &linear::divide_right, nb::arg("a"), nb::arg("b"));
  m.def("is_trivial_over", &is_trivial_over, nb::arg("layout"), nb::arg("dims"));
  m.def("quotient", &quotient, nb::arg("layout"), nb::arg("dims"));
  m.def("num_consecutive_in_out", &linear::num_consecutive_in_out);
  m.def("remove_duplicates", &linear::remove_duplicates);

  // Bridges.
  m.def(
      "linear_refusal",
      [](const AxeLayout& l, nb::handle shape) {
        return linear::linear_refusal(l, shape_or_size(l, shape));
      },
      nb::arg("layout"), nb::arg("shape") = nb::none(),
      "'' when the axe.Layout is F2-linear on shape, else why not.");
  m.def(
      "to_linear",
      [](const AxeLayout& l, nb::handle shape) {
        auto r = linear::to_linear(l, shape_or_size(l, shape));
        nb::dict o;
        for (const auto& [a, v] : r.offset) o[nb::str(a.c_str())] = v;
        return nb::make_tuple(r.layout, o);
      },
      nb::arg("layout"), nb::arg("shape") = nb::none(),
      "(LinearLayout, offset {axis: value}) of an axe.Layout on a logical shape.");
  m.def("from_linear", &to_axe, nb::arg("layout"), nb::arg("offset") = nb::none(),
        "(axe.Layout, shape) of a distributed linear layout.");
  m.def("logical_shape", [](const LinearLayout& l) { return ints_out(linear::logical_shape(l)); });
  m.def("from_cute", &from_cute, nb::arg("layout"), nb::arg("in_") = "in", nb::arg("out") = "out");
  m.def(
      "from_swizzle",
      [](nb::handle sw, int bits, const std::string& in, const std::string& out) {
        return linear::from_swizzle(*swizzle_in(sw), bits, in, out);
      },
      nb::arg("swizzle"), nb::arg("bits"), nb::arg("in_") = "offset", nb::arg("out") = "offset");

  // Thread layouts.
  m.def(
      "blocked_layout",
      [](nb::handle shape, nb::handle spt, nb::handle tpw, nb::handle wpc, nb::handle order) {
        auto s = to_shape(shape, "shape");
        std::vector<std::int64_t> o;
        if (!order.is_none()) o = to_shape(order, "order");
        return linear::blocked_layout(s, to_shape(spt, "size_per_thread"),
                                      to_shape(tpw, "threads_per_warp"),
                                      to_shape(wpc, "warps_per_cta"), o);
      },
      nb::arg("shape"), nb::arg("size_per_thread"), nb::arg("threads_per_warp"),
      nb::arg("warps_per_cta"), nb::arg("order") = nb::none(),
      "Triton's BlockedLayout on shape (order: dims fastest first; default row-major).");
  m.def(
      "mma_accumulator",
      [](nb::handle shape, nb::handle wpc) {
        return linear::mma_accumulator(to_shape(shape, "shape"), to_shape(wpc, "warps_per_cta"));
      },
      nb::arg("shape"), nb::arg("warps_per_cta"), "The mma.sync m16n8 accumulator.");
  m.def(
      "wgmma_accumulator",
      [](nb::handle shape, std::int64_t n, nb::handle wpc) {
        return linear::wgmma_accumulator(to_shape(shape, "shape"), n,
                                         to_shape(wpc, "warps_per_cta"));
      },
      nb::arg("shape"), nb::arg("n"), nb::arg("warps_per_cta"),
      "The wgmma accumulator of instrShape 16 x n x K.");
  m.def(
      "slice_layout",
      [](const LinearLayout& parent, int dim) { return linear::slice_layout(parent, dim); },
      nb::arg("parent"), nb::arg("dim"), "Triton's SliceLayout: drop logical dim `dim` of parent.");
  auto thread_layout = [](nb::handle spec, nb::handle shape) {
    auto s = to_shape(shape, "shape");
    if (nb::isinstance<AxeLayout>(spec)) return nb::cast<AxeLayout>(spec);
    if (!nb::isinstance<nb::str>(spec))
      throw nb::type_error(("thread_layout: expected a spec (str), got " + repr_of(spec)).c_str());
    return linear::parse_thread_layout(nb::cast<std::string>(spec), s);
  };
  static const std::string thread_doc =
      "The axe.Layout of a thread-layout spec on shape, as `axe thread-layout SPEC --shape S`:\n" +
      linear::thread_layout_spec_help();
  m.def("thread_layout", thread_layout, nb::arg("spec"), nb::arg("shape"), thread_doc.c_str());
  m.def("parse_thread_layout", thread_layout, nb::arg("spec"), nb::arg("shape"));

  // The bank model.
  nb::class_<Banks>(
      m, "BankReport",
      "Shared-memory wavefronts of a warp's accesses (`axe banks`); str prints as the "
      "CLI.")
      .def_prop_ro("vector_bytes", [](const Banks& b) { return b.report.vector_bytes; })
      .def_prop_ro(
          "instructions", [](const Banks& b) { return b.report.instructions; }, "Per warp.")
      .def_prop_ro("warps", [](const Banks& b) { return b.report.warps; })
      .def_prop_ro(
          "wavefronts", [](const Banks& b) { return b.report.wavefronts; },
          "Total over every warp and instruction.")
      .def_prop_ro("ideal", [](const Banks& b) { return b.report.ideal; })
      .def_prop_ro("per_instruction", [](const Banks& b) { return b.report.per_instruction; })
      .def_prop_ro(
          "offsets", [](const Banks& b) { return b.report.offsets; },
          "Per (warp, instruction, lane): the shared element offset, -1 when idle.")
      .def_prop_ro(
          "f2_wavefronts", [](const Banks& b) { return b.f2; },
          "The F2 formula per instruction (4-byte scalar accesses), else None.")
      .def("__str__", &banks_text)
      .def("__repr__", [](const Banks& b) {
        return "<axe.linear.BankReport " + std::to_string(b.report.wavefronts) + " wavefronts>";
      });

  m.def(
      "banks",
      [](nb::handle smem, nb::handle access, nb::handle shape, nb::handle dtype,
         nb::handle swizzle) {
        auto s = to_shape(shape, "shape");
        AxeLayout threads = threads_in(access, s, "access");
        std::int64_t bytes = element_bytes_in(dtype);
        auto sw = swizzle_in(swizzle);
        Banks b;
        if (nb::isinstance<AxeLayout>(smem) || nb::isinstance<nb::str>(smem)) {
          AxeLayout sm = nb::isinstance<AxeLayout>(smem)
                             ? nb::cast<AxeLayout>(smem)
                             : parse_axe_layout(nb::cast<std::string>(smem));
          b.report = linear::bank_conflicts(sm, threads, s, bytes, sw);
          if (bytes == 4 && b.report.vector_bytes == 4)
            b.f2 = linear::f2_wavefronts(sm, threads, s, sw);
          return b;
        }
        if (sw) fail("banks: a swizzle applies to an axe.Layout smem, not to offsets");
        std::vector<std::int64_t> offsets;
        if (nb::isinstance<LinearLayout>(smem)) {
          const auto& l = nb::cast<const LinearLayout&>(smem);
          if (l.total_in_bits() > kMaxEnumeratedBits)
            fail("banks: the shared layout has 2^" + std::to_string(l.total_in_bits()) +
                 " elements (at most 2^" + std::to_string(kMaxEnumeratedBits) + ")");
          offsets = linear::shared_offsets(l);
        } else {
          offsets = to_shape(smem, "smem offsets");
        }
        b.report = linear::bank_conflicts(offsets, threads, s, bytes);
        return b;
      },
      nb::arg("smem"), nb::arg("access"), nb::arg("shape"), nb::arg("dtype") = "f32",
      nb::arg("swizzle") = nb::none(),
      "The bank model (`axe banks SMEM --access THREADS --shape S --dtype T [--swizzle B,M,S]`).\n"
      "smem: an axe.Layout over m (or its text), a LinearLayout m -> tile (invertible) or the\n"
      "element offset of every row-major index; access: an axe.Layout or a thread-layout spec.");

  m.def(
      "f2_wavefronts",
      [](nb::handle smem, nb::handle access, nb::handle shape,
         nb::handle swizzle) -> std::optional<std::int64_t> {
        auto s = to_shape(shape, "shape");
        AxeLayout sm = nb::isinstance<AxeLayout>(smem)
                           ? nb::cast<AxeLayout>(smem)
                           : parse_axe_layout(nb::cast<std::string>(smem));
        return linear::f2_wavefronts(sm, threads_in(access, s, "access"), s, swizzle_in(swizzle));
      },
      nb::arg("smem"), nb::arg("access"), nb::arg("shape"), nb::arg("swizzle") = nb::none(),
      "The F2 formula's wavefronts per instruction for 4-byte scalar accesses, or None where it "
      "does\nnot apply (a layout not F2-linear, smem not invertible on the tile, ...).");

  // Swizzles.
  nb::class_<linear::AccessCost>(m, "AccessCost",
                                 "One side's accesses: vector_bytes, instructions (per warp), "
                                 "wavefronts (total).")
      .def_ro("vector_bytes", &linear::AccessCost::vector_bytes)
      .def_ro("instructions", &linear::AccessCost::instructions)
      .def_ro("wavefronts", &linear::AccessCost::wavefronts)
      .def("__str__", [](const linear::AccessCost& c) { return linear::to_string(c); })
      .def("__repr__",
           [](const linear::AccessCost& c) {
             return "<axe.linear.AccessCost " + linear::to_string(c) + ">";
           })
      .def("__eq__", [](const linear::AccessCost& a, nb::handle b) { return same(a, b); })
      .def("__ne__", [](const linear::AccessCost& a, nb::handle b) { return !same(a, b); });
  nb::class_<linear::ExchangeCost>(m, "ExchangeCost", "Store and load costs of one shared layout.")
      .def_ro("store", &linear::ExchangeCost::store)
      .def_ro("load", &linear::ExchangeCost::load)
      .def_prop_ro("wavefronts", &linear::ExchangeCost::wavefronts)
      .def_prop_ro("instructions", &linear::ExchangeCost::instructions, "Per warp.")
      .def("better_than", &linear::ExchangeCost::better_than)
      .def("__str__", [](const linear::ExchangeCost& c) { return linear::to_string(c); })
      .def("__repr__",
           [](const linear::ExchangeCost& c) {
             return "<axe.linear.ExchangeCost " + linear::to_string(c) + ">";
           })
      .def("__eq__", [](const linear::ExchangeCost& a, nb::handle b) { return same(a, b); })
      .def("__ne__", [](const linear::ExchangeCost& a, nb::handle b) { return !same(a, b); });

  nb::class_<linear::SwizzlePlan>(
      m, "SwizzlePlan", "The optimal shared layout of an exchange (`axe swizzle`); str as the CLI.")
      .def_ro("shared", &linear::SwizzlePlan::shared,
              "The LinearLayout m (offset) -> logical dims.")
      .def_prop_ro(
          "offset_bases",
          [](const linear::SwizzlePlan& p) {
            nb::list l;
            for (int i = 0; i < p.shared.in_bits("m"); ++i)
              l.append(coordinate_out(p.shared.basis("m", i)));
            return l;
          },
          "Per offset bit, the logical coordinate (row-major dims) at offset 2^i.")
      .def_ro("cost", &linear::SwizzlePlan::cost)
      .def_ro("origin", &linear::SwizzlePlan::origin)
      .def_prop_ro(
          "swizzle",
          [](const linear::SwizzlePlan& p) -> std::optional<cute::Swizzle> {
            if (!p.axe) return std::nullopt;
            return p.axe->swizzle;
          },
          "With axe_layout: the layout as Swizzle o Axe layout (None when not expressible).")
      .def_prop_ro("axe_layout",
                   [](const linear::SwizzlePlan& p) -> std::optional<AxeLayout> {
                     if (!p.axe) return std::nullopt;
                     return p.axe->layout;
                   })
      .def_ro("row_major", &linear::SwizzlePlan::row_major)
      .def_ro("best_swizzle", &linear::SwizzlePlan::best_swizzle)
      .def_prop_ro("best_swizzle_cost",
                   [](const linear::SwizzlePlan& p) -> std::optional<linear::ExchangeCost> {
                     if (!p.best_swizzle) return std::nullopt;
                     return p.best_swizzle_cost;
                   })
      .def("__str__", &swizzle_text)
      .def("__repr__", [](const linear::SwizzlePlan& p) {
        return "<axe.linear.SwizzlePlan " + linear::to_string(p.shared) + ", " +
               linear::to_string(p.cost) + ">";
      });

  m.def(
      "optimal_swizzle",
      [](nb::handle src, nb::handle dst, nb::handle shape, nb::handle dtype) {
        auto s = to_shape(shape, "shape");
        return linear::optimal_swizzle(threads_in(src, s, "src"), threads_in(dst, s, "dst"), s,
                                       element_bytes_in(dtype));
      },
      nb::arg("src"), nb::arg("dst"), nb::arg("shape"), nb::arg("dtype") = "f32",
      "The shared layout minimising wavefronts, then instructions, for src storing and dst "
      "loading\n"
      "(`axe swizzle --from SRC --to DST --shape S --dtype T`).");
  m.def(
      "access_cost",
      [](const LinearLayout& shared, nb::handle threads, nb::handle dtype) {
        if (nb::isinstance<LinearLayout>(threads))
          return linear::access_cost(shared, nb::cast<const LinearLayout&>(threads),
                                     element_bytes_in(dtype));
        auto shape = linear::logical_shape(shared);
        auto t = threads_in(threads, shape, "threads");
        return linear::access_cost(shared, linear::to_linear(t, shape).layout,
                                   element_bytes_in(dtype));
      },
      nb::arg("shared"), nb::arg("threads"), nb::arg("dtype") = "f32",
      "The bank model's cost by the F2 formula for a shared LinearLayout and a thread layout.");
  m.def(
      "shared_offsets",
      [](const LinearLayout& l) {
        if (l.total_in_bits() > kMaxEnumeratedBits)
          fail("shared_offsets: 2^" + std::to_string(l.total_in_bits()) + " elements (at most 2^" +
               std::to_string(kMaxEnumeratedBits) + ")");
        return linear::shared_offsets(l);
      },
      nb::arg("shared"), "The element offset of every logical (row-major) index (shared^-1).");
  m.def(
      "row_major_linear",
      [](nb::handle shape) { return linear::row_major_linear(to_shape(shape, "shape")); },
      nb::arg("shape"));
  m.def(
      "swizzled_linear",
      [](nb::handle sw, nb::handle shape) {
        return linear::swizzled_linear(*swizzle_in(sw), to_shape(shape, "shape"));
      },
      nb::arg("swizzle"), nb::arg("shape"));
  m.def(
      "as_swizzled_axe",
      [](const LinearLayout& l) -> nb::object {
        auto r = linear::as_swizzled_axe(l);
        if (!r) return nb::none();
        return nb::make_tuple(r->swizzle, r->layout);
      },
      nb::arg("shared"), "(Swizzle, axe.Layout) writing shared as Swizzle o Axe layout, or None.");

  // Conversion plans.
  nb::class_<Conversion>(m, "ConvertPlan",
                         "The plan moving a tile between thread layouts (`axe convert-layout`);\n"
                         "str prints as the CLI's text.")
      .def_prop_ro(
          "mechanism", [](const Conversion& c) { return linear::to_string(c.plan.mechanism); },
          "'none', 'registers', 'shuffles' or 'shared'.")
      .def_prop_ro("steps",
                   [](const Conversion& c) {
                     std::vector<std::string> v;
                     for (const auto& op : c.plan.ops) v.push_back(linear::to_string(op));
                     return v;
                   })
      .def_prop_ro("lanes", [](const Conversion& c) { return c.plan.lanes; })
      .def_prop_ro("warps", [](const Conversion& c) { return c.plan.warps; })
      .def_prop_ro("src_registers", [](const Conversion& c) { return c.plan.src_registers; })
      .def_prop_ro("dst_registers", [](const Conversion& c) { return c.plan.dst_registers; })
      .def_prop_ro(
          "chunk", [](const Conversion& c) { return c.plan.chunk; },
          "Shared elements per repetition.")
      .def_prop_ro("register_moves",
                   [](const Conversion& c) { return c.plan.counts.register_moves; })
      .def_prop_ro("selects", [](const Conversion& c) { return c.plan.counts.selects; })
      .def_prop_ro("shuffles", [](const Conversion& c) { return c.plan.counts.shuffles; })
      .def_prop_ro("shared_bytes", [](const Conversion& c) { return c.plan.counts.shared_bytes; })
      .def_prop_ro("repetitions", [](const Conversion& c) { return c.plan.counts.repetitions; })
      .def_prop_ro("barriers", [](const Conversion& c) { return c.plan.counts.barriers; })
      .def_prop_ro("wavefronts", [](const Conversion& c) { return c.plan.counts.wavefronts(); })
      .def_prop_ro("store_wavefronts",
                   [](const Conversion& c) { return c.plan.counts.store_wavefronts; })
      .def_prop_ro("load_wavefronts",
                   [](const Conversion& c) { return c.plan.counts.load_wavefronts; })
      .def_prop_ro("store_instructions",
                   [](const Conversion& c) { return c.plan.counts.store_instructions; })
      .def_prop_ro("load_instructions",
                   [](const Conversion& c) { return c.plan.counts.load_instructions; })
      .def_prop_ro(
          "issue_cost",
          [](const Conversion& c) { return linear::issue_cost(c.plan.counts, c.plan.warps); })
      .def_prop_ro(
          "shared_layout",
          [](const Conversion& c) -> nb::object {
            if (!c.plan.shared) return nb::none();
            if (c.plan.shared->linear) return nb::cast(*c.plan.shared->linear);
            return nb::make_tuple(c.plan.shared->smem, c.plan.shared->swizzle);
          },
          "The shared layout (mechanism 'shared'): a LinearLayout, or (axe.Layout, "
          "Swizzle or None); None otherwise.")
      .def_ro("simulated", &Conversion::simulated)
      .def_ro("src", &Conversion::from)
      .def_ro("dst", &Conversion::to)
      .def_prop_ro("shape", [](const Conversion& c) { return ints_out(c.shape); })
      .def("simulate", &simulate_conversion,
           "Runs the plan on every lane and warp: '' when it yields exactly dst, else the first "
           "mismatch.")
      .def("__str__", &conversion_text)
      .def("__repr__", [](const Conversion& c) {
        return "<axe.linear.ConvertPlan " + linear::to_string(c.plan.mechanism) + ", " +
               std::to_string(c.plan.ops.size()) + " step(s)>";
      });

  m.def("convert_plan", &convert_plan, nb::arg("src"), nb::arg("dst"), nb::arg("shape"),
        nb::arg("dtype") = "f32", nb::arg("shared_budget") = nb::none(),
        nb::arg("swizzle") = nb::none(), nb::arg("shared") = nb::none(),
        nb::arg("choose") = "cheapest", nb::arg("simulate") = false,
        "The cheapest exact plan moving the tile from thread layout src to dst on shape\n"
        "(`axe convert-layout --from SRC --to DST --shape S --dtype T [--shared-budget B]\n"
        "[--swizzle B,M,S] [--choose C] [--simulate]`). src/dst: axe.Layout, a thread-layout spec\n"
        "or a LinearLayout; shared: a shared layout (axe.Layout over m or a LinearLayout);\n"
        "simulate=True runs the plan and raises axe.Error if it is not exact.");
  m.def("plan_conversion", &convert_plan, nb::arg("src"), nb::arg("dst"), nb::arg("shape"),
        nb::arg("dtype") = "f32", nb::arg("shared_budget") = nb::none(),
        nb::arg("swizzle") = nb::none(), nb::arg("shared") = nb::none(),
        nb::arg("choose") = "cheapest", nb::arg("simulate") = false,
        "The C++ name of convert_plan.");
  m.def("simulate", &simulate_conversion, nb::arg("plan"),
        "'' when the plan yields exactly its destination on every lane and warp, else the first "
        "mismatch.");
}

}  // namespace axe::py
