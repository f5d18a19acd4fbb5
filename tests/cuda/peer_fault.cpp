// axe_cuda_peer_fault: the peer transport's failure and lifetime cases under mpirun, with the
// executor on a PeerComm (ranks may share one GPU). Each rank prints one line:
// "[rank N] finished ..." or "[rank N] error after T s: MESSAGE" (exit 3).
//   peer_fault exit     every rank prepares and connects S(0) -> S(1) (the handles are
//                       exchanged), then rank 1 frees its executor and transport (its staging
//                       and flags) and finalizes MPI without running the plan: the others wait on
//                       its ready flag on their streams, and synchronize() must fail with a
//                       clear error within AXE_TIMEOUT_S, and still tear down
//   peer_fault stop     the same, rank 1 stopping itself (SIGSTOP) instead of exiting
//   peer_fault repeat   10,000 reshards cycling over 100 plans (more than the executor's cache of
//                       64, so plans are evicted, their peers' staging unmapped and mapped again):
//                       every result right, and the GPU's free memory the same after the first
//                       1,000 and after all of them (no leaked staging or mapping); with
//                       AXE_PEER_DIRECT=1 each call maps a source not seen for 99 calls, and at
//                       most PeerComm::kMapsPerPeer per peer stay mapped at the end
// Exit 77 (skip) without a GPU.
#include <cuda_runtime_api.h>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "axe/core/error.hpp"
#include "axe/cuda/executor.hpp"
#include "axe/cuda/peer_comm.hpp"
#include "axe/exec/simulate.hpp"
#include "axe/plan/plan.hpp"

using namespace axe;
using clock_type = std::chrono::steady_clock;

