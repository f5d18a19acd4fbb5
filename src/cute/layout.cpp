// The CuTe layout algebra with every integer treated as static, following the C++ header
// include/cute/layout.hpp of NVIDIA CUTLASS. Where the header has a static_assert we throw
// axe::Error with the same condition name; where it branches on is_constant<N> we compare values.
#include "axe/cute/layout.hpp"

#include <algorithm>
#include <numeric>
#include <string>
#include <utility>

#include "axe/core/error.hpp"

namespace axe::cute {
namespace {

void validate(const IntTuple& shape, const IntTuple& stride, const IntTuple& s, const IntTuple& d) {
  if (s.is_tuple() != d.is_tuple() || (s.is_tuple() && s.rank() != d.rank()) ||
      s.is_underscore_leaf() || d.is_underscore_leaf()) {
    fail("Layout: shape " + to_string(shape) + " and stride " + to_string(stride) +
         " are not congruent");
  }
  if (s.is_tuple()) {
    for (std::size_t i = 0; i < s.rank(); ++i) validate(shape, stride, s[i], d[i]);
    return;
  }
  if (s.value() < 0) {
    fail("Layout: negative extent " + std::to_string(s.value()) + " in shape " + to_string(shape));
  }
}

// A flat list of (extent, stride) modes.
struct Flat {
  std::vector<std::int64_t> shape;
  std::vector<std::int64_t> stride;
};

Flat flat_of(const Layout& l) {
  Flat f;
  for (const IntTuple& s : flatten_leaves(l.shape())) f.shape.push_back(s.value());
  for (const IntTuple& d : flatten_leaves(l.stride())) f.stride.push_back(d.value());
  return f;
}

IntTuple tuple_of(const std::vector<std::int64_t>& v) {
  std::vector<IntTuple> e(v.begin(), v.end());
  return IntTuple::tuple(std::move(e));
}

// An int for a single mode, a tuple otherwise (the shape a fold in the header produces).
Layout layout_of(const std::vector<std::int64_t>& s, const std::vector<std::int64_t>& d) {
  if (s.size() == 1) return Layout(s[0], d[0]);
  return Layout(tuple_of(s), tuple_of(d));
}

bool mul_equals(std::int64_t a, std::int64_t b, std::int64_t c) {
  std::int64_t r;
  if (__builtin_mul_overflow(a, b, &r)) return false;
  return r == c;
}

// detail::bw_coalesce of the header, iterating from the back. `front_shape`/`front_stride` is the
// initial new mode; `is_int` tracks whether the new layout is still a single integral mode.
Layout bw_coalesce(const Flat& f, std::int64_t front_shape, std::int64_t front_stride) {
  std::vector<std::int64_t> ns{front_shape};
  std::vector<std::int64_t> nd{front_stride};
  for (std::size_t k = f.shape.size() - 1; k-- > 0;) {
    std::int64_t s = f.shape[k];
    std::int64_t d = f.stride[k];
    if (s == 1) continue;                // shape<I> == 1: skip it
    if (ns.size() == 1 && ns[0] == 1) {  // replace our shape-1 with anything
      ns[0] = s;
      nd[0] = d;
    } else if (mul_equals(s, d, nd[0])) {  // merge: s*d == front stride
      ns[0] = checked_mul(s, ns[0], "coalesce");
      nd[0] = d;
    } else {  // prepend
      ns.insert(ns.begin(), s);
      nd.insert(nd.begin(), d);
    }
  }
  if (ns.size() == 1 && ns[0] == 1) return Layout(1, 0);
  return layout_of(ns, nd);
}

// detail::coalesce_x: preserves the function also beyond the domain (a trailing extent-1 mode
// keeps its stride as an extension).
Layout coalesce_x(const Layout& l) {
  Flat f = flat_of(l);
  if (f.shape.empty()) return Layout(1, 0);
  if (f.shape.back() == 1) return bw_coalesce(f, 2, f.stride.back());
  return bw_coalesce(f, f.shape.back(), f.stride.back());
}

std::int64_t exact_div(std::int64_t a, std::int64_t b, const char* what) {
  if (b == 0) fail(std::string(what) + ": division by zero");
  if (a == INT64_MIN && b == -1) fail(std::string(what) + ": 64-bit overflow");
  return a / b;
}

std::int64_t ceil_div_int(std::int64_t a, std::int64_t b, const char* what) {
  if (b == 0) fail(std::string(what) + ": division by zero");
  return exact_div(checked_sub(checked_add(a, b, what), 1, what), b, what);
}

std::int64_t signum(std::int64_t x) {
  return (x > 0) - (x < 0);
}

// detail::composition_impl with rhs given by shape and stride.
Layout composition_impl(const Layout& lhs, const IntTuple& rshape, const IntTuple& rstride) {
  if (rshape.is_tuple()) {  // right-distributivity over the modes of the rhs
    std::vector<Layout> modes;
    for (std::size_t i = 0; i < rshape.rank(); ++i) {
      modes.push_back(composition_impl(lhs, rshape[i], rstride[i]));
    }
    return make_layout(std::move(modes));
  }
  const std::int64_t rs = rshape.value();
  const std::int64_t rd = rstride.value();
  if (rd == 0) return Layout(rs, 0);
  if (lhs.shape().is_int()) {
    return Layout(rs, checked_mul(rd, lhs.stride().value(), "composition"));
  }
  // General case: lhs a flat tuple (coalesce_x output), rhs integral.
  const auto& ls = lhs.shape().elems();
  const auto& ld = lhs.stride().elems();
  const std::size_t r = ls.size();
  std::vector<std::int64_t> result_shape;
  std::vector<std::int64_t> result_stride;
  std::int64_t rest_shape = rs;
  std::int64_t rest_stride = rd;
  for (std::size_t i = 0; i + 1 < r; ++i) {
    const std::int64_t curr_shape = ls[i].value();
    const std::int64_t curr_stride = ld[i].value();
    if (curr_shape == 0) {
      fail("composition: " + to_string(lhs) + " has a zero extent and cannot be composed");
    }
    if (!(rest_stride % curr_shape == 0 || rest_stride < curr_shape)) {
      fail("composition: Stride Divisibility Condition violated: stride " +
           std::to_string(rest_stride) + " vs extent " + std::to_string(curr_shape) + " of " +
           to_string(lhs) + " o " + std::to_string(rs) + ":" + std::to_string(rd));
    }
    const std::int64_t abs_rest = rest_stride < 0 ? -rest_stride : rest_stride;
    const std::int64_t next_shape = ceil_div_int(curr_shape, abs_rest, "composition");
    const std::int64_t next_stride =
        ceil_div_int(abs_rest, curr_shape, "composition") * signum(rest_stride);
    if (next_shape == 1 || rest_shape == 1) {
      rest_stride = next_stride;
      continue;
    }
    const std::int64_t new_shape = std::min(next_shape, rest_shape);
    if (new_shape == 0 || rest_shape % new_shape != 0) {
      fail("composition: Shape Divisibility Condition violated: " + std::to_string(rest_shape) +
           " is not divisible by " + std::to_string(new_shape) + " in " + to_string(lhs) + " o " +
           std::to_string(rs) + ":" + std::to_string(rd));
    }
    result_shape.push_back(new_shape);
    result_stride.push_back(checked_mul(rest_stride, curr_stride, "composition"));
    rest_shape /= new_shape;
    rest_stride = next_stride;
  }
  const std::int64_t last_stride = ld[r - 1].value();
  if (result_shape.empty()) {
    return Layout(rest_shape, checked_mul(rest_stride, last_stride, "composition"));
  }
  if (rest_shape != 1) {
    result_shape.push_back(rest_shape);
    result_stride.push_back(checked_mul(rest_stride, last_stride, "composition"));
  }
  return layout_of(result_shape, result_stride);
}

// detail::complement on a filtered layout, with a shape cotarget.
Layout complement_impl(const Layout& a, const IntTuple& cotarget) {
  Layout f = filter(a);
  if (f.stride().is_int() && f.stride().value() == 0) {
    // Irreducible rank-1 stride-0 layout: make_layout(coalesce(cotarget)).
    return make_layout(product(cotarget));
  }
  Flat fl = flat_of(f);
  for (std::int64_t d : fl.stride) {
    if (d < 0) {
      fail("complement: negative stride in " + to_string(a) +
           " (C++ CuTe would produce a negative extent)");
    }
  }
  std::vector<std::int64_t> shape = fl.shape;
  std::vector<std::int64_t> stride = fl.stride;
  std::vector<std::int64_t> result_shape;
  std::vector<std::int64_t> result_stride{1};
  auto non_injective = [&]() {
    fail("complement: Non-injective Layout detected in complement of " + to_string(a));
  };
  const std::size_t r = shape.size();
  for (std::size_t i = 0; i + 1 < r; ++i) {
    auto it = std::min_element(stride.begin(), stride.end());
    std::size_t min_idx = static_cast<std::size_t>(it - stride.begin());
    std::int64_t min_stride = *it;
    std::int64_t new_shape = exact_div(min_stride, result_stride[i], "complement");
    std::int64_t new_stride = checked_mul(min_stride, shape[min_idx], "complement");
    if (new_shape == 0) non_injective();
    shape.erase(shape.begin() + static_cast<std::ptrdiff_t>(min_idx));
    stride.erase(stride.begin() + static_cast<std::ptrdiff_t>(min_idx));
    result_shape.push_back(new_shape);
    result_stride.push_back(new_stride);
  }
  std::int64_t new_shape = exact_div(stride[0], result_stride[r - 1], "complement");
  if (new_shape == 0) non_injective();
  result_shape.push_back(new_shape);
  std::int64_t new_stride = checked_mul(stride[0], shape[0], "complement");
  std::int64_t rest_shape = product(ceil_div(cotarget, IntTuple(new_stride)));
  std::int64_t rest_stride = rest_shape == 1 ? 0 : new_stride;
  result_shape.push_back(rest_shape);
  result_stride.push_back(rest_stride);
  return coalesce(Layout(tuple_of(result_shape), tuple_of(result_stride)));
}

// append<R>(layout): pad with 1:0 modes to rank R.
Layout append_to_rank(const Layout& l, std::size_t r) {
  std::size_t have = rank(l);
  if (have == r) return l;
  std::vector<IntTuple> s;
  std::vector<IntTuple> d;
  if (l.shape().is_tuple()) {
    s = l.shape().elems();
    d = l.stride().elems();
  } else {
    s.push_back(l.shape());
    d.push_back(l.stride());
  }
  while (s.size() < r) {
    s.emplace_back(1);
    d.emplace_back(0);
  }
  return Layout(IntTuple::tuple(std::move(s)), IntTuple::tuple(std::move(d)));
}

// zip(t0, t1): ((t0_0,t1_0),(t0_1,t1_1),...), an int counting as a rank-1 tuple whose mode 0 is
// itself. This is the (A_i, B_i) rule of the reference vectors. C++'s cute::zip differs only in
// mixed int/rank-1 cases: it gives ((8,(3))) for zip(8, (3)) where we give ((8,3)), and does not
// compile for zip((9), 4) where we give ((9,4)).
IntTuple zip2(const IntTuple& t0, const IntTuple& t1) {
  if (t1.rank() != t0.rank()) {
    fail("zip: mismatched ranks of " + to_string(t0) + " and " + to_string(t1));
  }
  std::vector<IntTuple> out;
  for (std::size_t i = 0; i < t0.rank(); ++i) out.push_back(IntTuple::tuple({t0[i], t1[i]}));
  return IntTuple::tuple(std::move(out));
}

Layout zip_layouts(const Layout& a, const Layout& b) {
  return Layout(zip2(a.shape(), b.shape()), zip2(a.stride(), b.stride()));
}

// zip2_by(t, guide) of the header, applied to an IntTuple.
IntTuple zip2_by(const IntTuple& t, const Tiler& guide) {
  if (guide.is_tuple()) {
    const std::size_t gr = guide.elems().size();
    if (!t.is_tuple() || t.rank() < gr) {
      fail("zip2_by: " + to_string(t) + " has fewer modes than the tiler " + to_string(guide));
    }
    std::vector<IntTuple> first;
    std::vector<IntTuple> second;
    for (std::size_t i = 0; i < gr; ++i) {
      IntTuple split = zip2_by(t[i], guide.elems()[i]);
      first.push_back(split[0]);
      second.push_back(split[1]);
    }
    for (std::size_t i = gr; i < t.rank(); ++i) second.push_back(t[i]);
    return IntTuple::tuple({IntTuple::tuple(std::move(first)), IntTuple::tuple(std::move(second))});
  }
  if (!t.is_tuple() || t.rank() != 2) {
    fail("zip2_by: mode " + to_string(t) + " is not rank 2 (tiler " + to_string(guide) + ")");
  }
  return t;
}

Layout tile_unzip(const Layout& l, const Tiler& tiler) {
  return Layout(zip2_by(l.shape(), tiler), zip2_by(l.stride(), tiler));
}

// result(_, repeat<R1>(_)): unpack the second mode when its rank is above 1.
Layout unpack_mode1(const Layout& l) {
  Layout m1 = l.mode(1);
  if (rank(m1) == 1) return l;
  std::vector<Layout> modes{l.mode(0)};
  for (std::size_t i = 0; i < rank(m1); ++i) modes.push_back(m1.mode(i));
  return make_layout(std::move(modes));
}

// transform_layout(layout, tiler, f): f on the first rank(tiler) modes, the rest kept.
template <class F>
Layout by_mode(const Layout& a, const Tiler& b, const char* what, F&& f) {
  const auto& elems = b.elems();
  if (elems.size() > rank(a)) {
    fail(std::string(what) + ": too many modes in tiler " + to_string(b) + " for " + to_string(a));
  }
  std::vector<Layout> modes;
  for (std::size_t i = 0; i < elems.size(); ++i) modes.push_back(f(a.mode(i), elems[i]));
  for (std::size_t i = elems.size(); i < rank(a); ++i) modes.push_back(a.mode(i));
  return make_layout(std::move(modes));
}

}  // namespace

// ---- Layout ----

Layout::Layout() : shape_(1), stride_(0) {}

Layout::Layout(IntTuple shape, IntTuple stride)
    : shape_(std::move(shape)), stride_(std::move(stride)) {
  validate(shape_, stride_, shape_, stride_);
  (void)product(shape_);  // size must fit in int64
}

namespace {

// crd2idx for a 1-D index on a validated layout (no congruence re-check, no allocation).
std::int64_t eval_index(const IntTuple& s, const IntTuple& d, std::int64_t c) {
  if (s.is_int()) return checked_mul(c, d.value(), "Layout evaluation");
  const auto& se = s.elems();
  const auto& de = d.elems();
  std::int64_t sum = 0;
  for (std::size_t i = 0; i < se.size(); ++i) {
    if (i + 1 == se.size()) {  // the last mode absorbs the excess
      return checked_add(sum, eval_index(se[i], de[i], c), "Layout evaluation");
    }
    std::int64_t n = se[i].is_int() ? se[i].value() : product(se[i]);
    if (n == 0) fail("Layout: cannot split an index over the zero-size mode " + to_string(se[i]));
    sum = checked_add(sum, eval_index(se[i], de[i], c % n), "Layout evaluation");
    c /= n;
  }
  return sum;
}

}  // namespace

std::int64_t Layout::operator()(std::int64_t i) const {
  if (i < 0) fail("Layout " + to_string(*this) + ": negative index " + std::to_string(i));
  return eval_index(shape_, stride_, i);
}

namespace {

void check_coord_range(const IntTuple& c, const IntTuple& s, const Layout& l) {
  if (c.is_tuple()) {
    if (!s.is_tuple() || s.rank() != c.rank()) {
      fail("Layout " + to_string(l) + ": coordinate component " + to_string(c) +
           " does not match the shape " + to_string(s));
    }
    for (std::size_t i = 0; i < c.rank(); ++i) check_coord_range(c[i], s[i], l);
    return;
  }
  if (c.is_underscore_leaf()) return;
  std::int64_t n = product(s);
  if (c.value() < 0 || c.value() >= n) {
    fail("Layout " + to_string(l) + ": coordinate " + std::to_string(c.value()) +
         " out of range [0," + std::to_string(n) + ") of mode " + to_string(s));
  }
}

}  // namespace

std::int64_t Layout::operator()(const IntTuple& coord) const {
  if (coord.is_int()) return (*this)(coord.value());
  if (coord.is_underscore_leaf() || has_underscore(coord)) {
    fail("Layout " + to_string(*this) + ": coordinate " + to_string(coord) +
         " has '_'; use slice()");
  }
  check_coord_range(coord, shape_, *this);
  return crd2idx(coord, shape_, stride_);
}

Layout Layout::mode(std::size_t i) const {
  if (i >= shape_.rank()) {
    fail("Layout " + to_string(*this) + ": mode " + std::to_string(i) + " out of range (rank " +
         std::to_string(shape_.rank()) + ")");
  }
  return Layout(shape_[i], stride_[i]);
}

bool Layout::operator==(const Layout& other) const {
  return shape_ == other.shape_ && stride_ == other.stride_;
}

Layout make_layout(IntTuple shape) {
  IntTuple stride = compact_col_major(shape);
  return Layout(std::move(shape), std::move(stride));
}

Layout make_layout(std::vector<Layout> modes) {
  std::vector<IntTuple> s;
  std::vector<IntTuple> d;
  for (Layout& m : modes) {
    s.push_back(m.shape());
    d.push_back(m.stride());
  }
  return Layout(IntTuple::tuple(std::move(s)), IntTuple::tuple(std::move(d)));
}

std::int64_t size(const Layout& l) {
  return product(l.shape());
}

std::int64_t cosize(const Layout& l) {
  if (size(l) == 0) return 0;
  Flat f = flat_of(l);
  std::int64_t c = 1;
  for (std::size_t i = 0; i < f.shape.size(); ++i) {
    std::int64_t d = f.stride[i];
    if (d == INT64_MIN) fail("cosize: 64-bit overflow in |stride|");
    d = d < 0 ? -d : d;
    std::int64_t term;
    if (__builtin_mul_overflow(f.shape[i] - 1, d, &term) || __builtin_add_overflow(c, term, &c)) {
      fail("cosize of " + to_string(l) + ": 64-bit overflow");
    }
  }
  return c;
}

std::size_t rank(const Layout& l) {
  return l.shape().rank();
}

int depth(const Layout& l) {
  return depth(l.shape());
}

Layout flatten(const Layout& l) {
  return Layout(flatten(l.shape()), flatten(l.stride()));
}

// ---- coalesce / filter ----

Layout coalesce(const Layout& l) {
  Flat f = flat_of(l);
  if (f.shape.empty()) return Layout(1, 0);
  return bw_coalesce(f, f.shape.back(), f.stride.back());
}

Layout coalesce(const Layout& l, const IntTuple& profile) {
  if (!profile.is_tuple()) return coalesce(l);
  if (profile.rank() > rank(l)) {
    fail("coalesce: profile " + to_string(profile) + " has more modes than " + to_string(l));
  }
  std::vector<Layout> modes;
  for (std::size_t i = 0; i < profile.rank(); ++i) modes.push_back(coalesce(l.mode(i), profile[i]));
  for (std::size_t i = profile.rank(); i < rank(l); ++i) modes.push_back(l.mode(i));
  return make_layout(std::move(modes));
}

Layout filter(const Layout& l) {
  // filter_zeros: stride-0 modes become extent 1; coalesce then drops them.
  std::function<IntTuple(const IntTuple&, const IntTuple&)> zeros =
      [&](const IntTuple& s, const IntTuple& d) -> IntTuple {
    if (s.is_int()) return d.value() == 0 ? IntTuple(1) : s;
    std::vector<IntTuple> out;
    for (std::size_t i = 0; i < s.rank(); ++i) out.push_back(zeros(s[i], d[i]));
    return IntTuple::tuple(std::move(out));
  };
  return coalesce(Layout(zeros(l.shape(), l.stride()), l.stride()));
}

// ---- composition ----

Layout composition(const Layout& a, const Layout& b) {
  return composition_impl(coalesce_x(a), b.shape(), b.stride());
}

Layout composition(const Layout& a, const Tiler& b) {
  if (b.is_none()) return a;
  if (b.is_layout()) return composition(a, b.layout());
  const auto& elems = b.elems();
  if (elems.size() > rank(a)) {
    fail("composition: too many modes in tiler " + to_string(b) + " for " + to_string(a));
  }
  std::vector<Layout> modes;  // modes of a beyond the tiler are dropped, as in C++
  for (std::size_t i = 0; i < elems.size(); ++i) modes.push_back(composition(a.mode(i), elems[i]));
  return make_layout(std::move(modes));
}

// ---- complement ----

Layout complement(const Layout& a, const IntTuple& cotarget_shape) {
  if (has_underscore(cotarget_shape)) fail("complement: '_' in cotarget");
  return complement_impl(a, cotarget_shape);
}

Layout complement(const Layout& a, std::int64_t cotarget) {
  if (cotarget < 0) fail("complement: negative cotarget " + std::to_string(cotarget));
  return complement_impl(a, IntTuple(cotarget));
}

Layout complement(const Layout& a) {
  return complement(a, cosize(filter(a)));
}

// ---- divides ----

Layout logical_divide(const Layout& a, const Tiler& b) {
  if (b.is_none()) return a;
  if (b.is_tuple()) {
    return by_mode(a, b, "logical_divide",
                   [](const Layout& l, const Tiler& t) { return logical_divide(l, t); });
  }
  const Layout t = b.is_int() ? make_layout(b.layout().shape()) : b.layout();
  return composition(a, make_layout({t, complement(t, coalesce(a).shape())}));
}

Layout zipped_divide(const Layout& a, const Tiler& b) {
  return tile_unzip(logical_divide(a, b), b);
}

Layout tiled_divide(const Layout& a, const Tiler& b) {
  return unpack_mode1(zipped_divide(a, b));
}

// ---- products ----

Layout logical_product(const Layout& a, const Tiler& b) {
  if (b.is_none()) return a;
  if (b.is_tuple()) {
    return by_mode(a, b, "logical_product",
                   [](const Layout& l, const Tiler& t) { return logical_product(l, t); });
  }
  const Layout t = b.is_int() ? make_layout(b.layout().shape()) : b.layout();
  std::int64_t cotarget = checked_mul(size(a), cosize(t), "logical_product");
  return make_layout({a, composition(complement(a, cotarget), t)});
}

Layout zipped_product(const Layout& a, const Tiler& b) {
  return tile_unzip(logical_product(a, b), b);
}

Layout tiled_product(const Layout& a, const Tiler& b) {
  return unpack_mode1(zipped_product(a, b));
}

Layout blocked_product(const Layout& a, const Layout& b) {
  std::size_t r = std::max(rank(a), rank(b));
  Layout result = logical_product(append_to_rank(a, r), Tiler(append_to_rank(b, r)));
  return zip_layouts(result.mode(0), result.mode(1));
}

Layout raked_product(const Layout& a, const Layout& b) {
  std::size_t r = std::max(rank(a), rank(b));
  Layout result = logical_product(append_to_rank(a, r), Tiler(append_to_rank(b, r)));
  return zip_layouts(result.mode(1), result.mode(0));
}

Layout blocked_product(const Layout& a, const Tiler& b) {
  if (!b.is_layout()) fail("blocked_product: the tiler " + to_string(b) + " must be a layout");
  return blocked_product(a, b.layout());
}

Layout raked_product(const Layout& a, const Tiler& b) {
  if (!b.is_layout()) fail("raked_product: the tiler " + to_string(b) + " must be a layout");
  return raked_product(a, b.layout());
}

// ---- inverses ----

Layout right_inverse(const Layout& l) {
  Flat f = flat_of(coalesce(l));
  const std::size_t r = f.shape.size();
  std::vector<std::int64_t> preprod{1};
  for (std::size_t i = 0; i < r; ++i) {
    preprod.push_back(checked_mul(preprod.back(), f.shape[i], "right_inverse"));
  }
  std::vector<std::size_t> order(r);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t x, std::size_t y) { return f.stride[x] < f.stride[y]; });
  std::vector<std::int64_t> rs{1};
  std::vector<std::int64_t> rd{0};
  std::int64_t curr = 1;
  for (std::size_t i : order) {
    if (f.stride[i] != curr) continue;
    rs.push_back(f.shape[i]);
    rd.push_back(preprod[i]);
    curr = checked_mul(f.shape[i], f.stride[i], "right_inverse");
  }
  return coalesce(Layout(tuple_of(rs), tuple_of(rd)));
}

