// Numeric command-line arguments of the examples and benchmarks: a bad value is an axe::Error
// naming the argument (main catches it, prints one line and exits non-zero), never an uncaught
// std::stoi / std::stoll exception or a silent std::atoi 0.
// Example: int_arg("--iters", "abc", 1, 1000000) throws
//   --iters 'abc' is not an integer in 1..1000000
#pragma once

#include <charconv>
#include <cstdint>
#include <string>
#include <string_view>

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

}  // namespace axe::examples
