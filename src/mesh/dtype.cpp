#include "axe/dtype.hpp"

#include <string>

#include "axe/error.hpp"

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

}  // namespace axe
