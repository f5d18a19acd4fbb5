// Cost-model calibration: measure the alpha-beta model of plan.hpp on the running backend
// (issue 5; DESIGN §4 step 5 "alpha-beta per communicator, measurable on the machine").
//
// The planner costs a step on a group as  alpha + beta * x + local_beta * (in + out)  where x is
// the bytes moved by the busiest rank as step_cost (src/plan/strategy.cpp) defines them, for a
// group of g ranks and a per-rank shard of N bytes:
//   all-gather      x = (g-1) N        (N: the source shard)
//   reduce-scatter  x = (g-1) N        (N: the destination shard)
//   all-reduce      x = 2 (g-1)/g N
//   all-to-all      x = (g-1)/g N
//   broadcast       x = N
//   permute         x = N
//   send-recv       x = N, and alpha counts once per sending peer (m = g here)
// calibrate() times, per kind, one redistribution that is exactly one step of that kind
// (calibration_case), at two or more sizes N, on the world group (the model's default entry
// for the kind) and on each axis of an optional mesh (entries "KIND AXIS"): per size, the median
// over iterations of the slowest rank's time, every case of one size run round robin
// (time_plans). It then fits alpha and beta by least squares to
// t - local_beta * (in + out), so that the model reproduces the measured times (exactly, with
// two sizes). local_beta is measured first from a local slice (R -> S(0): x = N, no alpha).
//
// Worked example (fit_alpha_beta): an all-gather on g = 2 ranks timed at N = 4096 B -> 20 us and
// N = 262144 B -> 70 us (local term already removed) has x = 4096 and 262144:
//   beta = (70 - 20) us / (262144 - 4096) B = 0.19376 ns/B  (5.161 GB/s),
//   alpha = 20 us - 4096 B * beta = 19.206 us;   file line "all-gather 19.206 5.161".
//
// File (AXE_CALIBRATE, AXE_COST_MODEL): CostModel's text format ("KIND [AXIS,...] ALPHA_US
// GBPS", '#' comments, a "local 0 GBPS" line sets local_beta), preceded by the header line
//   # axe-calibration format=1 backend=host world=4 ranks_per_node=4 mesh=x=2,y=2
//   sizes=4096,65536,262144
// which says where the numbers hold (calibration_key). Comment lines after it list the measured
// points. A model read from the file is what every rank uses (rank 0 reads it and broadcasts
// the text, every rank parses it, and the ranks agree on CostModel::fingerprint()); a fresh
// calibration builds its model by parsing the text it writes, so a later start that loads the
// file gets the identical model (same fingerprint, same plans).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "axe/plan/plan.hpp"

