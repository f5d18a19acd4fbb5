// Thread layouts: blocked, mma.sync and wgmma accumulators, slices; each checked element by
// element against the hardware's documented fragment formulas, and printed as Axe layouts.
#include "axe/linear/thread_layouts.hpp"

#include <gtest/gtest.h>

#include "axe/core/error.hpp"
#include "axe/linear/bridge.hpp"
#include "linear_test_util.hpp"

namespace axe::test::linear {
namespace {

using namespace axe::linear;
using Shape = std::vector<std::int64_t>;
using Pairs = std::vector<std::pair<std::string, std::int64_t>>;

// (row, col) of the element at (m, lane, warp) of a 2-D thread layout.
std::pair<std::int64_t, std::int64_t> at(const LinearLayout& l, std::int64_t m, std::int64_t lane,
                                         std::int64_t warp) {
  Pairs in{{"m", m}, {"lane", lane}, {"warp", warp}};
  auto out = l.apply(in);  // [dim1, dim0]
  return {out[1].second, out[0].second};
}

TEST(ThreadLayouts, MmaAccumulator_MatchesPtxFragment) {
  auto l = mma_accumulator(Shape{16, 8}, Shape{1, 1});
  for (std::int64_t lane = 0; lane < 32; ++lane) {
    for (std::int64_t r = 0; r < 4; ++r) {
      // PTX m16n8 C fragment: c{0,1} at (lane/4, 2(lane%4) + {0,1}), c{2,3} at row + 8.
      auto want = std::pair<std::int64_t, std::int64_t>{lane / 4 + 8 * (r / 2), 2 * (lane % 4) + r % 2};
      ASSERT_EQ(at(l, r, lane, 0), want) << "lane " << lane << " reg " << r;
    }
  }
  // Row-major flat index: m bit 1 = row 8, then lane = 4 row + col/2 (one run), m bit 0 = col 1.
  EXPECT_EQ(to_string(from_linear(l).layout), "S[(2,32,2):(2,1@lane,1)]");
  // Warps (2,2) on 32x16: the column dim fastest.
  auto w = mma_accumulator(Shape{32, 16}, Shape{2, 2});
  EXPECT_EQ(at(w, 0, 0, 1), (std::pair<std::int64_t, std::int64_t>{0, 8}));
  EXPECT_EQ(at(w, 0, 0, 2), (std::pair<std::int64_t, std::int64_t>{16, 0}));
}

TEST(ThreadLayouts, WgmmaAccumulator_MatchesPtxFragment) {
  auto l = wgmma_accumulator(Shape{64, 64}, 64, Shape{4, 1});
  EXPECT_EQ(l.in_size("m"), 32);
  for (std::int64_t warp = 0; warp < 4; ++warp) {
    for (std::int64_t lane = 0; lane < 32; ++lane) {
      for (std::int64_t r = 0; r < 32; ++r) {
        // d[4j + {0,1}] at (16 warp + lane/4, 8j + 2(lane%4) + {0,1}); d[4j + {2,3}] 8 rows lower.
        std::int64_t j = r / 4;
        auto want = std::pair<std::int64_t, std::int64_t>{16 * warp + lane / 4 + 8 * (r / 2 % 2),
                                                          8 * j + 2 * (lane % 4) + r % 2};
        ASSERT_EQ(at(l, r, lane, warp), want) << warp << " " << lane << " " << r;
      }
    }
  }
  EXPECT_TRUE(is_invertible(l));
  EXPECT_EQ(to_string(from_linear(l).layout), "S[(4,2,8,8,4,2):(1@warp,2,4@lane,4,1@lane,1)]");
}

TEST(ThreadLayouts, Blocked_RepeatsInRegisters) {
  // Tile 16x32 (spt 1x4, tpw 4x8, wpc 4x1) on 32x32: the second 16 rows go to register bit 2.
  auto l = blocked_layout(Shape{32, 32}, Shape{1, 4}, Shape{4, 8}, Shape{4, 1});
  for (std::int64_t row = 0; row < 32; ++row) {
    for (std::int64_t col = 0; col < 32; ++col) {
      std::int64_t lane = (row % 4) * 8 + (col / 4) % 8, warp = (row / 4) % 4;
      std::int64_t m = col % 4 + 4 * (row / 16);
      ASSERT_EQ(at(l, m, lane, warp), (std::pair<std::int64_t, std::int64_t>{row, col}));
    }
  }
  EXPECT_TRUE(is_invertible(l));
  EXPECT_EQ(to_string(from_linear(l).layout), "S[(2,4,32,4):(4,1@warp,1@lane,1)]");
  // Column-major order: dim 0 fastest.
  auto c = blocked_layout(Shape{32, 4}, Shape{1, 1}, Shape{32, 1}, Shape{1, 4}, Shape{0, 1});
  EXPECT_EQ(at(c, 0, 5, 3), (std::pair<std::int64_t, std::int64_t>{5, 3}));
}

TEST(ThreadLayouts, Blocked_SmallerShapeBroadcasts) {
  // A 4x8 tile of lanes on a 4x4 tensor: columns 4..7 are cut, so lane bit 2 (column 4)
  // broadcasts: lanes l and l ^ 4 hold the same element.
  auto l = blocked_layout(Shape{4, 4}, Shape{1, 1}, Shape{4, 8}, Shape{1, 1});
  auto masks = broadcast_masks(l);
  EXPECT_EQ(masks[1], (std::pair<std::string, std::uint64_t>{"lane", 0b00100}));
  EXPECT_EQ(to_string(from_linear(l).layout), "S[(4,4):(8@lane,1@lane)] + R[2:4@lane]");
  EXPECT_EQ(remove_duplicates(l).in_size("lane"), 16);
}

TEST(ThreadLayouts, Slice_DropsADimAndItsRegisters) {
  auto parent = blocked_layout(Shape{64, 1}, Shape{2, 1}, Shape{4, 8}, Shape{2, 1});
  auto s = slice_layout(parent, 1);
  EXPECT_EQ(s.out_names(), (std::vector<std::string>{"dim0"}));
  EXPECT_EQ(s.bases("lane"), (std::vector<LinearLayout::Basis>{{0}, {0}, {0}, {2}, {4}}));
  // Registers: the tile's row 1, then the repeats of the 16-row tile over 64 rows.
  EXPECT_EQ(s.bases("m"), (std::vector<LinearLayout::Basis>{{1}, {16}, {32}}));
  EXPECT_EQ(to_string(from_linear(s).layout), "S[(4,2,4,2):(2,1@warp,8@lane,1)] + R[8:1@lane]");
}

TEST(ThreadLayouts, Errors_NameTheArgument) {
  expect_error([] { (void)blocked_layout(Shape{32, 32}, Shape{1, 4}, Shape{8, 8}, Shape{4, 1}); },
         "threads per warp (8,8) multiply to 64, not 32");
  expect_error([] { (void)blocked_layout(Shape{32, 32}, Shape{1, 3}, Shape{4, 8}, Shape{4, 1}); },
         "size per thread (1,3): entry 3 of dim 1 is not a power of two");
  expect_error([] { (void)blocked_layout(Shape{32, 24}, Shape{1, 4}, Shape{4, 8}, Shape{4, 1}); },
         "logical extent 24 of dim 1 in (32,24) is not a power of two");
  expect_error([] { (void)blocked_layout(Shape{32, 32}, Shape{1, 4}, Shape{4, 8}, Shape{4}); },
         "warps per CTA (4) has 1 entries but the shape has rank 2");
  expect_error([] { (void)blocked_layout(Shape{32, 32}, Shape{1, 4}, Shape{4, 8}, Shape{4, 1}, Shape{1, 1}); },
         "order (1,1) is not a permutation of 0..1");
  expect_error([] { (void)wgmma_accumulator(Shape{64, 64}, 12, Shape{4, 1}); },
         "wgmma instruction N 12 is not a power of two in [8, 256]");
  expect_error([] { (void)mma_accumulator(Shape{64}, Shape{4, 1}); }, "has rank 1 (expected 2)");
  expect_error([] { (void)slice_layout(mma_accumulator(Shape{16, 8}, Shape{1, 1}), 2); },
         "slice: dim 2 is not a logical dim");
  // Output dims that are not dim0..dimN-1 (a layout built by hand): named, not a std::stoi throw.
  const LinearLayout odd({{"lane", {{1, 0}, {0, 1}}}}, std::vector<std::string>{"dim0", "x"});
  expect_error([&] { (void)slice_layout(odd, 0); }, "slice: output dim 'x' is not a logical dim dim0..dim1");
  const LinearLayout far({{"lane", {{1, 0}, {0, 1}}}}, std::vector<std::string>{"dim0", "dim7"});
  expect_error([&] { (void)slice_layout(far, 0); }, "slice: output dim 'dim7' is not a logical dim dim0..dim1");
}

}  // namespace
}  // namespace axe::test::linear
