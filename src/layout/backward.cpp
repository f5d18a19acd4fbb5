// Backward map and the per-axis injectivity machinery it shares with validity.
//
// Every iter lands on exactly one axis, so the digit space of (D, R, P) is the product of the
// per-axis digit spaces and the coordinate is the tuple of per-axis sums: the whole map is
// injective iff each per-axis map is. Per axis we first try the cheap proof (strides "nested":
// sorted by |stride|, each exceeds the largest sum of the smaller ones, which also makes greedy
// decoding exact), and otherwise enumerate the axis' digit combinations when there are few.
#include <algorithm>
#include <numeric>
#include <string>

#include "axe/layout/layout.hpp"
#include "axe/core/error.hpp"
#include "layout/internal.hpp"

namespace axe {
namespace internal {
namespace {

std::int64_t abs64(std::int64_t v) { return v < 0 ? -v : v; }  // callers bound |v| via spans

}  // namespace

bool nested(std::span<const Digit> digits) {
  std::vector<std::pair<std::int64_t, std::int64_t>> v;  // (|stride|, extent)
  for (const Digit& d : digits) {
    if (d.extent > 1) v.emplace_back(abs64(d.stride), d.extent);
  }
  std::sort(v.begin(), v.end());
  std::int64_t reach = 0;  // the largest sum the smaller digits reach
  for (const auto& [s, e] : v) {
    if (s <= reach) return false;
    reach = checked_add(reach, checked_mul(s, e - 1, "nested strides"), "nested strides");
  }
  return true;
}

std::optional<Clash> find_clash(std::span<const Digit> digits, bool element_only,
                                std::string_view what) {
  if (nested(digits)) return std::nullopt;
  std::int64_t combos = 1;
  for (const Digit& d : digits) {
    if (combos > kEnumerationLimit / d.extent) {
      fail(std::string(what) + ": cannot prove the iters invertible: their strides are not "
                               "nested and they have more than " +
           std::to_string(kEnumerationLimit) + " digit combinations to enumerate");
    }
    combos *= d.extent;
  }
  struct Entry {
    std::int64_t value, key, combo;
  };
  std::vector<Entry> entries;
  entries.reserve(static_cast<std::size_t>(combos));
  std::vector<std::int64_t> c(digits.size(), 0);
  for (std::int64_t combo = 0; combo < combos; ++combo) {
    std::int64_t value = 0, key = 0;
    for (std::size_t i = 0; i < digits.size(); ++i) {
      value += c[i] * digits[i].stride;
      if (!element_only || digits[i].group != 1) key = key * digits[i].extent + c[i];
    }
    entries.push_back({value, key, combo});
    for (std::size_t i = digits.size(); i-- > 0;) {  // row-major increment
      if (++c[i] < digits[i].extent) break;
      c[i] = 0;
    }
  }
  std::sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) {
    return a.value != b.value ? a.value < b.value : a.key < b.key;
  });
  auto decode = [&](std::int64_t combo) {
    std::vector<std::int64_t> out(digits.size());
    for (std::size_t i = digits.size(); i-- > 0;) {
      out[i] = combo % digits[i].extent;
      combo /= digits[i].extent;
    }
    return out;
  };
  for (std::size_t i = 1; i < entries.size(); ++i) {
    if (entries[i].value == entries[i - 1].value && entries[i].key != entries[i - 1].key) {
      return Clash{decode(entries[i - 1].combo), decode(entries[i].combo), entries[i].value};
    }
  }
  return std::nullopt;
}

std::vector<std::vector<std::int64_t>> solve(std::span<const Digit> digits, std::int64_t target,
                                             std::size_t limit) {
  // Flip negative strides (c = e-1-c') so every stride is >= 0, then search digits from the
  // largest stride down, keeping the remainder within what the smaller digits can still reach.
  const std::size_t n = digits.size();
  std::vector<std::int64_t> s(n), e(n);
  std::int64_t t = target;
  for (std::size_t i = 0; i < n; ++i) {
    e[i] = digits[i].extent;
    s[i] = digits[i].stride;
    if (s[i] < 0) {
      // s*(e-1) is bounded by the axis span; a target far outside it has no solution.
      if (__builtin_sub_overflow(t, s[i] * (e[i] - 1), &t)) return {};
      s[i] = -s[i];
    }
  }
  std::vector<std::size_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return s[a] > s[b]; });
  // reach[k]: the largest sum of the digits order[k..n).
  std::vector<std::int64_t> reach(n + 1, 0);
  for (std::size_t k = n; k-- > 0;) reach[k] = reach[k + 1] + s[order[k]] * (e[order[k]] - 1);

  std::vector<std::vector<std::int64_t>> out;
  std::vector<std::int64_t> c(n, 0);
  auto rec = [&](auto&& self, std::size_t k, std::int64_t rem) -> void {
    if (out.size() >= limit) return;
    if (rem < 0 || rem > reach[k]) return;
    if (k == n) {
      std::vector<std::int64_t> sol(n);
      for (std::size_t i = 0; i < n; ++i) {
        sol[i] = digits[i].stride < 0 ? e[i] - 1 - c[i] : c[i];
      }
      out.push_back(std::move(sol));
      return;
    }
    std::size_t i = order[k];
    std::int64_t lo = 0, hi = e[i] - 1;
    if (s[i] > 0) {
      hi = std::min(hi, rem / s[i]);
      std::int64_t need = rem - reach[k + 1];  // this digit must cover at least `need`
      if (need > 0) lo = std::max(lo, (need + s[i] - 1) / s[i]);
    }
    for (std::int64_t v = hi; v >= lo && out.size() < limit; --v) {
      c[i] = v;
      self(self, k + 1, rem - v * s[i]);
    }
  };
  rec(rec, 0, t);
  return out;
}



