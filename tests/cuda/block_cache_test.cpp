// BlockCache (block_cache.hpp): the cuda backend's caching allocator, as host logic over a fake
// address space. Runs without a GPU.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <iterator>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "axe/cuda/block_cache.hpp"
#include "support/test_support.hpp"

namespace axe::cuda {
namespace {

constexpr std::size_t kMiB = std::size_t{1} << 20;

// A fake device: allocations at 2 MiB-aligned addresses, never reused, at most `cap` bytes held.
struct FakeDevice {
  std::size_t cap = SIZE_MAX;
  std::uint64_t next = std::uint64_t{1} << 40;
  std::map<std::uint64_t, std::size_t> held;
  std::size_t grows = 0, releases = 0, bad_releases = 0;
  std::size_t bytes() const {
    std::size_t b = 0;
    for (const auto& [a, n] : held) b += n;
    return b;
  }
  BlockCache make() {
    return BlockCache(
        [this](std::size_t n) -> std::uint64_t {
          if (bytes() + n > cap) return 0;
          const std::uint64_t a = next;
          next += (n + 2 * kMiB - 1) / (2 * kMiB) * (2 * kMiB);
          held[a] = n;
          ++grows;
          return a;
        },
        [this](std::uint64_t a, std::size_t n) {
          const auto it = held.find(a);
          if (it == held.end() || it->second != n) {
            ++bad_releases;
            return;
          }
          held.erase(it);
          ++releases;
        });
  }
};

TEST(BlockCache, SizeClass_HandDerived) {
  EXPECT_EQ(BlockCache::size_class(1), 512u);
  EXPECT_EQ(BlockCache::size_class(512), 512u);
  EXPECT_EQ(BlockCache::size_class(513), 1024u);
  EXPECT_EQ(BlockCache::size_class(1000), 1024u);
  EXPECT_EQ(BlockCache::size_class(1100), 1536u);  // 1024 < 1100 <= 2048: steps of max(512, 256)
  EXPECT_EQ(BlockCache::size_class(4097), 5120u);  // 4096 < b <= 8192: steps of 1024
  EXPECT_EQ(BlockCache::size_class(kMiB), kMiB);
  EXPECT_EQ(BlockCache::size_class(kMiB + 1), kMiB + kMiB / 4);
  EXPECT_EQ(BlockCache::size_class(5 * kMiB + 1), 6 * kMiB);  // 4 MiB < b <= 8 MiB: steps of 1 MiB
  EXPECT_EQ(BlockCache::size_class(3 * kMiB), 3 * kMiB);
}

// The law of size_class on every size up to 70,000 and on random sizes up to 2^40: a multiple of
// kAlign, at least the size, less than 1.25 × size + kAlign, monotone, and a class maps to itself.
TEST(BlockCache, SizeClass_Laws) {
  auto check = [](std::size_t b) {
    const std::size_t c = BlockCache::size_class(b);
    ASSERT_EQ(c % BlockCache::kAlign, 0u) << b;
    ASSERT_GE(c, b);
    ASSERT_LT(c, b + b / 4 + BlockCache::kAlign + 1) << b;
    ASSERT_EQ(BlockCache::size_class(c), c) << b;
  };
  std::size_t last = 0;
  for (std::size_t b = 1; b <= 70000; ++b) {
    check(b);
    ASSERT_GE(BlockCache::size_class(b), last) << b;
    last = BlockCache::size_class(b);
  }
  std::mt19937_64 rng(7);
  for (int i = 0; i < 100000; ++i) check(1 + rng() % (std::uint64_t{1} << 40));
}

TEST(BlockCache, SmallBlocksShareASlab) {
  FakeDevice dev;
  BlockCache c = dev.make();
  const std::uint64_t a = c.allocate(1000);
  ASSERT_NE(a, 0u);
  EXPECT_EQ(dev.grows, 1u);
  ASSERT_EQ(dev.held.size(), 1u);
  EXPECT_EQ(dev.held.begin()->first, a);  // the slab is handed out from its start
  EXPECT_EQ(dev.held.begin()->second, BlockCache::kSlabBytes);
  EXPECT_EQ(c.allocate(1024), a + 1024);
  for (int i = 2; i < 2048; ++i) c.allocate(900);  // 2 MiB / 1024: 2048 slots
  EXPECT_EQ(dev.grows, 1u);
  c.allocate(1000);
  EXPECT_EQ(dev.grows, 2u);
  const auto s = c.stats();
  EXPECT_EQ(s.allocations, 2u);
  EXPECT_EQ(s.reserved, 2 * BlockCache::kSlabBytes);
  EXPECT_EQ(s.live, 2049u);
  EXPECT_EQ(s.live_bytes, 2049u * 1024);
}

TEST(BlockCache, FreedBlocksAreReusedForTheirClass) {
  FakeDevice dev;
  BlockCache c = dev.make();
  const std::uint64_t big = c.allocate(3 * kMiB);
  EXPECT_EQ(dev.held.at(big), 3 * kMiB);
  const std::uint64_t small = c.allocate(4000);
  ASSERT_TRUE(c.free(big));
  ASSERT_TRUE(c.free(small));
  EXPECT_FALSE(c.free(big));       // twice
  EXPECT_FALSE(c.free(small + 1));  // never handed out
  EXPECT_EQ(c.allocate(3 * kMiB - 100), big);  // same class (3 MiB), no new allocation
  EXPECT_EQ(c.allocate(3900), small);
  EXPECT_EQ(dev.grows, 2u);
  EXPECT_NE(c.allocate(3 * kMiB + 1), big);  // another class (3.5 MiB): a new allocation
  EXPECT_EQ(dev.grows, 3u);
}

TEST(BlockCache, TrimReleasesWhatNoBlockUses) {
  FakeDevice dev;
  BlockCache c = dev.make();
  const std::uint64_t a = c.allocate(1000);  // slab 1
  const std::uint64_t b = c.allocate(5000);  // slab 2 (class 5120)
  const std::uint64_t d = c.allocate(2 * kMiB);
  const std::uint64_t e = c.allocate(2 * kMiB);
  c.free(a);
  c.free(d);
  EXPECT_EQ(c.trim(), BlockCache::kSlabBytes + 2 * kMiB);  // slab 1 and d; slab 2 and e in use
  EXPECT_EQ(dev.releases, 2u);
  EXPECT_EQ(c.stats().reserved, BlockCache::kSlabBytes + 2 * kMiB);
  EXPECT_EQ(c.trim(), 0u);
  c.free(b);
  c.free(e);
  EXPECT_EQ(c.trim(), BlockCache::kSlabBytes + 2 * kMiB);
  EXPECT_TRUE(dev.held.empty());
  EXPECT_EQ(dev.bad_releases, 0u);
  // The trimmed slab's slots are gone from the cache: the next block of the class grows anew.
  c.allocate(1000);
  EXPECT_EQ(dev.grows, 5u);
}

TEST(BlockCache, RefusedGrowthIsZeroAndTrimMakesRoom) {
  FakeDevice dev;
  dev.cap = 8 * kMiB;
  BlockCache c = dev.make();
  const std::uint64_t a = c.allocate(6 * kMiB);
  ASSERT_NE(a, 0u);
  EXPECT_EQ(c.allocate(4 * kMiB), 0u);  // 6 + 4 > 8
  c.free(a);
  EXPECT_EQ(c.allocate(4 * kMiB), 0u);  // the freed 6 MiB is still cached
  c.trim();
  EXPECT_NE(c.allocate(4 * kMiB), 0u);
}

TEST(BlockCache, DestructorReleasesEverything) {
  FakeDevice dev;
  {
    BlockCache c = dev.make();
    c.allocate(100);
    c.allocate(7 * kMiB);
    c.free(c.allocate(9 * kMiB));
  }
  EXPECT_TRUE(dev.held.empty());
  EXPECT_EQ(dev.releases, 3u);
  EXPECT_EQ(dev.bad_releases, 0u);
}

// Seeded random allocate / free / trim sequences (sizes log-uniform from 1 byte to 8 MiB, under a
// cap that makes growth fail now and then): live blocks never overlap, each lies inside one
// allocation the cache holds, the stats add up, and everything is released exactly once. The
// seed is printed (AXE_TEST_SEED overrides it).
TEST(BlockCache, RandomSequences_BlocksStayDisjointInsideTheirAllocations) {
  const std::uint64_t seed = test::test_seed();
  for (std::uint64_t salt = 0; salt < 20; ++salt) {
    SCOPED_TRACE("sequence " + std::to_string(salt));
    std::seed_seq seq{seed, salt};
    std::mt19937_64 rng(seq);
    FakeDevice dev;
    dev.cap = 64 * kMiB;
    {
      BlockCache c = dev.make();
      std::map<std::uint64_t, std::size_t> live;  // address -> class
      for (int op = 0; op < 3000; ++op) {
        const auto r = rng() % 10;
        if (r < 6) {
          const std::size_t bytes = std::max<std::size_t>(1, static_cast<std::size_t>(std::exp2(
                                                                 static_cast<double>(rng() % 2300) / 100.0)));
          std::uint64_t a = c.allocate(bytes);
          if (a == 0) {
            c.trim();
            a = c.allocate(bytes);
          }
          if (a == 0) continue;  // the cap is really reached
          const std::size_t n = BlockCache::size_class(bytes);
          auto next = live.lower_bound(a);
          ASSERT_TRUE(next == live.end() || a + n <= next->first) << "overlaps the next block";
          ASSERT_TRUE(next == live.begin() || std::prev(next)->first + std::prev(next)->second <= a)
              << "overlaps the previous block";
          auto held = dev.held.upper_bound(a);
          ASSERT_NE(held, dev.held.begin());
          --held;
          ASSERT_LE(a + n, held->first + held->second) << "outside its allocation";
          live[a] = n;
        } else if (r < 9 && !live.empty()) {
          auto it = live.begin();
          std::advance(it, static_cast<std::ptrdiff_t>(rng() % live.size()));
          ASSERT_TRUE(c.free(it->first));
          live.erase(it);
        } else {
          c.trim();
        }
        const auto s = c.stats();
        ASSERT_EQ(s.live, live.size());
        std::size_t live_bytes = 0;
        for (const auto& [a, n] : live) live_bytes += n;
        ASSERT_EQ(s.live_bytes, live_bytes);
        ASSERT_EQ(s.reserved, dev.bytes());
        ASSERT_LE(s.reserved, dev.cap);
      }
      for (const auto& [a, n] : live) ASSERT_TRUE(c.free(a));
      c.trim();
      EXPECT_EQ(c.stats().reserved, 0u);
      EXPECT_TRUE(dev.held.empty());
    }
    EXPECT_EQ(dev.grows, dev.releases);
    EXPECT_EQ(dev.bad_releases, 0u);
  }
}

}  // namespace
}  // namespace axe::cuda
