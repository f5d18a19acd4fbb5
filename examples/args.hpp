// Command-line arguments of the examples and benchmarks, and the median they report. A bad
// numeric value is an axe::Error naming the argument (main catches it, prints one line and exits
// non-zero), never an uncaught std::stoi / std::stoll exception or a silent std::atoi 0.
// Example: int_arg("--iters", "abc", 1, 1000000) throws
//   --iters 'abc' is not an integer in 1..1000000
// list_arg("16M,,256M") -> {"16M", "256M"} (empty items dropped).
#pragma once

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "axe/core/error.hpp"

namespace axe::examples {

inline std::int64_t int_arg(std::string_view name, std::string_view text, std::int64_t min, std::int64_t max) {
  std::int64_t x = 0;
  const char* end = text.data() + text.size();
  const auto [p, ec] = std::from_chars(text.data(), end, x);
  if (text.empty() || ec != std::errc() || p != end || x < min || x > max)
    fail(std::string(name) + " '" + std::string(text) + "' is not an integer in " + std::to_string(min) + ".." +
         std::to_string(max));
  return x;
}

inline std::vector<std::string> list_arg(std::string_view text) {
  std::vector<std::string> out;
  std::size_t pos = 0;
  while (pos <= text.size()) {
    std::size_t e = text.find(',', pos);
    if (e == std::string_view::npos) e = text.size();
    if (e > pos) out.emplace_back(text.substr(pos, e - pos));
    pos = e + 1;
  }
  return out;
}

// The upper median (0 for none).
inline double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

}  // namespace axe::examples
