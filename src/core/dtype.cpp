#include "axe/core/dtype.hpp"

#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>

#include "axe/core/error.hpp"

namespace axe {

namespace {
struct Entry {
  DType type;
  std::string_view name;
  std::int64_t size;
};
constexpr Entry kTypes[] = {{DType::F32, "f32", 4}, {DType::F16, "f16", 2},
                            {DType::BF16, "bf16", 2}, {DType::F64, "f64", 8},
                            {DType::I32, "i32", 4}, {DType::I64, "i64", 8},
                            {DType::U8, "u8", 1}};
}  // namespace

std::int64_t size_of(DType t) {
  for (const auto& e : kTypes)
    if (e.type == t) return e.size;
  fail("size_of: bad dtype");
}

bool is_floating(DType t) {
  return t == DType::F32 || t == DType::F16 || t == DType::BF16 || t == DType::F64;
}

std::string_view to_string(DType t) {
  for (const auto& e : kTypes)
    if (e.type == t) return e.name;
  return "?";
}

DType parse_dtype(std::string_view name) {
  for (const auto& e : kTypes)
    if (e.name == name) return e.type;
  fail("unknown dtype '" + std::string(name) + "' (expected f32, f16, bf16, f64, i32, i64 or u8)");
}

// ---- elements ----------------------------------------------------------------------------

float half_to_float(std::uint16_t h) {
  const std::uint32_t sign = (h >> 15) & 1, exp = (h >> 10) & 0x1f, mant = h & 0x3ff;
  float v;
  if (exp == 0) v = std::ldexp(static_cast<float>(mant), -24);
  else if (exp == 31) v = mant ? std::numeric_limits<float>::quiet_NaN() : std::numeric_limits<float>::infinity();
  else v = std::ldexp(static_cast<float>(mant | 0x400), static_cast<int>(exp) - 25);
  return sign ? -v : v;
}
std::uint16_t float_to_half(float f) {
  if (std::isnan(f)) return 0x7e00;
  const std::uint16_t sign = std::signbit(f) ? 0x8000 : 0;
  const float a = std::fabs(f);
  if (a >= 65520.0f) return sign | 0x7c00;
  if (a < std::ldexp(1.0f, -25)) return sign;
  int e;
  std::frexp(a, &e);
  int exp = e - 1 + 15;
  if (exp <= 0) return sign | static_cast<std::uint16_t>(std::nearbyint(std::ldexp(a, 24)));
  std::uint32_t mant = static_cast<std::uint32_t>(std::nearbyint(std::ldexp(a, 10 - (e - 1)))) - 0x400;
  if (mant == 0x400) {
    mant = 0;
    ++exp;
  }
  if (exp >= 31) return sign | 0x7c00;
  return sign | static_cast<std::uint16_t>(exp << 10) | static_cast<std::uint16_t>(mant);
}
float bf16_to_float(std::uint16_t b) { return std::bit_cast<float>(static_cast<std::uint32_t>(b) << 16); }
std::uint16_t float_to_bf16(float f) {
  if (std::isnan(f)) return 0x7fc0;
  std::uint32_t u = std::bit_cast<std::uint32_t>(f);
  u += 0x7fff + ((u >> 16) & 1);
  return static_cast<std::uint16_t>(u >> 16);
}

namespace {
template <class T>
T load(const std::byte* p) {
  T v;
  std::memcpy(&v, p, sizeof(T));
  return v;
}
template <class T>
void store(std::byte* p, T v) {
  std::memcpy(p, &v, sizeof(T));
}
template <class I>
I to_int(double v) {
  if (std::isnan(v)) return 0;
  if (v >= static_cast<double>(std::numeric_limits<I>::max())) return std::numeric_limits<I>::max();
  if (v <= static_cast<double>(std::numeric_limits<I>::min())) return std::numeric_limits<I>::min();
  return static_cast<I>(v);
}
}  // namespace

double load_element(DType t, const std::byte* p) {
  switch (t) {
    case DType::F32: return load<float>(p);
    case DType::F64: return load<double>(p);
    case DType::F16: return half_to_float(load<std::uint16_t>(p));
    case DType::BF16: return bf16_to_float(load<std::uint16_t>(p));
    case DType::I32: return load<std::int32_t>(p);
    case DType::I64: return static_cast<double>(load<std::int64_t>(p));
    case DType::U8: return load<std::uint8_t>(p);
  }
  return 0;
}

void store_element(DType t, std::byte* p, double v) {
  switch (t) {
    case DType::F32: store(p, static_cast<float>(v)); break;
    case DType::F64: store(p, v); break;
    case DType::F16: store(p, float_to_half(static_cast<float>(v))); break;
    case DType::BF16: store(p, float_to_bf16(static_cast<float>(v))); break;
    case DType::I32: store(p, to_int<std::int32_t>(v)); break;
    case DType::I64: store(p, to_int<std::int64_t>(v)); break;
    case DType::U8: store(p, to_int<std::uint8_t>(v)); break;
  }
}

}  // namespace axe
