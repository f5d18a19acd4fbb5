#include "core/scan.hpp"

#include <cctype>

namespace axe::internal {

ScanInt scan_int64(std::string_view text, std::size_t& pos, std::int64_t& value) {
  bool negative = false;
  if (pos < text.size() && text[pos] == '-') {
    negative = true;
    ++pos;
  }
  if (pos >= text.size() || !std::isdigit(static_cast<unsigned char>(text[pos]))) return ScanInt::NotAnInteger;
  // Accumulate negatively so INT64_MIN parses.
  std::int64_t v = 0;
  while (pos < text.size() && std::isdigit(static_cast<unsigned char>(text[pos]))) {
    int digit = text[pos] - '0';
    if (__builtin_mul_overflow(v, 10, &v) || __builtin_sub_overflow(v, digit, &v)) return ScanInt::TooLarge;
    ++pos;
  }
  if (!negative) {
    if (v == INT64_MIN) return ScanInt::TooLarge;
    v = -v;
  }
  value = v;
  return ScanInt::Ok;
}

}  // namespace axe::internal
