// The CuTe layout algebra with every integer treated as static, following the C++ header
// include/cute/layout.hpp of NVIDIA CUTLASS. Where the header has a static_assert we throw
// axe::Error with the same condition name; where it branches on is_constant<N> we compare values.
#include "axe/cute/layout.hpp"

#include <algorithm>
#include <numeric>
#include <string>
#include <utility>

#include "axe/core/error.hpp"
#include "cute/internal.hpp"

namespace axe::cute {

namespace internal {

Flat flat_of(const Layout& l) {
  Flat f;
  for (const IntTuple& s : flatten_leaves(l.shape())) f.shape.push_back(s.value());
  for (const IntTuple& d : flatten_leaves(l.stride())) f.stride.push_back(d.value());
  return f;
}

}  // namespace internal

using internal::Flat;
using internal::flat_of;

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
