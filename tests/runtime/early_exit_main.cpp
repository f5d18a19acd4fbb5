// A job whose rank 1 returns before a collective redistribution: the other ranks must fail with
// an axe::Error within AXE_TIMEOUT_S instead of hanging. Run by expect_fail_within.sh.
#include <cstdio>

#include "axe/dist_tensor.hpp"
#include "axe/error.hpp"

int main(int argc, char** argv) {
  axe::Runtime rt(&argc, &argv);
  if (rt.rank() == 1) {
    std::fprintf(stderr, "[rank 1] returning early on purpose\n");
    return 0;
  }
  try {
    axe::Mesh m = axe::parse_mesh("gpu=" + std::to_string(rt.size()));
    axe::HostTensor x({8, 4}, axe::DType::F32);
    auto t = axe::DistTensor::from_global(x, m, {axe::Shard(0)});
    auto r = t.redistribute({axe::Replicate()});
    std::fprintf(stderr, "[rank %d] unexpectedly finished\n", rt.rank());
    return 0;
  } catch (const axe::Error& e) {
    std::fprintf(stderr, "[rank %d] axe::Error: %s\n", rt.rank(), e.what());
    return 3;
  }
}
