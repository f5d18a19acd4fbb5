// reshard_bench: redistribution on the CUDA executor against the raw NCCL collective (or
// cudaMemcpy) that moves the same bytes, one process per GPU under mpirun (issue 5).
//
//   mpirun -np 2 reshard_bench [--sizes 1M,16M,256M,1G] [--dtypes f32,bf16]
//                              [--transitions S0-R,P-S1,...] [--iters 20] [--warmup 3]
//                              [--json FILE] [--list] [--dry-run]
//
// For every (transition, dtype, global size) it plans with cached_plan_rank, runs CudaExecutor on
// device buffers, and in the same run times the natural lower bound on the same buffers:
//   S->R: ncclAllGather          P->R: ncclAllReduce       P->S: ncclReduceScatter
//   S->S (all-to-all): grouped ncclSend/ncclRecv of equal blocks (self block included, as
//   nccl-tests' alltoall)        R->S: cudaMemcpy D2D of the local shard's bytes
//   2-D permute: one ncclSend/ncclRecv of the shard with the transpose partner; other 2-D
//   exchanges: the plan's own messages as one grouped ncclSend/ncclRecv, each peer's bytes
//   contiguous (the same peers and bytes, no pack or unpack). An earlier version spread the
//   busiest rank's bytes evenly over every peer of every rank; that moved twice the bytes of
//   (S0,R)->(R,S0), where only half the ranks receive, and ran 2x slower than axe itself.
// Timing (both sides alike): MPI_Barrier, CUDA event, the work, CUDA event, wait; the iteration's
// time is the slowest rank's (MPI_Allreduce MAX); the reported time is the median of --iters
// (>= 20 by default) timed iterations after --warmup untimed ones (the first also prepares the
// plan and splits communicators). CPU overhead: host time of cached_plan_rank + execute() (plan
// lookup and enqueue, no wait) per timed iteration, median, slowest rank. Staging: the device
// bytes CudaExecutor allocated for the plan (intermediate buffers and staging slots), busiest
// rank; the JSON also has the planner's estimate (plan_staging_bytes) and the pipeline chunks.
//
// Bandwidths: algbw = global tensor bytes / time. busbw follows nccl-tests for the bound's
// collective (all-gather, reduce-scatter, all-to-all: algbw * (n-1)/n; all-reduce: 2(n-1)/n;
// send/recv: per-rank bytes / time); for a memcpy bound it is the local bytes read + written /
// time (device memory bandwidth).
//
// Shapes are 2-D, rows x 4096 (rows from the size and dtype); the uneven cases use rows+1 x 4095
// (no dim divisible by the mesh). Transitions on the 2x2 mesh need exactly 4 ranks and are
// skipped with a message otherwise. Without GPUs (or with fewer than ranks) it says so and exits
// 77 after validating arguments and planning every case on the host (--dry-run does only that).
#include <cuda_runtime_api.h>
#include <mpi.h>
#include <nccl.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <map>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "axe/core/bytes.hpp"
#include "axe/cuda/check.hpp"
#include "axe/cuda/executor.hpp"
#include "axe/cuda/kernels.hpp"
#include "axe/cuda/nccl_comm.hpp"
#include "axe/core/error.hpp"
#include "args.hpp"
#include "device_buffer.hpp"
#include "axe/plan/plan.hpp"

using namespace axe;

