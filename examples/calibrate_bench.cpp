// calibrate_bench: where does a measured cost model change the planner's choice, and is the
// measured choice faster? (issue 5: "show in the benchmark where the measured model changed the
// choice").
//
// 1. Calibrates the alpha-beta model on the running backend (calibrate.hpp; on 4+ ranks also the
//    single-axis groups of the mesh x=2,y=P/2), or takes the runtime's model when AXE_CALIBRATE
//    or AXE_COST_MODEL gave one, and prints it next to the planner's default.
// 2. For DTensor transitions on the 1-D world mesh and (P = 4) the 2-D mesh x=2,y=2, at several
//    global sizes, plans under the default and under the measured model, prints both plans'
//    steps, marks '*' where they differ, and times both on the backend (alternating runs; median
//    of N runs of the slowest rank, each after a barrier) so one sees whether the measured
//    model's choice is faster.
// The choices that depend on the model (src/plan/strategy.cpp): merged shrink-first collectives
// vs per-axis (DTensor order) steps vs one direct exchange (which must win by 10%), and an
// all-reduce vs reduce-scatter + all-gather. The est columns are each model's own estimate of
// the plan it chose.
//
//   axe-run -np 4 ./calibrate_bench [--iters N] [--sizes 64K,1M,8M] [--quick]
//   AXE_BACKEND=cuda axe-run -np 2 ./calibrate_bench          (GPUs: sizes 1M,16M,256M)
#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <exception>
#include <memory>
#include <string>
#include <vector>

#include "axe/core/bytes.hpp"
#include "axe/runtime/calibrate.hpp"
#include "axe/runtime/dist_tensor.hpp"
#include "axe/core/error.hpp"
#include "args.hpp"

namespace {

using namespace axe;

struct Transition {
  std::string name;
  Mesh mesh;
  std::string from, to;  // placements, one per mesh axis
  bool uneven = false;   // rows not divisible by the mesh
};

// "all-gather{x} + all-to-all{x,y} x3": the steps, chunks collapsed.
std::string steps_text(const RankPlan& p) {
  std::string s;
  for (const auto& st : p.steps) {
    if (st.chunk > 0) continue;
    if (!s.empty()) s += " + ";
    s += to_string(st.kind);
    if (!st.axes.empty()) s += "{" + axes_text(st.axes) + "}";
    if (st.chunks > 1) s += " x" + std::to_string(st.chunks);
  }
  return s.empty() ? "(nothing)" : s;
}

std::string gbps(double beta) {
  if (beta <= kMinBeta * 1.0001) return "inf";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f", 1e-9 / beta);
  return buf;
}

DistLayout placed(const std::vector<std::int64_t>& shape, const Mesh& m, const std::string& p) {
  auto pl = parse_placements(p);
  return shard(std::span<const std::int64_t>(shape), m, std::span<const AxisPlacement>(pl));
}

}  // namespace

