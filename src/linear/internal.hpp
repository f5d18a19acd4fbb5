// Private helpers of the linear layer.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "axe/linear/linear_layout.hpp"

namespace axe::linear::internal {

inline bool is_pow2(std::int64_t v) { return v > 0 && (v & (v - 1)) == 0; }

// log2 of a power of two; throws axe::Error "WHAT: SIZE is not a power of two".
int log2_exact(std::int64_t size, std::string_view what);

// Mask of the low `bits` bits (bits may be 64).
inline std::uint64_t low_mask(int bits) {
  return bits >= 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << bits) - 1;
}

// The value of output dim `k` (index into l.out_dims()) in a packed column.
std::int64_t out_value(const LinearLayout& l, std::size_t k, std::uint64_t column);

// Short text of a layout for error messages (the text form, cut after 200 characters).
std::string brief(const LinearLayout& l);

}  // namespace axe::linear::internal