namespace {

enum class Bound { AllGather, ReduceScatter, AllReduce, AllToAll, Memcpy, Permute, Spread };
const char* bound_name(Bound b) {
  switch (b) {
    case Bound::AllGather: return "ncclAllGather";
    case Bound::ReduceScatter: return "ncclReduceScatter";
    case Bound::AllReduce: return "ncclAllReduce";
    case Bound::AllToAll: return "all-to-all (send/recv)";
    case Bound::Memcpy: return "cudaMemcpy D2D";
    case Bound::Permute: return "send/recv (permute)";
    case Bound::Spread: return "send/recv (plan's messages)";
  }
  return "?";
}

struct Transition {
  std::string name;        // filter key, e.g. "S0-R"
  std::string label;       // e.g. "S0->R"
  bool two_d = false;      // needs the 2x2 mesh (4 ranks)
  bool uneven = false;
  bool one_collective = false;  // target 1.05x (else 1.15x)
  Bound bound;
  std::vector<AxisPlacement> from, to;  // empty `from` + interleaved: the Axe layout
  bool interleaved = false;
  // Bound group: which mesh axes (2-D: {1} = y pairs for (R,P)->(S0,S1)); empty: the world.
  std::vector<int> bound_axes = {};
  double bound_fraction = 1.0;  // of the global bytes the bound collective covers (e.g. 1/2)
};

std::vector<Transition> transitions() {
  using V = std::vector<AxisPlacement>;
  std::vector<Transition> t;
  t.push_back({"S0-R", "S0->R", false, false, true, Bound::AllGather, V{Shard(0)}, V{Replicate()}});
  t.push_back({"S1-R", "S1->R", false, false, false, Bound::AllGather, V{Shard(1)}, V{Replicate()}});
  t.push_back({"S0-S1", "S0->S1", false, false, false, Bound::AllToAll, V{Shard(0)}, V{Shard(1)}});
  t.push_back({"S1-S0", "S1->S0", false, false, false, Bound::AllToAll, V{Shard(1)}, V{Shard(0)}});
  t.push_back({"R-S1", "R->S1", false, false, false, Bound::Memcpy, V{Replicate()}, V{Shard(1)}});
  t.push_back({"P-R", "P->R", false, false, true, Bound::AllReduce, V{Partial()}, V{Replicate()}});
  t.push_back({"P-S0", "P->S0", false, false, true, Bound::ReduceScatter, V{Partial()}, V{Shard(0)}});
  t.push_back({"P-S1", "P->S1", false, false, false, Bound::ReduceScatter, V{Partial()}, V{Shard(1)}});
  t.push_back({"U-S0-R", "S0->R uneven", false, true, false, Bound::AllGather, V{Shard(0)}, V{Replicate()}});
  t.push_back({"U-S0-S1", "S0->S1 uneven", false, true, false, Bound::AllToAll, V{Shard(0)}, V{Shard(1)}});
  t.push_back({"2D-S0S1-RR", "(S0,S1)->(R,R)", true, false, false, Bound::AllGather, V{Shard(0), Shard(1)},
               V{Replicate(), Replicate()}});
  t.push_back({"2D-S0S1-S1S0", "(S0,S1)->(S1,S0)", true, false, false, Bound::Permute, V{Shard(0), Shard(1)},
               V{Shard(1), Shard(0)}});
  t.push_back({"2D-S0R-RS0", "(S0,R)->(R,S0)", true, false, false, Bound::Spread, V{Shard(0), Replicate()},
               V{Replicate(), Shard(0)}});
  t.push_back({"2D-S0S0-S1S1", "(S0,S0)->(S1,S1)", true, false, false, Bound::AllToAll, V{Shard(0), Shard(0)},
               V{Shard(1), Shard(1)}});
  {
    Transition x{"2D-RP-S0S1", "(R,P)->(S0,S1)", true, false, false, Bound::ReduceScatter, V{Replicate(), Partial()},
                 V{Shard(0), Shard(1)}};
    x.bound_axes = {1};
    x.bound_fraction = 0.5;  // slice rows first: reduce-scatter half the tensor over y
    t.push_back(x);
  }
  {
    Transition x{"2D-IL-S0S1", "interleaved->(S0,S1)", true, false, false, Bound::Spread, V{}, V{Shard(0), Shard(1)}};
    x.interleaved = true;
    t.push_back(x);
  }
  return t;
}

// Rows cyclic over x, columns block-cyclic (blocks of 2) over y (as examples/reshard.cpp).
DistLayout interleaved(const std::vector<std::int64_t>& shape, const Mesh& mesh) {
  const std::int64_t p = mesh.sizes()[0], q = mesh.sizes()[1];
  const std::string a0(mesh.axes()[0].name()), a1(mesh.axes()[1].name());
  const std::int64_t r = shape[0] / p, c = shape[1] / (2 * q);
  std::string text = "S[(" + std::to_string(r) + "," + std::to_string(p) + "," + std::to_string(c) + "," +
                     std::to_string(q) + ",2):(" + std::to_string(2 * c) + ",1@" + a0 + ",2,1@" + a1 + ",1)]";
  return DistLayout(shape, parse_axe_layout(text), mesh);
}

struct Case {
  const Transition* t;
  DType dtype;
  std::int64_t size;  // nominal global bytes
  std::vector<std::int64_t> shape;
  PlanRequest req;
};

struct Result {
  std::string transition, dtype, steps, bound;
  std::int64_t nominal = 0, bytes = 0;
  double axe_ms = 0, bound_ms = 0, cpu_us = 0, fill_ms = 0, copy_ms = 0;
  double algbw = 0, busbw = 0, bound_busbw = 0;
  std::int64_t staging = 0, plan_staging = 0, dst_local = 0, lower_bound_bytes = 0;
  std::int64_t launches = 0, nccl_calls = 0, chunks = 1;
  bool one_collective = false;
};

Case make_case(const Transition& t, DType dt, std::int64_t size, const Mesh& mesh) {
  const std::int64_t es = size_of(dt);
  const std::int64_t cols = 4096;
  std::int64_t rows = std::max<std::int64_t>(size / es / cols, 16);
  std::vector<std::int64_t> shape{rows, cols};
  if (t.uneven) shape = {rows + 1, cols - 1};
  Case c{&t, dt, size, shape, {}};
  DistLayout to = shard(std::span<const std::int64_t>(shape), mesh, std::span<const AxisPlacement>(t.to));
  DistLayout from = t.interleaved ? interleaved(shape, mesh)
                                  : shard(std::span<const std::int64_t>(shape), mesh,
                                          std::span<const AxisPlacement>(t.from));
  c.req = PlanRequest{from, to, dt};
  return c;
}

// Fills `bytes` of device memory with random finite values of `dt` (a 1 MiB random host block
// tiled on the device).
void fill_random(void* p, std::int64_t bytes, DType dt, std::uint32_t seed, cudaStream_t s) {
  if (bytes <= 0) return;
  const std::int64_t block = std::min<std::int64_t>(bytes, 1 << 20);
  std::vector<unsigned char> h(static_cast<std::size_t>(block));
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-1.f, 1.f);
  if (dt == DType::BF16) {
    for (std::int64_t i = 0; i + 2 <= block; i += 2) {
      float f = u(rng);
      std::uint32_t b;
      std::memcpy(&b, &f, 4);
      const std::uint16_t hb = static_cast<std::uint16_t>(b >> 16);
      std::memcpy(&h[static_cast<std::size_t>(i)], &hb, 2);
    }
  } else {
    for (std::int64_t i = 0; i + 4 <= block; i += 4) {
      float f = u(rng);
      std::memcpy(&h[static_cast<std::size_t>(i)], &f, 4);
    }
  }
  char* d = static_cast<char*>(p);
  AXE_CUDA_CHECK(cudaMemcpyAsync(d, h.data(), static_cast<std::size_t>(block), cudaMemcpyHostToDevice, s));
  for (std::int64_t done = block; done < bytes;) {
    const std::int64_t n = std::min(done, bytes - done);
    AXE_CUDA_CHECK(cudaMemcpyAsync(d + done, d, static_cast<std::size_t>(n), cudaMemcpyDeviceToDevice, s));
    done += n;
  }
  AXE_CUDA_CHECK(cudaStreamSynchronize(s));
}

