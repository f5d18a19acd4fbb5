// Seeded random conversion plans for the generated-kernel tests: through NVRTC and on a GPU
// (tests/cuda/generated_kernels_test.cpp) and on the host emulator (tests/codegen/).
#pragma once

#include <algorithm>
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

// "" when `dump` (thread t's register r at element t * RB + r, RB = `to`'s registers, `threads`
// threads) holds, at every thread and register the layout `to` uses, the element of `in` it
// places there (replicas included; lanes beyond the layout's hold nothing); else the first
// difference. Elements of `es` bytes.
inline std::string check_dump(const axe::codegen::ThreadColumns& to, const std::vector<unsigned char>& in,
                              const unsigned char* dump, std::int64_t threads, std::int64_t es) {
  const std::int64_t regs = to.registers();
  for (std::int64_t t = 0; t < threads; ++t) {
    const std::int64_t lane = t % 32, warp = t / 32;
    if (lane >= to.lanes()) continue;
    std::uint64_t tx = 0;
    for (std::size_t b = 0; b < to.lane.size(); ++b) if (lane >> b & 1) tx ^= to.lane[b];
    for (std::size_t b = 0; b < to.warp.size(); ++b) if (warp >> b & 1) tx ^= to.warp[b];
    for (std::int64_t r = 0; r < regs; ++r) {
      std::uint64_t x = tx;
      for (std::size_t b = 0; b < to.m.size(); ++b) if (r >> b & 1) x ^= to.m[b];
      const auto want = in.begin() + static_cast<std::ptrdiff_t>(x) * es;
      if (!std::equal(want, want + es, dump + (t * regs + r) * es)) {
        return "warp " + std::to_string(warp) + ", lane " + std::to_string(lane) + ", register " + std::to_string(r) +
               ": not element " + std::to_string(x);
      }
    }
  }
  return "";
}

}  // namespace axe::test::codegen
