// redistribute_bench: DistTensor::redistribute end to end, as a training script calls it (issue 5:
// "CPU overhead per redistribute call with a cached plan", "faster than DTensor end to end").
// Where reshard_bench times the executor on preallocated buffers, this times the public call:
// plan-cache lookup, the cross-rank agreement, allocation of the result, enqueue, and the wait.
//
//   axe-run -np 2 redistribute_bench [--sizes 1M,16M] [--dtypes f32,bf16] [--iters 50]
//                                    [--warmup 5] [--json FILE]
//
// Per (transition, dtype, size) on the 1-D mesh of all ranks (and, with 4 ranks, the 2x2 mesh
// x=2,y=2), shapes rows x 4096 as in reshard_bench and examples/dtensor_bench.py (uneven:
// (rows+1) x 4095, no dim divisible by the mesh): the source is DistTensor::empty (zeros) of the
// source placements; --warmup untimed calls (the first prepares the plan), then --iters timed ones:
// MPI_Barrier, h0, y = x.redistribute(to), h1, y.synchronize(), h2, y destroyed. Reported, as the
// median over iterations of the slowest rank: "cpu us" = h1 - h0 (the call returns once the work
// is enqueued) and "ms" = h2 - h0 (end to end). Runs on any backend (host without GPUs).
#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <exception>
#include <initializer_list>
#include <memory>
#include <string>
#include <vector>

#include "axe/core/bytes.hpp"
#include "axe/runtime/dist_tensor.hpp"
#include "axe/core/error.hpp"
#include "args.hpp"

namespace {

struct Transition {
  const char* label;
  std::vector<axe::AxisPlacement> from, to;  // one per mesh axis: two on the 2x2 mesh
  bool uneven = false;
};

}  // namespace

int main(int argc, char** argv) {
  using namespace axe;
  int rc = 0;
  std::unique_ptr<Runtime> runtime;
  try {  // start-up errors too (a bad AXE_* value on any rank)
    runtime = std::make_unique<Runtime>(&argc, &argv);
    Runtime& rt = *runtime;
    std::vector<std::string> sizes{"1M", "16M"}, dtypes{"f32", "bf16"};
    int iters = 50, warmup = 5;
    std::string json;
    for (int i = 1; i < argc; ++i) {
      const std::string a = argv[i];
      auto value = [&]() -> std::string {
        if (i + 1 >= argc) fail("redistribute_bench: " + a + " needs a value");
        return argv[++i];
      };
      if (a == "--sizes") sizes = examples::list_arg(value());
      else if (a == "--dtypes") dtypes = examples::list_arg(value());
      else if (a == "--iters") iters = static_cast<int>(examples::int_arg("--iters", value(), 1, 1000000));
      else if (a == "--warmup") warmup = static_cast<int>(examples::int_arg("--warmup", value(), 1, 1000000));
      else if (a == "--json") json = value();
      else fail("redistribute_bench: unknown argument '" + a + "'");
    }
    const AxisPlacement S0 = Shard(0), S1 = Shard(1), R = Replicate(), P = Partial();
    std::vector<Transition> transitions = {
        {"S0->R", {S0}, {R}},   {"S1->R", {S1}, {R}},  {"S0->S1", {S0}, {S1}},
        {"S1->S0", {S1}, {S0}}, {"R->S1", {R}, {S1}},  {"P->R", {P}, {R}},
        {"P->S0", {P}, {S0}},   {"P->S1", {P}, {S1}},  {"S0->R uneven", {S0}, {R}, true},
        {"S0->S1 uneven", {S0}, {S1}, true},
    };
    if (rt.size() == 4)  // the 2x2-mesh transitions of reshard_bench (all but the interleaved source)
      for (Transition t : std::initializer_list<Transition>{
               {"(S0,S1)->(R,R)", {S0, S1}, {R, R}},   {"(S0,S1)->(S1,S0)", {S0, S1}, {S1, S0}},
               {"(S0,R)->(R,S0)", {S0, R}, {R, S0}},   {"(S0,S0)->(S1,S1)", {S0, S0}, {S1, S1}},
               {"(R,P)->(S0,S1)", {R, P}, {S0, S1}}})
        transitions.push_back(t);
    const Mesh mesh1 = parse_mesh("gpu=" + std::to_string(rt.size()));
    const Mesh mesh2 = parse_mesh("x=2,y=2");
    if (rt.rank() == 0) {
      std::printf("redistribute_bench: %d rank(s), backend %s, %d timed iterations (median of the slowest rank)\n\n",
                  rt.size(), std::string(rt.backend().name()).c_str(), iters);
      std::printf("%-18s %-4s %5s %10s %8s\n", "transition", "type", "size", "ms", "cpu us");
    }
    std::string rows;
    for (const auto& t : transitions)
      for (const auto& dn : dtypes) {
        const DType dt = parse_dtype(dn);
        for (const auto& sz : sizes) {
          const std::int64_t size = parse_bytes(sz, "--sizes"), es = size_of(dt);
          const std::int64_t n = std::max<std::int64_t>(size / es / 4096, 16);
          const std::vector<std::int64_t> shape =
              t.uneven ? std::vector<std::int64_t>{n + 1, 4095} : std::vector<std::int64_t>{n, 4096};
          const Mesh& mesh = t.from.size() == 2 ? mesh2 : mesh1;
          auto layout = [&](const std::vector<AxisPlacement>& p) {
            return shard(std::span<const std::int64_t>(shape), mesh, std::span<const AxisPlacement>(p));
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
          const double m = examples::median(ms), u = examples::median(us);
          if (rt.rank() == 0) {
            std::printf("%-18s %-4s %5s %10.4f %8.1f\n", t.label, dn.c_str(), sz.c_str(), m, u);
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
    if (runtime) std::fprintf(stderr, "[rank %d] redistribute_bench: %s\n", runtime->rank(), e.what());
    else std::fprintf(stderr, "redistribute_bench: %s\n", e.what());
    rc = 2;
  }
  return rc;
}
