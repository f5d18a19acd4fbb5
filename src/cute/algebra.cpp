// The CuTe layout algebra (coalesce, filter, composition, complement, inverses), following
// include/cute/layout.hpp of NVIDIA CUTLASS with every integer treated as static (see layout.cpp).
#include "axe/cute/layout.hpp"

#include <algorithm>
#include <numeric>
#include <string>
#include <utility>

#include "axe/core/error.hpp"
#include "cute/internal.hpp"

namespace axe::cute {

using internal::Flat;
using internal::flat_of;

namespace {

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


}  // namespace

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

}  // namespace axe::cute