namespace {

PlanRequest request(std::int64_t rows, std::int64_t cols, int size) {
  const Mesh m = parse_mesh("gpu=" + std::to_string(size));
  const std::vector<std::int64_t> shape = {rows, cols};
  const std::vector<AxisPlacement> from = {Shard(0)}, to = {Shard(1)};
  return PlanRequest{shard(std::span<const std::int64_t>(shape), m, std::span<const AxisPlacement>(from)),
                     shard(std::span<const std::int64_t>(shape), m, std::span<const AxisPlacement>(to)), DType::F64};
}

// Device buffers of one plan on this rank, with its source filled.
struct Buffers {
  void* src = nullptr;
  void* dst = nullptr;
  std::vector<double> want;
  Buffers(const PlanRequest& r, const RankPlan& p, int rank) {
    const std::vector<double> s = fill_source(r.from, rank);
    want = reference_destination(r.from, r.to).at(rank);
    cudaMalloc(&src, s.size() * 8 + 8);
    cudaMalloc(&dst, static_cast<std::size_t>(p.buffers.back()) * 8 + 8);
    cudaMemcpy(src, s.data(), s.size() * 8, cudaMemcpyHostToDevice);
    cudaDeviceSynchronize();  // a copy from pageable memory may return before it lands
  }
  ~Buffers() {
    cudaFree(src);
    cudaFree(dst);
  }
  bool right() const {
    std::vector<double> got(want.size());
    cudaMemcpy(got.data(), dst, got.size() * 8, cudaMemcpyDeviceToHost);
    for (std::size_t i = 0; i < got.size(); ++i)
      if (!(got[i] == want[i] || (got[i] != got[i] && want[i] != want[i]))) return false;
    return true;
  }
};

std::size_t free_memory() {
  std::size_t f = 0, t = 0;
  cudaMemGetInfo(&f, &t);
  return f;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "";
  if (mode != "exit" && mode != "stop" && mode != "repeat") {
    std::fprintf(stderr, "usage: peer_fault exit|stop|repeat\n");
    return 2;
  }
  MPI_Init(&argc, &argv);
  int rank = 0, size = 1, gpus = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (cudaGetDeviceCount(&gpus) != cudaSuccess || gpus < 1) {
    if (rank == 0) std::printf("skipped: no GPU visible\n");
    MPI_Finalize();
    return 77;
  }
  auto t0 = clock_type::now();
  try {
    auto comm = std::make_unique<cuda::PeerComm>(MPI_COMM_WORLD, rank % gpus);
    auto executor = std::make_unique<cuda::CudaExecutor>(comm.get());
    cuda::CudaExecutor& ex = *executor;
    if (mode == "exit" || mode == "stop") {
      const PlanRequest r = request(256, 512, size);
      const RankPlan plan = plan_rank(r, rank);
      Buffers b(r, plan, rank);
      ex.prepare_local(plan);
      ex.connect(plan);  // collective: handles and message tables exchanged
      MPI_Barrier(MPI_COMM_WORLD);
      if (rank == 1) {
        std::fprintf(stderr, "[rank 1] %s before running the plan\n", mode == "exit" ? "exiting" : "stopping itself (SIGSTOP)");
        std::fflush(stderr);
        if (mode == "stop") std::raise(SIGSTOP);
        executor.reset();
        comm.reset();
        MPI_Finalize();  // waits there for the others (Open MPI's finalize fence)
        return 0;
      }
      t0 = clock_type::now();
      ex.execute(plan, b.src, b.dst);
      ex.synchronize();
      std::fprintf(stderr, "[rank %d] finished (unexpectedly)\n", rank);
    } else {
      std::vector<PlanRequest> requests;
      std::vector<RankPlan> plans;
      for (int k = 0; k < 100; ++k) requests.push_back(request(24 + k, 40 + 2 * k, size));
      for (const auto& r : requests) plans.push_back(plan_rank(r, rank));
      std::vector<std::unique_ptr<Buffers>> bufs;
      for (int k = 0; k < 100; ++k) bufs.push_back(std::make_unique<Buffers>(requests[k], plans[k], rank));
      std::size_t after_warmup = 0;
      int wrong = 0;
      for (int i = 0; i < 10000; ++i) {
        const int k = i % 100;
        cudaMemset(bufs[k]->dst, 0, static_cast<std::size_t>(plans[k].buffers.back()) * 8);
        cudaDeviceSynchronize();  // the legacy stream's memset before the executor's stream
        ex.execute(plans[k], bufs[k]->src, bufs[k]->dst);
        ex.synchronize();
        if (!bufs[k]->right()) ++wrong;
        if (i == 999) {
          MPI_Barrier(MPI_COMM_WORLD);
          after_warmup = free_memory();
        }
      }
      MPI_Barrier(MPI_COMM_WORLD);
      const std::size_t end = free_memory();
      const double leaked_mib = (static_cast<double>(after_warmup) - static_cast<double>(end)) / (1 << 20);
      const std::size_t maps = comm->mapped_inputs(), most = cuda::PeerComm::kMapsPerPeer * static_cast<std::size_t>(size - 1);
      std::fprintf(stderr,
                   "[rank %d] finished: 10000 reshards over 100 plans, %d wrong, free memory %+.1f MiB, %zu peer "
                   "inputs mapped (at most %zu)\n",
                   rank, wrong, -leaked_mib, maps, most);
      int bad = wrong > 0 || leaked_mib > 2.0 || maps > most ? 1 : 0, any = 0;
      MPI_Allreduce(&bad, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
      MPI_Finalize();
      return any ? 1 : 0;
    }
  } catch (const std::exception& e) {
    // The executor, transport and buffers are torn down by now (the unwinding above): a failed
    // transport must not leave them waiting for the peer.
    const double s = std::chrono::duration<double>(clock_type::now() - t0).count();
    std::fprintf(stderr, "[rank %d] error after %.1f s: %s\n", rank, s, e.what());
    std::fflush(stderr);
    std::_Exit(3);  // without MPI_Finalize: a peer never answers
  }
  MPI_Finalize();
  return 0;
}
