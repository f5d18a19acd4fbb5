// Element types of distributed tensors: their names and sizes.
//
// The planner counts bytes with these sizes: a 64x128 f32 tensor is 64*128*4 = 32768 bytes, the
// same tensor in bf16 is 16384 bytes. Text names are "f32", "f16", "bf16", "f64", "i32", "i64",
// "u8"; parse_dtype(to_string(t)) == t for every t.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace axe {

enum class DType { F32, F16, BF16, F64, I32, I64, U8 };

// Bytes per element: f32 4, f16 2, bf16 2, f64 8, i32 4, i64 8, u8 1.
std::int64_t size_of(DType t);
bool is_floating(DType t);  // f32, f16, bf16, f64
std::string_view to_string(DType t);
// Throws axe::Error naming the text and the known names on an unknown name.
DType parse_dtype(std::string_view name);

// One element as double, and back: f16/bf16 round to nearest even; integers saturate at their
// range and NaN stores as 0 (padding of integer buffers). Example: store_element(BF16, p, 1.0)
// writes 0x3f80, and load_element(BF16, p) == 1.0.
double load_element(DType t, const std::byte* p);
void store_element(DType t, std::byte* p, double v);

// IEEE binary16 and bfloat16 conversions (round to nearest even; NaN stays NaN).
float half_to_float(std::uint16_t h);
std::uint16_t float_to_half(float f);
float bf16_to_float(std::uint16_t b);
std::uint16_t float_to_bf16(float f);

}  // namespace axe
