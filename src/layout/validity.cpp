// Validity of a storage layout: distinct (element, partial term) pairs on distinct slots, and
// coordinates inside the given extents.
//
// As for backward (see backward.cpp) the question splits per axis: two placements collide iff
// they agree on every axis, so some (element, term) clash exists iff one exists on a single axis
// with the other axes' digits held equal. Replica digits form a set (copies of one element may
// share a slot), so stride-0 replica iters are dropped and replica digits are not part of the
// clash key.
#include <algorithm>
#include <string>

#include "axe/layout/layout.hpp"
#include "axe/core/error.hpp"
#include "layout/internal.hpp"

namespace axe {

std::string check_valid(const AxeLayout& l, std::span<const std::pair<Axis, std::int64_t>> extents) {
  for (const auto& [a, n] : extents) {
    if (n <= 0) {
      fail("check_valid: extent " + std::to_string(n) + " of axis '" + std::string(a.name()) +
           "' must be > 0");
    }
    auto [lo, hi] = internal::coordinate_range(l, a);
    if (lo < 0 || hi >= n) {
      return "layout " + to_string(l) + " reaches coordinates [" + std::to_string(lo) + ", " +
             std::to_string(hi) + "] on axis '" + std::string(a.name()) + "', outside [0, " +
             std::to_string(n) + ")";
    }
  }
  for (Axis a : l.axes()) {
    std::vector<internal::Digit> digits = internal::digits_on(l, a);
    std::erase_if(digits, [](const internal::Digit& d) { return d.group == 1 && d.stride == 0; });
    std::optional<internal::Clash> clash;
    try {
      clash = internal::find_clash(digits, true,
                                   "check_valid on axis '" + std::string(a.name()) + "'");
    } catch (const Error& e) {
      return "layout " + to_string(l) + ": " + e.what();
    }
    if (clash) {
      internal::Triple t1 = internal::scatter(l, digits, clash->first);
      internal::Triple t2 = internal::scatter(l, digits, clash->second);
      return "layout " + to_string(l) + " is not a valid storage layout: " +
             internal::describe(l, t1) + " and " + internal::describe(l, t2) +
             " both land on " + to_string(internal::coord_of(l, t1));
    }
  }
  return "";
}

}  // namespace axe
