// redistribute_bench: DistTensor::redistribute end to end, as a training script calls it (issue 5:
// "CPU overhead per redistribute call with a cached plan", "faster than DTensor end to end").
// Where reshard_bench times the executor on preallocated buffers, this times the public call:
// plan-cache lookup, the cross-rank agreement, allocation of the result, enqueue, and the wait.
//
//   axe-run -np 2 redistribute_bench [--sizes 1M,16M] [--dtypes f32,bf16] [--iters 50]
//                                    [--warmup 5] [--json FILE]
//
// Per (transition, dtype, size) on the 1-D mesh of all ranks, shapes rows x 4096 as in
// reshard_bench and examples/dtensor_bench.py: the source is DistTensor::empty (zeros) of the
// source placements; --warmup untimed calls (the first prepares the plan), then --iters timed ones:
// MPI_Barrier, h0, y = x.redistribute(to), h1, y.synchronize(), h2, y destroyed. Reported, as the
// median over iterations of the slowest rank: "cpu us" = h1 - h0 (the call returns once the work
// is enqueued) and "ms" = h2 - h0 (end to end). Runs on any backend (host without GPUs).
#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "axe/bytes.hpp"
#include "axe/dist_tensor.hpp"
#include "axe/error.hpp"

namespace {

struct Transition {
  const char* label;
  axe::AxisPlacement from, to;
};

std::vector<std::string> split(const std::string& s) {
  std::vector<std::string> out;
  std::size_t pos = 0;
  while (pos <= s.size()) {
    std::size_t e = s.find(',', pos);
    if (e == std::string::npos) e = s.size();
    if (e > pos) out.push_back(s.substr(pos, e - pos));
    pos = e + 1;
  }
  return out;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  using namespace axe;
  Runtime rt(&argc, &argv);
  int rc = 0;
  try {
    std::vector<std::string> sizes{"1M", "16M"}, dtypes{"f32", "bf16"};
    int iters = 50, warmup = 5;
    std::string json;
    for (int i = 1; i < argc; ++i) {
      const std::string a = argv[i];
      auto value = [&]() -> std::string {
        if (i + 1 >= argc) fail("redistribute_bench: " + a + " needs a value");
        return argv[++i];
      };
      if (a == "--sizes") sizes = split(value());
      else if (a == "--dtypes") dtypes = split(value());
      else if (a == "--iters") iters = std::stoi(value());
      else if (a == "--warmup") warmup = std::stoi(value());
      else if (a == "--json") json = value();
      else fail("redistribute_bench: unknown argument '" + a + "'");
    }
    if (iters < 1 || warmup < 1) fail("redistribute_bench: --iters and --warmup must be >= 1");
    const Transition transitions[] = {
        {"S0->R", Shard(0), Replicate()},  {"S1->R", Shard(1), Replicate()}, {"S0->S1", Shard(0), Shard(1)},
        {"S1->S0", Shard(1), Shard(0)},    {"R->S1", Replicate(), Shard(1)}, {"P->R", Partial(), Replicate()},
        {"P->S0", Partial(), Shard(0)},    {"P->S1", Partial(), Shard(1)},
    };
    const Mesh mesh = parse_mesh("gpu=" + std::to_string(rt.size()));
    if (rt.rank() == 0) {
      std::printf("redistribute_bench: %d rank(s), backend %s, %d timed iterations (median of the slowest rank)\n\n",
                  rt.size(), std::string(rt.backend().name()).c_str(), iters);
      std::printf("%-10s %-4s %5s %10s %8s\n", "transition", "type", "size", "ms", "cpu us");
    }
    std::string rows;
    for (const auto& t : transitions)
      for (const auto& dn : dtypes) {
        const DType dt = parse_dtype(dn);
        for (const auto& sz : sizes) {
          const std::int64_t size = parse_bytes(sz, "--sizes"), es = size_of(dt);
          const std::vector<std::int64_t> shape{std::max<std::int64_t>(size / es / 4096, 16), 4096};
          auto layout = [&](AxisPlacement p) {
            return shard(std::span<const std::int64_t>(shape), mesh, std::span<const AxisPlacement>(&p, 1));
          };
          const DistTensor x = DistTensor::empty(layout(t.from), dt, rt);
          const DistLayout to = layout(t.to);
          for (int i = 0; i < warmup; ++i) x.redistribute(to).synchronize();
          std::vector<double> ms, us;
          for (int i = 0; i < iters; ++i) {
            MPI_Barrier(MPI_COMM_WORLD);
            const auto h0 = std::chrono::steady_clock::now();
            DistTensor y = x.redistribute(to);
            const auto h1 = std::chrono::steady_clock::now();
            y.synchronize();
            const auto h2 = std::chrono::steady_clock::now();
            double v[2] = {std::chrono::duration<double, std::milli>(h2 - h0).count(),
                           std::chrono::duration<double, std::micro>(h1 - h0).count()};
            MPI_Allreduce(MPI_IN_PLACE, v, 2, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
            ms.push_back(v[0]);
            us.push_back(v[1]);
          }
          const double m = median(ms), u = median(us);
          if (rt.rank() == 0) {
            std::printf("%-10s %-4s %5s %10.4f %8.1f\n", t.label, dn.c_str(), sz.c_str(), m, u);
            std::fflush(stdout);
          }
          char buf[256];
          std::snprintf(buf, sizeof buf,
                        "%s{\"transition\":\"%s\",\"dtype\":\"%s\",\"size\":%lld,\"ms\":%.6f,\"cpu_us\":%.3f}",
                        rows.empty() ? "" : ",\n", t.label, dn.c_str(), static_cast<long long>(size), m, u);
          rows += buf;
        }
      }
    if (rt.rank() == 0 && !json.empty()) {
      std::ofstream f(json);
      if (!f) fail("redistribute_bench: cannot write --json '" + json + "'");
      f << "{\"tool\":\"axe redistribute_bench\",\"ranks\":" << rt.size() << ",\"backend\":\""
        << rt.backend().name() << "\",\"iters\":" << iters << ",\"results\":[\n"
        << rows << "\n]}\n";
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "redistribute_bench rank %d: %s\n", rt.rank(), e.what());
    rc = 1;
  }
  return rc;
}
