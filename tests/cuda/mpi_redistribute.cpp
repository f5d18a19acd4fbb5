// axe_cuda_mpi_test: the CUDA executor under mpirun. With a GPU per rank it runs on NCCL
// (bootstrapped by broadcasting the unique id over MPI); with fewer GPUs than ranks, or with
// AXE_PEER_TRANSPORT=2, on the peer transport (CUDA IPC; ranks may share a GPU). Every rank runs
// the same transitions (even and uneven shapes, partial sources, a 2-D mesh on 4 ranks); rank 0
// gathers the destination shards and checks them with axe::verify, and every rank checks that its
// source is unchanged. Exit code 0 on every rank when all pass, 1 when any fails, 77 (CTest
// SKIP_RETURN_CODE) without a GPU.
// `mixed`: both transports on one node with a GPU per rank (exit 77 with fewer GPUs): every
// transition runs three times, the steps' transports chosen by a model in which only the peer
// all-to-all and reduce-scatter have a price (far below NCCL's), then every step forced onto the
// peer transport, then onto NCCL; each run is verified, and in the first exactly the all-to-all
// and reduce-scatter steps that move data are on the peer transport.
// With AXE_PEER_CHUNK_BYTES set (the _chunks tests: a few KiB), steps on the peer transport run in
// chunks, and the run fails unless some step did. Each transition runs three times on the same
// buffers: plans without peer-transport steps run the third time as a CUDA graph (checked).
// On the peer transport with AXE_PEER_DIRECT=1 (the default), every third transition takes its
// source from the stream-ordered pool (cudaMallocAsync), which CUDA IPC cannot export, so its
// messages must all go through staging (no read from a sender's input on any rank), and every
// third another one 264 bytes into its allocation; the run fails unless the others read some
// message straight from a sender's input.
//   mpirun -np 2 axe_cuda_mpi_test [mixed]
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "axe/cuda/executor.hpp"
#include "axe/cuda/nccl_comm.hpp"
#include "axe/cuda/peer_comm.hpp"
#include "axe/core/tunables.hpp"
#include "axe/plan/passes.hpp"
#include "axe/plan/plan.hpp"
#include "axe/exec/simulate.hpp"

