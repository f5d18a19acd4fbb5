// libFuzzer target for the linear layer's parsers and bridges: parse_linear_layout, and an Axe
// layout (with an optional logical shape) through linear_refusal / to_linear / from_linear.
//
// Input: either a linear layout text ("{lane: [(1,0)]} -> [d1:2, d0:1]"), or an Axe layout on the
// first line and an optional shape ("8,16") on the second. The laws:
//   - every call returns or throws axe::Error; nothing else escapes, nothing crashes;
//   - parse_linear_layout(to_string(l)) == l and prints the same text;
//   - rank + free bits == input bits; a surjective layout's pseudo-inverse is a right inverse;
//   - linear_refusal is empty exactly when to_linear succeeds; then every placement p of x (for
//     the first 256 x) satisfies layout(p - offset) == x, and from_linear of the duplicate-free
//     layout gives an Axe layout (or axe::Error).
#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "axe/core/error.hpp"
#include "axe/layout/layout.hpp"
#include "axe/linear/bridge.hpp"
#include "axe/linear/linear_layout.hpp"
#include "fuzz_util.hpp"

namespace {

using axe::fuzz::broken;
namespace lin = axe::linear;

void check_linear_text(std::string_view input) {
  std::optional<lin::LinearLayout> l;
  try {
    l.emplace(lin::parse_linear_layout(input));
  } catch (const axe::Error&) {
    return;
  }
  std::string first = lin::to_string(*l);
  try {
    auto again = lin::parse_linear_layout(first);
    if (!(again == *l) || lin::to_string(again) != first) {
      broken("parse_linear_layout(to_string(l)) == l", input, first + " vs " + lin::to_string(again));
    }
  } catch (const axe::Error& e) {
    broken("parse_linear_layout(to_string(l)) parses", input, first + ": " + e.what());
  }
  int free = 0;
  for (const auto& [n, m] : lin::free_variable_masks(*l)) free += std::popcount(m);
  if (lin::rank(*l) + free != l->total_in_bits()) broken("rank + free bits == input bits", input, first);
  if (lin::is_surjective(*l)) {
    auto p = lin::pseudo_invert(*l);
    auto c = lin::compose(p, *l);
    for (int i = 0; i < l->total_out_bits(); ++i) {
      if (c.columns()[static_cast<std::size_t>(i)] != std::uint64_t{1} << i) {
        broken("compose(pseudo_invert(l), l) == identity", input, first);
      }
    }
  }
}

std::vector<std::int64_t> parse_shape(std::string_view text) {
  std::vector<std::int64_t> shape;
  for (auto item : axe::fuzz::split(text, ',')) {
    if (item.empty() || item.size() > 12) return {};
    std::int64_t v = 0;
    for (char c : item) {
      if (c < '0' || c > '9') return {};
      v = v * 10 + (c - '0');
    }
    shape.push_back(v);
  }
  return shape;
}

void check_axe(std::string_view input) {
  auto nl = input.find('\n');
  std::string_view text = input.substr(0, nl);
  std::optional<axe::AxeLayout> l;
  try {
    l.emplace(axe::parse_axe_layout(text));
  } catch (const axe::Error&) {
    return;
  }
  std::vector<std::int64_t> shape{l->size()};
  if (nl != std::string_view::npos) {
    shape = parse_shape(input.substr(nl + 1));
    if (shape.empty()) return;
  }
  std::string why;
  try {
    why = lin::linear_refusal(*l, shape);
  } catch (const axe::Error& e) {
    broken("linear_refusal does not throw", input, e.what());
  }
  std::optional<lin::AxeLinear> al;
  try {
    al.emplace(lin::to_linear(*l, shape));
  } catch (const axe::Error& e) {
    if (why.empty()) broken("to_linear succeeds when linear_refusal is empty", input, e.what());
    return;
  }
  if (!why.empty()) broken("to_linear fails when linear_refusal says why", input, why);
  const auto& ll = al->layout;
  if (l->replicas() <= 64) {
    for (std::int64_t x = 0; x < std::min<std::int64_t>(l->size(), 256); ++x) {
      for (const auto& p : l->forward(x)) {
        std::uint64_t flat = 0;
        for (const auto& d : ll.in_dims()) {
          std::int64_t v = p.coord[axe::Axis(d.name)];
          for (const auto& [a, o] : al->offset) {
            if (a == d.name) v -= o;
          }
          if (v < 0 || v >= d.size()) broken("placements lie within the axes' bits", input, d.name);
          if (v) flat |= static_cast<std::uint64_t>(v) << ll.in_shift(d.name);
        }
        if (ll.apply_flat(flat) != static_cast<std::uint64_t>(x)) {
          broken("layout(p - offset) == x", input, lin::to_string(ll) + " at x=" + std::to_string(x));
        }
      }
    }
  }
  try {
    (void)lin::from_linear(lin::remove_duplicates(ll), al->offset);
  } catch (const axe::Error&) {
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view input(reinterpret_cast<const char*>(data), size);
  check_linear_text(input);
  check_axe(input);
  return 0;
}
