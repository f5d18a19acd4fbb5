// Cost-model calibration, the pure part (calibrate.hpp): the alpha-beta fit, the one-step cases
// timed per collective kind, and the model file's lines. No MPI and no backend here.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numeric>

#include "axe/core/error.hpp"
#include "axe/dist/placement.hpp"
#include "axe/runtime/calibrate.hpp"

namespace axe {

std::string axes_text(const std::vector<Axis>& axes) {
  std::string s;
  for (Axis a : axes) {
    if (!s.empty()) s += ',';
    s += a.name();
  }
  return s;
}

// ---- fit ------------------------------------------------------------------------------------

CostModel::Coeffs fit_alpha_beta(std::span<const FitPoint> points) {
  const double n = static_cast<double>(points.size());
  double sx = 0, sy = 0;
  for (const auto& p : points) {
    sx += p.x;
    sy += p.y;
  }
  const double mx = n > 0 ? sx / n : 0, my = n > 0 ? sy / n : 0;
  double sxx = 0, sxy = 0;
  for (const auto& p : points) {
    sxx += (p.x - mx) * (p.x - mx);
    sxy += (p.x - mx) * (p.y - my);
  }
  if (points.size() < 2 || !(sxx > 0))
    fail("fit_alpha_beta: needs at least two points with different byte counts (got " +
         std::to_string(points.size()) + " points)");
  double beta = sxy / sxx;
  double alpha = my - beta * mx;
  if (!(beta >= kMinBeta)) {
    // Time does not grow with bytes at these sizes (latency-bound, or noise): all alpha.
    beta = kMinBeta;
    alpha = my - beta * mx;
  }
  if (alpha < 0) {
    // A negative intercept: the line through the origin that fits best.
    double sxx0 = 0, sxy0 = 0;
    for (const auto& p : points) {
      sxx0 += p.x * p.x;
      sxy0 += p.x * p.y;
    }
    alpha = 0;
    beta = std::max(kMinBeta, sxy0 / sxx0);
  }
  return {alpha, beta};
}

// ---- cases ----------------------------------------------------------------------------------

namespace {

// " + R[(e,..):(1@a,..)]" over the mesh axes outside the group, "" when none.
std::string replicas_outside(const Mesh& mesh, const std::vector<bool>& in) {
  std::string ext, str;
  int k = 0;
  for (std::size_t i = 0; i < mesh.ndim(); ++i) {
    if (in[i]) continue;
    if (k) {
      ext += ',';
      str += ',';
    }
    ext += std::to_string(mesh.sizes()[i]);
    str += "1@";
    str += mesh.axes()[i].name();
    ++k;
  }
  if (k == 0) return "";
  return k == 1 ? " + R[" + ext + ":" + str + "]" : " + R[(" + ext + "):(" + str + ")]";
}

}  // namespace

CalibrationCase calibration_case(StepKind kind, const Mesh& mesh, const std::vector<Axis>& axes_in,
                                 std::int64_t shard_bytes) {
  std::vector<Axis> axes = axes_in.empty() ? mesh.axes() : axes_in;
  std::vector<bool> in(mesh.ndim(), false);
  std::int64_t g = 1;
  for (Axis a : axes) {
    auto i = mesh.axis_index(a);
    if (!i)
      fail("calibration_case: axis '" + std::string(a.name()) + "' is not an axis of mesh " +
           to_string(mesh));
    in[*i] = true;
    g *= mesh.sizes()[*i];
  }
  if (g < 2)
    fail("calibration_case: the group of {" + axes_text(axes) + "} on mesh " + to_string(mesh) +
         " has one rank");
  if (kind == StepKind::SendRecv && !axes_in.empty() && axes.size() != mesh.ndim())
    fail("calibration_case: send-recv is calibrated on the whole mesh only (got axes {" +
         axes_text(axes) + "})");
  // f32, shape (g*r, c): a shard of r*c elements; c = 16 g so that S(1) splits it evenly.
  const std::int64_t c = 16 * g;
  const std::int64_t r = std::max<std::int64_t>(1, shard_bytes / 4 / c);
  const double N = static_cast<double>(r * c * 4), gd = static_cast<double>(g);
  std::vector<std::int64_t> shape = {g * r, c};
  auto place = [&](AxisPlacement on_group) {
    std::vector<AxisPlacement> p;
    for (std::size_t i = 0; i < mesh.ndim(); ++i) p.push_back(in[i] ? on_group : Replicate());
    return shard(std::span<const std::int64_t>(shape), mesh, std::span<const AxisPlacement>(p));
  };
  CalibrationCase k;
  k.request.dtype = DType::F32;
  k.in_bytes = k.out_bytes = N;
  switch (kind) {
    case StepKind::LocalCopy:
      k.request.from = place(Replicate());
      k.request.to = place(Shard(0));
      k.in_bytes = gd * N;
      k.x = N;
      k.alpha_count = 0;
      break;
    case StepKind::AllGather:
      k.request.from = place(Shard(0));
      k.request.to = place(Replicate());
      k.out_bytes = gd * N;
      k.x = (gd - 1) * N;
      break;
    case StepKind::ReduceScatter:
      k.request.from = place(Partial());
      k.request.to = place(Shard(0));
      k.in_bytes = gd * N;
      k.x = (gd - 1) * N;
      break;
    case StepKind::AllReduce: {
      shape = {r, c};
      k.request.from = place(Partial());
      k.request.to = place(Replicate());
      k.x = 2 * (gd - 1) / gd * N;
      break;
    }
    case StepKind::AllToAll:
      k.request.from = place(Shard(0));
      k.request.to = place(Shard(1));
      k.x = (gd - 1) / gd * N;
      break;
    case StepKind::Broadcast: {
      // Held at coordinate 0 of the group's axes (replicated over the others): one root.
      shape = {r, c};
      std::string t = "S[(" + std::to_string(r) + "," + std::to_string(c) + "):(" +
                      std::to_string(c) + ",1)]" + replicas_outside(mesh, in);
      k.request.from = DistLayout(shape, parse_axe_layout(t), mesh);
      k.request.to = place(Replicate());
      k.x = N;
      break;
    }
    case StepKind::Permute: {
      // Shard(0) over the group with the device order reversed on each group axis -> Shard(0).
      std::string ext, str, off;
      for (std::size_t i = 0; i < mesh.ndim(); ++i) {
        if (!in[i]) continue;
        const std::string a(mesh.axes()[i].name());
        ext += std::to_string(mesh.sizes()[i]) + ",";
        str += "-1@" + a + ",";
        if (mesh.sizes()[i] > 1) off += " + " + std::to_string(mesh.sizes()[i] - 1) + "@" + a;
      }
      std::string t = "S[(" + ext + std::to_string(r) + "," + std::to_string(c) + "):(" + str +
                      std::to_string(c) + ",1)]" + replicas_outside(mesh, in) + off;
      k.request.from = DistLayout(shape, parse_axe_layout(t), mesh);
      k.request.to = place(Shard(0));
      k.x = N;
      break;
    }
    case StepKind::SendRecv: {
      // Shard(0) -> Shard(1) onto the same ranks in reverse order (another mesh: the planner's
      // general exchange, one message from every rank of the mesh).
      std::vector<std::pair<std::string, std::int64_t>> ax;
      for (std::size_t i = 0; i < mesh.ndim(); ++i)
        ax.emplace_back(std::string(mesh.axes()[i].name()), mesh.sizes()[i]);
      std::vector<std::int64_t> ranks = mesh.ranks();
      std::reverse(ranks.begin(), ranks.end());
      Mesh rev(ax, ranks);
      k.request.from = place(Shard(0));
      std::vector<AxisPlacement> p(mesh.ndim(), Shard(1));
      k.request.to =
          shard(std::span<const std::int64_t>(shape), rev, std::span<const AxisPlacement>(p));
      k.x = N;
      k.alpha_count = gd;
      break;
    }
  }
  return k;
}

std::string coeffs_line(StepKind kind, const std::vector<Axis>& axes, CostModel::Coeffs c, bool peer) {
  char buf[168];
  std::string a = axes_text(axes);
  std::snprintf(buf, sizeof buf, "%s%s%s%s %.6g %.6g", peer ? "peer " : "", std::string(to_string(kind)).c_str(),
                a.empty() ? "" : " ", a.c_str(), c.alpha * 1e6, 1.0 / (c.beta * 1e9));
  return buf;
}

}  // namespace axe