std::int64_t flatten(std::span<const Iter> iters, std::span<const std::int64_t> digits) {
  std::int64_t x = 0;
  for (std::size_t k = 0; k < iters.size(); ++k) x = x * iters[k].extent + digits[k];
  return x;
}

Triple scatter(const AxeLayout& l, std::span<const internal::Digit> digits,
               std::span<const std::int64_t> values) {
  Triple t{std::vector<std::int64_t>(l.shard().size(), 0),
           std::vector<std::int64_t>(l.replica().size(), 0),
           std::vector<std::int64_t>(l.partial().size(), 0)};
  for (std::size_t i = 0; i < digits.size(); ++i) {
    auto& v = digits[i].group == 0 ? t.d : digits[i].group == 1 ? t.r : t.p;
    v[digits[i].index] = values[i];
  }
  return t;
}

PhysCoord coord_of(const AxeLayout& l, const Triple& t) {
  PhysCoord c = l.forward_first(flatten(l.shard(), t.d));
  for (std::size_t k = 0; k < l.replica().size(); ++k) {
    c.add(l.replica()[k].axis, t.r[k] * l.replica()[k].stride);
  }
  for (std::size_t k = 0; k < l.partial().size(); ++k) {
    c.add(l.partial()[k].axis, t.p[k] * l.partial()[k].stride);
  }
  return c;
}

std::string describe(const AxeLayout& l, const Triple& t) {
  return "(index " + std::to_string(flatten(l.shard(), t.d)) + ", replica " +
         std::to_string(flatten(l.replica(), t.r)) + ", term " +
         std::to_string(flatten(l.partial(), t.p)) + ")";
}

}  // namespace internal

using internal::coord_of;
using internal::describe;
using internal::flatten;
using internal::scatter;
using internal::Triple;

namespace {

// The invertibility proof of the last layout asked on this thread: callers typically invert many
// coordinates of one layout, and the proof may enumerate digit combinations.
struct ProvedInverse {
  std::optional<AxeLayout> layout;
  std::vector<Axis> axes;
  std::vector<std::vector<internal::Digit>> per_axis;
};

const ProvedInverse& prove_invertible(const AxeLayout& l) {
  thread_local ProvedInverse cache;
  if (cache.layout && *cache.layout == l) return cache;
  cache.layout.reset();
  cache.axes = l.axes();
  cache.per_axis.clear();
  for (Axis a : cache.axes) {
    cache.per_axis.push_back(internal::digits_on(l, a));
    std::string what = "backward on " + to_string(l) + ", axis '" + std::string(a.name()) + "'";
    if (auto clash = internal::find_clash(cache.per_axis.back(), false, what)) {
      Triple t1 = scatter(l, cache.per_axis.back(), clash->first);
      Triple t2 = scatter(l, cache.per_axis.back(), clash->second);
      fail("backward: layout " + to_string(l) + " is not invertible: " + describe(l, t1) +
           " and " + describe(l, t2) + " both land on " + to_string(coord_of(l, t1)));
    }
  }
  cache.layout = l;
  return cache;
}

}  // namespace

std::optional<Preimage> AxeLayout::backward(const PhysCoord& c) const {
  // Prove invertibility first, whatever the coordinate: the answer must not depend on luck.
  const ProvedInverse& proof = prove_invertible(*this);
  const std::vector<Axis>& ax = proof.axes;
  const auto& per_axis = proof.per_axis;
  for (const auto& [a, v] : c.entries()) {
    if (v != 0 && std::find(ax.begin(), ax.end(), a) == ax.end()) return std::nullopt;
  }
  Triple t{std::vector<std::int64_t>(d_.size(), 0), std::vector<std::int64_t>(r_.size(), 0),
           std::vector<std::int64_t>(p_.size(), 0)};
  for (std::size_t i = 0; i < ax.size(); ++i) {
    std::int64_t target = c[ax[i]];
    std::int64_t off = offset(ax[i]);
    std::int64_t rel;
    if (__builtin_sub_overflow(target, off, &rel)) return std::nullopt;  // unreachable value
    auto sols = internal::solve(per_axis[i], rel, 1);
    if (sols.empty()) return std::nullopt;
    for (std::size_t k = 0; k < per_axis[i].size(); ++k) {
      const internal::Digit& d = per_axis[i][k];
      auto& v = d.group == 0 ? t.d : d.group == 1 ? t.r : t.p;
      v[d.index] = sols[0][k];
    }
  }
  return Preimage{flatten(d_, t.d), flatten(r_, t.r), flatten(p_, t.p)};
}

}  // namespace axe
