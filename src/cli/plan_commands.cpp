// `axe plan` and `axe simulate`: plan a redistribution, print it, run it on simulated ranks.
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <ostream>
#include <string>

#include "axe/core/bytes.hpp"
#include "axe/core/error.hpp"
#include "axe/plan/passes.hpp"
#include "axe/plan/plan.hpp"
#include "axe/exec/simulate.hpp"
#include "cli/cli.hpp"
#include "cli/cli_util.hpp"

namespace axe::cli {
namespace {

constexpr const char* kPlanUsage =
    "plan --shape 64,128 --mesh gpu=4 --from LAYOUT --to LAYOUT [--to-mesh MESH] [--dtype f32]\n"
    "       [--cost FILE] [--staging-limit BYTES] [--spread-min BYTES] [--passes PASSES]\n"
    "       [--chunks K,K,...] [--rank R] [--json]\n"
    "       LAYOUT: an Axe layout (S[...]...) or placements, one per mesh axis: S(d), R, P, P(max)\n"
    "       (e.g. \"S(0),R\"); MESH: dp=2,tp=2[:RANKS]; BYTES: an integer, optionally with K, M or G\n"
    "       (1K = 1024); 0 means the default. --staging-limit: most bytes a step may stage per rank;\n"
    "       a step that could stage more is split into chunks (default: 4x the source + destination\n"
    "       shards, at least 1M). --spread-min: a point-to-point step from a source replicated R ways\n"
    "       splits each box over the R replicas when the destination shard / R is at least this\n"
    "       (default 16K). --passes: the plan passes run after planning, as an executor runs them:\n"
    "       none (default), cuda (those of the CUDA executor: fold, pad) or a comma-separated list of\n"
    "       fold (local slices read by the next step straight from their input) and pad (list the\n"
    "       elements no step writes, which executors set to NaN / 0, as \"pad buffer\" lines).\n"
    "       --chunks: pipeline plan step i into K_i chunks (one count per planned step; the CUDA\n"
    "       executor's are those its ranks agree on, CudaExecutor::pipeline_chunks). --rank: print\n"
    "       that rank's plan, every box and pad";
constexpr const char* kSimulateUsage =
    "simulate ...the same arguments as plan (--staging-limit BYTES, --spread-min BYTES, --passes\n"
    "       PASSES and --chunks K,K,... too; not --rank)...\n"
    "       [--dump DIR]   run on simulated ranks, verify, and write each destination rank's buffer\n"
    "       to DIR/rank<r>.bin (float64, padding NaN)";

DistLayout parse_dist(const std::string& text, const std::vector<std::int64_t>& shape, const Mesh& mesh,
                      const char* which) {
  try {
    if (text.find('[') != std::string::npos) return DistLayout(shape, parse_axe_layout(text), mesh);
    auto ps = parse_placements(text);
    return shard(std::span<const std::int64_t>(shape), mesh, std::span<const AxisPlacement>(ps));
  } catch (const Error& e) {
    fail(std::string("--") + which + " '" + text + "' on mesh " + to_string(mesh) + ": " + e.what());
  }
}

PlanRequest request(const Args& args, CostModel& cost) {
  const std::vector<std::int64_t> shape = util::parse_shape(args.get("shape"), "--shape");
  Mesh from_mesh = util::parse_mesh_option(args.get("mesh"), "--mesh");
  Mesh to_mesh = args.has("to-mesh") ? util::parse_mesh_option(args.get("to-mesh"), "--to-mesh") : from_mesh;
  DType dt = args.has("dtype") ? parse_dtype(args.get("dtype")) : DType::F32;
  if (args.has("cost")) cost = CostModel::load(args.get("cost"));
  PlanRequest r{parse_dist(args.get("from"), shape, from_mesh, "from"), parse_dist(args.get("to"), shape, to_mesh, "to"),
                dt};
  // 0 (the library's "default") is accepted and means the default.
  if (args.has("staging-limit")) r.staging_limit = parse_bytes(args.get("staging-limit"), "--staging-limit");
  if (args.has("spread-min")) r.spread_min_bytes = parse_bytes(args.get("spread-min"), "--spread-min");
  check_request(r);
  return r;
}

// The plan through the passes of --passes and --chunks (plan/passes.hpp); unchanged without them.
Plan passed(const Args& args, const Plan& p) {
  PassOptions o;
  try {
    if (args.has("passes")) o = parse_passes(args.get("passes"));
  } catch (const Error& e) {
    fail(std::string("--passes: ") + e.what());
  }
  if (args.has("chunks")) {
    for (auto k : util::parse_ints(args.get("chunks"), "--chunks")) {
      if (k < 1) fail("--chunks '" + args.get("chunks") + "': " + std::to_string(k) + " chunks (each count must be >= 1)");
      o.chunks.push_back(k);
    }
    if (o.chunks.size() != p.kinds.size())
      fail("--chunks '" + args.get("chunks") + "': " + std::to_string(o.chunks.size()) +
           " counts for a plan of " + std::to_string(p.kinds.size()) + " steps (one per step)");
  }
  try {
    return run_passes(p, o);
  } catch (const Error& e) {
    fail(std::string("--chunks: ") + e.what());
  }
}

int run_plan(const Args& args, std::ostream& out) {
  args.allow_only({"shape", "mesh", "from", "to", "to-mesh", "dtype", "cost", "staging-limit", "spread-min", "passes",
                   "chunks", "rank"});
  if (!args.positional.empty()) fail("plan: unexpected argument '" + args.positional[0] + "'");
  CostModel cost;
  Plan p = passed(args, plan_all(request(args, cost), cost));
  if (args.has("rank")) {
    const auto ranks = util::parse_ints(args.get("rank"), "--rank");
    if (ranks.size() != 1) fail("--rank '" + args.get("rank") + "': expected one rank");
    const RankPlan* rp = p.find(ranks[0]);
    if (!rp) fail("--rank " + std::to_string(ranks[0]) + ": not a rank of either mesh");
    if (args.json) fail("--rank: no JSON form (print it without --json)");
    out << to_string(*rp);
    return 0;
  }
  out << (args.json ? to_json(p) : to_string(p)) << (args.json ? "\n" : "");
  return 0;
}

int run_simulate(const Args& args, std::ostream& out) {
  args.allow_only({"shape", "mesh", "from", "to", "to-mesh", "dtype", "cost", "staging-limit", "spread-min", "passes",
                   "chunks", "dump"});
  if (!args.positional.empty()) fail("simulate: unexpected argument '" + args.positional[0] + "'");
  CostModel cost;
  PlanRequest r = request(args, cost);
  Plan p = passed(args, plan_all(r, cost));
  SimulationResult res = simulate(p);
  std::string why = verify(r, res);
  if (args.has("dump")) {
    std::filesystem::path dir(args.get("dump"));
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    if (ec) fail("--dump: cannot create directory '" + dir.string() + "': " + ec.message());
    for (const auto& [rank, buf] : res.destination) {
      auto path = dir / ("rank" + std::to_string(rank) + ".bin");
      std::ofstream f(path, std::ios::binary);
      // Host order is little-endian on every supported platform; write bytes as stored.
      f.write(reinterpret_cast<const char*>(buf.data()), static_cast<std::streamsize>(buf.size() * sizeof(double)));
      if (!f) fail("--dump: cannot write '" + path.string() + "'");
    }
  }
  if (args.json) {
    out << "{\"ok\": " << (why.empty() ? "true" : "false") << ", \"error\": " << json_string(why)
        << ", \"steps\": " << p.kinds.size() << ", \"bytes_sent\": " << p.totals.bytes_sent
        << ", \"bytes_received\": " << p.totals.bytes_received << ", \"lower_bound_bytes\": "
        << p.totals.lower_bound_bytes << ", \"ranks\": " << p.ranks.size() << "}\n";
  } else if (why.empty()) {
    out << "ok: " << p.ranks.size() << " ranks, " << p.kinds.size() << " steps, " << p.totals.bytes_received
        << " bytes moved (lower bound " << p.totals.lower_bound_bytes << ")\n";
  } else {
    out << "MISMATCH: " << why << "\n";
  }
  return why.empty() ? 0 : 1;
}

const bool registered = [] {
  register_command({"plan", kPlanUsage, &run_plan});
  register_command({"simulate", kSimulateUsage, &run_simulate});
  return true;
}();

}  // namespace
}  // namespace axe::cli