// The benchmark on a started runtime; main catches what it throws.
static int run(Runtime& rt, int argc, char** argv) {
  const bool root = rt.rank() == 0;
  const int p = rt.size();
  const bool host = rt.backend().name() == "host";
  int iters = host ? 5 : 20;
  std::vector<std::int64_t> sizes = host ? std::vector<std::int64_t>{64 << 10, 1 << 20, 8 << 20}
                                         : std::vector<std::int64_t>{1 << 20, 16 << 20, 256 << 20};
  bool quick = false;
  int reps = default_repeats(rt);
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--iters" && i + 1 < argc)
      iters = static_cast<int>(examples::int_arg("--iters", argv[++i], 1, 1000000));
    else if (a == "--repeats" && i + 1 < argc)
      reps = static_cast<int>(examples::int_arg("--repeats", argv[++i], 1, 1000000));
    else if (a == "--sizes" && i + 1 < argc)
      sizes = parse_byte_list(argv[++i], "--sizes");
    else if (a == "--quick")
      quick = true;
    else {
      if (root) std::fprintf(stderr, "calibrate_bench: unknown argument '%s'\n", a.c_str());
      return 2;
    }
  }
  if (quick) {
    iters = 2;
    sizes = {64 << 10};
  }
  if (p < 2) {
    if (root)
      std::printf("calibrate_bench: needs at least 2 ranks (axe-run -np 4 ./calibrate_bench)\n");
    return 0;
  }

  // ---- 1. the model ----
  const CostModel def;
  CostModel measured = rt.cost_model();
  std::string origin = rt.cost_model_origin();
  std::string mesh2 = p >= 4 && p % 2 == 0 ? "x=2,y=" + std::to_string(p / 2) : "";
  if (origin == "default") {
    CalibrationOptions o;
    o.mesh = mesh2;
    if (quick) o.iterations = 2;
    Calibration c = calibrate(rt, o);
    measured = c.model;
    char buf[64];
    std::snprintf(buf, sizeof buf, "measured now in %.2f s", c.seconds);
    origin = buf;
    if (root) std::printf("%s\n", c.text.c_str());
  }
  if (root) {
    std::printf("cost model (%s, backend %s, %d ranks) vs the planner's default\n", origin.c_str(),
                std::string(rt.backend().name()).c_str(), p);
    std::printf("  %-15s %-6s %12s %10s   %12s %10s\n", "kind", "group", "default us", "GB/s",
                "measured us", "GB/s");
    std::vector<std::vector<Axis>> groups = {{}};
    if (!mesh2.empty()) groups = {{}, {Axis("x")}, {Axis("y")}};
    for (const auto& g : groups)
      for (auto k :
           {StepKind::AllGather, StepKind::ReduceScatter, StepKind::AllReduce, StepKind::AllToAll,
            StepKind::Broadcast, StepKind::Permute, StepKind::SendRecv}) {
        if (!g.empty() && k == StepKind::SendRecv) continue;
        auto d = def.coeffs(k, g), m = measured.coeffs(k, g);
        std::printf("  %-15s %-6s %12.2f %10s   %12.2f %10s", std::string(to_string(k)).c_str(),
                    g.empty() ? "any" : axes_text(g).c_str(), d.alpha * 1e6, gbps(d.beta).c_str(),
                    m.alpha * 1e6, gbps(m.beta).c_str());
        // The peer transport's line, where measured (one node, a GPU per rank).
        if (auto q = measured.peer_coeffs(k, g))
          std::printf("   peer %10.2f %10s", q->alpha * 1e6, gbps(q->beta).c_str());
        std::printf("\n");
      }
    std::printf("  %-15s %-6s %12s %10s   %12s %10s\n", "local copy", "", "",
                gbps(def.local_beta).c_str(), "", gbps(measured.local_beta).c_str());
    std::printf(
        "  (inf: at the fit's floor; the step's time beyond the model's copy term did not grow "
        "with the "
        "bytes at the sizes measured)\n\n");
  }

  // ---- 2. transitions ----
  std::vector<Transition> ts;
  const Mesh w = parse_mesh("w=" + std::to_string(p));
  for (auto [f, t] : std::vector<std::pair<const char*, const char*>>{{"S(0)", "R"},
                                                                      {"S(1)", "R"},
                                                                      {"S(0)", "S(1)"},
                                                                      {"S(1)", "S(0)"},
                                                                      {"R", "S(1)"},
                                                                      {"P", "R"},
                                                                      {"P", "S(0)"},
                                                                      {"P", "S(1)"}})
    ts.push_back({std::string(f) + "->" + t, w, f, t});
  ts.push_back({"uneven S(0)->R", w, "S(0)", "R", true});
  ts.push_back({"uneven S(0)->S(1)", w, "S(0)", "S(1)", true});
  if (p == 4) {
    const Mesh m = parse_mesh("x=2,y=2");
    for (auto [f, t] : std::vector<std::pair<const char*, const char*>>{{"S(0),S(1)", "R,R"},
                                                                        {"S(0),S(1)", "S(1),S(0)"},
                                                                        {"S(0),R", "R,S(0)"},
                                                                        {"S(0),S(0)", "S(1),S(1)"},
                                                                        {"R,P", "S(0),S(1)"},
                                                                        {"P,P", "R,R"},
                                                                        {"P,S(1)", "R,S(1)"}})
      ts.push_back({"(" + std::string(f) + ")->(" + t + ")", m, f, t});
  }
  if (root) {
    std::printf(
        "plans under the default and the measured model (f32; t: median of %d batches of %d runs, "
        "slowest rank; "
        "est: the model's own estimate)\n",
        iters, reps);
    std::printf("%-24s %6s | %-44s %9s %9s | %-44s %9s %9s | %s\n", "transition", "global",
                "default plan", "est us", "t us", "measured-model plan", "est us", "t us",
                "verdict");
  }
  int differ = 0, faster = 0;
  double gain_sum = 0;
  for (const auto& tr : ts)
    for (std::int64_t bytes : sizes) {
      const std::int64_t cols = bytes >= (4 << 20) ? 1024 : 256;
      std::int64_t rows = std::max<std::int64_t>(2 * p, bytes / 4 / cols / (2 * p) * (2 * p));
      if (tr.uneven) rows += 1;
      const std::vector<std::int64_t> shape = {rows, cols};
      PlanRequest req{placed(shape, tr.mesh, tr.from), placed(shape, tr.mesh, tr.to), DType::F32};
      auto pd = cached_plan_rank(req, rt.rank(), def);
      auto pm = cached_plan_rank(req, rt.rank(), measured);
      const double est_d = plan_all(req, def).estimated_seconds;
      const double est_m = plan_all(req, measured).estimated_seconds;
      const bool same = pd->steps.size() == pm->steps.size() && steps_text(*pd) == steps_text(*pm);
      double td = 0, tm = 0;
      if (same) {
        td = tm = time_plan(rt, *pd, iters, reps);
      } else {
        const RankPlan* both[] = {pd.get(), pm.get()};  // alternated: drift hits both alike
        auto t = time_plans(rt, both, iters, reps);
        td = t[0];
        tm = t[1];
      }
      std::string verdict = "same plan";
      if (!same) {
        ++differ;
        char buf[96];
        std::snprintf(buf, sizeof buf, "* measured choice %.2fx %s", tm < td ? td / tm : tm / td,
                      tm < td ? "faster" : "slower");
        verdict = buf;
        if (tm < td) ++faster;
        gain_sum += td / tm;
      }
      if (root)
        std::printf("%-24s %6s | %-44s %9.1f %9.1f | %-44s %9.1f %9.1f | %s\n", tr.name.c_str(),
                    bytes_text(static_cast<double>(rows * cols * 4)).c_str(),
                    steps_text(*pd).c_str(), est_d * 1e6, td * 1e6,
                    same ? "(same)" : steps_text(*pm).c_str(), est_m * 1e6, tm * 1e6,
                    verdict.c_str());
    }
  if (root) {
    std::printf("\n");
    if (differ == 0)
      std::printf(
          "On this backend (%s, %d ranks) the measured model changed no choice: for every "
          "transition and "
          "size above, the plan the default model picks is also the cheapest under the measured "
          "coefficients.\n",
          std::string(rt.backend().name()).c_str(), p);
    else
      std::printf(
          "The measured model changed %d choice(s); the measured choice was faster in %d of them "
          "(mean speed ratio default/measured %.2fx).\n",
          differ, faster, gain_sum / differ);
  }
  return 0;
}

int main(int argc, char** argv) {
  std::unique_ptr<Runtime> runtime;
  try {  // start-up errors too (a bad AXE_* value on any rank)
    runtime = std::make_unique<Runtime>(&argc, &argv);
    return run(*runtime, argc, argv);
  } catch (const std::exception& e) {
    if (runtime) std::fprintf(stderr, "[rank %d] calibrate_bench: %s\n", runtime->rank(), e.what());
    else std::fprintf(stderr, "calibrate_bench: %s\n", e.what());
    return 2;
  }
}
