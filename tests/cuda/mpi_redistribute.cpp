// axe_cuda_mpi_test: the CUDA executor under mpirun, one process per GPU, NCCL bootstrapped by
// broadcasting the unique id over MPI. Every rank runs the same transitions; rank 0 gathers the
// destination shards and checks them with axe::verify. Exit code 0 on every rank when all pass,
// 1 when any fails, 77 (CTest SKIP_RETURN_CODE) when there are fewer GPUs than ranks.
//   mpirun -np 2 axe_cuda_mpi_test
#include <cuda_runtime_api.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "axe/cuda/executor.hpp"
#include "axe/cuda/nccl_comm.hpp"
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
  if (min_gpus < 1 || (size > 1 && min_gpus < size)) {
    if (rank == 0) std::printf("SKIP: %d ranks need %d GPUs, %d visible\n", size, size, min_gpus);
    MPI_Finalize();
    return 77;
  }
  int failures = 0;
  {
    cuda::NcclComm comm(MPI_COMM_WORLD, rank % gpus);
    cuda::CudaExecutor ex(&comm);
    const std::string mesh = "gpu=" + std::to_string(size);
    struct T {
      const char* name;
      AxisPlacement from, to;
    };
    for (const T& t : {T{"S(0)->R", Shard(0), Replicate()}, T{"P->R", Partial(), Replicate()},
                       T{"P(max)->S(0)", Partial(ReduceOp::Max), Shard(0)},
                       T{"S(0)->S(1)", Shard(0), Shard(1)}, T{"P(avg)->S(1)", Partial(ReduceOp::Avg), Shard(1)}}) {
      Mesh m = parse_mesh(mesh);
      PlanRequest r{shard({96, 130}, m, {t.from}), shard({96, 130}, m, {t.to}), DType::F64};
      RankPlan plan = plan_rank(r, rank);
      std::vector<double> src = fill_source(r.from, rank), dst(static_cast<std::size_t>(plan.buffers.back()));
      void *ds = nullptr, *dd = nullptr;
      cudaMalloc(&ds, src.size() * 8 + 8);
      cudaMalloc(&dd, dst.size() * 8 + 8);
      cudaMemcpy(ds, src.data(), src.size() * 8, cudaMemcpyHostToDevice);
      std::string err;
      try {
        ex.execute(plan, ds, dd);
        ex.synchronize();
      } catch (const std::exception& e) {
        err = e.what();
      }
      cudaMemcpy(dst.data(), dd, dst.size() * 8, cudaMemcpyDeviceToHost);
      cudaFree(ds);
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
      if (!err.empty()) std::printf("rank %d %s: %s\n", rank, t.name, err.c_str());
      if (rank == 0) {
        SimulationResult res;
        for (int k = 0; k < size; ++k)
          res.destination[k] = std::vector<double>(all.begin() + displs[static_cast<std::size_t>(k)],
                                                   all.begin() + displs[static_cast<std::size_t>(k)] +
                                                       counts[static_cast<std::size_t>(k)]);
        const std::string v = verify(r, res);
        std::printf("%-14s on %s: %s (%lld launches, %lld NCCL calls on rank 0)\n", t.name, mesh.c_str(),
                    v.empty() ? "OK" : v.c_str(), static_cast<long long>(ex.launches()),
                    static_cast<long long>(ex.nccl_calls()));
        if (!v.empty()) bad = 1;
      }
      failures += bad;
    }
  }
  int total_failures = 0;
  MPI_Allreduce(&failures, &total_failures, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0) std::printf("%s: %d failure(s)\n", total_failures ? "FAILED" : "PASSED", total_failures);
  MPI_Finalize();
  return total_failures ? 1 : 0;
}
