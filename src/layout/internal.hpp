// Private helpers shared by the Axe layout operators (src/layout/*.cpp).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "axe/layout/layout.hpp"
#include "axe/core/error.hpp"

namespace axe::internal {

// Product of the extents of `iters`, checked against overflow.
std::int64_t extent_product(std::span<const Iter> iters, std::string_view what);

// Row-major digits of x over the extents of `iters` (last iter fastest).
std::vector<std::int64_t> unflatten(std::int64_t x, std::span<const Iter> iters);

// "(8,2):(4@lane,1)" / "8:4@lane": the iter list as it is printed.
std::string iters_to_string(std::span<const Iter> iters);

// Checks every entry of `shape` is > 0 and that its product equals `size`; `what` names the caller.
void check_shape(std::span<const std::int64_t> shape, std::int64_t size, std::string_view what,
                 const AxeLayout& l);

std::string shape_to_string(std::span<const std::int64_t> shape);

// One digit of a per-axis mixed-radix system: value contributes c * stride, c in [0, extent).
struct Digit {
  std::int64_t extent = 1;
  std::int64_t stride = 0;
  int group = 0;           // 0: D, 1: R, 2: P
  std::size_t index = 0;   // position in its group
};

// The digits of D, R and P iters that lie on axis `a` (extent-1 iters skipped).
std::vector<Digit> digits_on(const AxeLayout& l, Axis a);

// Largest number of digit combinations a per-axis enumeration may visit.
inline constexpr std::int64_t kEnumerationLimit = std::int64_t{1} << 20;

// Digits whose sorted |strides| each exceed the largest sum the smaller ones can reach
// ("nested"): the map from digit tuples to sums is then injective and greedy decoding works.
bool nested(std::span<const Digit> digits);

// Two different digit tuples with one sum, when the map is not injective. `element_only`: a
// clash counts only when the non-replica (group != 1) parts differ (validity semantics); the
// replica digits then act as a set. Throws axe::Error when the map is neither nested nor small
// enough to enumerate (`what` names the caller and the axis).
struct Clash {
  std::vector<std::int64_t> first, second;  // digit values, aligned with the input digits
  std::int64_t value = 0;
};
std::optional<Clash> find_clash(std::span<const Digit> digits, bool element_only,
                                std::string_view what);

// Every digit tuple c with sum_i c_i * stride_i == target, at most `limit` of them.
std::vector<std::vector<std::int64_t>> solve(std::span<const Digit> digits, std::int64_t target,
                                             std::size_t limit);

// Layout with the same R/P/O as `l` but D replaced.
AxeLayout with_shard(const AxeLayout& l, std::vector<Iter> d);

// Result of D(x) on one axis: sum of c_k * s_k over D iters on `a` for the given digits.
std::int64_t shard_value(std::span<const Iter> d, std::span<const std::int64_t> digits, Axis a);

// Digits of D, R and P as separate vectors, and helpers to name them in messages.
struct Triple {
  std::vector<std::int64_t> d, r, p;
};
std::int64_t flatten(std::span<const Iter> iters, std::span<const std::int64_t> digits);
// Places per-axis digit values (aligned with `digits`) into a zero Triple of `l`.
Triple scatter(const AxeLayout& l, std::span<const Digit> digits,
               std::span<const std::int64_t> values);
PhysCoord coord_of(const AxeLayout& l, const Triple& t);
std::string describe(const AxeLayout& l, const Triple& t);  // "(index 3, replica 0, term 1)"

// The smallest and largest coordinate `l` reaches on axis `a`.
std::pair<std::int64_t, std::int64_t> coordinate_range(const AxeLayout& l, Axis a);

}  // namespace axe::internal
