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

std::optional<CostModel::Coeffs> CostModel::peer_coeffs(StepKind kind, const std::vector<Axis>& axes) const {
  std::vector<Axis> sorted = axes;
  std::sort(sorted.begin(), sorted.end());
  if (auto it = peer_table_.find({kind, sorted}); it != peer_table_.end()) return it->second;
  if (auto it = peer_table_.find({kind, {}}); it != peer_table_.end()) return it->second;
  return std::nullopt;
}

void CostModel::set_peer(StepKind kind, Coeffs c, std::vector<Axis> axes) {
  std::sort(axes.begin(), axes.end());
  peer_table_[{kind, axes}] = c;
}

double step_model_bytes(const Step& step, DType dtype) {
  const auto es = static_cast<double>(size_of(dtype));
  const auto sent = static_cast<double>(step.elements_sent()) * es;
  const auto received = static_cast<double>(step.elements_received()) * es;
  if (step.kind == StepKind::AllReduce && step.group.size() > 1) {
    double term = 0;
    for (const auto& c : step.copies) term += static_cast<double>(c.elements());
    const auto g = static_cast<double>(step.group.size());
    return 2 * (g - 1) / g * term * es;
  }
  if (step.kind == StepKind::Broadcast && step.group.size() > 1)
    return step.sends.empty() ? received : static_cast<double>(step.sends.front().elements()) * es;
  return std::max(sent, received);
}

TransportCost step_transport_cost(const CostModel& model, const Step& step, DType dtype) {
  if (step.sends.empty() && step.recvs.empty()) return {0, 0.0};
  const double x = step_model_bytes(step, dtype);
  // Send-recv pays alpha per peer it sends to (calibrate.hpp); collectives once per call.
  const double calls = step.kind == StepKind::SendRecv ? std::max<double>(1, static_cast<double>(step.sends.size())) : 1;
  auto price = [&](CostModel::Coeffs c) { return c.alpha * calls + c.beta * x; };
  TransportCost t;
  t.network = price(model.coeffs(step.kind, step.axes));
  if (auto p = model.peer_coeffs(step.kind, step.axes)) t.peer = price(*p);
  return t;
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
           " (expected [peer] KIND [AXIS,...] ALPHA_US GBPS)");
    };
    const bool peer = w[0] == "peer";
    if (peer) w.erase(w.begin());
    if (w.size() != 3 && w.size() != 4) bad("wrong number of fields");
    std::optional<StepKind> kind;
    for (auto k : {StepKind::LocalCopy, StepKind::AllGather, StepKind::ReduceScatter, StepKind::AllReduce,
                   StepKind::AllToAll, StepKind::Broadcast, StepKind::Permute, StepKind::SendRecv})
      if (to_string(k) == w[0]) kind = k;
    if (!kind) bad("unknown kind '" + w[0] + "'");
    if (peer && *kind == StepKind::LocalCopy) bad("a local copy moves no data between ranks: it has no peer price");
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
    if (peer)
      m.set_peer(*kind, c, axes);
    else
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
  for (const auto& [k, c] : peer_table_) {
    s += "peer " + std::string(to_string(k.first));
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
