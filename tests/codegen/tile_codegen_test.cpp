// Generated tile code (include/axe/codegen/tile_codegen.hpp): the columns of hand-derived thread
// layouts, the accesses the generator emits for them (vectors, guards, broadcast copies), and over
// seeded random plans the laws that tie the text to the plan's counts. That the text compiles is
// tests/cuda/tile_codegen_nvrtc_test.cpp (NVRTC, no GPU); that it runs right, the GPU half there.
#include "axe/codegen/tile_codegen.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "axe/core/error.hpp"
#include "axe/linear/bridge.hpp"
#include "axe/linear/thread_spec.hpp"
#include "linear/linear_test_util.hpp"
#include "support/test_support.hpp"

namespace axe::test::codegen {
namespace {

using namespace axe::codegen;
using axe::linear::ConvertOptions;
namespace tl = axe::test::linear;
using axe::linear::Mechanism;
using Shape = std::vector<std::int64_t>;

using axe::test::count_of;

AxeLayout spec(const char* s, const Shape& shape) { return axe::linear::parse_thread_layout(s, shape); }

// blocked:1,4/8,4/4,1/1,0 on 32x16 (one CTA tile): 4 columns per thread (index 1, 2), 4 lanes
// across (columns 4, 8), 8 lanes down (rows 1, 2, 4 = index 16, 32, 64), 4 warps down (rows 8, 16
// = index 128, 256).
TEST(ThreadColumns, Blocked_ByHand) {
  const Shape shape{32, 16};
  const auto c = thread_columns(spec("blocked:1,4/8,4/4,1/1,0", shape), shape);
  EXPECT_EQ(c.m, (std::vector<std::uint64_t>{1, 2}));
  EXPECT_EQ(c.lane, (std::vector<std::uint64_t>{4, 8, 16, 32, 64}));
  EXPECT_EQ(c.warp, (std::vector<std::uint64_t>{128, 256}));
  EXPECT_EQ(c.registers(), 4);
}

TEST(ThreadColumns, RefusesOtherAxesAndOffsets) {
  const Shape shape{4};
  tl::expect_error([&] { thread_columns(parse_axe_layout("S[4:1@gpu]"), shape); }, "'gpu'");
  tl::expect_error([&] { thread_columns(parse_axe_layout("S[4:1@lane] + 1@lane"), shape); },
                       "offset");
}

// The load of that layout: one 16-byte vector per thread at T = 4 (lane & 3) + 16 (lane >> 2)
// + 128 warp; every bit distinct, so T is a sum of the lane and warp terms.
TEST(TileLoad, Blocked_OneVectorPerThread) {
  const Shape shape{32, 16};
  const std::string s = emit_tile_load(spec("blocked:1,4/8,4/4,1/1,0", shape), shape, 4, "ld");
  EXPECT_EQ(count_of(s, "reinterpret_cast<const uint4*>(tile + t0)"), 1) << s;
  EXPECT_EQ(count_of(s, "(lane >> 2 & 1u) ? 0x10u"), 1) << s;
  EXPECT_EQ(count_of(s, "(warp >> 1 & 1u) ? 0x100u"), 1) << s;
  EXPECT_EQ(count_of(s, "if ("), 0) << s;  // all 32 lanes, no duplicates
}

// Two 4 x 4 u8 blocks per thread: 16 bytes in a 16-byte vector, as 4 rows of 4 bytes
// (S[(4,4):(4,1)] over m on a 4 x 4 tile row-major = index r: a plain vector); the transposed
// registers S[(4,4):(1,4)] load the same 16 bytes, permuted: still one vector.
TEST(TileLoad, PermutedRegistersStillOneVector) {
  const Shape shape{4, 4};
  const std::string plain = emit_tile_load(parse_axe_layout("S[(4,4):(4,1)]"), shape, 1, "ld");
  const std::string perm = emit_tile_load(parse_axe_layout("S[(4,4):(1,4)]"), shape, 1, "ld");
  EXPECT_EQ(count_of(plain, "reinterpret_cast<const uint4*>"), 1) << plain;
  EXPECT_EQ(count_of(perm, "reinterpret_cast<const uint4*>"), 1) << perm;
  // Register 1 of the transposed layout holds row 1, column 0: byte 4 of the vector.
  EXPECT_EQ(count_of(perm, "r[1] = u.e[4];"), 1) << perm;
  // Lanes beyond the layout's single lane do nothing.
  EXPECT_EQ(count_of(perm, "if (lane < 1u)"), 1) << perm;
}

// One element per lane, replicated over 2 warps: the load reads in both warps, the store writes
// from warp 0 only; a register replica is copied after the loads, and stored once.
TEST(TileStore, ReplicasWriteOnce) {
  const Shape shape{32};
  const auto warps = parse_axe_layout("S[32:1@lane] + R[2:1@warp]");
  const std::string ld = emit_tile_load(warps, shape, 4, "ld");
  const std::string st = emit_tile_store(warps, shape, 4, "st");
  EXPECT_EQ(count_of(ld, "if ("), 0) << ld;
  EXPECT_EQ(count_of(st, "if ((warp & 0x1u) == 0u)"), 1) << st;
  const auto regs = parse_axe_layout("S[32:1@lane] + R[2:1]");
  const std::string ld2 = emit_tile_load(regs, shape, 4, "ld");
  const std::string st2 = emit_tile_store(regs, shape, 4, "st");
  EXPECT_EQ(count_of(ld2, "r[1] = r[0];"), 1) << ld2;
  EXPECT_EQ(count_of(ld2, "tile["), 1) << ld2;
  EXPECT_EQ(count_of(st2, "tile["), 1) << st2;
}

// TV-19 (the 4x4 transpose across 4 lanes) by shuffles: 3 shuffles, no shared memory.
TEST(Conversion, Tv19_ThreeShuffles) {
  const Shape shape{4, 4};
  ConvertOptions o;
  o.choice = ConvertOptions::Choice::shuffles;
  auto plan = axe::linear::plan_conversion(parse_axe_layout("S[(4,4):(1@lane,1)]"),
                                           parse_axe_layout("S[(4,4):(1,1@lane)]"), shape, o);
  ASSERT_EQ(plan.mechanism, Mechanism::shuffles);
  const std::string s = emit_conversion(plan, shape, 4, "cvt");
  EXPECT_EQ(count_of(s, "__shfl_sync"), 3) << s;
  EXPECT_EQ(count_of(s, "axe_s"), 0) << s;
}

// TV-15 (16x32 f32 transpose, linear/convert_plan_test.cpp): 4 stores of 16 bytes, then the
// destination's 16 registers by 4 ldmatrix.x4, each lane giving one row address.
TEST(Conversion, Tv15_LoadsByLdmatrix) {
  const Shape shape{16, 32};
  auto plan = axe::linear::plan_conversion(parse_axe_layout("S[(16,32):(1,1@lane)]"),
                                           parse_axe_layout("S[(16,16,2):(1@lane,1,16@lane)]"), shape);
  ASSERT_EQ(plan.mechanism, Mechanism::shared);
  const std::string s = emit_conversion(plan, shape, 4, "cvt");
  EXPECT_EQ(count_of(s, "ldmatrix.sync.aligned.m8n8.x4.shared.b16"), 4) << s;
  EXPECT_EQ(count_of(s, "reinterpret_cast<uint4*>(axe_s"), 4) << s;
  EXPECT_EQ(count_of(s, "__syncwarp();"), 1) << s;
}

// The laws over seeded random plans (the conversion-plan tests' generator): the text issues
// exactly the plan's shuffles and, for shared plans whose windows are known statically, exactly
// its store and load instructions (the bank model's vectors); a kernel names its entry point.
TEST(Conversion, RandomPlans_TextMatchesCounts) {
  auto rng = make_rng(0xc0de);
  int shared = 0, shuffles = 0;
  for (int trial = 0; trial < 120; ++trial) {
    Shape shape{linear::pick_pow2(rng, 5), tl::pick_pow2(rng, 5)};
    if (shape[0] * shape[1] < 32) shape[1] = 32 / shape[0];
    const std::int64_t warps = tl::pick_pow2(rng, 2);
    auto a = tl::random_blocked(rng, shape, warps);
    auto b = trial % 2 ? tl::random_blocked(rng, shape, warps)
                       : tl::permute_dim(rng, tl::permute_dim(rng, a, "lane"), "m");
    const auto from = axe::linear::from_linear(a).layout, to = axe::linear::from_linear(b).layout;
    ConvertOptions o;
    o.element_bytes = std::int64_t{1} << tl::uniform(rng, 0, 3);
    o.shared_budget_bytes = std::int64_t{1} << tl::uniform(rng, 9, 16);
    const auto plan = axe::linear::plan_conversion(from, to, shape, o);
    SCOPED_TRACE(to_string(from) + " -> " + to_string(to) + ", " +
                 std::to_string(o.element_bytes) + " bytes");
    const std::string s = emit_conversion(plan, shape, o.element_bytes, "cvt");
    EXPECT_EQ(count_of(s, "__shfl_sync(") + count_of(s, "__shfl_xor_sync("), plan.counts.shuffles) << s;
    shuffles += plan.mechanism == Mechanism::shuffles;
    if (plan.mechanism == Mechanism::shared && count_of(s, ") >> ") == 0) {
      ++shared;
      const int accesses = count_of(s, "axe_s[") + count_of(s, "(axe_s + ");
      EXPECT_EQ(accesses, plan.counts.store_instructions + plan.counts.load_instructions) << s;
    }
    const auto k = conversion_kernel(from, to, shape,
                                     o.element_bytes == 1 ? DType::U8
                                     : o.element_bytes == 2 ? DType::F16
                                     : o.element_bytes == 4 ? DType::F32
                                                            : DType::F64,
                                     o);
    EXPECT_EQ(count_of(k.source, "extern \"C\" __global__"), 1);
    EXPECT_EQ(k.threads, 32 * warps);
  }
  EXPECT_GT(shared, 10);
  EXPECT_GT(shuffles, 0);
}

TEST(RoundTrip, DifferentWarpCountsAreAnError) {
  const Shape shape{32, 32};
  tl::expect_error(
      [&] {
        round_trip_kernel(spec("blocked:1,4/4,8/1,1/1,0", shape), spec("blocked:1,4/4,8/2,1/1,0", shape),
                          shape, DType::F32);
      },
      "warp");
}

// Both conversions of the 64x64 f32 transpose go through 16 KiB of shared memory: two buffers fit
// the default 48 KiB budget, so the loop has no barrier of its own; with a 16 KiB budget one
// buffer and a barrier after each conversion.
TEST(RoundTrip, TwoBuffersWhenTheyFit) {
  const Shape shape{64, 64};
  const auto a = spec("blocked:1,4/8,4/4,1/1,0", shape), b = spec("blocked:4,1/4,8/1,4/0,1", shape);
  const auto two = round_trip_kernel(a, b, shape, DType::F32);
  EXPECT_EQ(two.shared_bytes, 2 * 16384);
  EXPECT_EQ(count_of(two.source, "axe_back(b, a, smem + 16384, lane, warp);"), 1);
  ConvertOptions o;
  o.shared_budget_bytes = 16384;
  const auto one = round_trip_kernel(a, b, shape, DType::F32, o);
  EXPECT_EQ(one.shared_bytes, 16384);
  EXPECT_EQ(count_of(one.source, "    __syncthreads();\n"), 2);
}

}  // namespace
}  // namespace axe::test::codegen
