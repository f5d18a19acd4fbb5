#include "axe/cute/int_tuple.hpp"

#include <algorithm>
#include <string>
#include <utility>

#include "axe/core/error.hpp"

namespace axe::cute {

IntTuple::IntTuple(std::int64_t v) : kind_(Kind::kInt), value_(v) {}

IntTuple IntTuple::tuple(std::vector<IntTuple> elems) {
  IntTuple t;
  t.kind_ = Kind::kTuple;
  t.elems_ = std::move(elems);
  return t;
}

std::int64_t IntTuple::value() const {
  if (!is_int()) fail("IntTuple::value(): " + to_string(*this) + " is not an integer");
  return value_;
}

const std::vector<IntTuple>& IntTuple::elems() const {
  if (!is_tuple()) fail("IntTuple::elems(): " + to_string(*this) + " is not a tuple");
  return elems_;
}

std::size_t IntTuple::rank() const {
  return is_tuple() ? elems_.size() : 1;
}

const IntTuple& IntTuple::operator[](std::size_t i) const {
  if (i >= rank()) {
    fail("IntTuple: mode " + std::to_string(i) + " out of range for " + to_string(*this) +
         " of rank " + std::to_string(rank()));
  }
  return is_tuple() ? elems_[i] : *this;
}

bool IntTuple::operator==(const IntTuple& other) const {
  if (kind_ != other.kind_) return false;
  if (kind_ == Kind::kInt) return value_ == other.value_;
  return elems_ == other.elems_;
}

IntTuple underscore() {
  IntTuple t;
  t.kind_ = IntTuple::Kind::kUnderscore;
  return t;
}

bool is_underscore(const IntTuple& t) {
  return t.is_underscore_leaf();
}

bool has_underscore(const IntTuple& t) {
  if (t.is_underscore_leaf()) return true;
  if (!t.is_tuple()) return false;
  return std::any_of(t.elems().begin(), t.elems().end(),
                     [](const IntTuple& e) { return has_underscore(e); });
}

std::int64_t product(const IntTuple& t) {
  if (t.is_int()) return t.value();
  if (t.is_underscore_leaf()) fail("product: '_' has no extent");
  std::int64_t p = 1;
  for (const IntTuple& e : t.elems()) {
    if (__builtin_mul_overflow(p, product(e), &p)) {
      fail("product of " + to_string(t) + ": 64-bit overflow");
    }
  }
  return p;
}

int depth(const IntTuple& t) {
  if (!t.is_tuple()) return 0;
  int d = 0;
  for (const IntTuple& e : t.elems()) d = std::max(d, depth(e));
  return d + 1;
}

bool congruent(const IntTuple& a, const IntTuple& b) {
  if (a.is_tuple() != b.is_tuple()) return false;
  if (!a.is_tuple()) return true;
  if (a.rank() != b.rank()) return false;
  for (std::size_t i = 0; i < a.rank(); ++i) {
    if (!congruent(a[i], b[i])) return false;
  }
  return true;
}

bool compatible(const IntTuple& a, const IntTuple& b) {
  if (a.is_tuple()) {
    if (!b.is_tuple() || a.rank() != b.rank()) return false;
    for (std::size_t i = 0; i < a.rank(); ++i) {
      if (!compatible(a[i], b[i])) return false;
    }
    return true;
  }
  return a.is_int() && a.value() == product(b);
}

namespace {

void collect_leaves(const IntTuple& t, std::vector<IntTuple>& out) {
  if (!t.is_tuple()) {
    out.push_back(t);
    return;
  }
  for (const IntTuple& e : t.elems()) collect_leaves(e, out);
}

std::int64_t div_checked(std::int64_t a, std::int64_t b, const char* what) {
  if (b == 0) fail(std::string(what) + ": division by zero");
  if (a == INT64_MIN && b == -1) fail(std::string(what) + ": 64-bit overflow");
  return a / b;
}

// C++ CuTe's integral ceil_div: (a + b - 1) / b with truncating division.
std::int64_t ceil_div_int(std::int64_t a, std::int64_t b) {
  if (b == 0) fail("ceil_div: division by zero (" + std::to_string(a) + " / 0)");
  std::int64_t n = checked_sub(checked_add(a, b, "ceil_div"), 1, "ceil_div");
  return div_checked(n, b, "ceil_div");
}

void compact_col_major_into(const IntTuple& shape, std::int64_t& current, IntTuple& out) {
  if (shape.is_int()) {
    out = shape.value() == 1 ? IntTuple(0) : IntTuple(current);
    current = checked_mul(current, shape.value(), "compact_col_major");
    return;
  }
  if (!shape.is_tuple()) fail("compact_col_major: '_' is not a shape");
  std::vector<IntTuple> strides(shape.rank());
  for (std::size_t i = 0; i < shape.rank(); ++i) {
    compact_col_major_into(shape[i], current, strides[i]);
  }
  out = IntTuple::tuple(std::move(strides));
}

}  // namespace

std::vector<IntTuple> flatten_leaves(const IntTuple& t) {
  std::vector<IntTuple> out;
  collect_leaves(t, out);
  return out;
}

IntTuple flatten(const IntTuple& t) {
  if (!t.is_tuple()) return t;
  return IntTuple::tuple(flatten_leaves(t));
}

IntTuple unwrap(const IntTuple& t) {
  if (t.is_tuple() && t.rank() == 1) return unwrap(t[0]);
  return t;
}

IntTuple product_each(const IntTuple& t) {
  if (!t.is_tuple()) return t;
  std::vector<IntTuple> out;
  for (const IntTuple& e : t.elems()) out.emplace_back(product(e));
  return IntTuple::tuple(std::move(out));
}

IntTuple ceil_div(const IntTuple& a, const IntTuple& b) {
  if (a.is_tuple()) {
    if (b.is_tuple()) {
      if (b.rank() > a.rank()) {
        fail("ceil_div: rank of " + to_string(b) + " exceeds rank of " + to_string(a));
      }
      std::vector<IntTuple> out;
      for (std::size_t i = 0; i < a.rank(); ++i) {
        out.push_back(ceil_div(a[i], i < b.rank() ? b[i] : IntTuple(1)));
      }
      return IntTuple::tuple(std::move(out));
    }
    std::vector<IntTuple> out;
    IntTuple rest = b;
    for (const IntTuple& ai : a.elems()) {
      out.push_back(ceil_div(ai, rest));
      rest = ceil_div(rest, ai);
    }
    return IntTuple::tuple(std::move(out));
  }
  if (b.is_tuple()) return ceil_div(a, IntTuple(product(b)));
  return ceil_div_int(a.value(), b.value());
}

IntTuple compact_col_major(const IntTuple& shape, std::int64_t current) {
  IntTuple out;
  compact_col_major_into(shape, current, out);
  return out;
}

IntTuple idx2crd(std::int64_t idx, const IntTuple& shape) {
  std::int64_t n = product(shape);
  if (idx < 0 || idx >= n) {
    fail("idx2crd: index " + std::to_string(idx) + " out of range [0," + std::to_string(n) +
         ") of shape " + to_string(shape));
  }
  if (shape.is_int()) return idx;
  std::vector<IntTuple> extents = flatten_leaves(shape);
  // Colexicographic split of idx over the leaves, rebuilt into the shape's structure.
  std::vector<std::int64_t> coords;
  std::int64_t rest = idx;
  for (const IntTuple& e : extents) {
    coords.push_back(rest % e.value());
    rest /= e.value();
  }
  std::size_t k = 0;
  std::function<IntTuple(const IntTuple&)> build = [&](const IntTuple& s) -> IntTuple {
    if (s.is_int()) return coords[k++];
    std::vector<IntTuple> out;
    for (const IntTuple& e : s.elems()) out.push_back(build(e));
    return IntTuple::tuple(std::move(out));
  };
  return build(shape);
}

IntTuple idx2crd(const IntTuple& idx, const IntTuple& shape) {
  if (idx.is_int()) return idx2crd(idx.value(), shape);
  if (!idx.is_tuple()) fail("idx2crd: '_' is not an index");
  if (!shape.is_tuple() || shape.rank() != idx.rank()) {
    fail("idx2crd: index " + to_string(idx) + " does not match the rank of shape " +
         to_string(shape));
  }
  std::vector<IntTuple> out;
  for (std::size_t i = 0; i < idx.rank(); ++i) out.push_back(idx2crd(idx[i], shape[i]));
  return IntTuple::tuple(std::move(out));
}

namespace {

std::int64_t crd2idx_impl(const IntTuple& crd, const IntTuple& shape, const IntTuple& stride) {
  if (crd.is_underscore_leaf()) return 0;
  if (crd.is_tuple()) {
    if (!shape.is_tuple() || shape.rank() != crd.rank()) {
      fail("crd2idx: coordinate " + to_string(crd) + " does not match the rank of shape " +
           to_string(shape));
    }
    std::int64_t sum = 0;
    for (std::size_t i = 0; i < crd.rank(); ++i) {
      sum = checked_add(sum, crd2idx_impl(crd[i], shape[i], stride[i]), "crd2idx");
    }
    return sum;
  }
  std::int64_t c = crd.value();
  if (c < 0) fail("crd2idx: negative coordinate " + std::to_string(c));
  if (shape.is_int()) return checked_mul(c, stride.value(), "crd2idx");
  if (shape.rank() == 0) return 0;
  std::int64_t sum = 0;
  for (std::size_t i = 0; i < shape.rank(); ++i) {
    if (i + 1 == shape.rank()) {  // the last mode absorbs the excess
      sum = checked_add(sum, crd2idx_impl(IntTuple(c), shape[i], stride[i]), "crd2idx");
      break;
    }
    std::int64_t n = product(shape[i]);
    if (n == 0) {
      fail("crd2idx: cannot split index " + std::to_string(c) + " over the zero-size mode " +
           to_string(shape[i]));
    }
    sum = checked_add(sum, crd2idx_impl(IntTuple(c % n), shape[i], stride[i]), "crd2idx");
    c /= n;
  }
  return sum;
}

}  // namespace

std::int64_t crd2idx(const IntTuple& crd, const IntTuple& shape, const IntTuple& stride) {
  if (!congruent(shape, stride)) {
    fail("crd2idx: shape " + to_string(shape) + " and stride " + to_string(stride) +
         " are not congruent");
  }
  return crd2idx_impl(crd, shape, stride);
}

std::int64_t crd2idx(const IntTuple& crd, const IntTuple& shape) {
  return crd2idx(crd, shape, compact_col_major(shape));
}

std::size_t hash_value(const IntTuple& t) {
  if (t.is_int()) return std::hash<std::int64_t>{}(t.value()) * 31u + 1u;
  if (t.is_underscore_leaf()) return 0x5f5f5f5fu;
  std::size_t h = 0x9e3779b97f4a7c15ull ^ t.rank();
  for (const IntTuple& e : t.elems()) h = (h ^ hash_value(e)) * 0x100000001b3ull;
  return h;
}

}  // namespace axe::cute