Layout left_inverse(const Layout& l) {
  Flat f = flat_of(coalesce(l));
  const std::size_t r = f.shape.size();
  for (std::int64_t d : f.stride) {
    if (d < 0) {
      fail("left_inverse: negative stride in " + to_string(l) +
           " (C++ CuTe would produce a negative extent)");
    }
  }
  std::vector<std::int64_t> preprod{1};
  for (std::size_t i = 0; i < r; ++i) {
    preprod.push_back(checked_mul(preprod.back(), f.shape[i], "left_inverse"));
  }
  std::vector<std::size_t> order(r);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t x, std::size_t y) { return f.stride[x] < f.stride[y]; });
  std::vector<std::int64_t> rs;
  std::vector<std::int64_t> rd{0};
  std::int64_t result_size = 1;
  for (std::size_t i : order) {
    std::int64_t d = f.stride[i];
    if (d == 0) continue;
    if (d % result_size != 0) {
      fail("left_inverse: Left inverse divisibility condition violated for " + to_string(l) +
           ": stride " + std::to_string(d) + " is not a multiple of " +
           std::to_string(result_size));
    }
    rs.push_back(d / result_size);
    result_size = checked_mul(result_size, rs.back(), "left_inverse");
    rd.push_back(preprod[i]);
  }
  rs.push_back(f.shape[order.back()]);
  return coalesce(Layout(tuple_of(rs), tuple_of(rd)));
}

