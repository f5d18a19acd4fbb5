// Scanning the integers of the text forms (CuTe layouts in cute/text.cpp, Axe layouts in
// layout/text.cpp): one overflow-safe scanner, so both accept and reject the same numbers.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace axe::internal {

enum class ScanInt { Ok, NotAnInteger, TooLarge };

// An optional '-' and one or more decimal digits at text[pos], as a 64-bit integer: on Ok,
// `value` holds it and pos is past it. Every int64 parses, INT64_MIN included (the digits are
// accumulated negatively); NotAnInteger: no digit where one must be; TooLarge: it does not fit.
// Examples: "-12)" at 0 -> Ok, -12, pos 3; "-x" -> NotAnInteger; "9223372036854775808" ->
// TooLarge. pos is unspecified after a failure (callers report the start).
ScanInt scan_int64(std::string_view text, std::size_t& pos, std::int64_t& value);

}  // namespace axe::internal
