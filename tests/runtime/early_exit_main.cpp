// A job whose rank 1 returns before a collective step of a redistribution: the other ranks must
// fail with an axe::Error within AXE_TIMEOUT_S instead of hanging, and the error names the plan's
// step and group ("step 0 of 1 (all-gather on group {0,1,2})"). Run by expect_fail_within.sh.
//
// The survivors run the plan through the backend directly: DistTensor::redistribute would stop
// them earlier, in its agreement (which times out alike, naming "(agreement)").
#include <cstdio>

#include "axe/runtime/dist_tensor.hpp"
#include "axe/core/error.hpp"

int main(int argc, char** argv) {
  axe::Runtime rt(&argc, &argv);
  try {
    axe::Mesh m = axe::parse_mesh("gpu=" + std::to_string(rt.size()));
    axe::HostTensor x({8, 4}, axe::DType::F32);
    auto t = axe::DistTensor::from_global(x, m, {axe::Shard(0)});  // every rank takes part
    if (rt.rank() == 1) {
      std::fprintf(stderr, "[rank 1] returning early on purpose\n");
      return 0;
    }
    axe::PlanRequest req{t.layout(), axe::shard({8, 4}, m, {axe::Replicate()}), axe::DType::F32};
    auto plan = axe::cached_plan_rank(req, rt.rank());
    auto dst = rt.backend().allocate(static_cast<std::size_t>(plan->buffers.back() * 4));
    rt.backend().execute(*plan, t.buffer(), *dst);
    std::fprintf(stderr, "[rank %d] unexpectedly finished\n", rt.rank());
    return 0;
  } catch (const axe::Error& e) {
    std::fprintf(stderr, "[rank %d] axe::Error: %s\n", rt.rank(), e.what());
    return 3;
  }
}
