// Element types: names, sizes, and the element conversions every backend shares.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>

#include "axe/core/dtype.hpp"
#include "axe/core/error.hpp"

namespace axe {
namespace {

std::uint16_t bits16(DType t, double v) {
  std::byte b[2];
  store_element(t, b, v);
  std::uint16_t u;
  std::memcpy(&u, b, 2);
  return u;
}

TEST(DType, NamesRoundTripAndSizes) {
  for (DType t : {DType::F32, DType::F16, DType::BF16, DType::F64, DType::I32, DType::I64, DType::U8})
    EXPECT_EQ(parse_dtype(to_string(t)), t);
  EXPECT_EQ(size_of(DType::BF16), 2);
  EXPECT_EQ(size_of(DType::I64), 8);
  EXPECT_THROW(parse_dtype("f128"), Error);
}

// Hand-derived encodings: 1.0 is 0x3c00 in binary16 and 0x3f80 in bfloat16; -2.5 is 0xc100 and
// 0xc020; 65504 is the largest finite half (0x7bff); 1 + 2^-8 is a bfloat16 tie that rounds to even.
TEST(DType, SixteenBitEncodingsAreExact) {
  EXPECT_EQ(bits16(DType::F16, 1.0), 0x3c00);
  EXPECT_EQ(bits16(DType::F16, -2.5), 0xc100);
  EXPECT_EQ(bits16(DType::F16, 65504.0), 0x7bff);
  EXPECT_EQ(bits16(DType::F16, 1e6), 0x7c00);  // overflow: infinity
  EXPECT_EQ(bits16(DType::BF16, 1.0), 0x3f80);
  EXPECT_EQ(bits16(DType::BF16, -2.5), 0xc020);
  EXPECT_EQ(bits16(DType::BF16, 1.0 + 1.0 / 256), 0x3f80);
  EXPECT_TRUE(std::isnan(half_to_float(float_to_half(std::numeric_limits<float>::quiet_NaN()))));
}

// Law: every finite 16-bit pattern survives load then store.
TEST(DType, SixteenBitPatternsRoundTrip) {
  for (DType t : {DType::F16, DType::BF16}) {
    for (std::uint32_t u = 0; u < 0x10000; ++u) {
      std::byte b[2];
      const auto h = static_cast<std::uint16_t>(u);
      std::memcpy(b, &h, 2);
      const double v = load_element(t, b);
      if (std::isnan(v) || std::isinf(v)) continue;
      const std::uint16_t back = bits16(t, v);
      // +0 and -0 keep their sign; everything else maps to itself.
      ASSERT_EQ(back, h) << to_string(t) << " pattern " << u;
    }
  }
}

TEST(DType, IntegersSaturateAndNaNIsZero) {
  std::byte b[8];
  store_element(DType::U8, b, 300.0);
  EXPECT_EQ(load_element(DType::U8, b), 255.0);
  store_element(DType::U8, b, -4.0);
  EXPECT_EQ(load_element(DType::U8, b), 0.0);
  store_element(DType::I32, b, std::numeric_limits<double>::quiet_NaN());
  EXPECT_EQ(load_element(DType::I32, b), 0.0);
  store_element(DType::I64, b, -7.0);
  EXPECT_EQ(load_element(DType::I64, b), -7.0);
}

}  // namespace
}  // namespace axe
