// Seeded random conversion plans for the generated-kernel tests: through NVRTC and on a GPU
// (tests/cuda/generated_kernels_test.cpp) and on the host emulator (tests/codegen/).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "axe/codegen/tile_codegen.hpp"
#include "axe/linear/bridge.hpp"
#include "linear/linear_test_util.hpp"
#include "support/test_support.hpp"

namespace axe::test::codegen {

namespace tl = axe::test::linear;
using axe::codegen::Element;
using Shape = std::vector<std::int64_t>;

struct RandomPlan {
  AxeLayout from, to;
  Shape shape;
  Element element;
  axe::linear::ConvertOptions options;
};

// The conversion-plan tests' generator (random blocked layouts, and their lane and register
// permutations) over 1-, 2-, 4- and 8-byte elements and shared budgets from 512 B to 64 KiB.
inline std::vector<RandomPlan> random_plans(int count) {
  auto rng = axe::test::make_rng(0x6e4c);
  const std::vector<Element> elements{Element(DType::U8), Element(DType::F16), Element(DType::BF16),
                                      Element(DType::F32), Element(DType::I32), Element(DType::F64)};
  std::vector<RandomPlan> out;
  for (int trial = 0; trial < count; ++trial) {
    Shape shape{tl::pick_pow2(rng, 6), tl::pick_pow2(rng, 6)};
    if (shape[0] * shape[1] < 32) shape[1] = 32 / shape[0];
    while (shape[0] * shape[1] > 8192) shape[0] /= 2;
    const std::int64_t warps = tl::pick_pow2(rng, 2);
    auto a = tl::random_blocked(rng, shape, warps);
    axe::linear::LinearLayout b;
    switch (trial % 4) {
      case 0: b = tl::random_blocked(rng, shape, warps); break;
      case 1: b = tl::permute_dim(rng, a, "m"); break;
      case 2: b = tl::permute_dim(rng, a, "lane"); break;
      default: b = tl::permute_dim(rng, tl::permute_dim(rng, a, "lane"), "m"); break;
    }
    RandomPlan p{axe::linear::from_linear(a).layout, axe::linear::from_linear(b).layout, shape,
                 elements[static_cast<std::size_t>(tl::uniform(rng, 0, 5))], {}};
    p.options.shared_budget_bytes = std::int64_t{1} << tl::uniform(rng, 9, 16);
    out.push_back(p);
  }
  return out;
}

inline std::string label(const RandomPlan& p) {
  return to_string(p.from) + " -> " + to_string(p.to) + " on (" + std::to_string(p.shape[0]) + "," +
         std::to_string(p.shape[1]) + "), " + p.element.name + ", budget " +
         std::to_string(p.options.shared_budget_bytes);
}

}  // namespace axe::test::codegen
