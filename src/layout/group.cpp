// Group by a shape (paper Alg. 1): split D's iters into consecutive blocks, one per logical dim.
#include "axe/layout/layout.hpp"
#include "axe/core/error.hpp"
#include "layout/internal.hpp"

namespace axe {
namespace {

// Walks the iters and the dims together, splitting an iter e:s into (need : s*(e/need), e/need : s)
// when it straddles a block boundary. Extent-1 iters stay in the block being filled.
std::optional<Grouped> group_iters(const AxeLayout& l, const std::vector<Iter>& d,
                                   std::span<const std::int64_t> shape) {
  std::vector<Iter> out;
  std::vector<std::size_t> bounds{0};
  const std::size_t n = shape.size();
  std::size_t k = 0;
  std::int64_t need = n ? shape[0] : 1;
  auto close_done = [&] {
    while (need == 1 && k + 1 < n) {
      bounds.push_back(out.size());
      need = shape[++k];
    }
  };
  for (const Iter& it : d) {
    std::int64_t e = it.extent;
    if (e == 1) {
      out.push_back(it);
      continue;
    }
    for (;;) {
      close_done();
      if (need % e == 0) {
        out.push_back(Iter{e, it.stride, it.axis});
        need /= e;
        break;
      }
      if (e % need != 0) return std::nullopt;
      std::int64_t rest = e / need;
      out.push_back(Iter{need, checked_mul(it.stride, rest, "group"), it.axis});
      need = 1;
      e = rest;
    }
  }
  close_done();
  if (n) bounds.push_back(out.size());
  return Grouped{internal::with_shard(l, std::move(out)), std::move(bounds)};
}

}  // namespace

std::optional<Grouped> group(const AxeLayout& l, std::span<const std::int64_t> shape) {
  internal::check_shape(shape, l.size(), "group", l);
  if (auto g = group_iters(l, l.shard(), shape)) return g;
  // Iters that D1 would merge may split along the shape where the given ones do not
  // (S[(2,3):(3,1)] by (3,2)): retry on the merged shard.
  AxeLayout merged = internal::with_shard(l, canonicalize(internal::with_shard(l, l.shard())).shard());
  if (merged.shard() == l.shard()) return std::nullopt;
  return group_iters(l, merged.shard(), shape);
}

}  // namespace axe
