// CuTe swizzles Swizzle<B,M,S> and swizzled (composed) layouts.
//
// Swizzle<B,M,S> XORs the B bits at position M+max(0,S) (the "YYY" mask) onto the B bits at
// position M-min(0,S) (the "ZZZ" mask): f(x) = x ^ ((x & yyy_mask) >> S), a negative S shifting
// left. Example: Sw<3,4,3>: yyy_mask 0b1110000000 (896), zzz_mask 0b1110000 (112);
// f(128) == 128 ^ 16 == 144.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <string>
#include <string_view>

#include "axe/cute/layout.hpp"

namespace axe::cute {

struct Swizzle {
  int bits = 0;
  int base = 0;
  int shift = 0;

  // The identity Sw<0,0,0>.
  Swizzle() = default;
  // @pre bits >= 0, base >= 0, |shift| >= bits (C++ CuTe's static_asserts), and the masks fit in
  // 62 bits (bits + base + |shift| <= 62). Throws axe::Error naming the violated condition.
  Swizzle(int bits, int base, int shift);

  // x ^ ((x & yyy_mask()) >> shift). @pre x >= 0.
  std::int64_t operator()(std::int64_t x) const;
  // ((1<<bits)-1) << (base + max(0,shift)). Sw<3,4,3>: 896.
  std::int64_t yyy_mask() const;
  // ((1<<bits)-1) << (base - min(0,shift)). Sw<3,4,3>: 112.
  std::int64_t zzz_mask() const;
  // 2^(bits + base + |shift|): the period of the function. Sw<3,4,3>: 1024.
  std::int64_t size() const;

  bool operator==(const Swizzle& o) const {
    return bits == o.bits && base == o.base && shift == o.shift;
  }
};

// C++ CuTe's text form: "Sw<3,4,3>".
std::string to_string(const Swizzle& s);
std::ostream& operator<<(std::ostream& os, const Swizzle& s);
// The reference vectors' (pycute) form: "SW_3_4_3".
std::string to_pycute_string(const Swizzle& s);
// Parses "Sw<B,M,S>" or "SW_B_M_S". Throws axe::ParseError / axe::Error.
Swizzle parse_swizzle(std::string_view text);

// swizzle o offset o layout: i -> swizzle(offset + layout(i)).
class ComposedLayout {
 public:
  Swizzle swizzle;
  std::int64_t offset = 0;
  Layout layout;

  ComposedLayout() = default;
  ComposedLayout(Swizzle sw, std::int64_t off, Layout l)
      : swizzle(sw), offset(off), layout(std::move(l)) {}

  // swizzle(offset + layout(i)); 1-D index or coordinate as Layout::operator().
  // @pre offset + layout(i) >= 0. Example: (Sw<3,3,3> o 0 o (8,64):(64,1))(1) == 72.
  std::int64_t operator()(std::int64_t i) const;
  std::int64_t operator()(const IntTuple& coord) const;

  bool operator==(const ComposedLayout& o) const {
    return swizzle == o.swizzle && offset == o.offset && layout == o.layout;
  }
};

std::int64_t size(const ComposedLayout& c);

// "Sw<3,4,3> o 0 o (8,64):(64,1)" (C++ CuTe's print form).
std::string to_string(const ComposedLayout& c);
std::ostream& operator<<(std::ostream& os, const ComposedLayout& c);
// "SW_3_4_3 o 0 o (8,64):(64,1)" (the reference vectors' form).
std::string to_pycute_string(const ComposedLayout& c);
// Parses either form ("Sw<B,M,S> o offset o layout" or with "SW_B_M_S"); spaces around "o" are
// optional. Throws axe::ParseError with the position and what was expected.
ComposedLayout parse_composed_layout(std::string_view text);

}  // namespace axe::cute
