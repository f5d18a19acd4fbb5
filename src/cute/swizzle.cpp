#include "axe/cute/swizzle.hpp"

#include <algorithm>
#include <cstdlib>
#include <string>

#include "axe/core/error.hpp"

namespace axe::cute {

Swizzle::Swizzle(int b, int m, int s) : bits(b), base(m), shift(s) {
  auto params = [&] {
    return "Swizzle<" + std::to_string(b) + "," + std::to_string(m) + "," + std::to_string(s) + ">";
  };
  if (b < 0) fail(params() + ": BBits must be non-negative");
  if (m < 0) fail(params() + ": MBase must be non-negative");
  if (std::abs(s) < b) fail(params() + ": abs(SShift) must be at least BBits");
  if (b + m + std::abs(s) > 62) fail(params() + ": BBits + MBase + abs(SShift) exceeds 62 bits");
}

std::int64_t Swizzle::yyy_mask() const {
  return ((std::int64_t{1} << bits) - 1) << (base + std::max(0, shift));
}

std::int64_t Swizzle::zzz_mask() const {
  return ((std::int64_t{1} << bits) - 1) << (base - std::min(0, shift));
}

std::int64_t Swizzle::size() const {
  return std::int64_t{1} << (bits + base + std::abs(shift));
}

std::int64_t Swizzle::operator()(std::int64_t x) const {
  if (x < 0) fail(to_string(*this) + ": negative offset " + std::to_string(x));
  std::int64_t y = x & yyy_mask();
  // A negative shift moves the YYY bits left; both fit since the masks fit in 62 bits.
  std::int64_t moved = shift >= 0 ? (y >> shift) : (y << -shift);
  return x ^ moved;
}

std::int64_t ComposedLayout::operator()(std::int64_t i) const {
  return swizzle(checked_add(offset, layout(i), "ComposedLayout"));
}

std::int64_t ComposedLayout::operator()(const IntTuple& coord) const {
  return swizzle(checked_add(offset, layout(coord), "ComposedLayout"));
}

std::int64_t size(const ComposedLayout& c) {
  return size(c.layout);
}

}  // namespace axe::cute
