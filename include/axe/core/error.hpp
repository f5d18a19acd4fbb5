// Errors and checked arithmetic shared by every part of axe.
//
// Fallibility has three tiers (STYLE.md §6): std::optional where a result may mathematically not
// exist, axe::Error for user errors (the message names the input and the broken condition with
// its values), assert for internal invariants.
#pragma once

#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <string_view>

namespace axe {

// A user error: bad input, with a message that names the input and what is wrong.
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Malformed text. `position` is the 0-based character offset where parsing stopped.
class ParseError : public Error {
 public:
  ParseError(std::string_view text, std::size_t position, std::string_view expected);
  std::size_t position() const { return position_; }

 private:
  std::size_t position_;
};

[[noreturn]] void fail(const std::string& message);

// a*b, a+b, a-b on int64, throwing axe::Error naming `what` on overflow.
std::int64_t checked_mul(std::int64_t a, std::int64_t b, std::string_view what);
std::int64_t checked_add(std::int64_t a, std::int64_t b, std::string_view what);
std::int64_t checked_sub(std::int64_t a, std::int64_t b, std::string_view what);

}  // namespace axe
