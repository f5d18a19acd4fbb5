// The linear layout value: construction, validation, accessors, apply.
#include "axe/linear/linear_layout.hpp"

#include <algorithm>
#include <bit>
#include <cctype>

#include "axe/core/error.hpp"
#include "axe/linear/f2.hpp"
#include "linear/internal.hpp"

namespace axe::linear {
namespace internal {

int log2_exact(std::int64_t size, std::string_view what) {
  if (!is_pow2(size)) {
    fail(std::string(what) + ": " + std::to_string(size) + " is not a power of two");
  }
  return std::countr_zero(static_cast<std::uint64_t>(size));
}

std::int64_t out_value(const LinearLayout& l, std::size_t k, std::uint64_t column) {
  int shift = 0;
  for (std::size_t j = 0; j < k; ++j) shift += l.out_dims()[j].bits;
  if (l.out_dims()[k].bits == 0) return 0;  // shift may be 64
  return static_cast<std::int64_t>((column >> shift) & low_mask(l.out_dims()[k].bits));
}

std::string brief(const LinearLayout& l) {
  std::string s = to_string(l);
  if (s.size() > 200) s = s.substr(0, 200) + "...";
  return s;
}

}  // namespace internal

namespace {

using internal::low_mask;

bool is_identifier(std::string_view s) {
  if (s.empty() || !(std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_')) return false;
  for (char c : s) {
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_')) return false;
  }
  return true;
}

void check_dims(const std::vector<Dim>& dims, const char* kind) {
  int total = 0;
  for (std::size_t k = 0; k < dims.size(); ++k) {
    const Dim& d = dims[k];
    if (!is_identifier(d.name)) {
      fail(std::string("linear layout: ") + kind + " dim name '" + d.name +
           "' is not an identifier (letters, digits, '_')");
    }
    for (std::size_t j = 0; j < k; ++j) {
      if (dims[j].name == d.name) {
        fail(std::string("linear layout: ") + kind + " dim '" + d.name + "' appears twice");
      }
    }
    if (d.bits < 0 || d.bits > 62) {
      fail(std::string("linear layout: ") + kind + " dim '" + d.name + "' has 2^" +
           std::to_string(d.bits) + " elements (at most 2^62)");
    }
    total += d.bits;
  }
  if (total > 64) {
    fail(std::string("linear layout: ") + std::to_string(total) + " " + kind +
         " bits in all, more than 64");
  }
}

int total_bits(const std::vector<Dim>& dims) {
  int t = 0;
  for (const auto& d : dims) t += d.bits;
  return t;
}

std::string basis_text(const LinearLayout::Basis& b) {
  std::string s = "(";
  for (std::size_t k = 0; k < b.size(); ++k) s += (k ? "," : "") + std::to_string(b[k]);
  return s + ")";
}

// Packs bases into columns against `outs`; validates every value.
std::vector<std::uint64_t> pack(const LinearLayout::InBases& bases, const std::vector<Dim>& outs) {
  std::vector<std::uint64_t> cols;
  for (const auto& [name, list] : bases) {
    for (std::size_t i = 0; i < list.size(); ++i) {
      const auto& b = list[i];
      if (b.size() != outs.size()) {
        fail("linear layout: basis " + std::to_string(i) + " of '" + name + "' " + basis_text(b) +
             " has " + std::to_string(b.size()) + " values but there are " +
             std::to_string(outs.size()) + " output dims");
      }
      std::uint64_t col = 0;
      int shift = 0;
      for (std::size_t k = 0; k < outs.size(); ++k) {
        if (b[k] < 0 || b[k] >= outs[k].size()) {
          fail("linear layout: basis " + std::to_string(i) + " of '" + name + "' " +
               basis_text(b) + ": value " + std::to_string(b[k]) + " of output dim '" +
               outs[k].name + "' is outside [0, " + std::to_string(outs[k].size()) + ")");
        }
        if (b[k] != 0) col |= static_cast<std::uint64_t>(b[k]) << shift;
        shift += outs[k].bits;
      }
      cols.push_back(col);
    }
  }
  return cols;
}

std::vector<Dim> in_dims_of(const LinearLayout::InBases& bases) {
  std::vector<Dim> ins;
  for (const auto& [name, list] : bases) {
    if (list.size() > 62) {
      fail("linear layout: input dim '" + name + "' has " + std::to_string(list.size()) +
           " bases (at most 62)");
    }
    ins.push_back({name, static_cast<int>(list.size())});
  }
  return ins;
}

template <class Dims>
int find_dim(const Dims& dims, std::string_view name) {
  for (std::size_t k = 0; k < dims.size(); ++k) {
    if (dims[k].name == name) return static_cast<int>(k);
  }
  return -1;
}

}  // namespace

LinearLayout LinearLayout::from_columns(std::vector<Dim> ins, std::vector<Dim> outs,
                                        std::vector<std::uint64_t> columns,
                                        bool require_surjective) {
  check_dims(ins, "input");
  check_dims(outs, "output");
  int tin = total_bits(ins), tout = total_bits(outs);
  if (static_cast<int>(columns.size()) != tin) {
    fail("linear layout: " + std::to_string(columns.size()) + " columns for " +
         std::to_string(tin) + " input bits");
  }
  for (auto c : columns) {
    if (c & ~low_mask(tout)) {
      fail("linear layout: column " + std::to_string(c) + " has bits beyond the " +
           std::to_string(tout) + " output bits");
    }
  }
  LinearLayout l;
  l.ins_ = std::move(ins);
  l.outs_ = std::move(outs);
  l.cols_ = std::move(columns);
  if (require_surjective && rank(l) != tout) {
    fail("linear layout " + internal::brief(l) + " is not surjective: its rank is " +
         std::to_string(rank(l)) + " but there are " + std::to_string(tout) + " output bits");
  }
  return l;
}

LinearLayout::LinearLayout(InBases bases, OutSizes outs, bool require_surjective) {
  std::vector<Dim> od;
  for (const auto& [name, size] : outs) {
    od.push_back({name, internal::log2_exact(size, "linear layout: size of output dim '" + name + "'")});
  }
  check_dims(od, "output");
  auto ins = in_dims_of(bases);
  auto cols = pack(bases, od);
  *this = from_columns(std::move(ins), std::move(od), std::move(cols), require_surjective);
}

LinearLayout::LinearLayout(InBases bases, std::vector<std::string> out_names,
                           bool require_surjective) {
  OutSizes outs;
  for (std::size_t k = 0; k < out_names.size(); ++k) {
    std::int64_t max = 0;
    for (const auto& [name, list] : bases) {
      for (std::size_t i = 0; i < list.size(); ++i) {
        if (list[i].size() != out_names.size()) {
          fail("linear layout: basis " + std::to_string(i) + " of '" + name + "' " +
               basis_text(list[i]) + " has " + std::to_string(list[i].size()) +
               " values but there are " + std::to_string(out_names.size()) + " output dims");
        }
        if (list[i][k] < 0) {
          fail("linear layout: basis " + std::to_string(i) + " of '" + name + "' " +
               basis_text(list[i]) + " has a negative value");
        }
        max = std::max(max, list[i][k]);
      }
    }
    int bits = std::bit_width(static_cast<std::uint64_t>(max));
    if (bits > 62) fail("linear layout: a value of output dim '" + out_names[k] + "' exceeds 2^62");
    outs.emplace_back(out_names[k], std::int64_t{1} << bits);
  }
  *this = LinearLayout(std::move(bases), std::move(outs), require_surjective);
}

LinearLayout LinearLayout::identity_1d(std::int64_t size, std::string in, std::string out) {
  int bits = internal::log2_exact(size, "identity_1d size");
  std::vector<std::uint64_t> cols;
  for (int i = 0; i < bits; ++i) cols.push_back(std::uint64_t{1} << i);
  return from_columns({{std::move(in), bits}}, {{std::move(out), bits}}, std::move(cols));
}

LinearLayout LinearLayout::zeros_1d(std::int64_t size, std::string in, std::string out,
                                    std::int64_t out_size) {
  int bits = internal::log2_exact(size, "zeros_1d size");
  int obits = internal::log2_exact(out_size, "zeros_1d output size");
  return from_columns({{std::move(in), bits}}, {{std::move(out), obits}},
                      std::vector<std::uint64_t>(static_cast<std::size_t>(bits), 0), false);
}

LinearLayout LinearLayout::strided_1d(std::int64_t size, std::int64_t stride, std::string in,
                                      std::string out) {
  int bits = internal::log2_exact(size, "strided_1d size");
  if (stride < 0) fail("strided_1d: stride " + std::to_string(stride) + " is negative");
  std::vector<Basis> b;
  for (int i = 0; i < bits; ++i) {
    b.push_back({checked_mul(stride, std::int64_t{1} << i, "strided_1d stride * 2^i")});
  }
  return LinearLayout({{std::move(in), std::move(b)}}, std::vector<std::string>{std::move(out)},
                      false);
}

std::vector<std::string> LinearLayout::in_names() const {
  std::vector<std::string> v;
  for (const auto& d : ins_) v.push_back(d.name);
  return v;
}

std::vector<std::string> LinearLayout::out_names() const {
  std::vector<std::string> v;
  for (const auto& d : outs_) v.push_back(d.name);
  return v;
}

bool LinearLayout::has_in_dim(std::string_view name) const { return find_dim(ins_, name) >= 0; }
bool LinearLayout::has_out_dim(std::string_view name) const { return find_dim(outs_, name) >= 0; }

int LinearLayout::in_bits(std::string_view name) const {
  int k = find_dim(ins_, name);
  if (k < 0) fail("linear layout " + internal::brief(*this) + " has no input dim '" + std::string(name) + "'");
  return ins_[static_cast<std::size_t>(k)].bits;
}

int LinearLayout::out_bits(std::string_view name) const {
  int k = find_dim(outs_, name);
  if (k < 0) fail("linear layout " + internal::brief(*this) + " has no output dim '" + std::string(name) + "'");
  return outs_[static_cast<std::size_t>(k)].bits;
}

int LinearLayout::total_in_bits() const { return total_bits(ins_); }
int LinearLayout::total_out_bits() const { return total_bits(outs_); }

int LinearLayout::out_shift(std::string_view name) const {
  int shift = 0;
  for (const auto& d : outs_) {
    if (d.name == name) return shift;
    shift += d.bits;
  }
  fail("linear layout " + internal::brief(*this) + " has no output dim '" + std::string(name) + "'");
}

int LinearLayout::in_shift(std::string_view name) const {
  int shift = 0;
  for (const auto& d : ins_) {
    if (d.name == name) return shift;
    shift += d.bits;
  }
  fail("linear layout " + internal::brief(*this) + " has no input dim '" + std::string(name) + "'");
}

std::uint64_t LinearLayout::column(std::string_view in, int i) const {
  int bits = in_bits(in);
  if (i < 0 || i >= bits) {
    fail("linear layout: input dim '" + std::string(in) + "' has no basis " + std::to_string(i) +
         " (it has " + std::to_string(bits) + ")");
  }
  return cols_[static_cast<std::size_t>(in_shift(in) + i)];
}

LinearLayout::Basis LinearLayout::basis(std::string_view in, int i) const {
  std::uint64_t c = column(in, i);
  Basis b;
  for (std::size_t k = 0; k < outs_.size(); ++k) b.push_back(internal::out_value(*this, k, c));
  return b;
}

std::vector<LinearLayout::Basis> LinearLayout::bases(std::string_view in) const {
  std::vector<Basis> v;
  for (int i = 0; i < in_bits(in); ++i) v.push_back(basis(in, i));
  return v;
}

std::uint64_t LinearLayout::apply_flat(std::uint64_t x) const {
  std::uint64_t y = 0;
  for (std::size_t j = 0; j < cols_.size() && x; ++j, x >>= 1) {
    if (x & 1) y ^= cols_[j];
  }
  return y;
}

std::vector<std::pair<std::string, std::int64_t>> LinearLayout::apply(
    std::span<const std::pair<std::string, std::int64_t>> ins) const {
  std::uint64_t x = 0;
  std::vector<bool> seen(ins_.size(), false);
  for (const auto& [name, v] : ins) {
    int k = find_dim(ins_, name);
    if (k < 0) fail("apply: linear layout " + internal::brief(*this) + " has no input dim '" + name + "'");
    auto uk = static_cast<std::size_t>(k);
    if (seen[uk]) fail("apply: input dim '" + name + "' given twice");
    seen[uk] = true;
    if (v < 0 || v >= ins_[uk].size()) {
      fail("apply: value " + std::to_string(v) + " of input dim '" + name + "' is outside [0, " +
           std::to_string(ins_[uk].size()) + ")");
    }
    if (v != 0) x |= static_cast<std::uint64_t>(v) << in_shift(name);
  }
  for (std::size_t k = 0; k < ins_.size(); ++k) {
    if (!seen[k]) fail("apply: input dim '" + ins_[k].name + "' not given");
  }
  std::uint64_t y = apply_flat(x);
  std::vector<std::pair<std::string, std::int64_t>> out;
  for (std::size_t k = 0; k < outs_.size(); ++k) {
    out.emplace_back(outs_[k].name, internal::out_value(*this, k, y));
  }
  return out;
}

}  // namespace axe::linear

std::size_t std::hash<axe::linear::LinearLayout>::operator()(
    const axe::linear::LinearLayout& l) const noexcept {
  std::size_t h = 0x9e3779b97f4a7c15ull;
  auto mix = [&](std::size_t v) { h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2); };
  for (const auto& d : l.in_dims()) {
    mix(std::hash<std::string>{}(d.name));
    mix(static_cast<std::size_t>(d.bits));
  }
  mix(0xffff);
  for (const auto& d : l.out_dims()) {
    mix(std::hash<std::string>{}(d.name));
    mix(static_cast<std::size_t>(d.bits));
  }
  for (auto c : l.columns()) mix(static_cast<std::size_t>(c));
  return h;
}
