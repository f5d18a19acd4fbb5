// Slice by a region: the layout of a sub-box, when it is again an Axe layout.
//
// Per dim, D's block (after grouping by the shape) is a mixed-radix number. Take the longest
// suffix of the block whose extent product P divides both begin and length: those iters are kept
// whole. What remains is a run of n' = length/P consecutive values b' = begin/P, b'+1, ... of the
// next iter up (extent E, stride s), starting at digit r = b' mod E:
//   no-wrap:            r + n' <= E: one iter n':s.
//   symmetric one-wrap: r + n'/2 == E: the run is two halves of h = n'/2, the second after the
//                       carry into the iters above. Two iters (2 : Δ - r·s, h : s), where Δ is the
//                       change of the upper iters' value across that carry; Δ - r·s must lie on a
//                       single axis.
// Anything else (a run that wraps unevenly or more than once) is not an Axe layout: nullopt.
#include <string>

#include "axe/layout/layout.hpp"
#include "axe/core/error.hpp"
#include "layout/internal.hpp"

namespace axe {

std::optional<AxeLayout> slice(const AxeLayout& l, std::span<const std::int64_t> shape,
                               std::span<const Range> region) {
  internal::check_shape(shape, l.size(), "slice", l);
  if (region.size() != shape.size()) {
    fail("slice: region has " + std::to_string(region.size()) + " ranges but shape " +
         internal::shape_to_string(shape) + " has rank " + std::to_string(shape.size()));
  }
  std::vector<std::int64_t> begin;
  for (std::size_t k = 0; k < shape.size(); ++k) {
    if (region[k].begin < 0 || region[k].begin >= region[k].end || region[k].end > shape[k]) {
      fail("slice: range [" + std::to_string(region[k].begin) + ", " +
           std::to_string(region[k].end) + ") of dim " + std::to_string(k) +
           " is empty or outside [0, " + std::to_string(shape[k]) + ") of shape " +
           internal::shape_to_string(shape));
    }
    begin.push_back(region[k].begin);
  }
  auto g = group(l, shape);
  if (!g) return std::nullopt;
  const auto& gd = g->layout.shard();
  std::vector<Iter> d;
  for (std::size_t k = 0; k < shape.size(); ++k) {
    std::vector<Iter> block;
    for (std::size_t i = g->boundaries[k]; i < g->boundaries[k + 1]; ++i) {
      if (gd[i].extent > 1) block.push_back(gd[i]);
    }
    const std::int64_t b = region[k].begin, n = region[k].end - region[k].begin;
    const std::size_t m = block.size();
    // Longest suffix [j, m) whose product divides begin and length.
    std::size_t j = m;
    std::int64_t pj = 1;
    while (j > 0) {
      std::int64_t next = pj * block[j - 1].extent;  // <= shape[k]
      if (b % next != 0 || n % next != 0) break;
      pj = next;
      --j;
    }
    const std::int64_t bq = b / pj, nq = n / pj;
    std::vector<Iter> head;
    if (nq > 1) {
      // j > 0 here: with j == 0 the suffix is the whole dim and n == shape[k].
      const Iter& it = block[j - 1];
      const std::int64_t e = it.extent, r = bq % e;
      if (r + nq <= e) {
        head.push_back(Iter{nq, it.stride, it.axis});
      } else if (nq % 2 == 0 && r + nq / 2 == e) {
        // Carry from upper value q to q+1 over block[0, j-1).
        std::span<const Iter> upper(block.data(), j - 1);
        const std::int64_t q = bq / e;
        auto dq = internal::unflatten(q, upper), dq1 = internal::unflatten(q + 1, upper);
        PhysCoord delta;
        delta.add(it.axis, checked_mul(-r, it.stride, "slice"));
        for (std::size_t u = 0; u < upper.size(); ++u) {
          delta.add(upper[u].axis, checked_mul(dq1[u] - dq[u], upper[u].stride, "slice"));
        }
        std::optional<Iter> wrap;
        int nonzero = 0;
        for (const auto& [a, v] : delta.entries()) {
          if (v != 0) {
            ++nonzero;
            wrap = Iter{2, v, a};
          }
        }
        if (nonzero > 1) return std::nullopt;
        head.push_back(wrap.value_or(Iter{2, 0, Axis::memory()}));
        head.push_back(Iter{nq / 2, it.stride, it.axis});
      } else {
        return std::nullopt;
      }
    }
    d.insert(d.end(), head.begin(), head.end());
    d.insert(d.end(), block.begin() + static_cast<std::ptrdiff_t>(j), block.end());
  }
  // The region's corner moves into the offset.
  std::int64_t x0 = 0;
  for (std::size_t k = 0; k < shape.size(); ++k) x0 = x0 * shape[k] + begin[k];
  PhysCoord corner = l.forward_first(x0);
  std::vector<std::pair<Axis, std::int64_t>> offset = l.offset();
  for (const auto& [a, v] : corner.entries()) {
    bool found = false;
    for (auto& [oa, ov] : offset) {
      if (oa == a) {
        ov = v;
        found = true;
      }
    }
    if (!found && v != 0) offset.emplace_back(a, v);
  }
  return AxeLayout(std::move(d), l.replica(), l.partial(), std::move(offset), l.reduce_op());
}

}  // namespace axe