// ---- slicing ----

namespace {

// lift_slice of the header: the modes of (s, d) selected by "_" in c, flattened into out.
void lift_slice(const IntTuple& c, const IntTuple& s, const IntTuple& d,
                std::vector<IntTuple>& out_s, std::vector<IntTuple>& out_d, const Layout& l) {
  if (c.is_tuple()) {
    if (!s.is_tuple() || s.rank() != c.rank()) {
      fail("slice: coordinate " + to_string(c) + " does not match the shape " + to_string(s) +
           " of " + to_string(l));
    }
    for (std::size_t i = 0; i < c.rank(); ++i) lift_slice(c[i], s[i], d[i], out_s, out_d, l);
    return;
  }
  if (c.is_underscore_leaf()) {
    out_s.push_back(s);
    out_d.push_back(d);
    return;
  }
  std::int64_t n = product(s);
  if (c.value() < 0 || c.value() >= n) {
    fail("slice: coordinate " + std::to_string(c.value()) + " out of range [0," +
         std::to_string(n) + ") of mode " + to_string(s) + " of " + to_string(l));
  }
}

}  // namespace

Layout slice(const IntTuple& coord, const Layout& l) {
  if (coord.is_underscore_leaf()) return l;
  if (!coord.is_tuple()) {
    fail("slice: coordinate " + to_string(coord) + " has no '_' (use Layout::operator())");
  }
  std::vector<IntTuple> s;
  std::vector<IntTuple> d;
  lift_slice(coord, l.shape(), l.stride(), s, d, l);
  return Layout(IntTuple::tuple(std::move(s)), IntTuple::tuple(std::move(d)));
}