std::string json_escape(const std::string& s) {
  std::string o;
  for (char ch : s) {
    if (ch == '"' || ch == '\\') o += '\\';
    o += ch;
  }
  return o;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int rc = 0;
  bool running = false;  // past the arguments (which every rank reads alike)
  try {
    std::vector<std::int64_t> sizes{1 << 20, 16 << 20, 256 << 20, std::int64_t{1} << 30};
    std::vector<DType> dtypes{DType::F32, DType::BF16};
    std::vector<std::string> filter;
    int iters = 20, warmup = 3;
    std::string json;
    bool list = false, dry = false;
    for (int i = 1; i < argc; ++i) {
      const std::string a = argv[i];
      auto next = [&]() -> std::string {
        if (i + 1 >= argc) fail("reshard_bench: " + a + " needs a value");
        return argv[++i];
      };
      if (a == "--sizes") {
        sizes.clear();
        for (const auto& s : examples::list_arg(next())) sizes.push_back(parse_bytes(s, "--sizes"));
      } else if (a == "--dtypes") {
        dtypes.clear();
        for (const auto& s : examples::list_arg(next())) dtypes.push_back(parse_dtype(s));
      } else if (a == "--transitions") {
        filter = examples::list_arg(next());
      } else if (a == "--iters") {
        iters = static_cast<int>(examples::int_arg("--iters", next(), 1, 1000000));
      } else if (a == "--warmup") {
        warmup = static_cast<int>(examples::int_arg("--warmup", next(), 1, 1000000));
      } else if (a == "--json") {
        json = next();
      } else if (a == "--list") {
        list = true;
      } else if (a == "--dry-run") {
        dry = true;
      } else if (a == "-h" || a == "--help") {
        if (rank == 0)
          std::printf("usage: mpirun -np N reshard_bench [--sizes 1M,16M,256M,1G] [--dtypes f32,bf16] "
                      "[--transitions NAME,...] [--iters 20] [--warmup 3] [--json FILE] [--list] [--dry-run]\n");
        MPI_Finalize();
        return 0;
      } else {
        fail("reshard_bench: unknown argument '" + a + "' (see --help)");
      }
    }
    const auto all = transitions();
    for (const auto& f : filter)
      if (std::none_of(all.begin(), all.end(), [&](const Transition& t) { return t.name == f; }))
        fail("reshard_bench: unknown transition '" + f + "' (see --list)");
    if (list) {
      if (rank == 0)
        for (const auto& t : all) std::printf("%-14s %-22s bound: %s%s\n", t.name.c_str(), t.label.c_str(),
                                              bound_name(t.bound), t.two_d ? " (2x2 mesh: 4 ranks)" : "");
      MPI_Finalize();
      return 0;
    }
    running = true;

    const Mesh mesh1 = parse_mesh("gpu=" + std::to_string(size));
    const Mesh mesh2 = parse_mesh("x=2,y=2");
    std::vector<Case> cases;
    for (const auto& t : all) {
      if (!filter.empty() && std::find(filter.begin(), filter.end(), t.name) == filter.end()) continue;
      if (t.two_d && size != 4) {
        if (rank == 0) std::printf("skip %s: the 2x2 mesh needs 4 ranks, this run has %d\n", t.label.c_str(), size);
        continue;
      }
      for (DType dt : dtypes)
        for (std::int64_t s : sizes) cases.push_back(make_case(t, dt, s, t.two_d ? mesh2 : mesh1));
    }
    // Plan every case on the host (also the dry run): planning errors surface before any GPU work.
    for (const auto& c : cases) (void)cached_plan_rank(c.req, rank);
    int gpus = 0;
    if (cudaGetDeviceCount(&gpus) != cudaSuccess) gpus = 0;
    int min_gpus = gpus;
    MPI_Allreduce(&gpus, &min_gpus, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (dry || min_gpus < 1 || min_gpus < size) {
      if (rank == 0) {
        std::printf("reshard_bench: %zu case(s) planned on %d rank(s)\n", cases.size(), size);
        for (const auto& c : cases) {
          auto p = cached_plan_rank(c.req, 0);
          std::string steps;
          for (const auto& s : p->steps) steps += (steps.empty() ? "" : "+") + std::string(to_string(s.kind));
          std::printf("  %-22s %-4s %6s  shape %lldx%lld  steps %s  staging %s\n", c.t->label.c_str(),
                      std::string(to_string(c.dtype)).c_str(), bytes_text(static_cast<double>(c.size)).c_str(),
                      static_cast<long long>(c.shape[0]), static_cast<long long>(c.shape[1]), steps.c_str(),
                      bytes_text(static_cast<double>(p->stats.staging_bytes)).c_str());
        }
        if (!dry)
          std::printf("reshard_bench: %d rank(s) need %d GPU(s), %d visible on the poorest rank: nothing to "
                      "measure\n", size, size, min_gpus);
      }
      MPI_Finalize();
      return dry ? 0 : 77;
    }

    // One GPU per rank (local rank modulo the GPUs of the node).
    MPI_Comm local;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &local);
    int local_rank = 0;
    MPI_Comm_rank(local, &local_rank);
    MPI_Comm_free(&local);
    const int device = local_rank % gpus;
    AXE_CUDA_CHECK(cudaSetDevice(device));
    cuda::NcclComm comm(MPI_COMM_WORLD, device);
    cudaStream_t stream;
    AXE_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    cudaEvent_t e0, e1;
    AXE_CUDA_CHECK(cudaEventCreate(&e0));
    AXE_CUDA_CHECK(cudaEventCreate(&e1));
    if (rank == 0) {
      cudaDeviceProp prop;
      AXE_CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
      int nv = 0;
      ncclGetVersion(&nv);
      const auto ce = axe::cuda::copy_engine_policy();
      std::printf("reshard_bench: %d rank(s), %s, NCCL %d, %d timed iterations (median), %d warm-up; copy engines for "
                  "boxes >= %s with kernel units < %d B\n",
                  size, prop.name, nv, iters, warmup, ce.min_bytes > 0 ? axe::bytes_text(double(ce.min_bytes)).c_str() : "(off)",
                  ce.unit_below);
    }

    // Times `work` (enqueue on `stream`): barrier, events, slowest rank per iteration, median.
    // `host_us` (optional) receives the median host time of the enqueue.
    auto time_it = [&](const std::function<void()>& work, const std::function<void()>& wait, double* host_us) {
      for (int i = 0; i < warmup; ++i) {
        work();
        AXE_CUDA_CHECK(cudaEventRecord(e1, stream));
        wait();
        AXE_CUDA_CHECK(cudaEventSynchronize(e1));
      }
      std::vector<double> ms, us;
      for (int i = 0; i < iters; ++i) {
        MPI_Barrier(MPI_COMM_WORLD);
        AXE_CUDA_CHECK(cudaEventRecord(e0, stream));
        const auto h0 = std::chrono::steady_clock::now();
        work();
        const auto h1 = std::chrono::steady_clock::now();
        AXE_CUDA_CHECK(cudaEventRecord(e1, stream));
        wait();
        AXE_CUDA_CHECK(cudaEventSynchronize(e1));
        float t = 0;
        AXE_CUDA_CHECK(cudaEventElapsedTime(&t, e0, e1));
        double v[2] = {t, std::chrono::duration<double, std::micro>(h1 - h0).count()}, mx[2];
        MPI_Allreduce(v, mx, 2, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        ms.push_back(mx[0]);
        us.push_back(mx[1]);
      }
      if (host_us) *host_us = examples::median(us);
      return examples::median(ms);
    };

    std::vector<Result> results;
    if (rank == 0)
      std::printf("\n%-22s %-4s %5s %10s %10s %6s %9s %9s %8s %9s  %s\n", "transition", "type", "size", "axe ms",
                  "bound ms", "ratio", "algbw", "busbw", "cpu us", "staging", "steps (bound) [dst fill / copy ms]");
    for (const auto& c : cases) {
      const Transition& t = *c.t;
      const std::int64_t es = size_of(c.dtype);
      auto plan = cached_plan_rank(c.req, rank);
      const std::int64_t src_bytes = plan->buffers.front() * es, dst_bytes = plan->buffers.back() * es;
      const std::int64_t n = size;
      const std::int64_t global = c.shape[0] * c.shape[1] * es;
      // Bound sizes (bytes).
      std::int64_t send_b = 0, recv_b = 0, count = 0;  // count: elements per NCCL call argument
      std::vector<std::int64_t> group;                 // bound group (world ranks)
      std::vector<std::pair<int, std::int64_t>> spread_sends, spread_recvs;  // Spread: (peer, bytes)
      std::int64_t gsize = n;
      if (!t.bound_axes.empty()) {
        const Mesh& m = mesh2;
        std::vector<Axis> ax;
        for (int a : t.bound_axes) ax.push_back(m.axes()[static_cast<std::size_t>(a)]);
        group = m.group(rank, ax);
        gsize = static_cast<std::int64_t>(group.size());
      }
      const std::int64_t cover = static_cast<std::int64_t>(std::llround(static_cast<double>(global) * t.bound_fraction));
      const std::int64_t rows_blk = (c.shape[0] + n - 1) / n, cols_blk = (c.shape[1] + n - 1) / n;
      std::int64_t lb_max = plan->stats.lower_bound_bytes;
      MPI_Allreduce(MPI_IN_PLACE, &lb_max, 1, MPI_INT64_T, MPI_MAX, MPI_COMM_WORLD);
      switch (t.bound) {
        case Bound::AllGather:
          count = t.uneven ? rows_blk * c.shape[1] : c.shape[0] * c.shape[1] / n;
          send_b = count * es;
          recv_b = send_b * n;
          break;
        case Bound::ReduceScatter:
          count = cover / es / gsize;
          send_b = count * es * gsize;
          recv_b = count * es;
          break;
        case Bound::AllReduce:
          count = global / es;
          send_b = recv_b = global;
          break;
        case Bound::AllToAll:
          count = t.uneven ? rows_blk * cols_blk : global / es / (n * n);  // elements per block
          send_b = recv_b = count * es * n;
          break;
        case Bound::Memcpy:
          send_b = recv_b = global / n;
          break;
        case Bound::Permute:
          send_b = recv_b = global / n;
          break;
        case Bound::Spread: {
          std::map<std::int64_t, std::int64_t> sent, received;  // bytes by peer, over the plan's steps
          for (const Step& st : plan->steps) {
            for (const auto& m : st.sends) sent[m.peer] += m.elements() * es;
            for (const auto& m : st.recvs) received[m.peer] += m.elements() * es;
          }
          for (const auto& [peer, b] : sent) {
            spread_sends.push_back({static_cast<int>(peer), b});
            send_b += b;
          }
          for (const auto& [peer, b] : received) {
            spread_recvs.push_back({static_cast<int>(peer), b});
            recv_b += b;
          }
          break;
        }
      }
      examples::DeviceBuffer src(src_bytes + 256), dst(dst_bytes + 256), bsrc(send_b + 256), bdst(recv_b + 256);
      fill_random(src.p, src_bytes, c.dtype, 1234u + static_cast<std::uint32_t>(rank), stream);
      fill_random(bsrc.p, send_b, c.dtype, 99u + static_cast<std::uint32_t>(rank), stream);

      // axe: the cached plan is looked up on every call (as a redistribute() call would).
      double cpu_us = 0, axe_ms = 0;
      {
        cuda::CudaExecutor ex(&comm, stream);
        axe_ms = time_it(
            [&] {
              auto p = cached_plan_rank(c.req, rank);
              ex.execute(*p, src.p, dst.p);
            },
            [&] { ex.synchronize(); }, &cpu_us);
        Result r;
        r.launches = ex.launches();
        r.nccl_calls = ex.nccl_calls();
        r.staging = ex.staging_bytes(*cached_plan_rank(c.req, rank));
        for (auto k : ex.pipeline_chunks(*cached_plan_rank(c.req, rank))) r.chunks = std::max(r.chunks, k);
        results.push_back(r);
      }
      // The bound on the same bytes.
      ncclComm_t bc = group.empty() ? comm.data_world() : comm.group(group);
      const ncclDataType_t nt = cuda::nccl_type(c.dtype);
      const std::int64_t me_in_group =
          group.empty() ? rank : std::find(group.begin(), group.end(), rank) - group.begin();
      (void)me_in_group;
      auto nccl_wait = [&] { comm.wait(e1, "bound"); };
      std::function<void()> bound_work;
      switch (t.bound) {
        case Bound::AllGather:
          bound_work = [&] {
            AXE_NCCL_CHECK(ncclAllGather(bsrc.p, bdst.p, static_cast<std::size_t>(count), nt, bc, stream));
            comm.settle(bc, "bound ncclAllGather");
          };
          break;
        case Bound::ReduceScatter:
          bound_work = [&] {
            AXE_NCCL_CHECK(ncclReduceScatter(bsrc.p, bdst.p, static_cast<std::size_t>(count), nt, ncclSum, bc, stream));
            comm.settle(bc, "bound ncclReduceScatter");
          };
          break;
        case Bound::AllReduce:
          bound_work = [&] {
            AXE_NCCL_CHECK(ncclAllReduce(bsrc.p, bdst.p, static_cast<std::size_t>(count), nt, ncclSum, bc, stream));
            comm.settle(bc, "bound ncclAllReduce");
          };
          break;
        case Bound::AllToAll:
          bound_work = [&] {
            const std::size_t blk = static_cast<std::size_t>(count * es);
            AXE_NCCL_CHECK(ncclGroupStart());
            for (int p = 0; p < n; ++p) {
              AXE_NCCL_CHECK(ncclSend(static_cast<char*>(bsrc.p) + p * blk, blk, ncclUint8, p, bc, stream));
              AXE_NCCL_CHECK(ncclRecv(static_cast<char*>(bdst.p) + p * blk, blk, ncclUint8, p, bc, stream));
            }
            AXE_NCCL_CHECK(ncclGroupEnd());
            comm.settle(bc, "bound grouped send/recv");
          };
          break;
        case Bound::Memcpy:
          bound_work = [&] {
            AXE_CUDA_CHECK(cudaMemcpyAsync(bdst.p, bsrc.p, static_cast<std::size_t>(send_b), cudaMemcpyDeviceToDevice,
                                           stream));
          };
          break;
        case Bound::Permute:
          bound_work = [&] {
            // (x,y) -> (y,x) on the 2x2 mesh, rank = 2x + y: 1 <-> 2; 0 and 3 keep their shard.
            const int partner = rank == 1 ? 2 : rank == 2 ? 1 : rank;
            if (partner == rank) return;
            AXE_NCCL_CHECK(ncclGroupStart());
            AXE_NCCL_CHECK(ncclSend(bsrc.p, static_cast<std::size_t>(send_b), ncclUint8, partner, bc, stream));
            AXE_NCCL_CHECK(ncclRecv(bdst.p, static_cast<std::size_t>(recv_b), ncclUint8, partner, bc, stream));
            AXE_NCCL_CHECK(ncclGroupEnd());
            comm.settle(bc, "bound grouped send/recv");
          };
          break;
        case Bound::Spread:
          bound_work = [&] {
            if (spread_sends.empty() && spread_recvs.empty()) return;
            AXE_NCCL_CHECK(ncclGroupStart());
            std::int64_t at = 0;
            for (const auto& [p, b] : spread_sends) {
              AXE_NCCL_CHECK(ncclSend(static_cast<char*>(bsrc.p) + at, static_cast<std::size_t>(b), ncclUint8, p, bc, stream));
              at += b;
            }
            at = 0;
            for (const auto& [p, b] : spread_recvs) {
              AXE_NCCL_CHECK(ncclRecv(static_cast<char*>(bdst.p) + at, static_cast<std::size_t>(b), ncclUint8, p, bc, stream));
              at += b;
            }
            AXE_NCCL_CHECK(ncclGroupEnd());
            comm.settle(bc, "bound grouped send/recv");
          };
          break;
      }
      const double bound_ms = time_it(bound_work, nccl_wait, nullptr);
      // Diagnostics for the gap: a full write of the destination (the executor pads it with NaN on
      // every call) and a D2D copy of the destination's bytes (one extra unpack pass).
      auto sync_wait = [&] {};
      const double fill_ms = time_it(
          [&] { AXE_CUDA_CHECK(cudaMemsetAsync(dst.p, 0xff, static_cast<std::size_t>(dst_bytes), stream)); }, sync_wait,
          nullptr);
      const double copy_ms = time_it(
          [&] {
            AXE_CUDA_CHECK(cudaMemcpyAsync(dst.p, bdst.p, static_cast<std::size_t>(std::min(dst_bytes, recv_b)),
                                           cudaMemcpyDeviceToDevice, stream));
          },
          sync_wait, nullptr);

      Result& r = results.back();
      r.transition = t.label;
      r.dtype = std::string(to_string(c.dtype));
      r.nominal = c.size;
      r.bytes = global;
      r.axe_ms = axe_ms;
      r.bound_ms = bound_ms;
      r.cpu_us = cpu_us;
      r.fill_ms = fill_ms;
      r.copy_ms = copy_ms;
      r.bound = bound_name(t.bound);
      r.one_collective = t.one_collective;
      for (const auto& s : plan->steps) r.steps += (r.steps.empty() ? "" : "+") + std::string(to_string(s.kind));
      if (r.steps.empty()) r.steps = "(none)";
      if (r.chunks > 1) r.steps += " x" + std::to_string(r.chunks) + " pipelined";
      // Staging: what the executor allocated (busiest rank), next to the planner's estimate.
      std::int64_t st[3] = {r.staging, plan->stats.staging_bytes, dst_bytes};
      MPI_Allreduce(MPI_IN_PLACE, st, 3, MPI_INT64_T, MPI_MAX, MPI_COMM_WORLD);
      r.staging = st[0];
      r.plan_staging = st[1];
      r.dst_local = st[2];
      r.lower_bound_bytes = lb_max;
      r.algbw = static_cast<double>(global) / (axe_ms * 1e-3) / 1e9;
      double factor = 1.0;
      const double g = static_cast<double>(t.bound == Bound::ReduceScatter ? gsize : n);
      switch (t.bound) {
        case Bound::AllGather:
        case Bound::ReduceScatter:
        case Bound::AllToAll: factor = (g - 1) / g; break;
        case Bound::AllReduce: factor = 2 * (g - 1) / g; break;
        case Bound::Memcpy: factor = 2.0 / g; break;                     // read + write of the local shard
        case Bound::Permute:
        case Bound::Spread: factor = static_cast<double>(lb_max) / static_cast<double>(global); break;
      }
      if (t.bound == Bound::ReduceScatter) factor *= t.bound_fraction;
      r.busbw = r.algbw * factor;
      r.bound_busbw = static_cast<double>(global) / (bound_ms * 1e-3) / 1e9 * factor;
      if (rank == 0)
        std::printf("%-22s %-4s %5s %10.4f %10.4f %6.2f %8.1fG %8.1fG %8.1f %9s  %s (%s) [%.4f / %.4f]\n", r.transition.c_str(),
                    r.dtype.c_str(), bytes_text(static_cast<double>(c.size)).c_str(), r.axe_ms, r.bound_ms,
                    r.axe_ms / r.bound_ms, r.algbw, r.busbw, r.cpu_us, bytes_text(static_cast<double>(r.staging)).c_str(),
                    r.steps.c_str(), r.bound.c_str(), r.fill_ms, r.copy_ms);
      std::fflush(stdout);
      clear_plan_cache();  // keep host memory flat across 1 GiB cases
    }
    if (rank == 0 && !json.empty()) {
      std::ofstream f(json);
      if (!f) fail("reshard_bench: cannot write --json '" + json + "'");
      cudaDeviceProp prop;
      AXE_CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
      f << "{\"tool\":\"axe reshard_bench\",\"ranks\":" << size << ",\"device\":\"" << json_escape(prop.name)
        << "\",\"iters\":" << iters << ",\"warmup\":" << warmup
        << ",\"copy_engine_min\":" << axe::cuda::copy_engine_policy().min_bytes
        << ",\"copy_engine_unit_below\":" << axe::cuda::copy_engine_policy().unit_below << ",\"results\":[\n";
      for (std::size_t i = 0; i < results.size(); ++i) {
        const Result& r = results[i];
        f << "{\"transition\":\"" << json_escape(r.transition) << "\",\"dtype\":\"" << r.dtype
          << "\",\"size\":" << r.nominal << ",\"bytes\":" << r.bytes << ",\"axe_ms\":" << r.axe_ms
          << ",\"bound_ms\":" << r.bound_ms << ",\"ratio\":" << r.axe_ms / r.bound_ms << ",\"algbw_gbps\":" << r.algbw
          << ",\"busbw_gbps\":" << r.busbw << ",\"bound_busbw_gbps\":" << r.bound_busbw
          << ",\"cpu_overhead_us\":" << r.cpu_us << ",\"staging_bytes\":" << r.staging
          << ",\"plan_staging_bytes\":" << r.plan_staging << ",\"pipeline_chunks\":" << r.chunks
          << ",\"dst_local_bytes\":" << r.dst_local << ",\"lower_bound_bytes\":" << r.lower_bound_bytes
          << ",\"steps\":\"" << r.steps << "\",\"bound\":\"" << json_escape(r.bound)
          << "\",\"one_collective\":" << (r.one_collective ? "true" : "false") << ",\"launches\":" << r.launches
          << ",\"nccl_calls\":" << r.nccl_calls << ",\"dst_fill_ms\":" << r.fill_ms
          << ",\"dst_copy_ms\":" << r.copy_ms << "}" << (i + 1 < results.size() ? ",\n" : "\n");
      }
      f << "]}\n";
    }
    AXE_CUDA_CHECK(cudaEventDestroy(e0));
    AXE_CUDA_CHECK(cudaEventDestroy(e1));
    AXE_CUDA_CHECK(cudaStreamDestroy(stream));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "[rank %d] reshard_bench: %s\n", rank, e.what());
    std::fflush(stderr);
    // A bad argument fails every rank alike: finalize and exit 2. Later a peer may be stuck in
    // NCCL or MPI: end the job.
    if (running) MPI_Abort(MPI_COMM_WORLD, 1);
    rc = 2;
  }
  MPI_Finalize();
  return rc;
}
