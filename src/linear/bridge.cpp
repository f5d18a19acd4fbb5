// Axe <-> linear layouts, CuTe layouts and swizzles -> linear layouts.
#include "axe/linear/bridge.hpp"

#include <algorithm>
#include <bit>
#include <map>

#include "axe/core/error.hpp"
#include "axe/cute/int_tuple.hpp"
#include "linear/internal.hpp"

namespace axe::linear {
namespace {

using internal::is_pow2;

int log2_of(std::int64_t v) { return std::countr_zero(static_cast<std::uint64_t>(v)); }

std::string iter_text(const Iter& it) {
  std::string s = std::to_string(it.extent) + ":" + std::to_string(it.stride);
  if (!it.axis.is_memory()) s += "@" + std::string(it.axis.name());
  return s;
}

// One iter's place in the hardware: axis, first bit, bit count; and (for D) its first logical bit.
struct Field {
  std::string part;  // "S" or "R"
  Iter iter;
  int hw_low = 0;
  int bits = 0;
  int logical_low = -1;  // -1 for R
};

// The fields of l, or the reason they are not F2-linear.
std::string fields_of(const AxeLayout& l, std::vector<Field>& fields) {
  if (!l.partial().empty()) {
    return "the partial iters P of " + to_string(l) +
           " have no linear layout (their copies hold different terms, not one element)";
  }
  auto check = [&](const Iter& it, const char* part) -> std::string {
    if (it.extent == 1) return "";
    std::string where = "iter " + iter_text(it) + " of " + part;
    if (!is_pow2(it.extent)) {
      return where + ": extent " + std::to_string(it.extent) + " is not a power of two";
    }
    if (it.stride == 0) {
      return where + ": stride 0 puts " + std::to_string(it.extent) +
             (std::string(part) == "S" ? " elements on one location" : " copies on one location");
    }
    if (!is_pow2(it.stride)) {
      return where + ": stride " + std::to_string(it.stride) + " is not a positive power of two";
    }
    return "";
  };
  // D: last iter fastest, so logical bits are assigned from the back.
  int logical = 0;
  for (std::size_t k = l.shard().size(); k-- > 0;) {
    const Iter& it = l.shard()[k];
    if (auto r = check(it, "S"); !r.empty()) return r;
    if (it.extent == 1) continue;
    fields.push_back({"S", it, log2_of(it.stride), log2_of(it.extent), logical});
    logical += log2_of(it.extent);
  }
  for (const Iter& it : l.replica()) {
    if (auto r = check(it, "R"); !r.empty()) return r;
    if (it.extent == 1) continue;
    fields.push_back({"R", it, log2_of(it.stride), log2_of(it.extent), -1});
  }
  // Disjoint bit fields per axis (an overlap carries: the sum is not an XOR).
  for (std::size_t i = 0; i < fields.size(); ++i) {
    const Field& a = fields[i];
    if (a.hw_low + a.bits > 62) {
      return "iter " + iter_text(a.iter) + " of " + a.part + " reaches bit " +
             std::to_string(a.hw_low + a.bits - 1) + " of axis " +
             std::string(a.iter.axis.name()) + " (at most 61)";
    }
    for (std::size_t j = 0; j < i; ++j) {
      const Field& b = fields[j];
      if (!(a.iter.axis == b.iter.axis)) continue;
      int lo = std::max(a.hw_low, b.hw_low), hi = std::min(a.hw_low + a.bits, b.hw_low + b.bits);
      if (lo < hi) {
        return "iters " + iter_text(b.iter) + " of " + b.part + " and " + iter_text(a.iter) +
               " of " + a.part + " overlap on axis " + std::string(a.iter.axis.name()) +
               " (bit " + std::to_string(lo) + "): their sum carries, it is not an XOR";
      }
    }
  }
  return "";
}

// m first, then the other axes in order of first appearance.
std::vector<Axis> ordered_axes(const AxeLayout& l) {
  std::vector<Axis> axes;
  for (const Axis& a : l.axes()) {
    if (a.is_memory()) axes.insert(axes.begin(), a);
  }
  for (const Axis& a : l.axes()) {
    if (!a.is_memory()) axes.push_back(a);
  }
  return axes;
}

std::string shape_text(std::span<const std::int64_t> shape) {
  std::string s = "(";
  for (std::size_t k = 0; k < shape.size(); ++k) s += (k ? "," : "") + std::to_string(shape[k]);
  return s + ")";
}

}  // namespace

std::vector<Dim> logical_dims(std::span<const std::int64_t> shape) {
  std::vector<Dim> dims;
  for (std::size_t k = shape.size(); k-- > 0;) {
    if (!is_pow2(shape[k])) {
      fail("logical extent " + std::to_string(shape[k]) + " of dim " + std::to_string(k) +
           " in " + shape_text(shape) + " is not a power of two");
    }
    dims.push_back({"dim" + std::to_string(k), log2_of(shape[k])});
  }
  return dims;
}

std::vector<std::int64_t> logical_shape(const LinearLayout& l) {
  std::vector<std::int64_t> shape;
  for (std::size_t k = l.out_dims().size(); k-- > 0;) shape.push_back(l.out_dims()[k].size());
  return shape;
}

std::string linear_refusal(const AxeLayout& l, std::span<const std::int64_t> shape) {
  if (shape.empty()) return "the logical shape is empty";
  std::int64_t n = 1;
  for (std::size_t k = 0; k < shape.size(); ++k) {
    if (!is_pow2(shape[k])) {
      return "logical extent " + std::to_string(shape[k]) + " of dim " + std::to_string(k) +
             " in " + shape_text(shape) + " is not a power of two";
    }
    if (__builtin_mul_overflow(n, shape[k], &n)) return "the shape " + shape_text(shape) + " overflows 64 bits";
  }
  if (n != l.size()) {
    return "the shape " + shape_text(shape) + " has " + std::to_string(n) + " elements but " +
           to_string(l) + " has " + std::to_string(l.size());
  }
  std::vector<Field> fields;
  if (auto r = fields_of(l, fields); !r.empty()) return r;
  int total = 0;
  for (const Axis& a : ordered_axes(l)) {
    int top = 0;
    for (const Field& f : fields) {
      if (f.iter.axis == a) top = std::max(top, f.hw_low + f.bits);
    }
    total += top;
  }
  if (total > 64) {
    return to_string(l) + " needs " + std::to_string(total) + " hardware bits (at most 64)";
  }
  return "";
}

AxeLinear to_linear(const AxeLayout& l, std::span<const std::int64_t> shape) {
  if (auto r = linear_refusal(l, shape); !r.empty()) fail("no linear layout: " + r);
  std::vector<Field> fields;
  fields_of(l, fields);
  std::vector<Dim> ins;
  std::vector<std::uint64_t> cols;
  for (const Axis& a : ordered_axes(l)) {
    int top = 0;
    for (const Field& f : fields) {
      if (f.iter.axis == a) top = std::max(top, f.hw_low + f.bits);
    }
    std::vector<std::uint64_t> c(static_cast<std::size_t>(top), 0);
    for (const Field& f : fields) {
      if (!(f.iter.axis == a) || f.logical_low < 0) continue;
      for (int j = 0; j < f.bits; ++j) {
        c[static_cast<std::size_t>(f.hw_low + j)] = std::uint64_t{1} << (f.logical_low + j);
      }
    }
    ins.push_back({std::string(a.name()), top});
    cols.insert(cols.end(), c.begin(), c.end());
  }
  AxeLinear out{LinearLayout::from_columns(std::move(ins), logical_dims(shape), std::move(cols)),
                {}};
  for (const auto& [axis, v] : l.offset()) out.offset.emplace_back(std::string(axis.name()), v);
  return out;
}

AxeOnShape from_linear(const LinearLayout& l,
                       std::span<const std::pair<std::string, std::int64_t>> offset) {
  int tout = l.total_out_bits();
  // logical bit -> (axis index, hardware bit)
  std::vector<std::pair<int, int>> owner(static_cast<std::size_t>(tout), {-1, -1});
  std::vector<Axis> axes;
  std::vector<Iter> r;
  for (std::size_t k = 0; k < l.in_dims().size(); ++k) {
    const Dim& d = l.in_dims()[k];
    Axis axis;
    try {
      axis = Axis(d.name);
    } catch (const Error&) {
      fail("no Axe layout for " + internal::brief(l) + ": input dim '" + d.name +
           "' is not an axis name");
    }
    axes.push_back(axis);
    int run_low = -1;  // a run of zero columns becomes one R iter
    auto flush = [&](int end) {
      if (run_low >= 0) {
        r.push_back({std::int64_t{1} << (end - run_low), std::int64_t{1} << run_low, axis});
        run_low = -1;
      }
    };
    for (int b = 0; b < d.bits; ++b) {
      std::uint64_t c = l.column(d.name, b);
      if (c == 0) {
        if (run_low < 0) run_low = b;
        continue;
      }
      flush(b);
      if (std::popcount(c) != 1) {
        auto basis = l.basis(d.name, b);
        std::string bt = "(";
        for (std::size_t j = 0; j < basis.size(); ++j) bt += (j ? "," : "") + std::to_string(basis[j]);
        fail("no Axe layout for " + internal::brief(l) + ": bit " + std::to_string(b) + " of '" +
             d.name + "' maps to " + bt + "), a combination of " + std::to_string(std::popcount(c)) +
             " logical bits (an XOR swizzle)");
      }
      int p = std::countr_zero(c);
      auto& o = owner[static_cast<std::size_t>(p)];
      if (o.first >= 0) {
        fail("no Axe layout for " + internal::brief(l) + ": bit " + std::to_string(o.second) +
             " of '" + l.in_dims()[static_cast<std::size_t>(o.first)].name + "' and bit " +
             std::to_string(b) + " of '" + d.name + "' hold the same logical bit " +
             std::to_string(p));
      }
      o = {static_cast<int>(k), b};
    }
    flush(d.bits);
  }
  // D over the flat logical index, most significant bit first; runs of consecutive logical bits
  // on consecutive hardware bits of one axis merge into one iter.
  std::vector<Iter> d;
  for (int p = tout - 1; p >= 0;) {
    auto [a, h] = owner[static_cast<std::size_t>(p)];
    if (a < 0) {
      fail("no Axe layout for " + internal::brief(l) + ": logical bit " + std::to_string(p) +
           " is held by no hardware bit (the layout is not surjective)");
    }
    int len = 1;
    while (p - len >= 0 && owner[static_cast<std::size_t>(p - len)].first == a &&
           owner[static_cast<std::size_t>(p - len)].second == h - len) {
      ++len;
    }
    d.push_back({std::int64_t{1} << len, std::int64_t{1} << (h - len + 1),
                 axes[static_cast<std::size_t>(a)]});
    p -= len;
  }
  std::vector<std::pair<Axis, std::int64_t>> o;
  for (const auto& [name, v] : offset) o.emplace_back(Axis(name), v);
  return {AxeLayout(std::move(d), std::move(r), {}, std::move(o)), logical_shape(l)};
}

LinearLayout from_cute(const cute::Layout& l, std::string in, std::string out) {
  auto shapes = cute::flatten_leaves(l.shape());
  auto strides = cute::flatten_leaves(l.stride());
  std::vector<std::uint64_t> cols;
  std::uint64_t used = 0;
  int top = 0;
  for (std::size_t i = 0; i < shapes.size(); ++i) {
    std::int64_t e = shapes[i].value(), d = strides[i].value();
    std::string mode = "mode " + std::to_string(i) + " " + std::to_string(e) + ":" +
                       std::to_string(d) + " of " + cute::to_string(l);
    if (e == 1) continue;
    if (!is_pow2(e)) fail("no linear layout: " + mode + ": extent " + std::to_string(e) + " is not a power of two");
    if (d < 0) fail("no linear layout: " + mode + ": stride " + std::to_string(d) + " is negative");
    int eb = log2_of(e);
    if (d == 0) {
      cols.insert(cols.end(), static_cast<std::size_t>(eb), 0);
      continue;
    }
    if (!is_pow2(d)) fail("no linear layout: " + mode + ": stride " + std::to_string(d) + " is not a power of two");
    int low = log2_of(d);
    if (low + eb > 64) fail("no linear layout: " + mode + " reaches offset bit " + std::to_string(low + eb - 1) + " (at most 63)");
    std::uint64_t field = internal::low_mask(eb) << low;
    if (used & field) {
      fail("no linear layout: " + mode + " overlaps another mode's offset bits (the sum carries, "
           "it is not an XOR)");
    }
    used |= field;
    top = std::max(top, low + eb);
    for (int k = 0; k < eb; ++k) cols.push_back(std::uint64_t{1} << (low + k));
  }
  int tin = static_cast<int>(cols.size());
  if (tin > 62) fail("no linear layout: " + cute::to_string(l) + " has 2^" + std::to_string(tin) + " elements");
  if (top > 62) fail("no linear layout: the offsets of " + cute::to_string(l) + " reach 2^" + std::to_string(top));
  return LinearLayout::from_columns({{std::move(in), tin}}, {{std::move(out), top}},
                                    std::move(cols), false);
}

LinearLayout from_swizzle(const cute::Swizzle& s, int bits, std::string in, std::string out) {
  int need = s.bits + s.base + std::abs(s.shift);
  if (bits < need || bits > 62) {
    fail("from_swizzle: " + cute::to_string(s) + " needs " + std::to_string(need) +
         " offset bits, got " + std::to_string(bits) + " (at most 62)");
  }
  std::vector<std::uint64_t> cols;
  for (int i = 0; i < bits; ++i) {
    cols.push_back(static_cast<std::uint64_t>(s(std::int64_t{1} << i)));
  }
  return LinearLayout::from_columns({{std::move(in), bits}}, {{std::move(out), bits}},
                                    std::move(cols));
}

LinearLayout from_cute(const cute::ComposedLayout& l, std::string in, std::string out) {
  if (l.offset != 0) {
    fail("no linear layout: the offset " + std::to_string(l.offset) + " of " + cute::to_string(l) +
         " makes it affine, not linear");
  }
  auto inner = from_cute(l.layout, in, "offset");
  const cute::Swizzle& s = l.swizzle;
  int bits = std::max(inner.total_out_bits(), s.bits + s.base + std::abs(s.shift));
  if (bits > 62) fail("no linear layout: " + cute::to_string(l) + " needs " + std::to_string(bits) + " offset bits");
  // Widen the layout's output to the swizzle's offset bits, then compose.
  auto wide = LinearLayout::from_columns(inner.in_dims(), {{"offset", bits}}, inner.columns(), false);
  auto sw = from_swizzle(s, bits, "offset", std::move(out));
  return compose(wide, sw);
}

}  // namespace axe::linear