using namespace axe;

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 1, gpus = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (cudaGetDeviceCount(&gpus) != cudaSuccess) gpus = 0;
  int min_gpus = gpus;
  MPI_Allreduce(&gpus, &min_gpus, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (min_gpus < 1) {
    if (rank == 0) std::printf("SKIP: no GPU visible\n");
    MPI_Finalize();
    return 77;
  }
  const bool mixed = argc > 1 && std::string(argv[1]) == "mixed";
  if (mixed && min_gpus < size) {
    if (rank == 0) std::printf("SKIP: mixed transports need a GPU per rank (%d ranks, %d GPUs)\n", size, min_gpus);
    MPI_Finalize();
    return 77;
  }
  const bool peer = !mixed && (min_gpus < size || tunable_int("AXE_PEER_TRANSPORT") == 2);
  int failures = 0;
  std::int64_t chunked = 0;  // plans a step of which ran in chunks
  std::int64_t read_inputs = 0;  // plans that read a message straight from a sender's input
  const bool direct = (peer || mixed) && tunable_int("AXE_PEER_DIRECT") != 0;
  int case_index = 0;
  {
    std::unique_ptr<cuda::NcclComm> nccl;
    std::unique_ptr<cuda::PeerComm> peers;
    if (peer || mixed) peers = std::make_unique<cuda::PeerComm>(MPI_COMM_WORLD, rank % gpus);
    if (!peer) nccl = std::make_unique<cuda::NcclComm>(MPI_COMM_WORLD, rank % gpus);
    auto executor = mixed  ? std::make_unique<cuda::CudaExecutor>(nccl.get(), peers.get())
                    : peer ? std::make_unique<cuda::CudaExecutor>(peers.get())
                           : std::make_unique<cuda::CudaExecutor>(nccl.get());
    cuda::CudaExecutor& ex = *executor;
    const CostModel model = CostModel::parse("peer all-to-all 0 1000000\npeer reduce-scatter 0 1000000\n");
    ex.set_cost_model(&model);
    if (rank == 0)
      std::printf("%d ranks on %d GPU(s): %s\n", size, min_gpus,
                  mixed  ? "NCCL and the peer transport, per step"
                  : peer ? "peer transport (CUDA IPC)"
                         : "NCCL");
    struct T {
      std::string mesh, from, to;
      std::vector<std::int64_t> shape;
    };
    const std::string line = "gpu=" + std::to_string(size);
    std::vector<T> cases;
    for (std::vector<std::int64_t> shape : {std::vector<std::int64_t>{96, 130}, std::vector<std::int64_t>{97, 131}})
      for (auto [from, to] : {std::pair{"S(0)", "R"}, {"P", "R"}, {"P(max)", "S(0)"}, {"S(0)", "S(1)"},
                              {"P(avg)", "S(1)"}, {"S(1)", "S(0)"}, {"R", "S(1)"}, {"S(1)", "R"}})
        cases.push_back({line, from, to, shape});
    if (size == 4)
      for (auto [from, to] : {std::pair{"S(0),S(1)", "S(1),S(0)"}, {"P,S(0)", "S(1),P"}, {"S(0),R", "R,S(1)"},
                              {"P,R", "R,S(0)"}})
        cases.push_back({"x=2,y=2", from, to, {37, 70}});
    const cuda::StepTransport modes[] = {cuda::StepTransport::Model, cuda::StepTransport::Peer,
                                         cuda::StepTransport::Network};
    for (int mode = 0; mode < (mixed ? 3 : 1); ++mode)
    for (const T& t : cases) {
      if (mixed) ex.set_step_transport(modes[mode]);
      Mesh m = parse_mesh(t.mesh);
      auto pf = parse_placements(t.from), pt = parse_placements(t.to);
      PlanRequest r{shard(std::span<const std::int64_t>(t.shape), m, std::span<const AxisPlacement>(pf)),
                    shard(std::span<const std::int64_t>(t.shape), m, std::span<const AxisPlacement>(pt)), DType::F64};
      const std::string name = t.from + "->" + t.to + " " + std::to_string(t.shape[0]) + "x" + std::to_string(t.shape[1]) +
                               (mixed ? std::string(mode == 0 ? " model" : mode == 1 ? " peer" : " nccl") : "");
      RankPlan plan = plan_rank(r, rank);
      std::vector<double> src = fill_source(r.from, rank), dst(static_cast<std::size_t>(plan.buffers.back()));
      void *ds = nullptr, *dd = nullptr, *allocated = nullptr;
      const bool pooled = direct && case_index % 3 == 2;  // a source CUDA IPC cannot export
      const std::size_t inside = direct && case_index % 3 == 1 ? 264 : 0;  // the source 264 bytes into its allocation
      ++case_index;
      if (pooled) {
        cudaMallocAsync(&allocated, src.size() * 8 + 8, nullptr);
        cudaStreamSynchronize(nullptr);
      } else {
        cudaMalloc(&allocated, src.size() * 8 + 8 + inside);
      }
      ds = static_cast<char*>(allocated) + inside;
      cudaMalloc(&dd, dst.size() * 8 + 8);
      cudaMemcpy(ds, src.data(), src.size() * 8, cudaMemcpyHostToDevice);
      // Three runs on the same buffers, the destination garbage before each: the second captures
      // a CUDA graph and the third replays it (AXE_CUDA_GRAPHS=1, plans without peer steps), so
      // the destination verified below is the replay's.
      std::string err;
      try {
        for (int rep = 0; rep < 3; ++rep) {
          cudaMemset(dd, 0x5A, dst.size() * 8);
          // The legacy stream's memset (and the source's copy from pageable memory, which may
          // return before it lands) finish before the executor's own stream runs.
          cudaDeviceSynchronize();
          ex.execute(plan, ds, dd);
          ex.synchronize();
        }
      } catch (const std::exception& e) {
        err = e.what();
      }
      if (err.empty()) {
        const std::vector<bool> on_peer = ex.peer_steps(plan);
        const bool peer_step = std::find(on_peer.begin(), on_peer.end(), true) != on_peer.end();
        if (ex.graphed() != (ex.graphs() && !peer_step))
          err = std::string("the third run ") + (ex.graphed() ? "launched" : "did not launch") + " a CUDA graph";
      }
      // The transports the steps ran on ("N" NCCL, "P" peer), and the choice the model implies.
      std::string on;
      if (mixed && err.empty()) {
        const std::vector<bool> ps = ex.peer_steps(plan);
        const RankPlan exec = run_passes(plan, cuda_passes());
        for (std::size_t i = 0; i < ps.size(); ++i) {
          on += ps[i] ? 'P' : 'N';
          const Step& st = exec.steps[i];
          const bool cheap = (st.kind == StepKind::AllToAll || st.kind == StepKind::ReduceScatter) && st.group.size() > 1;
          const bool want = mode == 1 || (mode == 0 && cheap);
          if (ps.size() != exec.steps.size() || ps[i] != want)
            err = "step " + std::to_string(i) + " (" + std::string(to_string(st.kind)) + ") ran on " +
                  (ps[i] ? "the peer transport" : "NCCL") + ", expected the other";
        }
      }
      if (err.empty() && pooled && ex.source_reads() > 0)
        err = std::to_string(ex.source_reads()) + " message(s) read from a pooled source, which cannot be exported";
      if (ex.input_reads() > 0) ++read_inputs;
      std::int64_t most_chunks = 1;
      for (const std::int64_t k : ex.pipeline_chunks(plan)) most_chunks = std::max(most_chunks, k);
      if (most_chunks > 1) ++chunked;
      cudaMemcpy(dst.data(), dd, dst.size() * 8, cudaMemcpyDeviceToHost);
      std::vector<double> after(src.size());
      cudaMemcpy(after.data(), ds, src.size() * 8, cudaMemcpyDeviceToHost);
      if (std::memcmp(after.data(), src.data(), src.size() * 8) != 0 && err.empty())
        err = "the source shard changed";
      if (pooled) {
        cudaFreeAsync(allocated, nullptr);
        cudaStreamSynchronize(nullptr);
      } else {
        cudaFree(allocated);
      }
      cudaFree(dd);
      // gather to rank 0
      int n = static_cast<int>(dst.size());
      std::vector<int> counts(static_cast<std::size_t>(size)), displs(static_cast<std::size_t>(size));
      MPI_Gather(&n, 1, MPI_INT, counts.data(), 1, MPI_INT, 0, MPI_COMM_WORLD);
      int total = 0;
      for (int k = 0; k < size; ++k) {
        displs[static_cast<std::size_t>(k)] = total;
        total += counts[static_cast<std::size_t>(k)];
      }
      std::vector<double> all(static_cast<std::size_t>(total));
      MPI_Gatherv(dst.data(), n, MPI_DOUBLE, all.data(), counts.data(), displs.data(), MPI_DOUBLE, 0,
                  MPI_COMM_WORLD);
      int bad = err.empty() ? 0 : 1;
      if (!err.empty()) std::printf("rank %d %s: %s\n", rank, name.c_str(), err.c_str());
      if (rank == 0) {
        SimulationResult res;
        for (int k = 0; k < size; ++k)
          res.destination[k] = std::vector<double>(all.begin() + displs[static_cast<std::size_t>(k)],
                                                   all.begin() + displs[static_cast<std::size_t>(k)] +
                                                       counts[static_cast<std::size_t>(k)]);
        const std::string v = verify(r, res);
        std::printf("%-34s on %s: %s (%lld launches, %lld NCCL calls, %lld read from inputs (%lld from the source%s), at most %lld chunks on rank 0%s%s)\n",
                    name.c_str(), t.mesh.c_str(), v.empty() ? "OK" : v.c_str(), static_cast<long long>(ex.launches()),
                    static_cast<long long>(ex.nccl_calls()), static_cast<long long>(ex.input_reads()),
                    static_cast<long long>(ex.source_reads()),
                    pooled ? ", pooled" : "", static_cast<long long>(most_chunks),
                    on.empty() ? "" : ", steps ", on.c_str());
        if (!v.empty()) bad = 1;
      }
      failures += bad;
    }
  }
  if (std::getenv("AXE_PEER_CHUNK_BYTES") && (peer || mixed) && chunked == 0) {
    std::printf("rank %d: AXE_PEER_CHUNK_BYTES is set, but no step ran in chunks\n", rank);
    ++failures;
  }
  // Reads from inputs need unchunked steps: not with AXE_PEER_CHUNK_BYTES.
  long long reads = read_inputs, all_reads = 0;
  MPI_Allreduce(&reads, &all_reads, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
  if (direct && !std::getenv("AXE_PEER_CHUNK_BYTES") && all_reads == 0) {
    if (rank == 0) std::printf("AXE_PEER_DIRECT=1, but no message was read from a sender's input\n");
    ++failures;
  }
  int total_failures = 0;
  MPI_Allreduce(&failures, &total_failures, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0) std::printf("%s: %d failure(s)\n", total_failures ? "FAILED" : "PASSED", total_failures);
  MPI_Finalize();
  return total_failures ? 1 : 0;
}
