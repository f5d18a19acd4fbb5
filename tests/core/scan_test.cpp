// scan_int64: the integer scanner of both text forms (src/core/scan.hpp).
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <string>

#include "core/scan.hpp"

namespace {

using axe::internal::scan_int64;
using axe::internal::ScanInt;

// Scans `text` at `at`; on Ok checks the value and that pos moved past exactly `used` chars.
void expect_scan(const std::string& text, std::size_t at, ScanInt want, std::int64_t value = 0,
                 std::size_t used = 0) {
  std::size_t pos = at;
  std::int64_t v = -7;
  EXPECT_EQ(scan_int64(text, pos, v), want) << "'" << text << "' at " << at;
  if (want != ScanInt::Ok) return;
  EXPECT_EQ(v, value) << "'" << text << "'";
  EXPECT_EQ(pos, at + used) << "'" << text << "'";
}

TEST(ScanInt64, HandDerived_Examples) {
  expect_scan("-12)", 0, ScanInt::Ok, -12, 3);
  expect_scan("(8,4)", 1, ScanInt::Ok, 8, 1);
  expect_scan("0", 0, ScanInt::Ok, 0, 1);
  expect_scan("007x", 0, ScanInt::Ok, 7, 3);
  expect_scan("-x", 0, ScanInt::NotAnInteger);
  expect_scan("-", 0, ScanInt::NotAnInteger);
  expect_scan("", 0, ScanInt::NotAnInteger);
  expect_scan(" 1", 0, ScanInt::NotAnInteger);  // callers skip spaces first
  expect_scan("+1", 0, ScanInt::NotAnInteger);
}

TEST(ScanInt64, EveryInt64Fits_OneMoreDoesNot) {
  const auto max = std::numeric_limits<std::int64_t>::max();
  const auto min = std::numeric_limits<std::int64_t>::min();
  expect_scan(std::to_string(max), 0, ScanInt::Ok, max, 19);
  expect_scan(std::to_string(min), 0, ScanInt::Ok, min, 20);
  expect_scan("9223372036854775808", 0, ScanInt::TooLarge);
  expect_scan("-9223372036854775809", 0, ScanInt::TooLarge);
  expect_scan("99999999999999999999", 0, ScanInt::TooLarge);
}

}  // namespace
