#include "axe/core/error.hpp"

#include <string>

namespace axe {
namespace {

std::string parse_message(std::string_view text, std::size_t position, std::string_view expected) {
  std::string msg = "parse error at position " + std::to_string(position) + ": expected " +
                    std::string(expected) + "\n  " + std::string(text) + "\n  " +
                    std::string(position, ' ') + "^";
  return msg;
}

}  // namespace

ParseError::ParseError(std::string_view text, std::size_t position, std::string_view expected)
    : Error(parse_message(text, position, expected)), position_(position) {}

void fail(const std::string& message) { throw Error(message); }

std::int64_t checked_mul(std::int64_t a, std::int64_t b, std::string_view what) {
  std::int64_t r;
  if (__builtin_mul_overflow(a, b, &r)) {
    fail(std::string(what) + ": 64-bit overflow in " + std::to_string(a) + " * " +
         std::to_string(b));
  }
  return r;
}

std::int64_t checked_add(std::int64_t a, std::int64_t b, std::string_view what) {
  std::int64_t r;
  if (__builtin_add_overflow(a, b, &r)) {
    fail(std::string(what) + ": 64-bit overflow in " + std::to_string(a) + " + " +
         std::to_string(b));
  }
  return r;
}

std::int64_t checked_sub(std::int64_t a, std::int64_t b, std::string_view what) {
  std::int64_t r;
  if (__builtin_sub_overflow(a, b, &r)) {
    fail(std::string(what) + ": 64-bit overflow in " + std::to_string(a) + " - " +
         std::to_string(b));
  }
  return r;
}

}  // namespace axe