namespace axe {

class Runtime;

// Least-squares line through points (x bytes, y seconds): alpha = intercept (s), beta = slope
// (s/byte). Requires at least two distinct x (axe::Error otherwise). Guarantees alpha >= 0 and
// beta >= kMinBeta: a negative slope (noise at sizes where latency dominates) gives beta =
// kMinBeta and alpha the mean of y - beta x; a negative intercept gives alpha = 0 and the
// slope through the origin. Two points with a positive slope and a non-negative intercept are
// fitted exactly: (1000, 12e-6), (101000, 112e-6) -> alpha 11e-6 s, beta 1e-9 s/B (1 GB/s).
struct FitPoint {
  double x = 0;  // bytes (as the cost model counts them)
  double y = 0;  // seconds
};
inline constexpr double kMinBeta = 1e-15;  // 1e6 GB/s: the fastest bandwidth a fit may claim
CostModel::Coeffs fit_alpha_beta(std::span<const FitPoint> points);

struct CalibrationOptions {
  // Per-rank shard sizes N in bytes (at least two, distinct, each >= 1024; multiples of 256
  // are used exactly). Empty: AXE_CALIBRATE_SIZES, else {64 KiB, 2 MiB, 64 MiB} on a device
  // backend (a per-call cost of ~300 us, seen on 2 H200s, hides the bandwidth below tens of
  // MiB) and {4 KiB, 64 KiB, 256 KiB} on the host backend (keeps CI fast).
  std::vector<std::int64_t> sizes;
  // Timed iterations per point (after one untimed warm-up); 0: 10 on a device, 7 on the host.
  int iterations = 0;
  // Back-to-back runs per timed iteration (time_plans); 0: default_repeats (8 on a device).
  int repeats = 0;
  // A mesh of the world ("x=2,y=2", row-major ranks) whose single-axis subgroups are measured
  // too (entries "KIND x", "KIND y"); "": AXE_CALIBRATE_MESH; still "": the world group only.
  std::string mesh;
};

// One measured point and the series of one (kind, group).
struct CalibrationPoint {
  std::int64_t shard_bytes = 0;  // N
  double x = 0;                  // bytes of the model (see the table above)
  double local = 0;              // local_beta * (in + out) removed before the fit (s)
  double seconds = 0;            // median over iterations of the slowest rank
};
struct CalibrationSeries {
  StepKind kind = StepKind::SendRecv;
  bool peer = false;       // measured on the peer transport (model lines "peer KIND ...")
  std::vector<Axis> axes;  // empty: the world group (the kind's default entry)
  std::int64_t group = 1;  // ranks per group
  std::vector<CalibrationPoint> points;
  CostModel::Coeffs fit;
};

struct Calibration {
  std::string key;  // calibration_key
  std::vector<CalibrationSeries> series;
  std::string text;    // the file text (header, points, model lines)
  CostModel model;     // CostModel parsed from `text`
  double seconds = 0;  // wall time the measurement took (rank 0)
};

// One redistribution that the planner runs as a single step of `kind` on the group of `axes`
// (empty: the whole mesh as one group) of `mesh`, with a per-rank shard of `shard_bytes` (f32),
// plus the model's x for it and the step's alpha count (messages; 1 but for send-recv).
// Kinds: every StepKind; LocalCopy is the R -> S(0) slice (x = N, alpha count 0). Send-recv is
// only available for the whole mesh (S(0) -> S(1) onto the mesh with its ranks reversed).
// Throws axe::Error for a group of one rank.
struct CalibrationCase {
  PlanRequest request;
  double x = 0;
  double alpha_count = 1;
  double in_bytes = 0, out_bytes = 0;  // the step's local buffers (the model's copy term)
};
CalibrationCase calibration_case(StepKind kind, const Mesh& mesh, const std::vector<Axis>& axes,
                                 std::int64_t shard_bytes);

// Seconds each plan (this rank's part) takes on rt's backend: one untimed batch of each, then
// `iterations` rounds that run every plan's batch in order, each batch after a barrier: `repeats`
// back-to-back Backend::execute_agreed calls (the plans are prepared on every rank by then, so a
// backend skips its per-call agreement, as in DistTensor::redistribute's steady state), then one
// synchronize(), the time divided by `repeats`. Per plan the median over the rounds of the slowest
// rank's time. Round robin, so a slow period of a shared machine hits every plan alike; batches, so
// a device backend's time is that of its stream (the host's waits overlap it) rather than of one
// host round trip per run. Collective (every rank passes its parts of the same plans in the same
// order); buffers are allocated here (zeros). time_plan: one plan. default_repeats: 1 on the host
// backend (it executes synchronously), 8 on a device backend.
std::vector<double> time_plans(Runtime& rt, std::span<const RankPlan* const> plans, int iterations,
                               int repeats = 1);
double time_plan(Runtime& rt, const RankPlan& plan, int iterations, int repeats = 1);
int default_repeats(const Runtime& rt);

// "format=1 backend=NAME world=P ranks_per_node=L mesh=MESH sizes=N1,N2" for `rt` and the
// resolved options (mesh "-" when none).
std::string calibration_key(const Runtime& rt, const CalibrationOptions& options = {});

// Measures the model on rt's backend (collective over the world; bounded: kinds x sizes x
// groups x (iterations + 1) executions). Throws axe::Error on every rank on a bad option.
// Where the backend can run each step on NCCL or the peer transport (Backend::set_transport: one
// node, a GPU per rank), every kind but the local copy is measured on both, forced, and the peer
// series become "peer KIND ..." lines; the backend then chooses by the model again.
Calibration calibrate(Runtime& rt, const CalibrationOptions& options = {});

// The header key of a cost-model file's text ("" when it has no "# axe-calibration" line).
std::string calibration_key_of(std::string_view text);

// Parses a model file's text; errors name `path` and the line. A "local 0 GBPS" line also sets
// local_beta (CostModel::parse fills only the table).
CostModel parse_cost_model_file(std::string_view text, const std::string& path);

// Start-up models (Runtime's constructor calls these; collective, errors on every rank alike).
//   load_cost_model: AXE_COST_MODEL. Rank 0 reads `path`; an unreadable or malformed file is an
//   axe::Error naming it; a file with a calibration header for another world (its key's format,
//   backend, world and ranks_per_node differ from this run's; sizes and mesh may differ) too
//   ("re-measure with AXE_CALIBRATE, or delete the header line to use it").
//   calibrated_model: AXE_CALIBRATE. Loads `path` when it exists and its key matches; measures
//   and writes it (rank 0, atomically: a temporary file renamed over it) when it is missing or
//   was calibrated for another world; a file without the header (not a calibration) or with a
//   matching header but a malformed body is an axe::Error naming it. `origin` receives
//   "loaded PATH" or "measured, written to PATH" (with the reason for re-measuring).
CostModel load_cost_model(Runtime& rt, const std::string& path);
CostModel calibrated_model(Runtime& rt, const std::string& path, const CalibrationOptions& options,
                           std::string* origin = nullptr);

// Model lines of `m` for the kinds measured: "[peer ]KIND [AXES] ALPHA_US GBPS" ("%.6g").
std::string coeffs_line(StepKind kind, const std::vector<Axis>& axes, CostModel::Coeffs c, bool peer = false);
// Axis names joined by commas, as coeffs_line writes a group: {dp, tp} -> "dp,tp".
std::string axes_text(const std::vector<Axis>& axes);

}  // namespace axe
