// CostModel: the alpha-beta costs the planner chooses steps by (DESIGN §4.5).
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "axe/layout/layout.hpp"

namespace axe {

enum class StepKind;  // plan.hpp

// Alpha-beta costs: a step on a group costs alpha + bytes * beta (seconds, bytes moved by the
// busiest rank), with per-kind defaults and optional overrides per kind and group axes.
// Local copies cost beta_local per byte.
class CostModel {
 public:
  struct Coeffs {
    double alpha = 0;  // s
    double beta = 0;   // s / byte
    bool operator==(const Coeffs&) const = default;
  };
  CostModel();  // defaults: 10 us + 1/(20 GB/s) per collective and per message
  Coeffs coeffs(StepKind kind, const std::vector<Axis>& axes) const;
  void set(StepKind kind, Coeffs c, std::vector<Axis> axes = {});
  double local_beta = 1.0 / 200e9;
  // Lines "KIND [AXIS,AXIS...] ALPHA_US GBPS" (# comments); a "local" line without axes also
  // sets local_beta (e.g. "local 0 2" prices local copies at 2 GB/s). Throws axe::Error naming
  // the line.
  static CostModel parse(std::string_view text);
  static CostModel load(const std::string& path);
  // Every coefficient as text: equal for models that cost every step alike (a cache key).
  std::string fingerprint() const;
  // Every coefficient equal (then the fingerprints are too, and plans are the same).
  bool operator==(const CostModel&) const = default;

 private:
  std::map<std::pair<StepKind, std::vector<Axis>>, Coeffs> table_;
};

}  // namespace axe
