// peer_bench: the peer transport on the GPUs there are, ranks sharing them round-robin (issue 17:
// "a one-GPU measurement of the transport's local path against device memcpy"). For every
// (transition, dtype, global size) it plans with plan_rank and runs the CUDA executor on a
// PeerComm two ways on the same cudaMalloc'd buffers, with receivers reading each message
// straight from its sender's input (AXE_PEER_DIRECT=1: no pack, no staging) and with every
// message packed into the sender's staging first (0), and times in the same run the natural
// bound: the GPU's device-to-device cudaMemcpyAsync of every destination byte it holds, i.e. per
// GPU the sum of the copy times of the destinations of the ranks on it (each rank copies its
// destination's bytes alone, in turn), the slowest GPU's. Ranks that share a GPU are separate
// processes, which the GPU time-slices (no MPS), so the two ways also pay for the switches.
//
//   mpirun --oversubscribe -np 2 peer_bench [--sizes 16M,256M] [--dtypes f32,bf16]
//            [--transitions S0-S1,S1-S0,S0-R,S1-R,S0-S1u] [--iters 20] [--warmup 3] [--rounds 2]
//            [--json FILE]
//
// Timing (all three alike): MPI_Barrier, CUDA event, the work, CUDA event, wait; an iteration's
// time is the slowest rank's (MPI_Allreduce MAX; the bound's: the slowest GPU's sum); a row's time
// is the best over --rounds rounds (the three ways alternated within each round) of the median of
// --iters iterations after --warmup untimed ones. "cpu us": host time of execute() (enqueue, including the wait for the
// senders' posts), median, slowest rank. Before timing, both ways run once and their
// destinations must be equal byte for byte on every rank ("check"), and the sources unchanged.
// Shapes are rows x 4096 (rows from the size and dtype); the `u` transitions use rows+1 x 4095.
// Exit 77 without a GPU (after checking the arguments).
#include <cuda_runtime_api.h>
#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "args.hpp"
#include "device_buffer.hpp"
#include "axe/core/bytes.hpp"
#include "axe/core/error.hpp"
#include "axe/cuda/check.hpp"
#include "axe/cuda/executor.hpp"
#include "axe/cuda/peer_comm.hpp"
#include "axe/plan/plan.hpp"

using namespace axe;

