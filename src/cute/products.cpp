// CuTe divides and products (logical, zipped, tiled, blocked, raked) and tile_to_shape, following
// include/cute/layout.hpp of NVIDIA CUTLASS with every integer treated as static (see layout.cpp).
#include "axe/cute/layout.hpp"

#include <algorithm>
#include <numeric>
#include <string>
#include <utility>

#include "axe/core/error.hpp"

namespace axe::cute {
namespace {

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

}  // namespace axe::cute
