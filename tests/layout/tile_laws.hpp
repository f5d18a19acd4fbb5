// Set-level laws shared by the tile, tile_of and direct_sum tests.
#pragma once

#include "layout/layout_test_util.hpp"

namespace axe::test {

inline std::int64_t row_major(std::span<const std::int64_t> c, std::span<const std::int64_t> shape) {
  std::int64_t x = 0;
  for (std::size_t k = 0; k < shape.size(); ++k) x = x * shape[k] + c[k];
  return x;
}

inline std::vector<std::int64_t> coord_of_index(std::int64_t x, std::span<const std::int64_t> shape) {
  std::vector<std::int64_t> c(shape.size());
  for (std::size_t k = shape.size(); k-- > 0;) {
    c[k] = x % shape[k];
    x /= shape[k];
  }
  return c;
}

// For every (x, y): image(result, x*inner+y per dim) == { scale(a) + b | a in A(x), b in B(y) }
// where scale multiplies axis `ax` by scale_of(ax).
template <class ScaleOf>
::testing::AssertionResult SumLaw(const AxeLayout& result, const AxeLayout& a,
                                  std::span<const std::int64_t> a_shape, const AxeLayout& b,
                                  std::span<const std::int64_t> b_shape, ScaleOf scale_of) {
  std::vector<std::int64_t> shape;
  for (std::size_t k = 0; k < a_shape.size(); ++k) shape.push_back(a_shape[k] * b_shape[k]);
  std::vector<std::set<Coord>> ib;
  for (std::int64_t xb = 0; xb < b.size(); ++xb) ib.push_back(image(b, xb));
  for (std::int64_t xa = 0; xa < a.size(); ++xa) {
    auto ca = coord_of_index(xa, a_shape);
    auto ia = image(a, xa);
    for (std::int64_t xb = 0; xb < b.size(); ++xb) {
      auto cb = coord_of_index(xb, b_shape);
      std::vector<std::int64_t> c;
      for (std::size_t k = 0; k < shape.size(); ++k) c.push_back(ca[k] * b_shape[k] + cb[k]);
      std::set<Coord> want;
      for (const Coord& u : ia) {
        for (const Coord& v : ib[static_cast<std::size_t>(xb)]) {
          Coord w;
          for (const auto& [ax, val] : u) w[ax] += val * scale_of(ax);
          for (const auto& [ax, val] : v) w[ax] += val;
          std::erase_if(w, [](const auto& e) { return e.second == 0; });
          want.insert(w);
        }
      }
      if (image(result, row_major(c, shape)) != want) {
        return ::testing::AssertionFailure() << "law fails at x=" << xa << " y=" << xb << " for "
                                             << to_string(result);
      }
    }
  }
  return ::testing::AssertionSuccess();
}

}  // namespace axe::test