std::int64_t slice_offset(const IntTuple& coord, const Layout& l) {
  if (coord.is_tuple()) {
    std::vector<IntTuple> s;
    std::vector<IntTuple> d;
    lift_slice(coord, l.shape(), l.stride(), s, d, l);  // range and rank checks
  } else if (coord.is_int()) {
    return l(coord.value());
  }
  return crd2idx(coord, l.shape(), l.stride());
}

// ---- tile_to_shape ----

Layout tile_to_shape(const Layout& block, const IntTuple& target_shape) {
  if (has_underscore(target_shape)) fail("tile_to_shape: '_' in target shape");
  const std::size_t r = target_shape.rank();
  if (rank(block) > r) {
    fail("tile_to_shape: rank of " + to_string(block) + " exceeds the rank of target shape " +
         to_string(target_shape));
  }
  Layout padded = append_to_rank(block, r);
  IntTuple block_shape = product_each(padded.shape());
  IntTuple trg = product_each(target_shape);
  for (std::size_t i = 0; i < r; ++i) {
    std::int64_t t = trg[i].value();
    std::int64_t s = block_shape[i].value();
    if (s == 0 || t % s != 0) {
      fail("tile_to_shape: block shape " + to_string(padded.shape()) +
           " does not divide the target shape " + to_string(target_shape));
    }
  }
  IntTuple product_shape = ceil_div(trg, block_shape);
  return blocked_product(padded, make_layout(product_shape));
}

