// Faults on real ranks (run under mpirun by expect_fail_within.sh; tests/CMakeLists.txt):
//   fault start      construct the Runtime and redistribute S(0) -> R once; with a bad
//                    environment value on some ranks (on_rank.sh) every rank must fail at start-up
//                    with the same error naming the ranks and the variable
//   fault stop       rank 1 stops itself (SIGSTOP) before a redistribution: the others must fail
//                    within AXE_TIMEOUT_S
//   fault disagree   even ranks ask for S(0) -> S(1), odd ranks for S(0) -> R: every rank must
//                    fail at once, naming the disagreement
//   fault disagree-cached  every rank runs S(0) -> R twice (agreed once, then cached); then even
//                    ranks run it again (a cached call: no blocking agreement) while odd ranks ask
//                    for S(0) -> S(1): every rank must fail naming the disagreement, the cached
//                    ones through the background check (Runtime::agree_later)
//   fault stop-at-start  MPI is initialised by the program; rank 1 stops before constructing its
//                    Runtime: the others' start-up agreement must time out within AXE_TIMEOUT_S
// Each rank prints one line: "[rank N] finished" or "[rank N] error after T s: MESSAGE", and
// exits 3 on an error.
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <memory>
#include <string>

#include <mpi.h>

#include "axe/core/error.hpp"
#include "axe/runtime/dist_tensor.hpp"

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "";
  if (mode != "start" && mode != "stop" && mode != "disagree" && mode != "disagree-cached" &&
      mode != "stop-at-start") {
    std::fprintf(stderr, "usage: fault start|stop|disagree|disagree-cached|stop-at-start\n");
    return 2;
  }
  using clock = std::chrono::steady_clock;
  auto t0 = clock::now();
  std::unique_ptr<axe::Runtime> rt;
  if (mode == "stop-at-start") {
    int provided = 0, rank = 0;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 1) {
      std::fprintf(stderr, "[rank 1] stopping itself (SIGSTOP) before its Runtime\n");
      std::fflush(stderr);
      std::raise(SIGSTOP);
    }
    t0 = clock::now();
    try {
      axe::Runtime r(&argc, &argv);
      std::fprintf(stderr, "[rank %d] unexpectedly started\n", rank);
    } catch (const std::exception& e) {
      const double s = std::chrono::duration<double>(clock::now() - t0).count();
      std::fprintf(stderr, "[rank %d] error after %.1f s: %s\n", rank, s, e.what());
      return 3;  // without MPI_Finalize: a peer never answers
    }
    MPI_Finalize();
    return 0;
  }
  try {
    rt = std::make_unique<axe::Runtime>(&argc, &argv);
    axe::Mesh m = axe::parse_mesh("gpu=" + std::to_string(rt->size()));
    axe::HostTensor x({8, 6}, axe::DType::F64);
    for (std::int64_t i = 0; i < x.elements(); ++i) x.set(i, static_cast<double>(i));
    auto t = axe::DistTensor::from_global(x, m, {axe::Shard(0)});
    if (mode == "stop" && rt->rank() == 1) {
      std::fprintf(stderr, "[rank 1] stopping itself (SIGSTOP)\n");
      std::fflush(stderr);
      std::raise(SIGSTOP);
    }
    if (mode == "disagree-cached") {
      for (int i = 0; i < 2; ++i) t.redistribute(axe::shard({8, 6}, m, {axe::Replicate()})).synchronize();
    }
    t0 = clock::now();
    axe::AxisPlacement to = axe::Replicate();
    if (mode == "disagree" && rt->rank() % 2 == 0) to = axe::Shard(1);
    if (mode == "disagree-cached" && rt->rank() % 2 == 1) to = axe::Shard(1);
    auto y = t.redistribute(axe::shard({8, 6}, m, {to}));
    y.synchronize();
    std::fprintf(stderr, "[rank %d] finished\n", rt->rank());
    return 0;
  } catch (const std::exception& e) {
    const double s = std::chrono::duration<double>(clock::now() - t0).count();
    const char* launcher_rank = std::getenv("OMPI_COMM_WORLD_RANK");  // no Runtime: it failed to start
    if (!launcher_rank) launcher_rank = std::getenv("RANK");          // torchrun
    const std::string rank = rt ? std::to_string(rt->rank()) : launcher_rank ? launcher_rank : "?";
    std::fprintf(stderr, "[rank %s] error after %.1f s: %s\n", rank.c_str(), s, e.what());
    return 3;
  }
}
