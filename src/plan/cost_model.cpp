// The alpha-beta cost model and its text format.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>

#include "axe/core/error.hpp"
#include "axe/plan/plan.hpp"

namespace axe {

// ---- cost model --------------------------------------------------------------------------

CostModel::CostModel() {
  for (auto k : {StepKind::AllGather, StepKind::ReduceScatter, StepKind::AllReduce, StepKind::AllToAll,
                 StepKind::Broadcast})
    table_[{k, {}}] = {10e-6, 1.0 / 20e9};
  table_[{StepKind::Permute, {}}] = {10e-6, 1.0 / 20e9};
  table_[{StepKind::SendRecv, {}}] = {10e-6, 1.0 / 20e9};
  table_[{StepKind::LocalCopy, {}}] = {0.0, 1.0 / 200e9};
}

CostModel::Coeffs CostModel::coeffs(StepKind kind, const std::vector<Axis>& axes) const {
  std::vector<Axis> sorted = axes;
  std::sort(sorted.begin(), sorted.end());
  if (auto it = table_.find({kind, sorted}); it != table_.end()) return it->second;
  return table_.at({kind, {}});
}

void CostModel::set(StepKind kind, Coeffs c, std::vector<Axis> axes) {
  std::sort(axes.begin(), axes.end());
  table_[{kind, axes}] = c;
}

CostModel CostModel::parse(std::string_view text) {
  CostModel m;
  std::istringstream in{std::string(text)};
  std::string line;
  int no = 0;
  while (std::getline(in, line)) {
    ++no;
    if (auto h = line.find('#'); h != std::string::npos) line.resize(h);
    std::istringstream ls(line);
    std::vector<std::string> w;
    for (std::string x; ls >> x;) w.push_back(x);
    if (w.empty()) continue;
    auto bad = [&](const std::string& why) {
      fail("cost model line " + std::to_string(no) + " '" + line + "': " + why +
           " (expected KIND [AXIS,...] ALPHA_US GBPS)");
    };
    if (w.size() != 3 && w.size() != 4) bad("wrong number of fields");
    std::optional<StepKind> kind;
    for (auto k : {StepKind::LocalCopy, StepKind::AllGather, StepKind::ReduceScatter, StepKind::AllReduce,
                   StepKind::AllToAll, StepKind::Broadcast, StepKind::Permute, StepKind::SendRecv})
      if (to_string(k) == w[0]) kind = k;
    if (!kind) bad("unknown kind '" + w[0] + "'");
    std::vector<Axis> axes;
    if (w.size() == 4) {
      std::string a = w[1];
      std::size_t pos = 0;
      while (pos <= a.size()) {
        auto e = a.find(',', pos);
        const std::string name = a.substr(pos, e == std::string::npos ? std::string::npos : e - pos);
        try {
          axes.emplace_back(name);
        } catch (const Error& err) {
          bad(err.what());
        }
        if (e == std::string::npos) break;
        pos = e + 1;
      }
    }
    // The whole word is the number, and it is finite: "nan" would make every cost NaN (the
    // planner's comparisons then choose arbitrarily), "5x" is a typo.
    auto number = [&](const std::string& t, const char* name) {
      double v = 0;
      std::size_t used = 0;
      try {
        v = std::stod(t, &used);
      } catch (const std::exception&) {
        used = 0;
      }
      if (used == 0 || used != t.size() || !std::isfinite(v))
        bad("ALPHA_US and GBPS must be numbers: " + std::string(name) + " '" + t +
            "' is not a finite, representable number");
      return v;
    };
    const double alpha = number(w[w.size() - 2], "ALPHA_US");
    const double gbps = number(w[w.size() - 1], "GBPS");
    if (alpha < 0 || gbps <= 0) bad("ALPHA_US must be >= 0 and GBPS > 0");
    const CostModel::Coeffs c{alpha * 1e-6, 1.0 / (gbps * 1e9)};
    // Finite and > 0 in seconds too: GBPS 1e300 would be beta 0 (std::stod already rejects the
    // denormals, like 1e-320, that would make beta infinite).
    if (!std::isfinite(c.alpha) || !std::isfinite(c.beta) || !(c.beta > 0))
      bad("GBPS " + w[w.size() - 1] + " is out of range (beta = 1 / (GBPS * 1e9) s/byte must be finite and > 0)");
    m.set(*kind, c, axes);
  }
  m.local_beta = m.coeffs(StepKind::LocalCopy, {}).beta;  // a `local` line prices local copies
  return m;
}

std::string CostModel::fingerprint() const {
  std::string s;
  char buf[64];
  for (const auto& [k, c] : table_) {
    s += std::string(to_string(k.first));
    for (Axis a : k.second) s += "," + std::string(a.name());
    std::snprintf(buf, sizeof buf, " %.17g %.17g;", c.alpha, c.beta);
    s += buf;
  }
  std::snprintf(buf, sizeof buf, "local %.17g", local_beta);
  return s + buf;
}

CostModel CostModel::load(const std::string& path) {
  std::ifstream f(path);
  if (!f) fail("cannot read cost model file '" + path + "'");
  std::stringstream ss;
  ss << f.rdbuf();
  return parse(ss.str());
}
}  // namespace axe
