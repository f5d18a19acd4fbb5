// CostModel: the alpha-beta costs the planner chooses steps by (DESIGN §4.5).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "axe/layout/layout.hpp"

namespace axe {

enum class StepKind;  // plan.hpp
struct Step;          // plan.hpp
enum class DType;     // core/dtype.hpp

// Alpha-beta costs: a step on a group costs alpha + bytes * beta (seconds, bytes moved by the
// busiest rank), with per-kind defaults and optional overrides per kind and group axes.
// Local copies cost beta_local per byte.
//
// Peer entries ("peer KIND [AXIS,...] ALPHA_US GBPS") price a step moved by the peer transport
// (CUDA IPC inside one node, axe/cuda/peer_comm.hpp) instead of the network library (NCCL). A
// model without them has no peer price: every step goes over the network library, unless ranks
// share a GPU (then the peer transport is the only one). With them the CUDA backend runs each
// step on the transport that step_transport_cost() prices lower for the slowest rank.
// Example: "peer all-to-all 12 300" prices a peer all-to-all at 12 us + bytes / (300 GB/s).
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
  // The peer transport's coefficients of `kind` on `axes` (falling back to the kind's entry
  // without axes); nullopt when the model has no peer entry for the kind.
  std::optional<Coeffs> peer_coeffs(StepKind kind, const std::vector<Axis>& axes) const;
  void set_peer(StepKind kind, Coeffs c, std::vector<Axis> axes = {});
  bool has_peer() const { return !peer_table_.empty(); }
  double local_beta = 1.0 / 200e9;
  // Lines "KIND [AXIS,AXIS...] ALPHA_US GBPS" (# comments), or the same after the word "peer"
  // for the peer transport; a "local" line without axes also sets local_beta (e.g. "local 0 2"
  // prices local copies at 2 GB/s). Throws axe::Error naming the line.
  static CostModel parse(std::string_view text);
  static CostModel load(const std::string& path);
  // Every coefficient as text: equal for models that cost every step alike (a cache key).
  std::string fingerprint() const;
  // Every coefficient equal (then the fingerprints are too, and plans are the same).
  bool operator==(const CostModel&) const = default;

 private:
  std::map<std::pair<StepKind, std::vector<Axis>>, Coeffs> table_;
  std::map<std::pair<StepKind, std::vector<Axis>>, Coeffs> peer_table_;
};

// Bytes one rank moves in `step` as the model counts them (calibrate.hpp's x): an all-reduce's
// ring share 2(g-1)/g of its term, a broadcast's block (NCCL pipelines it, the peers pull it),
// every other step the larger of the bytes it sends and receives.
// Example: all-gather of 4 KiB blocks on 4 ranks: 12 KiB (the three blocks it receives).
double step_model_bytes(const Step& step, DType dtype);

// What `step` costs this rank on each transport: alpha (per sending peer for send-recv) +
// beta * step_model_bytes; `peer` is nullopt when the model has no peer entry for the kind.
// Steps without messages cost 0 on both. The CUDA backend takes, per step, the transport whose
// cost is lower at the slowest rank (the maximum over the ranks; ties go to the network).
struct TransportCost {
  double network = 0;
  std::optional<double> peer;
};
TransportCost step_transport_cost(const CostModel& model, const Step& step, DType dtype);

}  // namespace axe
