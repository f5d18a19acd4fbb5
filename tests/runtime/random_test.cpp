// Seeded random Axe layout pairs (interleaved, block-cyclic, permuted storage, offsets, replicas,
// partials, other meshes) over real MPI ranks, element by element. AXE_TEST_SEED replays a run.
#include <gtest/gtest.h>

#include <cstdio>

#include "plan/random_layouts.hpp"
#include "runtime_test_util.hpp"
#include "support/test_support.hpp"

namespace axe {
namespace {

TEST(RandomLayouts, RedistributeMatchesGlobalTensor) {
  const std::uint64_t seed = test::test_seed();
  auto g = test::make_rng(0x52554e54ull);
  const int world = test::rt().size();
  int ran = 0;
  for (int attempt = 0; attempt < 400 && ran < 40; ++attempt) {
    Mesh a = test::random_mesh(g);
    Mesh b = test::other_mesh(g, a);
    auto shape = test::random_shape(g);
    const bool partial = g() % 2;
    DistLayout from = g() % 2 ? test::random_general(g, shape, a, partial) : test::random_placements(g, shape, a, partial);
    DistLayout to = g() % 2 ? test::random_general(g, shape, b, partial) : test::random_placements(g, shape, b, partial);
    // Same decision on every rank: the generator and the world size are the same everywhere.
    if (test::max_rank(from) >= world || test::max_rank(to) >= world) continue;
    try {
      check_request({from, to, DType::F64});
    } catch (const Error&) {
      continue;  // e.g. a partial destination the source cannot produce
    }
    ++ran;
    EXPECT_EQ(test::check_redistribute(from, to, DType::F64), "")
        << "seed " << seed << " (AXE_TEST_SEED), pair " << ran << ": " << to_string(from) << " -> " << to_string(to);
  }
  EXPECT_GT(ran, 10) << "seed " << seed;
  RecordProperty("pairs", ran);
  if (test::rt().rank() == 0) std::printf("random layout pairs run: %d (seed %llu)\n", ran, static_cast<unsigned long long>(seed));
}

}  // namespace
}  // namespace axe
