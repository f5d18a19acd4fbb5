// Canonical form (paper §3.3): D0/D1 on the ordered shard, C0/C1/C2 on the replica and partial
// multisets, offsets sorted with zeros dropped.
#include <algorithm>

#include "axe/layout/layout.hpp"
#include "axe/core/error.hpp"
#include "layout/internal.hpp"

namespace axe {
namespace {

bool product_is(std::int64_t a, std::int64_t b, std::int64_t want) {
  std::int64_t r;
  return !__builtin_mul_overflow(a, b, &r) && r == want;
}

std::vector<Iter> canonical_shard(const std::vector<Iter>& d) {
  std::vector<Iter> out;
  for (Iter it : d) {
    if (it.extent == 1) continue;                 // D0
    if (it.stride == 0) it.axis = Axis::memory();  // a broadcast digit lands nowhere
    out.push_back(it);
    // D1: (e1:s1, e2:s2) on one axis with s1 == e2*s2 is one digit (e1*e2):s2.
    while (out.size() >= 2) {
      Iter& a = out[out.size() - 2];
      const Iter& b = out.back();
      if (a.axis != b.axis || !product_is(b.extent, b.stride, a.stride)) break;
      a = Iter{checked_mul(a.extent, b.extent, "canonicalize"), b.stride, b.axis};
      out.pop_back();
    }
  }
  return out;
}

bool iter_less(const Iter& a, const Iter& b) {
  if (a.axis != b.axis) return a.axis < b.axis;
  if (a.stride != b.stride) return a.stride < b.stride;
  return a.extent < b.extent;
}

// C0/C1/C2 on a multiset of iters; C1 moves -s(e-1) into `offset`.
std::vector<Iter> canonical_set(const std::vector<Iter>& v,
                                std::vector<std::pair<Axis, std::int64_t>>& offset) {
  std::vector<Iter> out;
  for (Iter it : v) {
    if (it.extent == 1 || it.stride == 0) continue;  // C0
    if (it.stride < 0) {                             // C1
      std::int64_t shift = checked_mul(it.stride, it.extent - 1, "canonicalize");
      bool found = false;
      for (auto& [a, o] : offset) {
        if (a == it.axis) {
          o = checked_add(o, shift, "canonicalize: offset");
          found = true;
        }
      }
      if (!found) offset.emplace_back(it.axis, shift);
      it.stride = -it.stride;
    }
    out.push_back(it);
  }
  // C2: e1:s1 and e2:(e1*s1) on one axis enumerate the same set as (e1*e2):s1.
  for (bool changed = true; changed;) {
    changed = false;
    std::sort(out.begin(), out.end(), iter_less);
    for (std::size_t i = 0; i < out.size() && !changed; ++i) {
      for (std::size_t j = 0; j < out.size() && !changed; ++j) {
        if (i == j || out[i].axis != out[j].axis) continue;
        if (!product_is(out[i].extent, out[i].stride, out[j].stride)) continue;
        out[i].extent = checked_mul(out[i].extent, out[j].extent, "canonicalize");
        out.erase(out.begin() + static_cast<std::ptrdiff_t>(j));
        changed = true;
      }
    }
  }
  std::sort(out.begin(), out.end(), iter_less);
  return out;
}

}  // namespace

AxeLayout canonicalize(const AxeLayout& l) {
  std::vector<std::pair<Axis, std::int64_t>> offset = l.offset();
  std::vector<Iter> d = canonical_shard(l.shard());
  std::vector<Iter> r = canonical_set(l.replica(), offset);
  std::vector<Iter> p = canonical_set(l.partial(), offset);
  std::erase_if(offset, [](const auto& e) { return e.second == 0; });
  std::sort(offset.begin(), offset.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  return AxeLayout(std::move(d), std::move(r), std::move(p), std::move(offset), l.reduce_op());
}

bool equivalent(const AxeLayout& a, const AxeLayout& b) {
  return canonicalize(a) == canonicalize(b);
}

}  // namespace axe
