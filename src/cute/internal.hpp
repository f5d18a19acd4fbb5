// Private helpers shared by the CuTe layout operators (src/cute/*.cpp).
#pragma once

#include <cstdint>
#include <vector>

#include "axe/cute/layout.hpp"

namespace axe::cute::internal {

// A flat list of (extent, stride) modes.
struct Flat {
  std::vector<std::int64_t> shape;
  std::vector<std::int64_t> stride;
};

Flat flat_of(const Layout& l);

}  // namespace axe::cute::internal