std::size_t hash_value(const Layout& l) {
  return hash_value(l.shape()) * 0x9e3779b97f4a7c15ull ^ hash_value(l.stride());
}

// ---- Tiler ----

Tiler Tiler::none() {
  return Tiler();
}

Tiler::Tiler(Layout layout) : kind_(Kind::kLayout), layout_(std::move(layout)) {}

Tiler Tiler::of_int(std::int64_t n) {
  if (n < 0) fail("Tiler: negative integer tiler " + std::to_string(n));
  Tiler t(Layout(n, 1));
  t.is_int_ = true;
  return t;
}

Tiler Tiler::tuple(std::vector<Tiler> elems) {
  Tiler t;
  t.kind_ = Kind::kTuple;
  t.elems_ = std::move(elems);
  return t;
}

const Layout& Tiler::layout() const {
  if (!is_layout()) fail("Tiler::layout(): " + to_string(*this) + " is not a layout");
  return layout_;
}

const std::vector<Tiler>& Tiler::elems() const {
  if (!is_tuple()) fail("Tiler::elems(): " + to_string(*this) + " is not a tuple");
  return elems_;
}

bool Tiler::operator==(const Tiler& other) const {
  if (kind_ != other.kind_ || is_int_ != other.is_int_) return false;
  if (is_layout()) return layout_ == other.layout_;
  return elems_ == other.elems_;
}

}  // namespace axe::cute
