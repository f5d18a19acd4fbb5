// Planning time of DTensor transitions on meshes up to 4096 ranks.
//
// For each (mesh, transition): the time one rank needs to plan its own part from scratch
// (strategy choice + its exchange; what each process pays once), and the time of a cached
// lookup. Each of four ranks (0, n/3, n/2, n-1) is planned `reps` times; the columns are the
// best single run, the median of all runs and the worst run, in microseconds per rank.
// Usage: plan_bench [max_ranks=4096] [--reps N=25] [--only TEXT] (cases whose name contains TEXT)
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <string>
#include <vector>

#include "args.hpp"
#include "axe/plan/plan.hpp"

using namespace axe;
using Clock = std::chrono::steady_clock;

// The benchmark; main catches what it throws.
static int run(int argc, char** argv) {
  long max_ranks = 4096;
  int reps = 25;
  std::string only;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--reps") && i + 1 < argc) reps = static_cast<int>(examples::int_arg("--reps", argv[++i], 1, 1000000));
    else if (!std::strcmp(argv[i], "--only") && i + 1 < argc) only = argv[++i];
    else max_ranks = static_cast<long>(examples::int_arg("max_ranks", argv[i], 1, 1 << 20));
  }
  struct Case {
    const char* name;
    std::vector<AxisPlacement> from, to;
    bool two_d;
    std::int64_t rows = 8192;  // 8100: uneven (with Shard(0),Shard(0): DTensor's nested chunks)
  };
  const std::vector<Case> cases = {
      {"S(0)->R", {Shard(0)}, {Replicate()}, false},
      {"P->R", {Partial()}, {Replicate()}, false},
      {"P->S(0)", {Partial()}, {Shard(0)}, false},
      {"S(0)->S(1)", {Shard(0)}, {Shard(1)}, false},
      {"R->S(0)", {Replicate()}, {Shard(0)}, false},
      {"(S0,S1)->(R,R)", {Shard(0), Shard(1)}, {Replicate(), Replicate()}, true},
      {"(S0,S1)->(S1,S0)", {Shard(0), Shard(1)}, {Shard(1), Shard(0)}, true},
      {"(R,P)->(S0,S1)", {Replicate(), Partial()}, {Shard(0), Shard(1)}, true},
      {"(S0,R)->(R,S0)", {Shard(0), Replicate()}, {Replicate(), Shard(0)}, true},
      {"S(0)->R uneven", {Shard(0)}, {Replicate()}, false, 8100},
      {"(S0,S0)->(S0,R) u", {Shard(0), Shard(0)}, {Shard(0), Replicate()}, true, 8100},
  };
  std::printf("bf16, rows x 8192; %d runs on each of ranks 0, n/3, n/2, n-1\n", reps);
  std::printf("%-18s %-14s %6s %12s %12s %12s %10s %6s\n", "transition", "mesh", "ranks", "best us",
              "median us", "max us", "cached us", "steps");
  for (long n = 8; n <= max_ranks; n *= 8) {
    for (const auto& c : cases) {
      if (!only.empty() && std::string(c.name).find(only) == std::string::npos) continue;
      std::string mesh_text;
      if (c.two_d) {
        long a = 1;
        while (a * a < n) a *= 2;
        mesh_text = "x=" + std::to_string(a) + ",y=" + std::to_string(n / a);
      } else {
        mesh_text = "gpu=" + std::to_string(n);
      }
      Mesh m = parse_mesh(mesh_text);
      std::vector<std::int64_t> shape{c.rows, 8192};
      PlanRequest r{shard(std::span<const std::int64_t>(shape), m, std::span<const AxisPlacement>(c.from)),
                    shard(std::span<const std::int64_t>(shape), m, std::span<const AxisPlacement>(c.to)),
                    DType::BF16};
      // Uncached planning on a few ranks, `reps` times each.
      std::vector<std::int64_t> ranks{0, n / 3, n / 2, n - 1};
      std::vector<double> times;
      std::size_t steps = 0;
      for (int k = 0; k < reps; ++k)
        for (auto rank : ranks) {
          auto t0 = Clock::now();
          RankPlan p = plan_rank(r, rank);
          times.push_back(std::chrono::duration<double, std::micro>(Clock::now() - t0).count());
          steps = p.steps.size();
        }
      std::sort(times.begin(), times.end());
      const double best = times.front(), worst = times.back(), median = times[times.size() / 2];
      // Cached lookups.
      clear_plan_cache();
      (void)cached_plan_rank(r, 1);
      const int lookups = 2000;
      auto t0 = Clock::now();
      for (int i = 0; i < lookups; ++i) (void)cached_plan_rank(r, 1);
      double cached = std::chrono::duration<double, std::micro>(Clock::now() - t0).count() / lookups;
      std::printf("%-18s %-14s %6ld %12.1f %12.1f %12.1f %10.2f %6zu\n", c.name, mesh_text.c_str(), n, best, median,
                  worst, cached, steps);
      std::fflush(stdout);
    }
  }
  return 0;
}

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "plan_bench: %s\n", e.what());
    return 2;
  }
}
