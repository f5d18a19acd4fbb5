// The segments of a nested bound: where a dim's padded index jumps.
#include <algorithm>

#include "dist/internal.hpp"

namespace axe::internal {

std::vector<Segment> nest_segments(std::int64_t n, std::int64_t padded, const std::vector<std::int64_t>& parts) {
  std::vector<Segment> out;
  auto rec = [&](auto&& self, std::int64_t size, std::int64_t P, std::size_t level, std::int64_t lbase,
                 std::int64_t pbase) -> void {
    if (size <= 0) return;
    if (level == parts.size()) {
      const std::int64_t shift = pbase - lbase;
      if (!out.empty() && out.back().lo + out.back().len == lbase && out.back().shift == shift)
        out.back().len += size;
      else
        out.push_back({lbase, size, shift});
      return;
    }
    const std::int64_t p = parts[level], c = (size + p - 1) / p, block = P / p;
    for (std::int64_t q = 0; q < p; ++q) {
      const std::int64_t sz = std::clamp<std::int64_t>(size - q * c, 0, c);
      if (sz == 0) break;
      self(self, sz, block, level + 1, lbase + q * c, pbase + q * block);
    }
  };
  rec(rec, n, padded, 0, 0, 0);
  return out;
}

std::vector<Segment> dim_segments(const DistLayout& l, std::size_t k) {
  if (!l.nested() || l.nest()[k].empty()) return {{0, l.shape()[k], 0}};
  return nest_segments(l.shape()[k], l.padded_shape()[k], l.nest()[k]);
}

}  // namespace axe::internal
