// Cost-model calibration (calibrate.hpp), the parts that need no timing: the alpha-beta fit,
// the calibration cases (one step of the kind, x as the planner counts it), the model file
// (round trip, bad files) and the runtime's model steering the plans DistTensor runs.
// The start-up path (measure, write, reuse) is runtime_calibrate_np2 (calibrate_start.cpp).
#include "axe/runtime/calibrate.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <fstream>

#include "axe/core/error.hpp"
#include "runtime_test_util.hpp"
#include "support/test_support.hpp"

namespace axe {
namespace {

using test::rt;

// ---- fit ------------------------------------------------------------------------------------

void expect_rel(double got, double want, double tol, const std::string& what) {
  EXPECT_LE(std::abs(got - want), tol * std::abs(want))
      << what << ": got " << got << ", want " << want;
}

// Checker: a fit's postconditions (alpha >= 0, beta >= kMinBeta), and for points on a line with
// alpha >= 0, beta > 0 it is that line.
void check_fit(const std::vector<FitPoint>& pts, std::optional<CostModel::Coeffs> line) {
  auto f = fit_alpha_beta(pts);
  EXPECT_GE(f.alpha, 0.0);
  EXPECT_GE(f.beta, kMinBeta);
  if (line) {
    expect_rel(f.beta, line->beta, 1e-9, "beta");
    if (line->alpha > 0)
      expect_rel(f.alpha, line->alpha, 1e-9, "alpha");
    else
      EXPECT_NEAR(f.alpha, 0.0, 1e-15);
  }
}

TEST(CalibrateFit, TwoPoints_ExactHandDerived) {
  // (1000 B, 12 us), (101000 B, 112 us): slope 100 us / 100000 B = 1 ns/B, intercept 11 us.
  std::vector<FitPoint> p = {{1000, 12e-6}, {101000, 112e-6}};
  auto f = fit_alpha_beta(p);
  expect_rel(f.alpha, 11e-6, 1e-12, "alpha");
  expect_rel(f.beta, 1e-9, 1e-12, "beta");
  // The header's worked example: 4096 B -> 20 us, 262144 B -> 70 us: 19.206 us, 5.161 GB/s.
  std::vector<FitPoint> q = {{4096, 20e-6}, {262144, 70e-6}};
  auto g = fit_alpha_beta(q);
  expect_rel(g.beta, 50e-6 / 258048.0, 1e-12, "beta");
  expect_rel(g.alpha, 20e-6 - 4096 * 50e-6 / 258048.0, 1e-12, "alpha");
  EXPECT_EQ(coeffs_line(StepKind::AllGather, {}, g), "all-gather 19.2063 5.16096");
  EXPECT_EQ(coeffs_line(StepKind::AllGather, {Axis("x"), Axis("y")}, g),
            "all-gather x,y 19.2063 5.16096");
  // The peer transport's series: the same line after "peer", which CostModel::parse reads back
  // as the peer price (and leaves the network's default alone).
  const std::string peer = coeffs_line(StepKind::AllGather, {}, g, true);
  EXPECT_EQ(peer, "peer all-gather 19.2063 5.16096");
  const CostModel m = CostModel::parse(peer);
  ASSERT_TRUE(m.peer_coeffs(StepKind::AllGather, {}));
  expect_rel(m.peer_coeffs(StepKind::AllGather, {})->alpha, 19.2063e-6, 1e-12, "peer alpha");
  EXPECT_EQ(m.coeffs(StepKind::AllGather, {}), CostModel().coeffs(StepKind::AllGather, {}));
}

TEST(CalibrateFit, PointsOnALine_RecoverTheLine) {
  auto rng = test::make_rng(0xca11b);
  const std::string seed = std::to_string(test::test_seed());
  std::uniform_real_distribution<double> u(0, 1);
  for (int t = 0; t < 200; ++t) {
    CostModel::Coeffs line{u(rng) < 0.1 ? 0.0 : u(rng) * 100e-6, (0.01 + u(rng)) * 1e-9};
    std::vector<FitPoint> pts;
    const int n = 2 + static_cast<int>(u(rng) * 4);
    for (int i = 0; i < n; ++i) {
      double x = std::floor(1024 + u(rng) * (1 << 24)) + i;  // distinct
      pts.push_back({x, line.alpha + line.beta * x});
    }
    SCOPED_TRACE("case " + std::to_string(t) + " seed " + seed);
    check_fit(pts, line);
  }
}

TEST(CalibrateFit, FallingTime_AllAlphaAtMinimumBeta) {
  // Noise at latency-bound sizes: the larger size ran faster. beta = kMinBeta, alpha the mean.
  std::vector<FitPoint> p = {{1000, 30e-6}, {2000, 20e-6}};
  auto f = fit_alpha_beta(p);
  EXPECT_EQ(f.beta, kMinBeta);
  expect_rel(f.alpha, 25e-6 - kMinBeta * 1500, 1e-12, "alpha");
  check_fit(p, std::nullopt);
}

TEST(CalibrateFit, NegativeIntercept_ThroughTheOrigin) {
  // Slope 1 ns/B, intercept -1 us: alpha = 0, beta = sum(xy)/sum(xx).
  std::vector<FitPoint> p = {{2000, 1e-6}, {4000, 3e-6}};
  auto f = fit_alpha_beta(p);
  EXPECT_EQ(f.alpha, 0.0);
  expect_rel(f.beta, (2000 * 1e-6 + 4000 * 3e-6) / (2000.0 * 2000 + 4000.0 * 4000), 1e-12, "beta");
}

TEST(CalibrateFit, FewerThanTwoSizes_IsAnError) {
  std::vector<FitPoint> one = {{1000, 1e-6}};
  std::vector<FitPoint> same = {{1000, 1e-6}, {1000, 2e-6}};
  EXPECT_THROW(fit_alpha_beta(one), Error);
  EXPECT_THROW(fit_alpha_beta(same), Error);
}

// ---- cases ----------------------------------------------------------------------------------

// The model in which `kind` costs (a, b) and every other kind 1 s per call and per byte.
CostModel forcing(StepKind kind, double a, double b, double l) {
  CostModel m;
  for (auto k : {StepKind::AllGather, StepKind::ReduceScatter, StepKind::AllReduce,
                 StepKind::AllToAll, StepKind::Broadcast, StepKind::Permute, StepKind::SendRecv})
    m.set(k, {1.0, 1.0});
  if (kind != StepKind::LocalCopy) m.set(kind, {a, b});
  m.local_beta = l;
  return m;
}

// Law: a calibration case is planned as steps of its kind only, and the planner charges it
// exactly alpha * alpha_count + beta * x + local_beta * (in + out) (local: local_beta * x), so a
// fit on (x, t - local) yields the planner's own alpha and beta.
void check_case(StepKind kind, const Mesh& mesh, const std::vector<Axis>& axes,
                std::int64_t bytes) {
  SCOPED_TRACE(std::string(to_string(kind)) + " on " + to_string(mesh) + " axes " +
               std::to_string(axes.size()));
  CalibrationCase c = calibration_case(kind, mesh, axes, bytes);
  const double a = 7e-6, b = 3e-10, l = 1e-11;
  Plan p = plan_all(c.request, forcing(kind, a, b, l));
  ASSERT_FALSE(p.kinds.empty());
  for (auto k : p.kinds) EXPECT_EQ(to_string(k), to_string(kind));
  const double want = kind == StepKind::LocalCopy
                          ? l * c.x
                          : a * c.alpha_count + b * c.x + l * (c.in_bytes + c.out_bytes);
  expect_rel(p.estimated_seconds, want, 1e-9, "estimated seconds");
  EXPECT_LE(std::min(c.in_bytes, c.out_bytes), static_cast<double>(bytes));
  EXPECT_GT(std::min(c.in_bytes, c.out_bytes), static_cast<double>(bytes) / 2);
}

const StepKind kAllKinds[] = {StepKind::LocalCopy, StepKind::AllGather, StepKind::ReduceScatter,
                              StepKind::AllReduce, StepKind::AllToAll,  StepKind::Broadcast,
                              StepKind::Permute,   StepKind::SendRecv};

TEST(CalibrationCase, OneStepOfTheKind_CostedAsTheModelSays) {
  for (int g : {2, 3, 4}) {
    Mesh w = parse_mesh("world=" + std::to_string(g));
    for (auto k : kAllKinds) check_case(k, w, {}, 65536);
  }
  Mesh m = parse_mesh("x=2,y=3");
  for (auto k : kAllKinds) {
    check_case(k, m, {}, 8192);
    if (k == StepKind::SendRecv) continue;
    check_case(k, m, {Axis("x")}, 8192);
    check_case(k, m, {Axis("y")}, 8192);
  }
}

TEST(CalibrationCase, BadGroups_AreErrors) {
  Mesh m = parse_mesh("x=2,y=1");
  EXPECT_THROW(calibration_case(StepKind::AllGather, m, {Axis("y")}, 4096), Error);
  EXPECT_THROW(calibration_case(StepKind::AllGather, m, {Axis("z")}, 4096), Error);
  EXPECT_THROW(calibration_case(StepKind::SendRecv, parse_mesh("x=2,y=2"), {Axis("x")}, 4096),
               Error);
}

// ---- files ----------------------------------------------------------------------------------

const char* kFile =
    "# axe-calibration format=1 backend=host world=2 ranks_per_node=2 mesh=- sizes=4096,262144\n"
    "# measured ...\n"
    "local 0 12.5\n"
    "all-gather 19.2063 5.16096\n"
    "all-reduce x,y 40 2.5   # a group entry\n";

TEST(CostModelFile, HeaderKeyAndModel_RoundTrip) {
  EXPECT_EQ(calibration_key_of(kFile),
            "format=1 backend=host world=2 ranks_per_node=2 mesh=- sizes=4096,262144");
  EXPECT_EQ(calibration_key_of("all-gather 1 1\n"), "");
  CostModel m = parse_cost_model_file(kFile, "model.txt");
  expect_rel(m.local_beta, 1 / 12.5e9, 1e-12, "local_beta");
  expect_rel(m.coeffs(StepKind::AllGather, {}).alpha, 19.2063e-6, 1e-12, "alpha");
  expect_rel(m.coeffs(StepKind::AllReduce, {Axis("y"), Axis("x")}).beta, 1 / 2.5e9, 1e-12, "beta");
  EXPECT_EQ(m.coeffs(StepKind::AllReduce, {}).beta,
            CostModel().coeffs(StepKind::AllReduce, {}).beta);
  // Writing the lines back and parsing them again gives the same model (the same plans).
  std::string again = "local 0 12.5\n" +
                      coeffs_line(StepKind::AllGather, {}, m.coeffs(StepKind::AllGather, {})) +
                      "\n" +
                      coeffs_line(StepKind::AllReduce, {Axis("x"), Axis("y")},
                                  m.coeffs(StepKind::AllReduce, {Axis("x"), Axis("y")})) +
                      "\n";
  EXPECT_EQ(parse_cost_model_file(again, "again").fingerprint(), m.fingerprint());
}

std::string error_of(std::string_view text, const std::string& path) {
  try {
    (void)parse_cost_model_file(text, path);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(CostModelFile, MalformedLines_NameTheFileAndLine) {
  for (const char* bad : {"all-gather 1\n", "all-gahter 1 1\n", "all-gather one 1\n",
                          "all-gather 1 0\n", "# ok\nall-gather -1 5\n"}) {
    std::string e = error_of(bad, "/tmp/some.model");
    EXPECT_NE(e.find("'/tmp/some.model'"), std::string::npos) << bad << " -> " << e;
    EXPECT_NE(e.find("line"), std::string::npos) << e;
  }
  EXPECT_NE(error_of("# x\nall-gahter 1 1\n", "f").find("line 2"), std::string::npos);
}

// ---- the runtime's model --------------------------------------------------------------------

TEST(RuntimeCostModel, DefaultWithoutSettings) {
  if (!tunable("AXE_CALIBRATE").empty() || !tunable("AXE_COST_MODEL").empty())
    GTEST_SKIP() << "AXE_CALIBRATE / AXE_COST_MODEL set for this run";
  EXPECT_EQ(rt().cost_model().fingerprint(), CostModel().fingerprint());
  EXPECT_EQ(rt().cost_model_origin(), "default");
}

std::vector<StepKind> kinds_of(const RankPlan& p) {
  std::vector<StepKind> k;
  for (const auto& s : p.steps) k.push_back(s.kind);
  return k;
}

// A model where all-reduce is very expensive makes DistTensor run P -> R as reduce-scatter +
// all-gather, with the right values; the default model's all-reduce comes back after.
TEST(RuntimeCostModel, ExpensiveAllReduce_PicksReduceScatterAllGather) {
  const std::int64_t n = rt().size();
  if (n < 2) GTEST_SKIP() << "needs 2 ranks";
  Mesh w = parse_mesh("gpu=" + std::to_string(n));
  DistLayout from = shard({4 * n, 6}, w, {Partial()}), to = shard({4 * n, 6}, w, {Replicate()});
  PlanRequest req{from, to, DType::F64};
  const CostModel saved = rt().cost_model();
  CostModel expensive;
  expensive.set(StepKind::AllReduce, {1.0, 1e-3});  // 1 s + 1 ms per byte
  rt().set_cost_model(expensive);
  EXPECT_EQ(rt().cost_model_origin(), "set_cost_model");
  auto plan = cached_plan_rank(req, rt().rank(), rt().cost_model());
  EXPECT_EQ(kinds_of(*plan), (std::vector<StepKind>{StepKind::ReduceScatter, StepKind::AllGather}));
  EXPECT_EQ(test::check_redistribute(from, to, DType::F64), "");
  rt().set_cost_model(saved);
  auto back = cached_plan_rank(req, rt().rank(), rt().cost_model());
  EXPECT_EQ(kinds_of(*back), (std::vector<StepKind>{StepKind::AllReduce}));
  EXPECT_EQ(test::check_redistribute(from, to, DType::F64), "");
}

// Ranks that pass different models to set_cost_model fail on every rank, naming the model.
TEST(RuntimeCostModel, DifferentModelsOnRanks_FailEverywhere) {
  if (rt().size() < 2) GTEST_SKIP() << "needs 2 ranks";
  const CostModel saved = rt().cost_model();
  CostModel m;
  if (rt().rank() == 1) m.set(StepKind::AllGather, {1e-3, 1e-9});
  try {
    rt().set_cost_model(m);
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("set_cost_model"), std::string::npos) << e.what();
  }
  EXPECT_EQ(rt().cost_model().fingerprint(), saved.fingerprint());
}

}  // namespace
}  // namespace axe
