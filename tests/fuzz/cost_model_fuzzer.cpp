// libFuzzer target for cost-model files (CostModel::parse: "[peer] KIND [AXIS,...] ALPHA_US GBPS"
// lines, '#' comments), the text AXE_COST_MODEL and AXE_CALIBRATE files hold. (The calibration
// file's header key is read in runtime/calibrate.cpp, which needs MPI: not fuzzed here; the
// model lines after it are this parser.)
//
// The laws:
//   - parse returns a model or throws axe::Error (nothing else escapes, nothing crashes);
//   - every coefficient of a parsed model is a finite, usable number: alpha >= 0 and beta > 0
//     for every step kind (with and without the axes the file names), the peer transport's
//     where the model has them (never for a local copy), local_beta > 0, so that the planner
//     and the per-step transport choice never compare NaN or infinite costs;
//   - parsing is deterministic: the same text gives an equal model with the same fingerprint.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "axe/core/error.hpp"
#include "axe/plan/cost_model.hpp"
#include "axe/plan/plan.hpp"
#include "fuzz_util.hpp"

namespace {

using axe::fuzz::broken;

bool usable(const axe::CostModel::Coeffs& c) {
  return std::isfinite(c.alpha) && std::isfinite(c.beta) && c.alpha >= 0 && c.beta > 0;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view input(reinterpret_cast<const char*>(data), size);
  axe::CostModel m;
  try {
    m = axe::CostModel::parse(input);
  } catch (const axe::Error&) {
    return 0;
  }
  // The axes a file most often names (the seeds and the dictionary use them).
  const std::vector<std::vector<axe::Axis>> groups = {
      {}, {axe::Axis("x")}, {axe::Axis("y")}, {axe::Axis("x"), axe::Axis("y")}, {axe::Axis("gpu")}};
  for (auto k : {axe::StepKind::LocalCopy, axe::StepKind::AllGather, axe::StepKind::ReduceScatter,
                 axe::StepKind::AllReduce, axe::StepKind::AllToAll, axe::StepKind::Broadcast,
                 axe::StepKind::Permute, axe::StepKind::SendRecv}) {
    for (const auto& g : groups) {
      auto c = m.coeffs(k, g);
      if (!usable(c))
        broken("every coefficient is finite, alpha >= 0, beta > 0", input,
               std::string(axe::to_string(k)) + ": " + m.fingerprint());
      auto p = m.peer_coeffs(k, g);
      if (p && (!usable(*p) || k == axe::StepKind::LocalCopy))
        broken("a peer coefficient is finite, alpha >= 0, beta > 0, and never a local copy's", input,
               std::string(axe::to_string(k)) + ": " + m.fingerprint());
    }
  }
  if (!(std::isfinite(m.local_beta) && m.local_beta > 0))
    broken("local_beta is finite and > 0", input, m.fingerprint());
  try {
    axe::CostModel again = axe::CostModel::parse(input);
    if (!(again == m) || again.fingerprint() != m.fingerprint())
      broken("parse is deterministic", input, m.fingerprint() + " vs " + again.fingerprint());
  } catch (const axe::Error& e) {
    broken("parse is deterministic", input, std::string("second parse threw: ") + e.what());
  }
  return 0;
}
