// `axe convert-layout`: the plan moving a tile from one thread layout to another
// (include/axe/linear/convert_plan.hpp); THREADS are Axe layouts or thread-layout specs
// (include/axe/linear/thread_spec.hpp).
//
// JSON:
//   "mechanism"        "none", "registers", "shuffles" or "shared"
//   "simulated"        true when --simulate ran the plan over every lane and warp and it produced
//                      exactly the destination layout (false without --simulate)
//   "register_moves"   registers whose index changes in renames (no instruction)
//   "selects"          selp instructions per thread (conditional register swaps)
//   "shuffles"         shfl.sync instructions per thread
//   "shared_bytes"     the shared buffer (one repetition; 0 unless shared)
//   "repetitions"      store/barrier/load rounds (0 unless shared)
//   "barriers"         __syncthreads
//   "wavefronts"       store + load wavefronts of the shared round trip (bank model, all warps)
//   "store_wavefronts", "load_wavefronts", "store_instructions", "load_instructions" (per thread)
//   "issue_cost"       the heuristic cost that chose between shuffles and shared (convert_plan.hpp)
//   "lanes", "warps"   the threads the plan runs on
//   "steps"            the program, one string per step
#include <ostream>
#include <string>

#include "axe/core/dtype.hpp"
#include "axe/core/error.hpp"
#include "axe/cute/swizzle.hpp"
#include "axe/layout/layout.hpp"
#include "axe/linear/convert_plan.hpp"
#include "cli/cli.hpp"
#include "cli/cli_util.hpp"

namespace axe::cli {
namespace {

constexpr const char* kUsage =
    "convert-layout --from THREADS --to THREADS --shape S --dtype T [--simulate] "
    "[--shared-budget BYTES] [--swizzle B,M,S] [--choose cheapest|shuffles|shared]\n"
    "    JSON keys: mechanism (none|registers|shuffles|shared), simulated, register_moves, "
    "selects,\n"
    "    shuffles, shared_bytes, repetitions, barriers, wavefronts, store_wavefronts,\n"
    "    load_wavefronts, store_instructions, load_instructions, issue_cost, lanes, warps, steps";

std::string replace_all(std::string s, std::string_view from, std::string_view to) {
  for (std::size_t p = s.find(from); p != std::string::npos; p = s.find(from, p + to.size())) {
    s.replace(p, from.size(), to);
  }
  return s;
}

int run_convert_layout(const Args& args, std::ostream& out) {
  args.allow_only(
      {"from", "to", "shape", "dtype", "simulate", "shared-budget", "swizzle", "choose"});
  util::expect_positional(args, 0, 0, kUsage);
  auto shape = util::parse_shape(args.get("shape"), "--shape");
  AxeLayout from = util::thread_layout_option(args, "from", shape);
  AxeLayout to = util::thread_layout_option(args, "to", shape);
  linear::ConvertOptions opts;
  opts.element_bytes = size_of(parse_dtype(args.get("dtype")));
  if (args.has("shared-budget")) {
    opts.shared_budget_bytes = util::parse_int(args.get("shared-budget"), "--shared-budget");
    if (opts.shared_budget_bytes < opts.element_bytes) {
      fail("--shared-budget " + args.get("shared-budget") + " is smaller than one element (" +
           std::to_string(opts.element_bytes) + " bytes)");
    }
  }
  if (args.has("swizzle")) {
    auto v = util::parse_ints(args.get("swizzle"), "--swizzle");
    if (v.size() != 3) fail("--swizzle: expected B,M,S, got '" + args.get("swizzle") + "'");
    for (auto x : v) {
      if (x < -64 || x > 64) fail("--swizzle: " + std::to_string(x) + " is out of range");
    }
    opts.shared = linear::row_major_shared(shape);
    opts.shared->swizzle =
        cute::Swizzle(static_cast<int>(v[0]), static_cast<int>(v[1]), static_cast<int>(v[2]));
  }
  if (args.has("choose")) {
    const std::string& c = args.get("choose");
    using Choice = linear::ConvertOptions::Choice;
    if (c == "cheapest") {
      opts.choice = Choice::cheapest;
    } else if (c == "shuffles") {
      opts.choice = Choice::shuffles;
    } else if (c == "shared") {
      opts.choice = Choice::shared;
    } else {
      fail("--choose: expected cheapest, shuffles or shared, got '" + c + "'");
    }
  }
  linear::ConvertPlan plan;
  try {
    plan = linear::plan_conversion(from, to, shape, opts);
  } catch (const axe::Error& e) {
    std::string m = replace_all(e.what(), "the source layout", "--from");
    fail(replace_all(m, "the destination layout", "--to"));
  }
  bool simulated = false;
  if (args.has("simulate")) {
    auto why = linear::simulate(plan, from, to, shape);
    if (!why.empty()) fail("the plan failed its simulation (a bug): " + why);
    simulated = true;
  }
  const auto& c = plan.counts;
  if (args.json) {
    out << "{\"mechanism\": " << json_string(linear::to_string(plan.mechanism))
        << ", \"simulated\": " << (simulated ? "true" : "false")
        << ", \"register_moves\": " << c.register_moves << ", \"selects\": " << c.selects
        << ", \"shuffles\": " << c.shuffles << ", \"shared_bytes\": " << c.shared_bytes
        << ", \"repetitions\": " << c.repetitions << ", \"barriers\": " << c.barriers
        << ", \"wavefronts\": " << c.wavefronts()
        << ", \"store_wavefronts\": " << c.store_wavefronts
        << ", \"load_wavefronts\": " << c.load_wavefronts
        << ", \"store_instructions\": " << c.store_instructions
        << ", \"load_instructions\": " << c.load_instructions
        << ", \"issue_cost\": " << linear::issue_cost(c, plan.warps)
        << ", \"lanes\": " << plan.lanes << ", \"warps\": " << plan.warps << ", \"steps\": [";
    for (std::size_t k = 0; k < plan.ops.size(); ++k) {
      out << (k ? ", " : "") << json_string(linear::to_string(plan.ops[k]));
    }
    out << "]}\n";
    return 0;
  }
  out << linear::to_string(plan);
  out << "register moves " << c.register_moves << ", selects " << c.selects << ", shuffles "
      << c.shuffles << ", shared bytes " << c.shared_bytes << ", barriers " << c.barriers
      << ", wavefronts " << c.wavefronts();
  if (plan.mechanism == linear::Mechanism::shared) {
    out << " (store " << c.store_wavefronts << ", load " << c.load_wavefronts << ", "
        << c.repetitions << " repetition(s))";
  }
  out << "\n";
  if (simulated) {
    out << "simulated: " << plan.warps << " warp(s) x " << plan.lanes
        << " lanes produce the destination layout\n";
  }
  return 0;
}

const bool registered = [] {
  static const std::string usage = std::string(kUsage) + "\n    " + util::kThreadsHelp;
  register_command({"convert-layout", usage.c_str(), &run_convert_layout});
  return true;
}();

}  // namespace
}  // namespace axe::cli
