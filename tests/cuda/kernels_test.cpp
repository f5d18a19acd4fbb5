// Box kernels against a host reference: pack, unpack, copy, reduce on receipt, fill, transpose.
// Random boxes of 1..8 modes with odd extents and padded, permuted strides, for every dtype;
// every element outside the boxes must keep its poison value.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <numeric>
#include <optional>
#include <random>

#include "axe/core/bytes.hpp"
#include "axe/core/tunables.hpp"
#include "axe/cuda/kernels.hpp"
#include "axe/exec/executor.hpp"
#include "cuda/cuda_test_util.hpp"
#include "cuda/internal.hpp"
#include "support/test_support.hpp"

namespace axe::cuda {
namespace {

using test::DeviceBuffer;
using test::for_each_element;

const DType kDTypes[] = {DType::F32, DType::F16, DType::BF16, DType::F64,
                         DType::I32, DType::I64, DType::U8};
const ReduceOp kOps[] = {ReduceOp::Sum, ReduceOp::Avg, ReduceOp::Max, ReduceOp::Min,
                         ReduceOp::Prod};

// A random strided layout for `extents`: the modes in a random order of nesting, each stride
// padded by 0..2 elements, so the box is not contiguous in general. Returns the strides and the
// number of elements the layout spans.
std::pair<std::vector<std::int64_t>, std::int64_t> random_strides(const std::vector<std::int64_t>& ext,
                                                                  std::mt19937_64& rng, bool keep_inner) {
  const std::size_t r = ext.size();
  std::vector<std::size_t> order(r);  // outermost first
  std::iota(order.begin(), order.end(), 0);
  std::shuffle(order.begin(), order.end(), rng);
  if (keep_inner) {  // the last mode innermost and contiguous; padding in multiples of 16
    order.erase(std::find(order.begin(), order.end(), r - 1));
    order.push_back(r - 1);
  }
  std::vector<std::int64_t> st(r);
  std::int64_t s = 1;
  for (std::size_t i = r; i-- > 0;) {
    const std::size_t m = order[i];
    st[m] = s;
    const std::int64_t pad = static_cast<std::int64_t>(rng() % 3);
    s = s * ext[m] + (keep_inner ? 16 * (pad % 2) : pad);
  }
  return {st, s + 1};
}

struct Case {
  std::vector<Transfer> boxes;
  std::int64_t src_elems = 0, dst_elems = 0;
};

// `n` boxes reading disjoint-or-overlapping src regions and writing disjoint dst regions.
Case random_case(std::mt19937_64& rng, int n, int max_rank, bool vector_friendly) {
  Case c;
  for (int b = 0; b < n; ++b) {
    const int r = 1 + static_cast<int>(rng() % static_cast<unsigned>(max_rank));
    std::vector<std::int64_t> ext(r);
    std::int64_t total = 1;
    for (int k = 0; k < r; ++k) {
      const std::int64_t cap = r <= 2 ? 70 : (r <= 4 ? 9 : 4);
      ext[k] = 1 + static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(cap));
      total *= ext[k];
    }
    if (vector_friendly) ext[r - 1] = 16 * (1 + static_cast<std::int64_t>(rng() % 4));
    auto [ss, sspan] = random_strides(ext, rng, vector_friendly);
    auto [ds, dspan] = random_strides(ext, rng, vector_friendly);
    Transfer t;
    t.extents = ext;
    t.src_strides = ss;
    t.dst_strides = ds;
    t.src_offset = c.src_elems + (vector_friendly ? 16 : static_cast<std::int64_t>(rng() % 5));
    t.dst_offset = c.dst_elems + (vector_friendly ? 16 : static_cast<std::int64_t>(rng() % 5));
    c.src_elems = t.src_offset + sspan + 3;
    c.dst_elems = t.dst_offset + dspan + 3;
    if (vector_friendly) {
      c.src_elems = (c.src_elems + 15) / 16 * 16;
      c.dst_elems = (c.dst_elems + 15) / 16 * 16;
    }
    c.boxes.push_back(t);
  }
  return c;
}

std::vector<unsigned char> random_bytes(std::size_t n, std::mt19937_64& rng) {
  std::vector<unsigned char> v(n);
  for (auto& b : v) b = static_cast<unsigned char>(rng());
  return v;
}

// Host reference: copy box elements with the given sides.
void host_copy(const std::vector<Transfer>& boxes, std::int64_t es, const unsigned char* src, unsigned char* dst) {
  for (const auto& b : boxes)
    for_each_element(b, [&](std::int64_t so, std::int64_t dof, std::int64_t) {
      std::memcpy(dst + dof * es, src + so * es, static_cast<std::size_t>(es));
    });
}

// Boxes with their packed side made explicit (what BoxList::pack / unpack mean).
std::vector<Transfer> with_packed(std::vector<Transfer> boxes, bool packed_dst, std::int64_t base) {
  std::int64_t pos = base;
  for (auto& b : boxes) {
    std::vector<std::int64_t> st(b.extents.size());
    std::int64_t s = 1;
    for (std::size_t k = b.extents.size(); k-- > 0;) {
      st[k] = s;
      s *= b.extents[k];
    }
    if (packed_dst) {
      b.dst_offset = pos;
      b.dst_strides = st;
    } else {
      b.src_offset = pos;
      b.src_strides = st;
    }
    pos += s;
  }
  return boxes;
}

std::int64_t total_elements(const std::vector<Transfer>& boxes) {
  std::int64_t n = 0;
  for (const auto& b : boxes) n += b.elements();
  return n;
}

// ---- merging (host only) ---------------------------------------------------------------------

TEST(BoxList, MergesContiguousModes) {
  // (2,3,4,5) row-major contiguous on both sides is one run of 120 elements.
  Transfer t{{2, 3, 4, 5}, 7, {60, 20, 5, 1}, 9, {60, 20, 5, 1}, 0};
  auto l = BoxList::copy({t}, DType::F32);
  ASSERT_EQ(l.boxes().size(), 1u);
  EXPECT_EQ(l.boxes()[0].extents, (std::vector<std::int64_t>{120})) << to_string(l.boxes()[0]);
  // S(0) -> S(1) message of PLANNER_EXAMPLES §2: (16,32) src 64+(128,1) packs as 16 runs of 32.
  auto p = BoxList::pack({Transfer{{16, 32}, 64, {128, 1}, 0, {1, 1}, 0}}, DType::F32, 100);
  ASSERT_EQ(p.boxes().size(), 1u);
  EXPECT_EQ(to_string(p.boxes()[0]), "(16,32) src 64+(128,1) dst 100+(32,1)");
  EXPECT_EQ(p.elements(), 512);
}

TEST(BoxList, RejectsMoreThanEightModesAfterMerging) {
  Transfer t;
  for (int k = 0; k < 9; ++k) {
    t.extents.push_back(2);
    t.src_strides.push_back(std::int64_t{1} << (2 * (8 - k)));  // gaps: never mergeable
    t.dst_strides.push_back(std::int64_t{1} << (8 - k));
  }
  EXPECT_THROW(BoxList::copy({t}, DType::F32), Error);
}

// ---- copy engines (host only: which boxes copy_boxes hands to cudaMemcpy2DAsync) -------------

// Restores the process-wide copy-engine policy when the test ends.
struct EnginePolicy {
  CopyEnginePolicy old;
  explicit EnginePolicy(CopyEnginePolicy p) : old(set_copy_engine_policy(p)) {}
  ~EnginePolicy() { set_copy_engine_policy(old); }
};

// The grid of a kernel that holds `resident` blocks an SM at once: whole waves of them within the
// cap of set_box_blocks_per_sm (8 by default) where two or more fit, else the cap (also where the
// count is unknown), never more blocks than chunks.
// Host logic (132 SMs without a GPU).
TEST(LaunchGrid, WholeWavesOfTheResidentBlocks) {
  const std::int64_t many = std::int64_t{1} << 40;
  const int sms = internal::grid_for(many) / 8;
  EXPECT_GT(sms, 0);
  EXPECT_EQ(internal::grid_in_waves(many, 3), sms * 6);  // two waves of 3
  EXPECT_EQ(internal::grid_in_waves(many, 4), sms * 8);
  EXPECT_EQ(internal::grid_in_waves(many, 5), sms * 8);  // one wave of 5: the cap
  EXPECT_EQ(internal::grid_in_waves(many, 8), sms * 8);
  EXPECT_EQ(internal::grid_in_waves(many, 12), sms * 8);
  EXPECT_EQ(internal::grid_in_waves(many, 0), sms * 8);
  EXPECT_EQ(internal::grid_in_waves(100, 3), 100);
  const int old = set_box_blocks_per_sm(2);
  EXPECT_EQ(internal::grid_in_waves(many, 3), sms * 2);
  EXPECT_EQ(internal::grid_in_waves(many, 1), sms * 2);
  set_box_blocks_per_sm(old);
}

// One wave of the resident blocks, within the same cap (8 by default; the cap where the count is
// unknown), never more blocks than chunks. Host logic (132 SMs without a GPU).
TEST(LaunchGrid, OneWaveOfTheResidentBlocks) {
  const std::int64_t many = std::int64_t{1} << 40;
  const int sms = internal::grid_for(many) / 8;
  EXPECT_EQ(internal::grid_one_wave(many, 3), sms * 3);
  EXPECT_EQ(internal::grid_one_wave(many, 8), sms * 8);
  EXPECT_EQ(internal::grid_one_wave(many, 12), sms * 8);
  EXPECT_EQ(internal::grid_one_wave(many, 0), sms * 8);
  EXPECT_EQ(internal::grid_one_wave(100, 3), 100);
  const int old = set_box_blocks_per_sm(2);
  EXPECT_EQ(internal::grid_one_wave(many, 3), sms * 2);
  EXPECT_EQ(internal::grid_one_wave(many, 1), sms * 1);
  set_box_blocks_per_sm(old);
}

TEST(CopyEngine, EngineCopies_HandDerived) {
  constexpr std::int64_t M = std::int64_t{1} << 20;
  const CopyEnginePolicy any{1, 17};  // every kernel unit
  // S(1) -> R of 8192x8192 f32 on 2 GPUs, rank 1's unpack of rank 0's block: 8192 rows of 4096
  // floats (16 KiB) from packed staging (pitch 16 KiB) into columns 0..4095 of the destination
  // (pitch 32 KiB): one 2-D copy of 128 MiB.
  auto u = BoxList::unpack({Transfer{{8192, 4096}, 0, {8192, 1}, 0, {8192, 1}, 0}}, DType::F32, 0);
  EXPECT_EQ(engine_copies(u, {2 * M, 17}), (std::vector<EngineCopy>{{0, 0, 16384, 0, 32768, 16384, 8192}}));
  // the same box under a threshold above its 128 MiB, with the engines off, or under the default
  // unit rule (the kernel moves it in 16-byte units, not below 8)
  EXPECT_TRUE(engine_copies(u, {256 * M, 17}).empty());
  EXPECT_TRUE(engine_copies(u, {0, 17}).empty());
  EXPECT_TRUE(engine_copies(u, CopyEnginePolicy{}).empty());
  // a contiguous run (modes merge to one): one 1-D copy, offsets in bytes; at odd bf16 offsets
  // the kernel unit is 2 bytes, so the default rule takes it too
  auto run = BoxList::copy({Transfer{{1024, 2048}, 3, {2048, 1}, 5, {2048, 1}, 0}}, DType::BF16);
  EXPECT_EQ(engine_copies(run, {M, 4}), (std::vector<EngineCopy>{{0, 6, 4194304, 10, 4194304, 4194304, 1}}));
  EXPECT_EQ(engine_copies(run, CopyEnginePolicy{}).size(), 1u);
  EXPECT_EQ(engine_copies(run, {M, 1}).size(), 1u);  // a contiguous run whatever the unit rule
  // an aligned contiguous f32 run of 4 MiB (16-byte kernel units) too, but not below the threshold
  auto aligned = BoxList::copy({Transfer{{1 << 20}, 0, {1}, 1 << 20, {1}, 0}}, DType::F32);
  EXPECT_EQ(engine_copies(aligned, CopyEnginePolicy{}),
            (std::vector<EngineCopy>{{0, 0, 4194304, 4194304, 4194304, 4194304, 1}}));
  EXPECT_TRUE(engine_copies(aligned, {8 * M, 8}).empty());
  // an uneven f32 shard: rows of 2047 of 4095 floats (4-byte unit). With realigned rows off,
  // units below 8 take it, units below 4 do not; with them on (the default) its unit counts as
  // 16, so only "any unit" (17) takes it
  auto odd = BoxList::pack({Transfer{{1000, 2047}, 0, {4095, 1}, 0, {1, 1}, 0}}, DType::F32, 0);
  EXPECT_TRUE(engine_copies(odd, {1, 4, 0}).empty());
  EXPECT_EQ(engine_copies(odd, {1, 8, 0}),
            (std::vector<EngineCopy>{{0, 0, 16380, 0, 8188, 8188, 1000}}));
  EXPECT_TRUE(engine_copies(odd, {1, 8}).empty());
  EXPECT_TRUE(engine_copies(odd, CopyEnginePolicy{}).empty());
  EXPECT_EQ(engine_copies(odd, any).size(), 1u);
  // 200000 rows: calls of at most kMaxCopyEngineRows = 65536 rows, 3 x 65536 + 3392
  auto tall = BoxList::pack({Transfer{{200000, 256}, 0, {512, 1}, 0, {1, 1}, 0}}, DType::F32, 0);
  const auto pieces = engine_copies(tall, any);
  ASSERT_EQ(pieces.size(), 4u);
  for (std::int64_t p = 0; p < 4; ++p)
    EXPECT_EQ(pieces[p], (EngineCopy{0, p * 65536 * 2048, 2048, p * 65536 * 1024, 1024, 1024, p < 3 ? 65536 : 3392}));
  // rows of 255 floats (1020 bytes < kCopyEngineMinRow) stay on the kernel however large
  auto narrow = BoxList::copy({Transfer{{65536, 255}, 0, {256, 1}, 0, {255, 1}, 0}}, DType::F32);
  EXPECT_TRUE(engine_copies(narrow, any).empty());
  // a source row stride of 0 (one row read many times) is not a pitch: kernel
  auto bcast = BoxList::copy({Transfer{{4, 4096}, 0, {0, 1}, 0, {4096, 1}, 0}}, DType::F32);
  EXPECT_TRUE(engine_copies(bcast, any).empty());
  // 3 modes: the outer extent (3 <= 4) becomes 3 calls; 5 outer planes stay on the kernel
  auto planes = BoxList::copy({Transfer{{3, 16, 512}, 0, {20000, 1024, 1}, 8, {8192, 512, 1}, 0}}, DType::F32);
  EXPECT_EQ(engine_copies(planes, any),
            (std::vector<EngineCopy>{{0, 0, 4096, 32, 2048, 2048, 16},
                                     {0, 80000, 4096, 32800, 2048, 2048, 16},
                                     {0, 160000, 4096, 65568, 2048, 2048, 16}}));
  auto five = BoxList::copy({Transfer{{5, 16, 512}, 0, {20000, 1024, 1}, 8, {8192, 512, 1}, 0}}, DType::F32);
  EXPECT_TRUE(engine_copies(five, any).empty());
  // the second-source mark travels with the copy
  auto second = BoxList::copy({Transfer{{4096}, 0, {1}, 0, {1}, 0}}, DType::F64);
  second.from_second_source();
  ASSERT_EQ(engine_copies(second, any).size(), 1u);
  EXPECT_EQ(engine_copies(second, any)[0].source, 1);
  // at most kMaxCopyEngineCalls calls: of 40 contiguous boxes, the first 32 go to the engines
  std::vector<Transfer> many;
  for (std::int64_t i = 0; i < 40; ++i) many.push_back(Transfer{{1000}, 2000 * i, {1}, 1000 * i + 7 * i, {1}, 0});
  auto lots = BoxList::copy(many, DType::F32);
  const auto calls = engine_copies(lots, any);
  ASSERT_EQ(calls.size(), static_cast<std::size_t>(kMaxCopyEngineCalls));
  EXPECT_EQ(calls.back(), (EngineCopy{0, 4 * 2000 * 31, 4000, 4 * (1000 * 31 + 7 * 31), 4000, 4000, 1}));
}

// Which merged boxes copy_boxes moves through the realigned-row kernel: innermost mode
// contiguous on both sides, rows of at least realign_min_row bytes, a unit kernel of 1, 2 or 4
// bytes; and only what the copy engines leave.
TEST(RealignedRows, RealignedRows_HandDerived) {
  const CopyEnginePolicy rows_only{0, 1};  // engines off, realigned rows from 64 bytes
  // uneven S(0) -> S(1) of (rows+1) x 4095 bf16: rank 0's pack of its columns 0..2047, rows of
  // 2048 of 4095 at source offset 1: unit 2 bytes (odd pitch) -> one realigned box, as merged
  const Transfer odd{{1000, 2048}, 1, {4095, 1}, 0, {1, 1}, 0};
  auto pk = BoxList::pack({odd}, DType::BF16, 0);
  EXPECT_EQ(realigned_rows(pk, rows_only),
            (std::vector<Transfer>{Transfer{{1000, 2048}, 1, {4095, 1}, 0, {2048, 1}, 0}}));
  EXPECT_EQ(realigned_rows(pk, CopyEnginePolicy{}).size(), 1u);  // the default policy too
  EXPECT_TRUE(realigned_rows(pk, {0, 1, 0}).empty());            // off
  EXPECT_TRUE(realigned_rows(pk, {0, 1, 4097}).empty());         // rows of 4096 bytes < 4097
  EXPECT_EQ(realigned_rows(pk, {0, 1, 4096}).size(), 1u);
  EXPECT_TRUE(realigned_rows(pk, {1, 17}).empty());  // the engines take it first ("any unit")
  EXPECT_EQ(engine_copies(pk, {1, 17}).size(), 1u);
  // realigned boxes of the pack of one box
  auto rows_of = [&](const Transfer& t, DType dt) {
    return realigned_rows(BoxList::pack({t}, dt), rows_only).size();
  };
  // the same rows at an even pitch of 4096 and offset 0: unit 16 -> the box kernel
  EXPECT_EQ(rows_of(Transfer{{1000, 2048}, 0, {4096, 1}, 0, {1, 1}, 0}, DType::BF16), 0u);
  // pitch 4094 bf16 (8188 bytes): unit 4 -> realigned; pitch 4092 (8184): unit 8 -> box kernel
  EXPECT_EQ(rows_of(Transfer{{10, 2048}, 0, {4094, 1}, 0, {1, 1}, 0}, DType::BF16), 1u);
  EXPECT_EQ(rows_of(Transfer{{10, 2048}, 0, {4092, 1}, 0, {1, 1}, 0}, DType::BF16), 0u);
  // 8-byte elements never have a unit under 8; a strided innermost mode is no row
  EXPECT_EQ(rows_of(Transfer{{10, 2047}, 1, {4095, 1}, 0, {1, 1}, 0}, DType::F64), 0u);
  EXPECT_EQ(rows_of(Transfer{{10, 2047}, 1, {1, 10}, 0, {1, 1}, 0}, DType::F32), 0u);
  // rows of 31 bf16 (62 bytes) stay on the box kernel; rows of 32 (64 bytes) do not
  EXPECT_EQ(rows_of(Transfer{{10, 31}, 1, {33, 1}, 0, {1, 1}, 0}, DType::BF16), 0u);
  EXPECT_EQ(rows_of(Transfer{{10, 32}, 1, {33, 1}, 0, {1, 1}, 0}, DType::BF16), 1u);
  // one contiguous run at odd offsets is one row (a box of one mode)
  auto run = BoxList::copy({Transfer{{4, 1000}, 3, {1000, 1}, 5, {1000, 1}, 0}}, DType::BF16);
  EXPECT_EQ(realigned_rows(run, rows_only),
            (std::vector<Transfer>{Transfer{{4000}, 3, {1}, 5, {1}, 0}}));
  // a list of both kinds: the realigned box, then the other stays in the box kernel's list
  auto both = BoxList::copy({odd, Transfer{{8, 8}, 0, {16, 1}, 0, {8, 1}, 0}}, DType::BF16);
  const auto sp = both.split(rows_only);
  ASSERT_TRUE(sp.rows && sp.rest);
  EXPECT_TRUE(sp.engine.empty());
  EXPECT_EQ(sp.rows->boxes(), (std::vector<Transfer>{odd}));
  EXPECT_EQ(sp.rest->size(), 1u);
  // nothing taken: neither list (copy_boxes runs the list itself)
  const auto none =
      BoxList::copy({Transfer{{8, 8}, 0, {16, 1}, 0, {8, 1}, 0}}, DType::BF16).split(rows_only);
  EXPECT_FALSE(none.rows || none.rest);
}

// A box taller than kMaxCopyEngineRows runs as several calls: 70001 rows of 256 floats (1 KiB)
// out of rows of 300, packed; every byte against the host, the destination's tail untouched.
TEST(CopyEngine, TallBoxInPiecesMatchesHost) {
  AXE_REQUIRE_GPUS(1);
  EnginePolicy engines({1, 17});
  const std::int64_t rows = 70001, len = 256, pitch = 300;
  auto l = BoxList::pack({Transfer{{rows, len}, 3, {pitch, 1}, 0, {1, 1}, 0}}, DType::F32, 0);
  ASSERT_EQ(engine_copies(l, {1, 17}).size(), 2u);
  auto rng = axe::test::make_rng(470);
  auto src = random_bytes(static_cast<std::size_t>((3 + rows * pitch) * 4), rng);
  auto poison = random_bytes(static_cast<std::size_t>((rows * len + 64) * 4), rng);
  DeviceBuffer ds(src.size()), dd(poison.size());
  ds.upload(src.data(), src.size());
  dd.upload(poison.data(), poison.size());
  copy_boxes(l, ds.p, dd.p, nullptr);
  AXE_CUDA_CHECK(cudaDeviceSynchronize());
  auto expect = poison;
  for (std::int64_t r = 0; r < rows; ++r)
    std::memcpy(expect.data() + r * len * 4, src.data() + (3 + r * pitch) * 4, static_cast<std::size_t>(len * 4));
  EXPECT_EQ(dd.download(), expect);
}

TEST(CopyEngine, SetCopyEnginePolicy_RejectsBadValuesAndReturnsThePrevious) {
  EnginePolicy guard({12345, 8});
  EXPECT_EQ(copy_engine_policy(), (CopyEnginePolicy{12345, 8}));
  EXPECT_THROW(set_copy_engine_policy({-1, 4}), Error);
  EXPECT_THROW(set_copy_engine_policy({1, 0}), Error);
  EXPECT_THROW(set_copy_engine_policy({1, 18}), Error);
  EXPECT_THROW(set_copy_engine_policy({1, 4, -1}), Error);
  EXPECT_EQ(set_copy_engine_policy({0, 4}), (CopyEnginePolicy{12345, 8}));
  EXPECT_EQ(copy_engine_policy(), (CopyEnginePolicy{0, 4}));
}

// CopyEnginePolicy's defaults are the tunables table's (what the policy is when no AXE_* is set).
// Which boxes copy_boxes hands to the generated copy (host only): aligned strided boxes whose
// runs have at least generated_min_run bytes; not one contiguous run, shorter runs, a box of
// another kind in the list, unaligned offsets or pointers, or the policy's 0.
TEST(CopyEngine, CopiesGenerated_ByThePolicy) {
  alignas(16) static unsigned char buf[64];
  const void* p = buf;
  const CopyEnginePolicy d;  // generated_min_run 128
  CopyEnginePolicy never = d;
  never.generated_min_run = 0;
  const BoxList runs128 = BoxList::pack({Transfer{{8, 32}, 0, {64, 1}, 0, {32, 1}, 0}}, DType::F32);  // 128-byte runs
  EXPECT_TRUE(copies_generated(runs128, p, p, nullptr, d));
  EXPECT_FALSE(copies_generated(runs128, p, p, nullptr, never));
  EXPECT_FALSE(copies_generated(runs128, buf + 4, p, nullptr, d));  // source pointer 4 bytes past
  EXPECT_FALSE(copies_generated(runs128, p, p, buf + 8, d));        // a second source 8 bytes past
  const BoxList runs64 = BoxList::pack({Transfer{{8, 16}, 0, {64, 1}, 0, {16, 1}, 0}}, DType::F32);
  EXPECT_FALSE(copies_generated(runs64, p, p, nullptr, d));
  const BoxList one_run = BoxList::pack({Transfer{{8, 32}, 0, {32, 1}, 0, {32, 1}, 0}}, DType::F32);  // merges
  EXPECT_FALSE(copies_generated(one_run, p, p, nullptr, d));
  const BoxList odd = BoxList::pack({Transfer{{8, 32}, 1, {64, 1}, 0, {32, 1}, 0}}, DType::F32);  // offset 1
  EXPECT_FALSE(copies_generated(odd, p, p, nullptr, d));
  const BoxList strided = BoxList::copy({Transfer{{8, 32}, 0, {1, 8}, 0, {32, 1}, 0}}, DType::F32);
  EXPECT_FALSE(copies_generated(strided, p, p, nullptr, d));
  BoxList mixed = runs128;
  mixed.append(runs64);
  EXPECT_FALSE(copies_generated(mixed, p, p, nullptr, d));
  CopyEnginePolicy bad = d;
  bad.generated_min_run = -1;
  const std::string e = axe::test::error_of([&] { set_copy_engine_policy(bad); });
  EXPECT_NE(e.find("generated_min_run -1 is negative"), std::string::npos) << e;
}

TEST(CopyEngine, DefaultPolicyIsTheTunablesDefaults) {
  const CopyEnginePolicy d;
  EXPECT_EQ(d.min_bytes, parse_bytes(tunable_info("AXE_COPY_ENGINE_MIN").default_value, "default"));
  EXPECT_EQ(d.unit_below, std::stoi(std::string(tunable_info("AXE_COPY_ENGINE_UNIT").default_value)));
  EXPECT_EQ(d.realign_min_row, parse_bytes(tunable_info("AXE_REALIGN_MIN_ROW").default_value, "default"));
  EXPECT_EQ(d.generated_min_run, parse_bytes(tunable_info("AXE_GENERATED_COPY_MIN_RUN").default_value, "default"));
}

// ---- copy kernels ----------------------------------------------------------------------------

class Kernels : public ::testing::TestWithParam<DType> {};

// Pack, unpack (into a poisoned buffer: elements outside the boxes keep the poison) and a
// strided -> strided copy of case `c` on base pointers `mis` bytes past an aligned address,
// each against the host.
// The copy under test: copy_boxes unless a test passes another (copy_generated).
using CopyFn = std::function<void(const BoxList&, const void*, void*)>;

void check_case(DType dt, const Case& c, std::size_t mis, std::mt19937_64& rng, const CopyFn& copy = {}) {
  const CopyFn run = copy ? copy : CopyFn([](const BoxList& l, const void* s, void* d) { copy_boxes(l, s, d, nullptr); });
  const std::int64_t es = size_of(dt);
  const std::int64_t packed = total_elements(c.boxes);
  auto src = random_bytes(static_cast<std::size_t>(c.src_elems * es), rng);
  DeviceBuffer dsrc(src.size() + mis), dpk(static_cast<std::size_t>(packed * es) + mis);
  dsrc.upload(src.data(), src.size(), mis);
  // pack
  auto l = BoxList::pack(c.boxes, dt, 0);
  run(l, dsrc.c() + mis, dpk.c() + mis);
  AXE_CUDA_CHECK(cudaDeviceSynchronize());
  std::vector<unsigned char> want(static_cast<std::size_t>(packed * es));
  host_copy(with_packed(c.boxes, true, 0), es, src.data(), want.data());
  auto got = dpk.download();
  ASSERT_EQ(0, std::memcmp(got.data() + mis, want.data(), want.size()))
      << "pack, dtype " << to_string(dt) << ", first box " << to_string(c.boxes[0]);
  // unpack into a poisoned buffer: elements outside the boxes keep the poison
  auto poison = random_bytes(static_cast<std::size_t>(c.dst_elems * es), rng);
  DeviceBuffer ddst(poison.size() + mis);
  ddst.upload(poison.data(), poison.size(), mis);
  auto u = BoxList::unpack(c.boxes, dt, 0);
  run(u, dpk.c() + mis, ddst.c() + mis);
  AXE_CUDA_CHECK(cudaDeviceSynchronize());
  auto expect = poison;
  host_copy(with_packed(c.boxes, false, 0), es, want.data(), expect.data());
  got = ddst.download();
  ASSERT_EQ(0, std::memcmp(got.data() + mis, expect.data(), expect.size()))
      << "unpack, dtype " << to_string(dt) << ", first box " << to_string(c.boxes[0]);
  // strided -> strided copy
  ddst.upload(poison.data(), poison.size(), mis);
  run(BoxList::copy(c.boxes, dt), dsrc.c() + mis, ddst.c() + mis);
  AXE_CUDA_CHECK(cudaDeviceSynchronize());
  expect = poison;
  host_copy(c.boxes, es, src.data(), expect.data());
  got = ddst.download();
  ASSERT_EQ(0, std::memcmp(got.data() + mis, expect.data(), expect.size()))
      << "copy, dtype " << to_string(dt) << ", first box " << to_string(c.boxes[0]);
  got = dsrc.download();
  ASSERT_EQ(0, std::memcmp(got.data() + mis, src.data(), src.size())) << "the source changed";
}

// Boxes 0 and 1 of `c` read the first source, boxes 2 and 3 (marked from_second_source) the
// second, in one call of `copy`: the destination against the host (poisoned: elements outside
// the boxes keep their values), and both sources unchanged.
void check_second_source(DType dt, const Case& c, std::mt19937_64& rng,
                         const std::function<void(const BoxList&, const void*, void*, const void*)>& copy) {
  const std::int64_t es = size_of(dt);
  auto a = random_bytes(static_cast<std::size_t>(c.src_elems * es), rng);
  auto b = random_bytes(static_cast<std::size_t>(c.src_elems * es), rng);
  DeviceBuffer da(a.size()), db(b.size()), dd(static_cast<std::size_t>(c.dst_elems * es));
  da.upload(a.data(), a.size());
  db.upload(b.data(), b.size());
  auto poison = random_bytes(dd.bytes, rng);
  dd.upload(poison.data(), poison.size());
  BoxList l = BoxList::copy({c.boxes[0], c.boxes[1]}, dt);
  BoxList second = BoxList::copy({c.boxes[2], c.boxes[3]}, dt);
  second.from_second_source();
  l.append(second);
  copy(l, da.p, dd.p, db.p);
  AXE_CUDA_CHECK(cudaDeviceSynchronize());
  auto expect = poison;
  host_copy({c.boxes[0], c.boxes[1]}, es, a.data(), expect.data());
  host_copy({c.boxes[2], c.boxes[3]}, es, b.data(), expect.data());
  EXPECT_EQ(dd.download(), expect);
  EXPECT_EQ(da.download(), a);  // the sources are unchanged
  EXPECT_EQ(db.download(), b);
}

void check_pack_unpack(DType dt, std::mt19937_64& rng, bool vector_friendly, int misalign) {
  for (int rep = 0; rep < 12; ++rep) {
    Case c = random_case(rng, 1 + static_cast<int>(rng() % 6), 8, vector_friendly);
    check_case(dt, c, static_cast<std::size_t>(misalign * size_of(dt)), rng);
  }
}

TEST_P(Kernels, PackUnpackCopy_MatchHostOnRandomBoxes) {
  AXE_REQUIRE_GPUS(1);
  auto rng = axe::test::make_rng(100 + static_cast<int>(GetParam()));
  check_pack_unpack(GetParam(), rng, false, 0);
}

TEST_P(Kernels, PackUnpackCopy_VectorisedRunsMatchHost) {
  AXE_REQUIRE_GPUS(1);
  auto rng = axe::test::make_rng(200 + static_cast<int>(GetParam()));
  check_pack_unpack(GetParam(), rng, true, 0);
}

TEST_P(Kernels, PackUnpackCopy_MisalignedBasePointersMatchHost) {
  AXE_REQUIRE_GPUS(1);
  auto rng = axe::test::make_rng(300 + static_cast<int>(GetParam()));
  check_pack_unpack(GetParam(), rng, true, 1);
}

// Rows of any length, row strides and offsets not multiples of 4 bytes (uneven shards of 16-bit
// and 8-bit dtypes): the realigned byte path for runs of >= 64 bytes, the unit path for shorter
// ones, on base pointers 0, 1 and 3 elements past an aligned address; pack, unpack and copy
// against the host, with a poisoned destination (bytes outside the boxes must survive).
Case odd_rows_case(std::mt19937_64& rng) {
  Case c;
  for (int b = 0; b < 2; ++b) {
    const std::int64_t rows = 1 + static_cast<std::int64_t>(rng() % 40);
    const std::int64_t len = 1 + static_cast<std::int64_t>(rng() % 700);
    const std::int64_t ss = len + static_cast<std::int64_t>(rng() % 10);
    const std::int64_t ds = len + static_cast<std::int64_t>(rng() % 10);
    const std::int64_t so = c.src_elems + static_cast<std::int64_t>(rng() % 8);
    const std::int64_t dof = c.dst_elems + static_cast<std::int64_t>(rng() % 8);
    Transfer t{{rows, len}, so, {ss, 1}, dof, {ds, 1}, 0};
    c.src_elems = t.src_offset + (rows - 1) * ss + len + 3;
    c.dst_elems = t.dst_offset + (rows - 1) * ds + len + 3;
    c.boxes.push_back(t);
  }
  return c;
}

TEST_P(Kernels, PackUnpackCopy_OddRowsAndStridesMatchHost) {
  AXE_REQUIRE_GPUS(1);
  const DType dt = GetParam();
  const std::int64_t es = size_of(dt);
  auto rng = axe::test::make_rng(400 + static_cast<int>(dt));
  for (int rep = 0; rep < 24; ++rep) {
    const std::int64_t mis = rep % 3 == 0 ? 0 : rep % 3 == 1 ? 1 : 3;  // elements
    check_case(dt, odd_rows_case(rng), static_cast<std::size_t>(mis * es), rng);
  }
}

// Every row goes through the realigned-row kernel (engines off, realigned rows from 1 byte):
// the random boxes of 1..8 modes (both of its instantiations: plain rows and up to 7 outer
// modes) and the odd rows, on base pointers 0, 1 and 3 elements past an aligned address; pack,
// unpack and copy against the host with a poisoned destination.
TEST_P(Kernels, PackUnpackCopy_RealignedRowsMatchHost) {
  AXE_REQUIRE_GPUS(1);
  EnginePolicy rows({0, 1, 1});
  const DType dt = GetParam();
  const std::int64_t es = size_of(dt);
  auto rng = axe::test::make_rng(480 + static_cast<int>(dt));
  for (int rep = 0; rep < 24; ++rep) {
    const Case c =
        rep % 2 ? odd_rows_case(rng) : random_case(rng, 1 + static_cast<int>(rng() % 6), 8, false);
    const std::int64_t mis = rep % 3 == 0 ? 0 : rep % 3 == 1 ? 1 : 3;  // elements
    check_case(dt, c, static_cast<std::size_t>(mis * es), rng);
  }
}

// Every box the engines can take goes to cudaMemcpy(2D)Async (threshold 1 byte): rows of 1 KiB
// to 12 KiB at odd element offsets and pitches, contiguous runs, 3-mode boxes, on base pointers
// 0, 1 and 3 elements past an aligned address, mixed with boxes the kernel keeps (narrow rows);
// pack, unpack and copy against the host with a poisoned destination.
TEST_P(Kernels, PackUnpackCopy_CopyEnginesMatchHost) {
  AXE_REQUIRE_GPUS(1);
  EnginePolicy engines({1, 17});
  const DType dt = GetParam();
  const std::int64_t es = size_of(dt);
  auto rng = axe::test::make_rng(450 + static_cast<int>(dt));
  for (int rep = 0; rep < 12; ++rep) {
    Case c;
    for (int b = 0; b < 3; ++b) {
      const std::int64_t planes = b == 2 ? 1 + static_cast<std::int64_t>(rng() % 3) : 1;
      const std::int64_t rows = 1 + static_cast<std::int64_t>(rng() % 24);
      const std::int64_t len = (b == 1 ? 8 : 1024 / es) + static_cast<std::int64_t>(rng() % (12288 / es));
      const std::int64_t ss = len + static_cast<std::int64_t>(rng() % 9);
      const std::int64_t ds = len + static_cast<std::int64_t>(rng() % 9);
      Transfer t{{planes, rows, len}, c.src_elems + static_cast<std::int64_t>(rng() % 8), {rows * ss + 5, ss, 1},
                 c.dst_elems + static_cast<std::int64_t>(rng() % 8), {rows * ds + 3, ds, 1}, 0};
      c.src_elems = t.src_offset + planes * (rows * ss + 5) + 3;
      c.dst_elems = t.dst_offset + planes * (rows * ds + 3) + 3;
      c.boxes.push_back(t);
    }
    EXPECT_FALSE(engine_copies(BoxList::copy(c.boxes, dt), {1, 17}).empty());
    check_case(dt, c, static_cast<std::size_t>((rep % 3 == 0 ? 0 : rep % 3 == 1 ? 1 : 3) * es), rng);
  }
}

TEST_P(Kernels, SecondSource_ReadsBothBuffersInOneLaunch) {
  AXE_REQUIRE_GPUS(1);
  const DType dt = GetParam();
  auto rng = axe::test::make_rng(400 + static_cast<int>(dt));
  check_second_source(dt, random_case(rng, 4, 4, false), rng,
                      [](const BoxList& l, const void* s, void* d, const void* s2) {
                        copy_boxes(l, s, d, nullptr, s2);
                      });
}

// ---- reduce on receipt -----------------------------------------------------------------------

// Small exact values of `dt` (no overflow, exact products), as bytes.
std::vector<unsigned char> small_values(DType dt, std::size_t n, std::mt19937_64& rng) {
  const std::int64_t es = size_of(dt);
  std::vector<unsigned char> v(n * static_cast<std::size_t>(es));
  for (std::size_t i = 0; i < n; ++i) {
    const int x = static_cast<int>(rng() % 9);  // 0..8
    const double d = dt == DType::U8 ? x : x - 4;
    unsigned char* p = v.data() + i * es;
    switch (dt) {
      case DType::F32: { float f = static_cast<float>(d) * 0.5f; std::memcpy(p, &f, 4); break; }
      case DType::F64: { double f = d * 0.25; std::memcpy(p, &f, 8); break; }
      case DType::I32: { std::int32_t f = static_cast<std::int32_t>(d); std::memcpy(p, &f, 4); break; }
      case DType::I64: { std::int64_t f = static_cast<std::int64_t>(d); std::memcpy(p, &f, 8); break; }
      case DType::U8: { std::uint8_t f = static_cast<std::uint8_t>(d); std::memcpy(p, &f, 1); break; }
      case DType::F16: case DType::BF16: {
        const std::uint64_t bits = value_bits(dt, d * 0.5);
        std::memcpy(p, &bits, 2);
        break;
      }
    }
  }
  return v;
}

double to_double(DType dt, const unsigned char* p) {
  switch (dt) {
    case DType::F32: { float f; std::memcpy(&f, p, 4); return f; }
    case DType::F64: { double f; std::memcpy(&f, p, 8); return f; }
    case DType::I32: { std::int32_t f; std::memcpy(&f, p, 4); return f; }
    case DType::I64: { std::int64_t f; std::memcpy(&f, p, 8); return static_cast<double>(f); }
    case DType::U8: return *p;
    case DType::BF16: { std::uint16_t h; std::memcpy(&h, p, 2); std::uint32_t u = std::uint32_t{h} << 16; float f; std::memcpy(&f, &u, 4); return f; }
    case DType::F16: {
      std::uint16_t h;
      std::memcpy(&h, p, 2);
      const int e = (h >> 10) & 31, m = h & 1023;
      double v = e == 0 ? std::ldexp(m, -24) : std::ldexp(m | 1024, e - 25);
      return (h >> 15) ? -v : v;
    }
  }
  return 0;
}

TEST_P(Kernels, ReduceOnReceipt_MatchesHostReduceForEveryOp) {
  AXE_REQUIRE_GPUS(1);
  const DType dt = GetParam();
  const std::int64_t es = size_of(dt);
  for (ReduceOp op : kOps) {
    auto rng = axe::test::make_rng(500 + 10 * static_cast<int>(dt) + static_cast<int>(op));
    Case c = random_case(rng, 3, 5, rng() % 2 == 0);
    const std::int64_t packed = total_elements(c.boxes);
    auto dst0 = small_values(dt, static_cast<std::size_t>(c.dst_elems), rng);
    auto pk = small_values(dt, static_cast<std::size_t>(packed), rng);
    DeviceBuffer dd(dst0.size()), dp(pk.size());
    dd.upload(dst0.data(), dst0.size());
    dp.upload(pk.data(), pk.size());
    auto l = BoxList::unpack(c.boxes, dt, 0);
    reduce_boxes(l, dp.p, dd.p, op, true, 1.0, nullptr);
    AXE_CUDA_CHECK(cudaDeviceSynchronize());
    auto expect = dst0;
    for (const auto& b : with_packed(c.boxes, false, 0))
      for_each_element(b, [&](std::int64_t so, std::int64_t dof, std::int64_t) {
        reduce_into(dt, op, reinterpret_cast<std::byte*>(expect.data() + dof * es),
                    reinterpret_cast<const std::byte*>(pk.data() + so * es), 1);
      });
    ASSERT_EQ(dd.download(), expect) << "dtype " << to_string(dt) << " op " << static_cast<int>(op);
    // write + divide (the last term of an average): dst = src / 4
    if (op == ReduceOp::Avg) {
      reduce_boxes(l, dp.p, dd.p, op, false, 4.0, nullptr);
      AXE_CUDA_CHECK(cudaDeviceSynchronize());
      auto got = dd.download();
      for (const auto& b : with_packed(c.boxes, false, 0))
        for_each_element(b, [&](std::int64_t so, std::int64_t dof, std::int64_t) {
          double want = to_double(dt, pk.data() + so * es) / 4.0;
          if (!is_floating(dt)) want = std::trunc(want);
          ASSERT_NEAR(to_double(dt, got.data() + dof * es), want, 1e-2 * std::abs(want) + 1e-12)
              << "avg divide, dtype " << to_string(dt);
        });
    }
  }
}

TEST_P(Kernels, Fill_SetsEveryBoxElementAndNothingElse) {
  AXE_REQUIRE_GPUS(1);
  const DType dt = GetParam();
  const std::int64_t es = size_of(dt);
  auto rng = axe::test::make_rng(600 + static_cast<int>(dt));
  Case c = random_case(rng, 5, 8, false);
  for (double v : {-std::numeric_limits<double>::infinity(), 1.0, std::nan("")}) {
    auto poison = random_bytes(static_cast<std::size_t>(c.dst_elems * es), rng);
    DeviceBuffer dd(poison.size());
    dd.upload(poison.data(), poison.size());
    fill_boxes(BoxList::copy(c.boxes, dt), dd.p, v, nullptr);
    AXE_CUDA_CHECK(cudaDeviceSynchronize());
    auto expect = poison;
    const std::uint64_t bits = value_bits(dt, v);
    for (const auto& b : c.boxes)
      for_each_element(b, [&](std::int64_t, std::int64_t dof, std::int64_t) {
        std::memcpy(expect.data() + dof * es, &bits, static_cast<std::size_t>(es));
      });
    ASSERT_EQ(dd.download(), expect) << "fill " << v << " dtype " << to_string(dt);
  }
}

// ---- transform (the generated transpose) ----------------------------------------------------------

TEST_P(Kernels, Transform_TransposeMatchesHost) {
  AXE_REQUIRE_GPUS(1);
  const DType dt = GetParam();
  const std::int64_t es = size_of(dt);
  auto rng = axe::test::make_rng(700 + static_cast<int>(dt));
  struct Shape {
    std::int64_t batch, rows, cols;
  };
  for (Shape s : {Shape{1, 1, 1}, Shape{1, 33, 31}, Shape{1, 64, 96}, Shape{1, 7, 130},
                  Shape{3, 45, 37}, Shape{2, 32, 32}, Shape{1, 256, 128}, Shape{2, 128, 64}}) {
    // src (batch, rows, cols) row-major with a padded row; dst (batch, cols, rows) row-major.
    // The last two are aligned (no padding, no offsets): 16-byte vectors there, realigned words
    // or single elements elsewhere.
    const bool aligned = s.rows >= 128;
    const std::int64_t ld = s.cols + (aligned ? 0 : 3), soff = aligned ? 0 : 5, doff = aligned ? 0 : 2;
    Transfer t{{s.batch, s.rows, s.cols}, soff, {s.rows * ld, ld, 1}, doff, {s.rows * s.cols, 1, s.rows}, 0};
    const std::int64_t n_src = soff + s.batch * s.rows * ld, n_dst = doff + s.batch * s.rows * s.cols;
    if (s.rows > 1 && s.cols > 1) {
      EXPECT_TRUE(is_transpose(t)) << to_string(t);
    }
    auto src = random_bytes(static_cast<std::size_t>(n_src * es), rng);
    auto poison = random_bytes(static_cast<std::size_t>(n_dst * es), rng);
    DeviceBuffer ds(src.size()), dd(poison.size());
    ds.upload(src.data(), src.size());
    dd.upload(poison.data(), poison.size());
    transform(t, dt, ds.p, dd.p, nullptr);
    AXE_CUDA_CHECK(cudaDeviceSynchronize());
    auto expect = poison;
    host_copy({t}, es, src.data(), expect.data());
    ASSERT_EQ(dd.download(), expect) << to_string(t) << " dtype " << to_string(dt);
  }
}

// The generated transpose (codegen/transpose_codegen.hpp) on the same boxes (offsets 5 and 2 and
// a padded row: rows at every shift) and on aligned ones (the 16-byte vector kernel), with full
// tiles, cut tiles and batches; the last three have many full tiles, and one a destination that
// ends where its buffer ends. Each box runs with the runtime's choice and with realigned words and
// scalar accesses forced, with the runtime's tile, with tiles walked along b first and with 8-byte
// vectors (run it under compute-sanitizer to see that no byte outside the rows is read or written).
TEST_P(Kernels, TransformGenerated_TransposeMatchesHost) {
  AXE_REQUIRE_GPUS(1);
  const DType dt = GetParam();
  const std::int64_t es = size_of(dt);
  auto rng = axe::test::make_rng(800 + static_cast<int>(dt));
  struct Shape {
    std::int64_t batch, rows, cols, pad, soff, doff;
  };
  for (Shape s : {Shape{1, 33, 31, 3, 5, 2}, Shape{1, 64, 96, 3, 5, 2}, Shape{3, 45, 37, 3, 5, 2},
                  Shape{1, 300, 200, 3, 5, 2}, Shape{1, 256, 128, 0, 0, 0}, Shape{2, 160, 48, 16, 16, 0},
                  Shape{1, 1024, 512, 0, 0, 0}, Shape{1, 777, 1029, 5, 3, 7}, Shape{2, 515, 260, 1, 1, 1},
                  Shape{1, 1000, 1000, 1, 1, 0}}) {
    const std::int64_t ld = s.cols + s.pad;
    Transfer t{{s.batch, s.rows, s.cols}, s.soff, {s.rows * ld, ld, 1}, s.doff, {s.rows * s.cols, 1, s.rows}, 0};
    const std::int64_t n_src = s.soff + s.batch * s.rows * ld, n_dst = s.doff + s.batch * s.rows * s.cols;
    auto src = random_bytes(static_cast<std::size_t>(n_src * es), rng);
    auto poison = random_bytes(static_cast<std::size_t>(n_dst * es), rng);
    auto expect = poison;
    host_copy({t}, es, src.data(), expect.data());
    DeviceBuffer ds(src.size()), dd(poison.size());
    ds.upload(src.data(), src.size());
    // Each access with the runtime's tile, then with a 64 x 64 tile of 2 warps walked along b first,
    // then 64 x 64 with 8-byte vectors (taken by vectors only; at least an element), then, on boxes
    // of whole vectors with 1- and 2-byte elements, 128 x 64 with packed registers (vectors only).
    const codegen::TransposeTile b_first{64, 64, 2, true}, v8{64, 64, 2, false, 8}, packed{128, 64, 4, false, 16, true};
    const std::int64_t v = 16 / es;
    const bool whole_vectors = ld % v == 0 && s.rows % v == 0 && s.soff % v == 0 && s.doff % v == 0;
    for (const codegen::TransposeTile* tile :
         {static_cast<const codegen::TransposeTile*>(nullptr), &b_first, &v8, &packed}) {
      for (auto access : {std::optional<codegen::TransposeAccess>{}, std::optional{codegen::TransposeAccess::realigned},
                          std::optional{codegen::TransposeAccess::scalar}}) {
        if (tile == &packed && (es > 2 || access || !whole_vectors)) continue;
        dd.upload(poison.data(), poison.size());
        transform_generated(t, dt, ds.p, dd.p, nullptr, tile, access);
        AXE_CUDA_CHECK(cudaDeviceSynchronize());
        ASSERT_EQ(dd.download(), expect) << to_string(t) << " dtype " << to_string(dt) << " access "
                                         << (access ? to_string(*access) : "default")
                                         << (tile == &b_first ? " b first"
                                             : tile == &v8    ? " 8-byte vectors"
                                             : tile == &packed ? " packed"
                                                               : "");
      }
    }
    ASSERT_EQ(ds.download(), src);  // the source is unchanged
  }
}

// ---- the generated copy (codegen/copy_codegen.hpp) ----------------------------------------------

// copy_boxes on lists the policy gives the generated copy (packs, unpacks and copies of 2- and
// 3-mode f32 boxes in 128..512-byte runs at 16-byte strides) against the host, and against
// itself with the generated copy off.
TEST(CopyEngine, CopyBoxes_GeneratedCopyMatchesHost) {
  AXE_REQUIRE_GPUS(1);
  auto rng = axe::test::make_rng(970);
  for (int rep = 0; rep < 8; ++rep) {
    Case c;
    for (int b = 0; b < 3; ++b) {
      const std::int64_t planes = 1 + static_cast<std::int64_t>(rng() % 3), rows = 2 + static_cast<std::int64_t>(rng() % 49);
      const std::int64_t run = 32 * (1 + static_cast<std::int64_t>(rng() % 4));
      const std::int64_t ss = run + 4 * (1 + static_cast<std::int64_t>(rng() % 4)),
                         ds = run + 4 * (1 + static_cast<std::int64_t>(rng() % 4));  // padded: rows stay a mode
      Transfer t{{planes, rows, run}, c.src_elems + 4, {rows * ss + 8, ss, 1}, c.dst_elems + 8, {rows * ds + 4, ds, 1}, 0};
      c.src_elems = t.src_offset + planes * (rows * ss + 8) + 4;
      c.dst_elems = t.dst_offset + planes * (rows * ds + 4) + 4;
      c.boxes.push_back(t);
    }
    alignas(16) static unsigned char buf[16];
    ASSERT_TRUE(copies_generated(BoxList::copy(c.boxes, DType::F32), buf, buf, nullptr, copy_engine_policy()));
    check_case(DType::F32, c, 0, rng);
    EnginePolicy off({2 << 20, 8, 64, 0});
    check_case(DType::F32, c, 0, rng);
  }
}

// `n` boxes of 1..4 modes whose innermost mode is contiguous on both sides (what copy_generated
// takes): runs of 2..300 elements (some of exactly 16, 128 or 256: full tiles), outer strides
// padded by 0..17 elements and offsets of 0..9, so rows start at every shift; outer modes nest in
// a random order.
Case contiguous_case(std::mt19937_64& rng, int n) {
  Case c;
  for (int b = 0; b < n; ++b) {
    const int r = 1 + static_cast<int>(rng() % 4);
    std::vector<std::int64_t> ext(static_cast<std::size_t>(r));
    for (int k = 0; k + 1 < r; ++k) ext[k] = 1 + static_cast<std::int64_t>(rng() % (r == 2 ? 70 : 7));
    const std::int64_t runs[] = {16, 128, 256};
    ext[r - 1] = rng() % 4 == 0 ? runs[rng() % 3] : 2 + static_cast<std::int64_t>(rng() % 299);
    Transfer t;
    t.extents = ext;
    for (auto* side : {&t.src_strides, &t.dst_strides}) {
      side->assign(static_cast<std::size_t>(r), 1);
      std::vector<int> order(static_cast<std::size_t>(r - 1));  // outer modes, innermost first
      std::iota(order.begin(), order.end(), 0);
      std::shuffle(order.begin(), order.end(), rng);
      std::int64_t s = ext[r - 1] + static_cast<std::int64_t>(rng() % 18);
      for (int m : order) {
        (*side)[m] = s;
        s = s * ext[m] + static_cast<std::int64_t>(rng() % 18);
      }
      (side == &t.src_strides ? t.src_offset : t.dst_offset) =
          (side == &t.src_strides ? c.src_elems : c.dst_elems) + static_cast<std::int64_t>(rng() % 10);
      (side == &t.src_strides ? c.src_elems : c.dst_elems) =
          (side == &t.src_strides ? t.src_offset : t.dst_offset) + s + 3;
    }
    c.boxes.push_back(t);
  }
  return c;
}

// copy_generated on pack, unpack and copy lists against the host (check_case, poisoned
// destinations), on base pointers 0, 1 and 3 elements past an aligned address: the runtime's
// choice of access and tile, then realigned words and scalar accesses forced, the smallest and
// largest tiles (one lane along the run, one row and warp; 32 lanes, 8 rows, 8 warps) and tiles
// wider than a warp's vectors (registers along the run), flat word tiles (4 words a thread on 8
// warps; 1 on 1 warp, so a row spans tiles), a wide tile of words (64-bit row arithmetic, as on
// rows of 2^31 - 64 bytes or more), exchanged tiles (4 elements a thread on 2 warps, forced with
// scalar access; 4 on 8 warps, the tile alone forced), so full tiles, cut tiles, batches and many
// boxes per launch all run. Aligned lists (offsets, strides and pointers in 16-byte units)
// also take the vector kernel, on its default and a wide tile.
TEST_P(Kernels, CopyGenerated_MatchesHostOnRandomBoxes) {
  AXE_REQUIRE_GPUS(1);
  const DType dt = GetParam();
  const std::int64_t es = size_of(dt), v = 16 / es;
  auto rng = axe::test::make_rng(900 + static_cast<int>(dt));
  using codegen::TransposeAccess;
  struct Way {
    std::optional<TransposeAccess> access;
    std::optional<codegen::CopyTile> tile;
  };
  const Way ways[] = {{}, {TransposeAccess::realigned, {}}, {TransposeAccess::scalar, {}},
                      {TransposeAccess::realigned, codegen::CopyTile{v, 1, 1}},
                      {TransposeAccess::scalar, codegen::CopyTile{1, 1, 1}},
                      {TransposeAccess::realigned, codegen::CopyTile{32 * v, 8, 8}},
                      {TransposeAccess::realigned, codegen::CopyTile{128 * v, 2, 4}},
                      {TransposeAccess::scalar, codegen::CopyTile{256, 1, 8}},
                      {TransposeAccess::realigned, codegen::CopyTile{1024 * v, 1, 8, true}},
                      {TransposeAccess::realigned, codegen::CopyTile{32 * v, 1, 1, true}},
                      {TransposeAccess::realigned, codegen::CopyTile{64 * v, 2, 8, false, true}},
                      {TransposeAccess::scalar, codegen::CopyTile{256, 1, 2, false, false, true}},
                      {std::nullopt, codegen::CopyTile{1024, 1, 8, false, false, true}}};
  constexpr int kWays = sizeof(ways) / sizeof(ways[0]);
  for (int rep = 0; rep < 3 * kWays; ++rep) {
    const Way& w = ways[rep % kWays];
    const std::int64_t mis = rep % 3 == 0 ? 0 : rep % 3 == 1 ? 1 : 3;  // elements
    CopyFn fn = [&](const BoxList& l, const void* s, void* d) {
      ASSERT_TRUE(copy_generated_fits(l));
      copy_generated(l, s, d, nullptr, nullptr, w.tile ? &*w.tile : nullptr, w.access);
    };
    SCOPED_TRACE("rep " + std::to_string(rep));
    check_case(dt, contiguous_case(rng, 1 + static_cast<int>(rng() % 8)), static_cast<std::size_t>(mis * es), rng, fn);
  }
  // Aligned: runs and strides in whole vectors, offsets of 16 bytes.
  for (int rep = 0; rep < 6; ++rep) {
    Case c = contiguous_case(rng, 1 + static_cast<int>(rng() % 4));
    std::int64_t so = 0, dof = 0;
    for (auto& t : c.boxes) {
      t.extents.back() = v * (1 + static_cast<std::int64_t>(rng() % 40));
      for (auto* side : {&t.src_strides, &t.dst_strides}) {
        std::int64_t s = t.extents.back() + v * static_cast<std::int64_t>(rng() % 3);
        for (std::size_t k = t.extents.size() - 1; k-- > 0;) {
          (*side)[k] = s;
          s = s * t.extents[k] + v;
        }
        std::int64_t& off = side == &t.src_strides ? t.src_offset : t.dst_offset;
        std::int64_t& end = side == &t.src_strides ? so : dof;
        off = end + v;
        end = off + s + v;
      }
    }
    c.src_elems = so;
    c.dst_elems = dof;
    const bool vectors = rep % 2 == 0;
    const codegen::CopyTile wide{64 * v, 2, 4};  // 2 vectors along the run a lane
    CopyFn fn = [&](const BoxList& l, const void* s, void* d) {
      copy_generated(l, s, d, nullptr, nullptr, rep == 2 || rep == 4 ? &wide : nullptr,
                     vectors ? std::optional{TransposeAccess::vectors} : std::nullopt);
    };
    check_case(dt, c, 0, rng, fn);
  }
}

// Long rows (runs of 1024 to 4100 elements, offsets and pitches of any residue, 1 to 3 boxes, some
// with a batch mode) on the runtime's own choice, which takes exchanged tiles for 4-byte elements
// (runs of 1024 or more: 1024-element tiles on 4 warps) and destination words for the others,
// against the host, on base pointers 0, 1 and 3 elements past an aligned address.
TEST_P(Kernels, CopyGenerated_LongUnevenRowsMatchHost) {
  AXE_REQUIRE_GPUS(1);
  const DType dt = GetParam();
  auto rng = axe::test::make_rng(980 + static_cast<int>(dt));
  for (int rep = 0; rep < 6; ++rep) {
    Case c;
    const int n = 1 + static_cast<int>(rng() % 3);
    for (int b = 0; b < n; ++b) {
      const std::int64_t run = 1024 + static_cast<std::int64_t>(rng() % 3077);
      const std::int64_t rows = 1 + static_cast<std::int64_t>(rng() % 9);
      const std::int64_t batch = rng() % 2 ? 2 : 1;
      Transfer t;
      t.extents = batch > 1 ? std::vector<std::int64_t>{batch, rows, run} : std::vector<std::int64_t>{rows, run};
      for (auto* side : {&t.src_strides, &t.dst_strides}) {
        const std::int64_t pitch = run + static_cast<std::int64_t>(rng() % 7);
        *side = batch > 1 ? std::vector<std::int64_t>{rows * pitch + 5, pitch, 1} : std::vector<std::int64_t>{pitch, 1};
        std::int64_t& off = side == &t.src_strides ? t.src_offset : t.dst_offset;
        std::int64_t& end = side == &t.src_strides ? c.src_elems : c.dst_elems;
        off = end + 1 + static_cast<std::int64_t>(rng() % 5);
        end = off + batch * (rows * pitch + 5);
      }
      c.boxes.push_back(t);
    }
    const std::int64_t mis = rep % 3 == 0 ? 0 : rep % 3 == 1 ? 1 : 3;
    SCOPED_TRACE("rep " + std::to_string(rep));
    check_case(dt, c, static_cast<std::size_t>(mis * size_of(dt)), rng,
               [](const BoxList& l, const void* s, void* d) { copy_generated(l, s, d, nullptr); });
  }
}

// Boxes marked from_second_source read src2 in the same launch; a box not contiguous along its
// innermost mode is refused by name, and so are vectors forced on unaligned rows and a flat tile
// forced on rows over its limit.
TEST_P(Kernels, CopyGenerated_SecondSourceAndRefusals) {
  AXE_REQUIRE_GPUS(1);
  const DType dt = GetParam();
  auto rng = axe::test::make_rng(950 + static_cast<int>(dt));
  check_second_source(dt, contiguous_case(rng, 4), rng,
                      [](const BoxList& l, const void* s, void* d, const void* s2) {
                        copy_generated(l, s, d, nullptr, s2);
                      });
  DeviceBuffer da(64 * 64 * 8), dd(64 * 64 * 8);
  const BoxList strided = BoxList::copy({Transfer{{8, 4}, 0, {1, 8}, 0, {4, 1}, 0}}, dt);
  EXPECT_FALSE(copy_generated_fits(strided));
  std::string e = axe::test::error_of([&] { copy_generated(strided, da.p, dd.p, nullptr); });
  EXPECT_NE(e.find("not contiguous along its innermost mode"), std::string::npos) << e;
  const BoxList odd = BoxList::copy({Transfer{{4, 63}, 1, {63, 1}, 0, {64, 1}, 0}}, dt);
  e = axe::test::error_of(
      [&] { copy_generated(odd, da.p, dd.p, nullptr, nullptr, nullptr, codegen::TransposeAccess::vectors); });
  EXPECT_NE(e.find("not all 16-byte aligned"), std::string::npos) << e;
  // A flat tile forced on rows of 2^31 bytes (its row arithmetic is 32-bit): refused before any
  // launch, so the buffers' size does not matter.
  const std::int64_t big = (std::int64_t{1} << 31) / size_of(dt);
  const BoxList wide = BoxList::copy({Transfer{{2, big}, 1, {big + 1, 1}, 0, {big, 1}, 0}}, dt);
  const codegen::CopyTile flat{1024 * (16 / size_of(dt)), 1, 8, true};
  e = axe::test::error_of(
      [&] { copy_generated(wide, da.p, dd.p, nullptr, nullptr, &flat, codegen::TransposeAccess::realigned); });
  EXPECT_NE(e.find("rows of 2^31 - 64 bytes or more, over a flat tile's limit"), std::string::npos) << e;
}

// A tile whose two shared buffers exceed the device's shared memory (128 x 128 f64: 256 KiB) is
// a clear error, the same on a second call (a failed kernel leaves nothing half-built behind),
// and vectors forced on rows that are not 16-byte aligned are refused, not run.
TEST(KernelsGenerated, TransposeTileErrorsAreClearAndRepeatable) {
  AXE_REQUIRE_GPUS(1);
  DeviceBuffer ds(64 * 64 * 8 + 8), dd(64 * 64 * 8 + 8);
  const Transfer t{{64, 64}, 0, {64, 1}, 0, {1, 64}, 0};
  const codegen::TransposeTile big{128, 128, 8};
  for (int call = 0; call < 2; ++call) {
    const std::string e = axe::test::error_of([&] { transform_generated(t, DType::F64, ds.p, dd.p, nullptr, &big); });
    EXPECT_NE(e.find("needs 262144 bytes of shared memory"), std::string::npos) << e;
  }
  const Transfer odd{{64, 63}, 1, {63, 1}, 0, {1, 64}, 0};
  const std::string e = axe::test::error_of(
      [&] { transform_generated(odd, DType::F32, ds.p, dd.p, nullptr, nullptr, codegen::TransposeAccess::vectors); });
  EXPECT_NE(e.find("not 16-byte aligned"), std::string::npos) << e;
}

INSTANTIATE_TEST_SUITE_P(AllDTypes, Kernels, ::testing::ValuesIn(kDTypes),
                         [](const auto& info) { return std::string(to_string(info.param)); });

}  // namespace
}  // namespace axe::cuda
