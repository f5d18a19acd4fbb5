// The algebra of linear layouts: rank, compose, product, invert, restructuring, division,
// vectorisation and duplicates (LINEAR_LAYOUTS.md §2).
#include <algorithm>
#include <bit>
#include <set>

#include "axe/core/error.hpp"
#include "axe/linear/f2.hpp"
#include "axe/linear/linear_layout.hpp"
#include "linear/internal.hpp"

namespace axe::linear {
namespace {

using internal::brief;
using internal::low_mask;

// Moves each output dim k of `src` (value in a packed column) to bit offset dst[k] of the
// result; dst[k] < 0 drops it.
std::uint64_t remap(const LinearLayout& src, std::uint64_t col, const std::vector<int>& dst) {
  std::uint64_t out = 0;
  int shift = 0;
  for (std::size_t k = 0; k < src.out_dims().size(); ++k) {
    int bits = src.out_dims()[k].bits;
    if (bits > 0 && dst[k] >= 0) {
      std::uint64_t v = (col >> shift) & low_mask(bits);
      if (v) out |= v << dst[k];
    }
    shift += bits;
  }
  return out;
}

// dst offsets of src's output dims inside `target` (-1 where target lacks the dim), plus `extra`
// added to each offset of a dim named in both.
std::vector<int> offsets_in(const LinearLayout& src, const std::vector<Dim>& target,
                            const std::vector<int>& extra = {}) {
  std::vector<int> off;
  for (const auto& d : src.out_dims()) {
    int shift = 0, found = -1;
    for (std::size_t j = 0; j < target.size(); ++j) {
      if (target[j].name == d.name) {
        found = shift + (extra.empty() ? 0 : extra[j]);
        break;
      }
      shift += target[j].bits;
    }
    off.push_back(found);
  }
  return off;
}

const Dim* find(const std::vector<Dim>& dims, std::string_view name) {
  for (const auto& d : dims) {
    if (d.name == name) return &d;
  }
  return nullptr;
}

int bits_or_zero(const std::vector<Dim>& dims, std::string_view name) {
  const Dim* d = find(dims, name);
  return d ? d->bits : 0;
}

std::string names_text(const std::vector<std::string>& v) {
  std::string s = "[";
  for (std::size_t k = 0; k < v.size(); ++k) s += (k ? ", " : "") + v[k];
  return s + "]";
}

// The ordered supremum of two name lists: both are subsequences of the result; when neither
// order constrains, the first list's name comes first. Throws when the orders conflict.
std::vector<std::string> supremum(const std::vector<std::string>& x,
                                  const std::vector<std::string>& y, const char* what) {
  std::vector<std::string> out;
  std::set<std::string> done;
  auto contains_from = [](const std::vector<std::string>& v, std::size_t from,
                          const std::string& n) {
    return std::find(v.begin() + static_cast<std::ptrdiff_t>(from), v.end(), n) != v.end();
  };
  std::size_t i = 0, j = 0;
  while (true) {
    while (i < x.size() && done.count(x[i])) ++i;
    while (j < y.size() && done.count(y[j])) ++j;
    if (i >= x.size() && j >= y.size()) break;
    std::string pick;
    if (i < x.size() && j < y.size() && x[i] == y[j]) {
      pick = x[i];
    } else if (i < x.size() && !contains_from(y, j, x[i])) {
      pick = x[i];
    } else if (j < y.size() && !contains_from(x, i, y[j])) {
      pick = y[j];
    } else {
      fail(std::string("product: the ") + what + " dim orders " + names_text(x) + " and " +
           names_text(y) + " conflict");
    }
    done.insert(pick);
    out.push_back(pick);
  }
  return out;
}

std::vector<Dim> dims_named(const std::vector<std::string>& names,
                            const std::vector<Dim>& a, const std::vector<Dim>& b) {
  std::vector<Dim> out;
  for (const auto& n : names) out.push_back({n, bits_or_zero(a, n) + bits_or_zero(b, n)});
  return out;
}

// The columns of in-dim `name` of l (empty when l lacks it).
std::vector<std::uint64_t> cols_of(const LinearLayout& l, std::string_view name) {
  if (!l.has_in_dim(name)) return {};
  auto b = l.columns().begin() + l.in_shift(name);
  return {b, b + l.in_bits(name)};
}

void check_names_exist(const std::vector<Dim>& dims, std::span<const std::string> names,
                       const LinearLayout& l, const char* what, const char* kind) {
  for (const auto& n : names) {
    if (!find(dims, n)) {
      fail(std::string(what) + ": linear layout " + brief(l) + " has no " + kind + " dim '" + n + "'");
    }
  }
}

bool contains(std::span<const std::string> v, const std::string& n) {
  return std::find(v.begin(), v.end(), n) != v.end();
}

std::vector<Dim> permuted(const std::vector<Dim>& dims, std::span<const std::string> order,
                          const LinearLayout& l, const char* what) {
  if (order.size() != dims.size()) {
    fail(std::string(what) + ": " + std::to_string(order.size()) + " names given for " +
         std::to_string(dims.size()) + " dims of " + brief(l));
  }
  std::vector<Dim> out;
  for (const auto& n : order) {
    const Dim* d = find(dims, n);
    if (!d) fail(std::string(what) + ": linear layout " + brief(l) + " has no dim '" + n + "'");
    for (const auto& o : out) {
      if (o.name == n) fail(std::string(what) + ": dim '" + n + "' given twice");
    }
    out.push_back(*d);
  }
  return out;
}

// The same function with its output dims in the order of `outs` (names and sizes must match).
LinearLayout with_out_order(const LinearLayout& l, const std::vector<Dim>& outs) {
  auto off = offsets_in(l, outs);
  std::vector<std::uint64_t> cols;
  for (auto c : l.columns()) cols.push_back(remap(l, c, off));
  return LinearLayout::from_columns(l.in_dims(), outs, std::move(cols), false);
}

bool same_dim_set(const std::vector<Dim>& a, const std::vector<Dim>& b) {
  if (a.size() != b.size()) return false;
  for (const auto& d : a) {
    const Dim* e = find(b, d.name);
    if (!e || e->bits != d.bits) return false;
  }
  return true;
}


}  // namespace

int rank(const LinearLayout& l) { return f2::rank(l.columns()); }
bool is_surjective(const LinearLayout& l) { return rank(l) == l.total_out_bits(); }
bool is_injective(const LinearLayout& l) { return rank(l) == l.total_in_bits(); }
bool is_invertible(const LinearLayout& l) { return is_surjective(l) && is_injective(l); }

std::vector<std::pair<std::string, std::uint64_t>> free_variable_masks(const LinearLayout& l) {
  f2::Vec mask = f2::free_columns(l.columns());
  std::vector<std::pair<std::string, std::uint64_t>> out;
  int shift = 0;
  for (const auto& d : l.in_dims()) {
    out.emplace_back(d.name, d.bits ? (mask >> shift) & low_mask(d.bits) : 0);
    shift += d.bits;
  }
  return out;
}

LinearLayout compose(const LinearLayout& first, const LinearLayout& then) {
  if (first.out_dims().size() != then.in_dims().size()) {
    fail("compose: the outputs " + names_text(first.out_names()) + " of " + brief(first) +
         " are not the inputs " + names_text(then.in_names()) + " of " + brief(then));
  }
  std::vector<int> off;
  for (const auto& d : first.out_dims()) {
    if (!then.has_in_dim(d.name)) {
      fail("compose: output dim '" + d.name + "' of " + brief(first) + " is not an input of " +
           brief(then));
    }
    if (d.bits > then.in_bits(d.name)) {
      fail("compose: output dim '" + d.name + "' has size " + std::to_string(d.size()) + " in " +
           brief(first) + " but input size " + std::to_string(then.in_size(d.name)) + " in " +
           brief(then));
    }
    off.push_back(then.in_shift(d.name));
  }
  std::vector<std::uint64_t> cols;
  for (auto c : first.columns()) cols.push_back(then.apply_flat(remap(first, c, off)));
  return LinearLayout::from_columns(first.in_dims(), then.out_dims(), std::move(cols), false);
}

LinearLayout product(const LinearLayout& inner, const LinearLayout& outer) {
  auto ins = dims_named(supremum(inner.in_names(), outer.in_names(), "input"), inner.in_dims(),
                        outer.in_dims());
  auto outs = dims_named(supremum(inner.out_names(), outer.out_names(), "output"),
                         inner.out_dims(), outer.out_dims());
  int tin = 0, tout = 0;
  for (const auto& d : ins) tin += d.bits;
  for (const auto& d : outs) tout += d.bits;
  if (tin > 64 || tout > 64) {
    fail("product: " + brief(inner) + " * " + brief(outer) + " has " + std::to_string(tin) +
         " input and " + std::to_string(tout) + " output bits (at most 64 each)");
  }
  // inner's values sit at the bottom of each output dim, outer's above inner's bits.
  std::vector<int> lift;
  for (const auto& d : outs) lift.push_back(bits_or_zero(inner.out_dims(), d.name));
  auto off_inner = offsets_in(inner, outs);
  auto off_outer = offsets_in(outer, outs, lift);
  std::vector<std::uint64_t> cols;
  for (const auto& d : ins) {
    for (auto c : cols_of(inner, d.name)) cols.push_back(remap(inner, c, off_inner));
    for (auto c : cols_of(outer, d.name)) cols.push_back(remap(outer, c, off_outer));
  }
  return LinearLayout::from_columns(std::move(ins), std::move(outs), std::move(cols), false);
}

LinearLayout invert_and_compose(const LinearLayout& a, const LinearLayout& b) {
  if (!same_dim_set(a.out_dims(), b.out_dims())) {
    fail("invert_and_compose: the outputs of " + brief(a) + " and " + brief(b) +
         " differ (names or sizes)");
  }
  if (!is_surjective(b)) {
    fail("invert_and_compose: " + brief(b) + " is not surjective (rank " +
         std::to_string(rank(b)) + " of " + std::to_string(b.total_out_bits()) + " output bits)");
  }
  LinearLayout aa = with_out_order(a, b.out_dims());
  // Broadcasting heuristic: input dims of both with equal bases map by identity.
  std::vector<std::string> ident;
  for (const auto& d : aa.in_dims()) {
    if (b.has_in_dim(d.name) && b.in_bits(d.name) == d.bits &&
        cols_of(aa, d.name) == cols_of(b, d.name)) {
      ident.push_back(d.name);
    }
  }
  auto attempt = [&](const std::vector<std::string>& id) -> std::optional<LinearLayout> {
    // b's columns outside the identity dims, with their positions in b's flat input.
    std::vector<f2::Vec> bcols;
    std::vector<int> pos;
    for (const auto& d : b.in_dims()) {
      if (contains(id, d.name)) continue;
      int s = b.in_shift(d.name);
      for (int i = 0; i < d.bits; ++i) {
        bcols.push_back(b.columns()[static_cast<std::size_t>(s + i)]);
        pos.push_back(s + i);
      }
    }
    std::vector<std::uint64_t> cols;
    for (const auto& d : aa.in_dims()) {
      int s = aa.in_shift(d.name);
      for (int i = 0; i < d.bits; ++i) {
        if (contains(id, d.name)) {
          cols.push_back(std::uint64_t{1} << (b.in_shift(d.name) + i));
          continue;
        }
        auto x = f2::solve(bcols, aa.columns()[static_cast<std::size_t>(s + i)]);
        if (!x) return std::nullopt;
        std::uint64_t c = 0;
        for (std::size_t j = 0; j < pos.size(); ++j) {
          if (*x >> j & 1) c |= std::uint64_t{1} << pos[j];
        }
        cols.push_back(c);
      }
    }
    return LinearLayout::from_columns(aa.in_dims(), b.in_dims(), std::move(cols), false);
  };
  if (!ident.empty()) {
    if (auto r = attempt(ident)) return *r;
  }
  auto r = attempt({});
  if (!r) fail("invert_and_compose: internal error, a surjective layout failed to solve");
  return *r;
}

LinearLayout pseudo_invert(const LinearLayout& l) {
  if (!is_surjective(l)) {
    fail("pseudo_invert: " + brief(l) + " is not surjective (rank " + std::to_string(rank(l)) +
         " of " + std::to_string(l.total_out_bits()) + " output bits)");
  }
  std::vector<std::uint64_t> cols;
  for (int i = 0; i < l.total_out_bits(); ++i) cols.push_back(std::uint64_t{1} << i);
  auto identity = LinearLayout::from_columns(l.out_dims(), l.out_dims(), std::move(cols));
  return invert_and_compose(identity, l);
}

LinearLayout invert(const LinearLayout& l) {
  if (!is_invertible(l)) {
    fail("invert: " + brief(l) + " is not invertible (rank " + std::to_string(rank(l)) + ", " +
         std::to_string(l.total_in_bits()) + " input and " + std::to_string(l.total_out_bits()) +
         " output bits)");
  }
  return pseudo_invert(l);
}

LinearLayout sublayout(const LinearLayout& l, std::span<const std::string> ins,
                       std::span<const std::string> outs) {
  check_names_exist(l.in_dims(), ins, l, "sublayout", "input");
  check_names_exist(l.out_dims(), outs, l, "sublayout", "output");
  std::vector<Dim> nin, nout;
  for (const auto& d : l.in_dims()) {
    if (contains(ins, d.name)) nin.push_back(d);
  }
  for (const auto& d : l.out_dims()) {
    if (contains(outs, d.name)) nout.push_back(d);
  }
  auto off = offsets_in(l, nout);
  std::vector<std::uint64_t> cols;
  for (const auto& d : nin) {
    for (auto c : cols_of(l, d.name)) cols.push_back(remap(l, c, off));
  }
  return LinearLayout::from_columns(std::move(nin), std::move(nout), std::move(cols), false);
}

bool sublayout_is_zero(const LinearLayout& l, std::span<const std::string> ins,
                       std::span<const std::string> outs) {
  auto s = sublayout(l, ins, outs);
  return std::all_of(s.columns().begin(), s.columns().end(), [](auto c) { return c == 0; });
}

LinearLayout transpose_ins(const LinearLayout& l, std::span<const std::string> order) {
  auto ins = permuted(l.in_dims(), order, l, "transpose_ins");
  std::vector<std::uint64_t> cols;
  for (const auto& d : ins) {
    for (auto c : cols_of(l, d.name)) cols.push_back(c);
  }
  return LinearLayout::from_columns(std::move(ins), l.out_dims(), std::move(cols), false);
}

LinearLayout transpose_outs(const LinearLayout& l, std::span<const std::string> order) {
  return with_out_order(l, permuted(l.out_dims(), order, l, "transpose_outs"));
}

namespace {

std::vector<Dim> new_dims(std::span<const std::pair<std::string, std::int64_t>> dims, int total,
                          const LinearLayout& l, const char* what) {
  std::vector<Dim> out;
  int sum = 0;
  for (const auto& [name, size] : dims) {
    int bits = internal::log2_exact(size, std::string(what) + ": size of '" + name + "'");
    out.push_back({name, bits});
    sum += bits;
  }
  if (sum != total) {
    fail(std::string(what) + ": the new dims hold 2^" + std::to_string(sum) + " elements but " +
         brief(l) + " has 2^" + std::to_string(total));
  }
  return out;
}

}  // namespace

LinearLayout reshape_ins(const LinearLayout& l,
                         std::span<const std::pair<std::string, std::int64_t>> dims) {
  auto ins = new_dims(dims, l.total_in_bits(), l, "reshape_ins");
  return LinearLayout::from_columns(std::move(ins), l.out_dims(), l.columns(), false);
}

LinearLayout reshape_outs(const LinearLayout& l,
                          std::span<const std::pair<std::string, std::int64_t>> dims) {
  auto outs = new_dims(dims, l.total_out_bits(), l, "reshape_outs");
  return LinearLayout::from_columns(l.in_dims(), std::move(outs), l.columns(), false);
}

LinearLayout flatten_ins(const LinearLayout& l) {
  if (l.in_dims().empty()) return l;
  return LinearLayout::from_columns({{l.in_dims()[0].name, l.total_in_bits()}}, l.out_dims(),
                                    l.columns(), false);
}

LinearLayout flatten_outs(const LinearLayout& l) {
  if (l.out_dims().empty()) return l;
  return LinearLayout::from_columns(l.in_dims(), {{l.out_dims()[0].name, l.total_out_bits()}},
                                    l.columns(), false);
}

LinearLayout concat_ins(const LinearLayout& a, const LinearLayout& b) {
  if (!same_dim_set(a.out_dims(), b.out_dims())) {
    fail("concat_ins: the outputs of " + brief(a) + " and " + brief(b) + " differ");
  }
  LinearLayout bb = with_out_order(b, a.out_dims());
  auto ins = a.in_dims();
  ins.insert(ins.end(), bb.in_dims().begin(), bb.in_dims().end());
  auto cols = a.columns();
  cols.insert(cols.end(), bb.columns().begin(), bb.columns().end());
  return LinearLayout::from_columns(std::move(ins), a.out_dims(), std::move(cols), false);
}

LinearLayout concat_outs(const LinearLayout& a, const LinearLayout& b) {
  if (!same_dim_set(a.in_dims(), b.in_dims())) {
    fail("concat_outs: the inputs of " + brief(a) + " and " + brief(b) + " differ");
  }
  LinearLayout bb = transpose_ins(b, a.in_names());
  auto outs = a.out_dims();
  outs.insert(outs.end(), bb.out_dims().begin(), bb.out_dims().end());
  int tout = a.total_out_bits() + bb.total_out_bits();
  if (tout > 64) fail("concat_outs: " + std::to_string(tout) + " output bits (at most 64)");
  std::vector<std::uint64_t> cols;
  for (std::size_t j = 0; j < a.columns().size(); ++j) {
    std::uint64_t hi = bb.columns()[j];
    cols.push_back(a.columns()[j] | (hi ? hi << a.total_out_bits() : 0));
  }
  return LinearLayout::from_columns(a.in_dims(), std::move(outs), std::move(cols), false);
}

namespace {

// A = product(inner, outer) with one of the factors known: returns the other, or nullopt.
// `known_inner` says which side is given.
std::optional<LinearLayout> divide(const LinearLayout& a, const LinearLayout& f, bool known_inner) {
  for (const auto& d : f.in_dims()) {
    if (!a.has_in_dim(d.name) || a.in_bits(d.name) < d.bits) return std::nullopt;
  }
  for (const auto& d : f.out_dims()) {
    if (!a.has_out_dim(d.name) || a.out_bits(d.name) < d.bits) return std::nullopt;
  }
  std::vector<Dim> cin, cout;
  for (const auto& d : a.in_dims()) cin.push_back({d.name, d.bits - bits_or_zero(f.in_dims(), d.name)});
  for (const auto& d : a.out_dims()) cout.push_back({d.name, d.bits - bits_or_zero(f.out_dims(), d.name)});
  // Where the inner and outer parts of each of a's output dims sit, in a and in the factors.
  std::vector<int> f_lift;  // per output dim of a: where the known factor's bits start
  for (const auto& d : a.out_dims()) {
    int fb = bits_or_zero(f.out_dims(), d.name);
    f_lift.push_back(known_inner ? 0 : d.bits - fb);
  }
  auto f_in_a = offsets_in(f, a.out_dims(), f_lift);  // f's values placed in a
  std::vector<std::uint64_t> cols;
  for (const auto& d : a.in_dims()) {
    auto acols = cols_of(a, d.name);
    auto fcols = cols_of(f, d.name);
    int fb = static_cast<int>(fcols.size());
    int cb = d.bits - fb;
    for (int i = 0; i < d.bits; ++i) {
      bool is_f = known_inner ? i < fb : i >= cb;
      std::uint64_t ac = acols[static_cast<std::size_t>(i)];
      if (is_f) {
        auto fc = fcols[static_cast<std::size_t>(known_inner ? i : i - cb)];
        if (remap(f, fc, f_in_a) != ac) return std::nullopt;
        continue;
      }
      // The factor's part of every output dim must be 0; the rest moves down.
      std::uint64_t c = 0;
      int shift = 0, cshift = 0;
      for (std::size_t k = 0; k < a.out_dims().size(); ++k) {
        int bits = a.out_dims()[k].bits;
        std::uint64_t v = bits ? (ac >> shift) & low_mask(bits) : 0;
        int cbits = cout[k].bits;
        std::uint64_t fpart = known_inner ? v & low_mask(bits - cbits) : v >> cbits;
        if (fpart != 0) return std::nullopt;
        std::uint64_t cv = known_inner ? v >> (bits - cbits) : v;
        if (cv) c |= cv << cshift;
        shift += bits;
        cshift += cbits;
      }
      cols.push_back(c);
    }
  }
  auto c = LinearLayout::from_columns(std::move(cin), std::move(cout), std::move(cols), false);
  // The construction makes the product equal to a up to dim order; confirm it.
  try {
    auto p = known_inner ? product(f, c) : product(c, f);
    if (!same_dim_set(p.in_dims(), a.in_dims()) || !same_dim_set(p.out_dims(), a.out_dims())) {
      return std::nullopt;
    }
    p = transpose_outs(transpose_ins(p, a.in_names()), a.out_names());
    if (!(p == a)) return std::nullopt;
  } catch (const Error&) {
    return std::nullopt;
  }
  return c;
}

}  // namespace

std::optional<LinearLayout> divide_left(const LinearLayout& a, const LinearLayout& b) {
  return divide(a, b, true);
}

std::optional<LinearLayout> divide_right(const LinearLayout& a, const LinearLayout& b) {
  return divide(a, b, false);
}

bool is_trivial_over(const LinearLayout& l, std::span<const std::string> dims) {
  for (const auto& n : dims) {
    if (!l.has_in_dim(n) || !l.has_out_dim(n) || l.in_bits(n) != l.out_bits(n)) return false;
  }
  std::vector<std::string> d(dims.begin(), dims.end());
  std::vector<std::string> rest_in, rest_out;
  for (const auto& n : l.in_names()) {
    if (!contains(dims, n)) rest_in.push_back(n);
  }
  for (const auto& n : l.out_names()) {
    if (!contains(dims, n)) rest_out.push_back(n);
  }
  auto sq = sublayout(l, d, d);
  // Identity: in dim n bit i -> out dim n value 2^i.
  for (const auto& dim : sq.in_dims()) {
    auto cols = cols_of(sq, dim.name);
    for (int i = 0; i < dim.bits; ++i) {
      if (cols[static_cast<std::size_t>(i)] != std::uint64_t{1} << (sq.out_shift(dim.name) + i)) {
        return false;
      }
    }
  }
  return sublayout_is_zero(l, rest_in, d) && sublayout_is_zero(l, d, rest_out);
}

std::optional<LinearLayout> quotient(const LinearLayout& l, std::span<const std::string> dims) {
  if (!is_trivial_over(l, dims)) return std::nullopt;
  std::vector<std::string> rest_in, rest_out;
  for (const auto& n : l.in_names()) {
    if (!contains(dims, n)) rest_in.push_back(n);
  }
  for (const auto& n : l.out_names()) {
    if (!contains(dims, n)) rest_out.push_back(n);
  }
  return sublayout(l, rest_in, rest_out);
}

std::int64_t num_consecutive_in_out(const LinearLayout& l) {
  if (l.in_dims().empty() || l.out_dims().empty()) return 1;
  const Dim& first = l.in_dims()[0];
  int o0 = l.out_dims()[0].bits;
  auto first_value = [&](std::uint64_t c) { return o0 ? c & low_mask(o0) : 0; };
  int consec = 0;
  for (; consec < first.bits; ++consec) {
    std::uint64_t c = l.columns()[static_cast<std::size_t>(consec)];
    if (consec >= o0 || c != std::uint64_t{1} << consec) break;
  }
  std::uint64_t other = 0;
  for (std::size_t j = 0; j < l.columns().size(); ++j) {
    if (j >= static_cast<std::size_t>(consec)) other |= first_value(l.columns()[j]);
  }
  int tz = other ? std::countr_zero(other) : 63;
  return std::int64_t{1} << std::min(consec, tz);
}

std::vector<std::pair<std::string, std::uint64_t>> broadcast_masks(const LinearLayout& l) {
  std::vector<std::pair<std::string, std::uint64_t>> out;
  for (const auto& d : l.in_dims()) {
    std::uint64_t m = 0;
    auto cols = cols_of(l, d.name);
    for (std::size_t i = 0; i < cols.size(); ++i) {
      if (cols[i] == 0) m |= std::uint64_t{1} << i;
    }
    out.emplace_back(d.name, m);
  }
  return out;
}

LinearLayout remove_duplicates(const LinearLayout& l) {
  auto masks = free_variable_masks(l);
  std::vector<Dim> ins;
  std::vector<std::uint64_t> cols;
  for (std::size_t k = 0; k < l.in_dims().size(); ++k) {
    const Dim& d = l.in_dims()[k];
    auto dc = cols_of(l, d.name);
    int kept = 0;
    for (int i = 0; i < d.bits; ++i) {
      if (masks[k].second >> i & 1) continue;
      cols.push_back(dc[static_cast<std::size_t>(i)]);
      ++kept;
    }
    ins.push_back({d.name, kept});
  }
  return LinearLayout::from_columns(std::move(ins), l.out_dims(), std::move(cols), false);
}

}  // namespace axe::linear
