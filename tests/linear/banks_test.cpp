// The bank model: TV-15 exactly, and the F2 formula == enumeration on random power-of-two layouts.
#include "axe/linear/banks.hpp"

#include <gtest/gtest.h>

#include "axe/core/error.hpp"
#include "linear_test_util.hpp"

namespace axe::test::linear {
namespace {

using namespace axe::linear;
using Shape = std::vector<std::int64_t>;

// TV-15: 16x32 f32; store: lane = column, register = row; load: lane%16 = row,
// column = 2 register + lane/16.
const char* kStore = "S[(16,32):(1,1@lane)]";
const char* kLoad = "S[(16,16,2):(1@lane,1,16@lane)]";

TEST(Banks, TV15_RowMajor_OneStoreSixteenLoadWavefronts) {
  auto smem = parse_axe_layout("S[(16,32):(32,1)]");
  auto st = bank_conflicts(smem, parse_axe_layout(kStore), Shape{16, 32}, 4);
  EXPECT_EQ(st.vector_bytes, 4);
  EXPECT_EQ(st.instructions, 16);
  EXPECT_EQ(st.wavefronts, 16);
  EXPECT_EQ(st.ideal, 16);
  auto ld = bank_conflicts(smem, parse_axe_layout(kLoad), Shape{16, 32}, 4);
  EXPECT_EQ(ld.instructions, 16);
  EXPECT_EQ(ld.per_instruction, std::vector<std::int64_t>(16, 16));
  EXPECT_EQ(ld.wavefronts, 256);
  EXPECT_EQ(f2_wavefronts(smem, parse_axe_layout(kLoad), Shape{16, 32}), 16);
  EXPECT_EQ(f2_wavefronts(smem, parse_axe_layout(kStore), Shape{16, 32}), 1);
}

// The accesses behind the counts: the store's instruction i is register i (row i), lane l its
// column, so it starts at 32 i + l; the load's instruction i is register i, lane l holds row l % 16
// and column 2 i + l / 16 (kLoad: m stride 1 on the 16 middle columns, lane 16 on the last bit):
// offset 32 (l % 16) + i + 16 (l / 16).
TEST(Banks, Offsets_AreTheAccessesCounted_HandDerived) {
  auto smem = parse_axe_layout("S[(16,32):(32,1)]");
  auto st = bank_conflicts(smem, parse_axe_layout(kStore), Shape{16, 32}, 4);
  ASSERT_EQ(st.offsets.size(), 16u * 32u);
  for (std::int64_t i = 0; i < 16; ++i)
    for (std::int64_t l = 0; l < 32; ++l) EXPECT_EQ(st.offsets[static_cast<std::size_t>(i * 32 + l)], 32 * i + l);
  auto ld = bank_conflicts(smem, parse_axe_layout(kLoad), Shape{16, 32}, 4);
  ASSERT_EQ(ld.offsets.size(), 16u * 32u);
  for (std::int64_t i = 0; i < 16; ++i)
    for (std::int64_t l = 0; l < 32; ++l)
      EXPECT_EQ(ld.offsets[static_cast<std::size_t>(i * 32 + l)], 32 * (l % 16) + 2 * i + l / 16);
}

TEST(Banks, TV15_Swizzles) {
  auto smem = parse_axe_layout("S[(16,32):(32,1)]");
  // 32m + (n ^ m) = Swizzle<4,0,5>: 2 load wavefronts; 32m + (n ^ 2m) = Swizzle<4,1,4>: 1.
  auto ld1 = bank_conflicts(smem, parse_axe_layout(kLoad), Shape{16, 32}, 4, cute::Swizzle(4, 0, 5));
  EXPECT_EQ(ld1.per_instruction, std::vector<std::int64_t>(16, 2));
  auto ld2 = bank_conflicts(smem, parse_axe_layout(kLoad), Shape{16, 32}, 4, cute::Swizzle(4, 1, 4));
  EXPECT_EQ(ld2.per_instruction, std::vector<std::int64_t>(16, 1));
  auto st2 = bank_conflicts(smem, parse_axe_layout(kStore), Shape{16, 32}, 4, cute::Swizzle(4, 1, 4));
  EXPECT_EQ(st2.wavefronts, 16);
  EXPECT_EQ(f2_wavefronts(smem, parse_axe_layout(kLoad), Shape{16, 32}, cute::Swizzle(4, 0, 5)), 2);
  EXPECT_EQ(f2_wavefronts(smem, parse_axe_layout(kLoad), Shape{16, 32}, cute::Swizzle(4, 1, 4)), 1);
}

TEST(Banks, Vectorised_128BitStores) {
  // Each thread writes rows 4j..4j+3 of its column, contiguous in a column-major tile:
  // st.shared.v4 (4 instructions), 4 phases of 8 lanes; lanes t and t+2 are 128 bytes apart, so
  // each phase's 8 lanes share 8 banks: 4 wavefronts per phase where 1 is ideal (TV-15's
  // optimal layout XOR-swizzles the columns to reach 16 in all).
  auto smem = parse_axe_layout("S[(16,32):(1,16)]");
  auto st = bank_conflicts(smem, parse_axe_layout(kStore), Shape{16, 32}, 4);
  EXPECT_EQ(st.vector_bytes, 16);
  EXPECT_EQ(st.instructions, 4);
  EXPECT_EQ(st.per_instruction, std::vector<std::int64_t>(4, 16));
  EXPECT_EQ(st.wavefronts, 64);
  EXPECT_EQ(st.ideal, 16);
}

// Law: the offsets overload equals the Axe layout + Swizzle path on the same placement.
TEST(Banks, OffsetsOverload_EqualsLayoutAndSwizzle) {
  auto smem = parse_axe_layout("S[(16,32):(32,1)]");
  cute::Swizzle sw(4, 1, 4);
  std::vector<std::int64_t> off(512);
  for (std::int64_t x = 0; x < 512; ++x) off[static_cast<std::size_t>(x)] = sw(x);
  for (const char* t : {kStore, kLoad}) {
    auto a = bank_conflicts(smem, parse_axe_layout(t), Shape{16, 32}, 4, sw);
    auto b = bank_conflicts(off, parse_axe_layout(t), Shape{16, 32}, 4);
    EXPECT_EQ(a.per_instruction, b.per_instruction);
    EXPECT_EQ(a.vector_bytes, b.vector_bytes);
    EXPECT_EQ(a.ideal, b.ideal);
  }
  off.pop_back();
  EXPECT_THROW((void)bank_conflicts(off, parse_axe_layout(kStore), Shape{16, 32}, 4), axe::Error);
}

TEST(Banks, Errors) {
  auto smem = parse_axe_layout("S[(16,32):(32,1)]");
  expect_error([&] { (void)bank_conflicts(smem, parse_axe_layout(kStore), Shape{16, 32}, 3); },
         "element size 3 bytes is not 1, 2, 4, 8 or 16");
  expect_error([&] { (void)bank_conflicts(smem, parse_axe_layout("S[(16,32):(1,1@tid)]"), Shape{16, 32}, 4); },
         "uses axis 'tid' (allowed: m, lane, warp)");
  expect_error([&] { (void)bank_conflicts(smem, parse_axe_layout("S[(8,64):(1,1@lane)]"), Shape{16, 32}, 4); },
         "reaches lane 63 (a warp has 32)");
  expect_error([&] { (void)bank_conflicts(smem, parse_axe_layout(kStore), Shape{16, 16}, 4); },
         "has 512 elements but the shape (16,16) has 256");
}

// Law: the F2 formula equals the enumerated wavefronts of every instruction, for 4-byte scalar
// accesses of random distributed thread layouts against random invertible shared layouts.
TEST(Banks, F2FormulaEqualsEnumeration) {
  auto rng = make_rng(0xba);
  int compared = 0;
  for (int trial = 0; trial < 90; ++trial) {
    // 2^10 elements: a random bit permutation for the shared offsets, one for (m, lane, warp).
    std::vector<int> perm(10);
    for (int i = 0; i < 10; ++i) perm[static_cast<std::size_t>(i)] = i;
    std::shuffle(perm.begin(), perm.end(), rng);
    std::vector<Iter> sd, td;
    for (int b = 9; b >= 0; --b) sd.push_back({2, std::int64_t{1} << perm[static_cast<std::size_t>(b)], Axis()});
    std::shuffle(perm.begin(), perm.end(), rng);
    const char* axes[] = {"m", "m", "m", "lane", "lane", "lane", "lane", "lane", "warp", "warp"};
    // hardware bit k of the thread layout: axes[k], bit index within its axis.
    int within[] = {0, 1, 2, 0, 1, 2, 3, 4, 0, 1};
    for (int b = 9; b >= 0; --b) {
      int h = perm[static_cast<std::size_t>(b)];
      td.push_back({2, std::int64_t{1} << within[h], Axis(axes[h])});
    }
    AxeLayout smem(sd), threads(td);
    std::optional<cute::Swizzle> sw;
    if (trial % 3 == 0) sw = cute::Swizzle(uniform(rng, 1, 3), uniform(rng, 0, 2), 3);
    auto rep = bank_conflicts(smem, threads, Shape{32, 32}, 4, sw);
    if (rep.vector_bytes != 4) continue;
    auto f = f2_wavefronts(smem, threads, Shape{32, 32}, sw);
    ASSERT_TRUE(f.has_value()) << to_string(smem) << " / " << to_string(threads);
    for (auto w : rep.per_instruction) ASSERT_EQ(w, *f) << to_string(smem) << " / " << to_string(threads);
    ++compared;
  }
  EXPECT_GT(compared, 30);
}

}  // namespace
}  // namespace axe::test::linear