namespace {

struct Transition {
  std::string name;
  std::vector<AxisPlacement> from, to;
  bool uneven = false;
};

const std::vector<Transition>& all_transitions() {
  static const std::vector<Transition> t = {
      {"S0-S1", {Shard(0)}, {Shard(1)}},       {"S1-S0", {Shard(1)}, {Shard(0)}},
      {"S0-R", {Shard(0)}, {Replicate()}},     {"S1-R", {Shard(1)}, {Replicate()}},
      {"S0-S1u", {Shard(0)}, {Shard(1)}, true}, {"S1-Ru", {Shard(1)}, {Replicate()}, true},
  };
  return t;
}

std::vector<unsigned char> to_host(const void* p, std::int64_t bytes) {
  std::vector<unsigned char> h(static_cast<std::size_t>(bytes));
  if (bytes > 0) AXE_CUDA_CHECK(cudaMemcpy(h.data(), p, h.size(), cudaMemcpyDeviceToHost));
  return h;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int rc = 0;
  std::vector<const Transition*> chosen;
  std::vector<std::pair<std::string, std::int64_t>> bytes_list;
  std::vector<DType> types;
  int iters = 20, warmup = 3, rounds = 2;
  std::string json;
  try {  // a bad argument fails every rank alike: one line from rank 0, exit 2
    std::vector<std::string> sizes{"16M", "256M"}, dtypes{"f32"}, names{"S0-S1", "S1-S0", "S0-R", "S1-R", "S0-S1u"};
    for (int i = 1; i < argc; ++i) {
      const std::string a = argv[i];
      auto value = [&]() -> std::string {
        if (i + 1 >= argc) fail("peer_bench: " + a + " needs a value");
        return argv[++i];
      };
      if (a == "--sizes") sizes = examples::list_arg(value());
      else if (a == "--dtypes") dtypes = examples::list_arg(value());
      else if (a == "--transitions") names = examples::list_arg(value());
      else if (a == "--iters") iters = static_cast<int>(examples::int_arg("--iters", value(), 1, 100000));
      else if (a == "--warmup") warmup = static_cast<int>(examples::int_arg("--warmup", value(), 1, 100000));
      else if (a == "--rounds") rounds = static_cast<int>(examples::int_arg("--rounds", value(), 1, 100));
      else if (a == "--json") json = value();
      else fail("peer_bench: unknown argument '" + a + "'");
    }
    for (const auto& n : names) {
      auto it = std::find_if(all_transitions().begin(), all_transitions().end(),
                             [&](const Transition& t) { return t.name == n; });
      if (it == all_transitions().end()) {
        std::string known;
        for (const auto& t : all_transitions()) known += (known.empty() ? "" : ", ") + t.name;
        fail("peer_bench: unknown transition '" + n + "' (known: " + known + ")");
      }
      chosen.push_back(&*it);
    }
    for (const auto& s : sizes) bytes_list.push_back({s, parse_bytes(s, "--sizes")});
    for (const auto& d : dtypes) types.push_back(parse_dtype(d));
  } catch (const std::exception& e) {
    if (rank == 0) std::fprintf(stderr, "peer_bench: %s\n", e.what());
    MPI_Finalize();
    return 2;
  }
  try {

    int gpus = 0;
    if (cudaGetDeviceCount(&gpus) != cudaSuccess) gpus = 0;
    int min_gpus = gpus;
    MPI_Allreduce(&gpus, &min_gpus, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (min_gpus < 1) {
      if (rank == 0) std::printf("peer_bench: no GPU visible; nothing to measure\n");
      MPI_Finalize();
      return 77;
    }
    cuda::PeerComm comm(MPI_COMM_WORLD, rank % min_gpus);
    cuda::CudaExecutor direct(&comm), packed(&comm);
    direct.set_peer_direct(true);
    packed.set_peer_direct(false);
    cudaStream_t bound_stream = nullptr;
    AXE_CUDA_CHECK(cudaStreamCreateWithFlags(&bound_stream, cudaStreamNonBlocking));
    cudaEvent_t e0 = nullptr, e1 = nullptr;
    AXE_CUDA_CHECK(cudaEventCreate(&e0));
    AXE_CUDA_CHECK(cudaEventCreate(&e1));
    const Mesh mesh = parse_mesh("gpu=" + std::to_string(size));
    if (rank == 0) {
      std::printf("peer_bench: %d rank(s) on %d GPU(s), the peer transport; best of %d round(s) of the median of %d "
                  "iterations (slowest rank)\n\n", size, min_gpus, rounds, iters);
      std::printf("%-8s %-5s %6s %10s %10s %10s %8s %8s %6s %9s %9s  %s\n", "trans", "type", "size", "direct ms",
                  "packed ms", "memcpy ms", "d/memcpy", "p/memcpy", "reads", "cpu us d", "cpu us p", "check");
    }
    std::string rows;
    for (const Transition* t : chosen)
      for (const DType dt : types)
        for (const auto& [label, bytes] : bytes_list) {
          const std::int64_t es = static_cast<std::int64_t>(size_of(dt));
          const std::int64_t r = std::max<std::int64_t>(bytes / es / 4096, 16);
          const std::vector<std::int64_t> shape = t->uneven ? std::vector<std::int64_t>{r + 1, 4095}
                                                             : std::vector<std::int64_t>{r, 4096};
          const PlanRequest req{shard(std::span<const std::int64_t>(shape), mesh, std::span<const AxisPlacement>(t->from)),
                                shard(std::span<const std::int64_t>(shape), mesh, std::span<const AxisPlacement>(t->to)),
                                dt};
          const RankPlan plan = plan_rank(req, rank);
          const std::int64_t src_bytes = plan.buffers.front() * es, dst_bytes = plan.buffers.back() * es;
          examples::DeviceBuffer src(src_bytes), dst(dst_bytes), bound_src(dst_bytes);
          // (memsets on the legacy stream, finished before the executors' streams use the buffers)
          AXE_CUDA_CHECK(cudaMemset(src.p, 17 + rank, static_cast<std::size_t>(src_bytes)));
          AXE_CUDA_CHECK(cudaMemset(bound_src.p, 3, static_cast<std::size_t>(dst_bytes)));
          const auto before = to_host(src.p, src_bytes);
          // Both ways once: equal destinations, unchanged sources.
          AXE_CUDA_CHECK(cudaMemset(dst.p, 0x5A, static_cast<std::size_t>(dst_bytes)));
          AXE_CUDA_CHECK(cudaDeviceSynchronize());
          packed.execute(plan, src.p, dst.p);
          packed.synchronize();
          const auto want = to_host(dst.p, dst_bytes);
          AXE_CUDA_CHECK(cudaMemset(dst.p, 0xA5, static_cast<std::size_t>(dst_bytes)));
          AXE_CUDA_CHECK(cudaDeviceSynchronize());
          direct.execute(plan, src.p, dst.p);
          direct.synchronize();
          long long reads = direct.input_reads();
          int bad = to_host(dst.p, dst_bytes) != want || to_host(src.p, src_bytes) != before ? 1 : 0;
          MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
          MPI_Allreduce(MPI_IN_PLACE, &reads, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
          if (bad) rc = 1;
          // ways: 0 direct, 1 packed, 2 memcpy
          double best_ms[3] = {1e30, 1e30, 1e30}, best_us[2] = {1e30, 1e30};
          for (int round = 0; round < rounds; ++round)
            for (int way = 0; way < 3; ++way) {
              cuda::CudaExecutor* ex = way == 0 ? &direct : way == 1 ? &packed : nullptr;
              cudaStream_t s = ex ? ex->stream() : bound_stream;
              std::vector<double> ms, us;
              for (int i = 0; i < warmup + iters; ++i) {
                if (!ex) {  // the bound: each rank's copy alone, in turn; summed per GPU
                  std::vector<double> per_gpu(static_cast<std::size_t>(min_gpus), 0.0);
                  for (int turn = 0; turn < size; ++turn) {
                    MPI_Barrier(MPI_COMM_WORLD);
                    float gpu_ms = 0;
                    if (turn == rank) {
                      AXE_CUDA_CHECK(cudaEventRecord(e0, s));
                      AXE_CUDA_CHECK(cudaMemcpyAsync(dst.p, bound_src.p, static_cast<std::size_t>(dst_bytes),
                                                     cudaMemcpyDeviceToDevice, s));
                      AXE_CUDA_CHECK(cudaEventRecord(e1, s));
                      AXE_CUDA_CHECK(cudaEventSynchronize(e1));
                      AXE_CUDA_CHECK(cudaEventElapsedTime(&gpu_ms, e0, e1));
                    }
                    double t_ms = gpu_ms;
                    MPI_Bcast(&t_ms, 1, MPI_DOUBLE, turn, MPI_COMM_WORLD);
                    per_gpu[static_cast<std::size_t>(turn % min_gpus)] += t_ms;
                  }
                  if (i >= warmup) ms.push_back(*std::max_element(per_gpu.begin(), per_gpu.end()));
                  continue;
                }
                MPI_Barrier(MPI_COMM_WORLD);
                AXE_CUDA_CHECK(cudaEventRecord(e0, s));
                const auto h0 = std::chrono::steady_clock::now();
                ex->execute(plan, src.p, dst.p);
                const auto h1 = std::chrono::steady_clock::now();
                AXE_CUDA_CHECK(cudaEventRecord(e1, s));
                ex->synchronize();
                AXE_CUDA_CHECK(cudaEventSynchronize(e1));
                float gpu_ms = 0;
                AXE_CUDA_CHECK(cudaEventElapsedTime(&gpu_ms, e0, e1));
                double v[2] = {gpu_ms, std::chrono::duration<double, std::micro>(h1 - h0).count()};
                MPI_Allreduce(MPI_IN_PLACE, v, 2, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
                if (i < warmup) continue;
                ms.push_back(v[0]);
                us.push_back(v[1]);
              }
              best_ms[way] = std::min(best_ms[way], examples::median(ms));
              if (way < 2) best_us[way] = std::min(best_us[way], examples::median(us));
            }
          if (rank == 0) {
            std::printf("%-8s %-5s %6s %10.4f %10.4f %10.4f %8.2f %8.2f %6lld %9.1f %9.1f  %s\n", t->name.c_str(),
                        std::string(to_string(dt)).c_str(), label.c_str(), best_ms[0], best_ms[1], best_ms[2],
                        best_ms[0] / best_ms[2], best_ms[1] / best_ms[2], reads, best_us[0], best_us[1],
                        bad ? "FAILED" : "same");
            std::fflush(stdout);
          }
          char buf[512];
          std::snprintf(buf, sizeof buf,
                        "%s{\"transition\":\"%s\",\"dtype\":\"%s\",\"size\":%lld,\"direct_ms\":%.6f,\"packed_ms\":%.6f,"
                        "\"memcpy_ms\":%.6f,\"reads\":%lld,\"cpu_us_direct\":%.3f,\"cpu_us_packed\":%.3f,\"check\":%s}",
                        rows.empty() ? "" : ",\n", t->name.c_str(), std::string(to_string(dt)).c_str(),
                        static_cast<long long>(bytes), best_ms[0], best_ms[1], best_ms[2], reads, best_us[0],
                        best_us[1], bad ? "false" : "true");
          rows += buf;
        }
    if (rank == 0 && !json.empty()) {
      std::ofstream f(json);
      f << "{\"tool\":\"axe peer_bench\",\"ranks\":" << size << ",\"gpus\":" << min_gpus << ",\"results\":[\n"
        << rows << "\n]}\n";
    }
    cudaEventDestroy(e0);
    cudaEventDestroy(e1);
    cudaStreamDestroy(bound_stream);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "[rank %d] peer_bench: %s\n", rank, e.what());
    std::fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  MPI_Finalize();
  return rc;
}
