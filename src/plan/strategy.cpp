// Choosing the steps of a redistribution (DESIGN §4.4-4.6).
//
// Candidates, rank-independent (so every rank picks the same):
//   * direct: one exchange from the source to the destination layout (labelled permute when
//     every rank talks to at most one peer, local when nothing moves, else send-recv);
//   * staged (both layouts from placements on one mesh): DTensor transitions grouped by kind,
//     same-kind axes merged into one collective on their combined group, in shrink-first order
//     slice (R->S, R->P) -> reduce-scatter (P->S) -> all-to-all (S->S') -> all-reduce (P->R) ->
//     all-gather (S->R) -> local (S->P after its gather);
//   * per-axis (DTensor's order): one step per changed mesh axis, in mesh order.
// A staged step must stay inside its groups (checked on the refined factors); each candidate is
// costed with the alpha-beta model on reference ranks, and the cheapest wins (ties: staged).
#include <algorithm>
#include <cmath>
#include <map>
#include <string>

#include "axe/core/error.hpp"
#include "axe/plan/plan.hpp"
#include "plan/internal.hpp"
#include "plan/strategy.hpp"

namespace axe::internal {

namespace {

// ---- candidates --------------------------------------------------------------------------

struct Stage {
  LayoutPtr to;
  StepKind kind = StepKind::SendRecv;
  std::vector<Axis> axes;
  bool label_from_traffic = false;  // direct: permute / local / send-recv decided by traffic
};

enum Class { Slice = 0, RedScatter, ToAll, AllRed, Gather, FinalLocal, NClasses };

StepKind kind_of(int c) {
  switch (c) {
    case Slice: return StepKind::LocalCopy;
    case RedScatter: return StepKind::ReduceScatter;
    case ToAll: return StepKind::AllToAll;
    case AllRed: return StepKind::AllReduce;
    case Gather: return StepKind::AllGather;
    default: return StepKind::LocalCopy;
  }
}

using K = AxisPlacement::Kind;

// The classes an axis transition goes through (S->P: gather, then a local step).
std::vector<int> classes(const AxisPlacement& a, const AxisPlacement& b, bool same_order) {
  if (a.kind == b.kind && (a.kind != K::Shard || (a.dim == b.dim && same_order)) &&
      (a.kind != K::Partial || a.op == b.op))
    return {};
  if (a.kind == K::Replicate) return {Slice};
  if (a.kind == K::Partial) {
    if (b.kind == K::Shard) return {RedScatter};
    if (b.kind == K::Replicate) return {AllRed};
    return {};  // op mismatch: make_pair reports it
  }
  // a is Shard
  if (b.kind == K::Shard) return {ToAll};
  if (b.kind == K::Replicate) return {Gather};
  return {Gather, FinalLocal};
}

// Sharding after applying, per axis, its transition when `apply[a]`.
Sharding intermediate(const Sharding& s, const Sharding& t, const std::vector<AxisPlacement>& per_axis) {
  Sharding r;
  r.per_axis = per_axis;
  r.nested = t.nested;
  r.dim_axes.assign(s.dim_axes.size(), {});
  for (std::size_t d = 0; d < r.dim_axes.size(); ++d) {
    std::vector<std::pair<std::size_t, std::size_t>> keyed;
    for (std::size_t a = 0; a < per_axis.size(); ++a) {
      if (per_axis[a].kind != K::Shard || per_axis[a].dim != static_cast<int>(d)) continue;
      auto& td = t.dim_axes[d];
      auto& sd = s.dim_axes[d];
      std::size_t key = 1000000;
      if (auto it = std::find(td.begin(), td.end(), a); it != td.end()) key = static_cast<std::size_t>(it - td.begin());
      else if (auto it2 = std::find(sd.begin(), sd.end(), a); it2 != sd.end())
        key = 1000 + static_cast<std::size_t>(it2 - sd.begin());
      keyed.push_back({key, a});
    }
    std::sort(keyed.begin(), keyed.end());
    for (auto& [k, a] : keyed) r.dim_axes[d].push_back(a);
  }
  return r;
}

bool same_dim_order(const Sharding& s, const Sharding& t, std::size_t a) {
  const auto& sp = s.per_axis[a];
  if (sp.kind != K::Shard) return true;
  // The axis picks the same block when the axes before it (and it) split the dim alike.
  const auto& x = s.dim_axes[static_cast<std::size_t>(sp.dim)];
  const auto& y = t.dim_axes[static_cast<std::size_t>(sp.dim)];
  auto ix = std::find(x.begin(), x.end(), a), iy = std::find(y.begin(), y.end(), a);
  if (iy == y.end()) return false;
  return ix - x.begin() == iy - y.begin() && std::equal(x.begin(), ix, y.begin());
}

std::int64_t group_size(const Mesh& m, const std::vector<Axis>& axes) {
  std::int64_t g = 1;
  for (Axis a : axes) g *= m.axis_size(a);
  return g;
}

// Closed-form alpha-beta cost of a step from its kind and the two layouts' local sizes (padded,
// so an upper bound on uneven shards); the same on every rank, no exchange is planned.
//   all-gather: (g-1) blocks of the source shard; reduce-scatter: (g-1) blocks of the
//   destination shard; all-reduce: ring, 2(g-1)/g of the shard; all-to-all: (g-1)/g of the
//   shard; broadcast / permute / send-recv: the destination shard.
double step_cost(const CostModel& cm, StepKind kind, const std::vector<Axis>& axes, std::int64_t g,
                 double in_bytes, double out_bytes, double messages) {
  auto c = cm.coeffs(kind, axes);
  // Local traffic: packing the source side and unpacking into the destination.
  const double copy = cm.local_beta * (in_bytes + out_bytes);
  const double gd = static_cast<double>(g);
  switch (kind) {
    case StepKind::LocalCopy: return cm.local_beta * out_bytes;
    case StepKind::AllGather: return c.alpha + c.beta * (gd - 1) * in_bytes + copy;
    case StepKind::ReduceScatter: return c.alpha + c.beta * (gd - 1) * out_bytes + copy;
    case StepKind::AllReduce: return c.alpha + c.beta * 2 * (gd - 1) / gd * in_bytes + copy;
    case StepKind::AllToAll: return c.alpha + c.beta * (gd - 1) / gd * out_bytes + copy;
    case StepKind::Broadcast: return c.alpha + c.beta * out_bytes + copy;
    case StepKind::Permute: return c.alpha + c.beta * out_bytes + copy;
    case StepKind::SendRecv: return c.alpha * messages + c.beta * out_bytes + copy;
  }
  return 0;
}

// Rank-independent estimate of how many peers a rank receives from in a send-recv exchange: the
// source device digits a destination element can come from.
double senders_estimate(const Pair& p) {
  double n = 1;
  for (const auto& m : p.full_factors)
    if (m.s_axis < p.src.naxes && m.d_axis == p.dst.naxes) n *= static_cast<double>(m.extent);
  for (auto j : p.reduced)
    if (p.src.part[j].axis < p.src.naxes) n *= static_cast<double>(p.src.part[j].extent);
  return std::min(n, static_cast<double>(p.src.layout->mesh().size()));
}

// Rank-independent upper bound on Step::staging_bytes (elements) of a step of `kind` from
// layout a to layout b (local buffers A, B elements, padding included): what a rank sends plus
// copies is at most what it holds times the destination slots per element F (replicas x terms),
// packed once for all-gather / broadcast; what it receives plus copies locally is at most B per
// reduced term. Loose where the source is replicated (F counts every destination slot, not the
// share of one replica).
double staging_estimate(StepKind kind, const Pair& p, double A, double B, std::int64_t spread_over) {
  // Spread over R replicas: a rank sends 1/R of every box a non-holder needs from its group.
  const double F = std::min(static_cast<double>(p.dst.replicas * p.dst.terms),
                            static_cast<double>(p.dst.layout->mesh().size())) /
                   static_cast<double>(spread_over);
  const double T = p.partial == internal::PartialMode::Reduce && !p.reduced.empty() ? static_cast<double>(p.terms) : 1;
  switch (kind) {
    case StepKind::AllGather:
    case StepKind::Broadcast: return A + B;
    case StepKind::AllReduce: return 2 * B;
    case StepKind::ReduceScatter: return A * F + B * T;  // copies + sent <= A F, copies + recv <= B T
    case StepKind::AllToAll: return A * F + B;
    case StepKind::LocalCopy: return B * T;  // no messages: only the copies
    default: return A * F + B * T;
  }
}

// Source replicas on mesh axes (what a spread exchange splits over).
std::int64_t mesh_replicas(const Pair& p) {
  std::int64_t r = 1;
  for (const auto& it : p.src.rep)
    if (it.axis < p.src.naxes) r *= it.extent;
  return r;
}

// Chunks for a step with staging estimate `est` elements under a limit of `limit` elements:
// 3/4 of the limit for the data, 1/4 for rounding (one element per box or message per chunk,
// and per spread box).
std::int64_t chunk_count(double est, std::int64_t limit) {
  const double room = std::max(1.0, static_cast<double>(limit) * 3.0 / 4.0);
  const double k = std::ceil(est / room);
  return static_cast<std::int64_t>(std::clamp(k, 1.0, 1048576.0));
}

std::optional<Strategy> build(const PlanRequest& req, const LayoutPtr& source, const std::vector<Stage>& stages,
                              const CostModel& cm, std::map<std::string, std::shared_ptr<Pair>>& pair_cache) {
  Strategy s;
  s.layouts.push_back(source);
  const double es = static_cast<double>(size_of(req.dtype));
  for (const auto& st : stages) {
    const DistLayout& from = *s.layouts.back();
    const DistLayout& to = *st.to;
    std::string key = to_string(from) + " -> " + to_string(to);
    auto& pp = pair_cache[key];
    if (!pp) pp = std::make_shared<Pair>(internal::make_pair(s.layouts.back(), st.to));
    const bool same_mesh = from.mesh() == to.mesh();
    std::vector<Axis> axes = st.axes;
    if (st.label_from_traffic) {
      // Direct: the group is every axis something moves on (same mesh), else point-to-point.
      axes.clear();
      if (same_mesh) {
        auto t = internal::touched_axes(*pp);
        for (std::size_t a = 0; a < t.size(); ++a)
          if (t[a]) axes.push_back(from.mesh().axes()[a]);
      }
    } else {
      std::vector<bool> in(from.mesh().ndim(), false);
      for (Axis a : st.axes) in[*from.mesh().axis_index(a)] = true;
      if (!same_mesh || !group_local(*pp, in)) return std::nullopt;
    }
    internal::Classified c;
    if (same_mesh) c = internal::classify(*pp, axes);
    const std::int64_t g = same_mesh ? group_size(from.mesh(), axes) : 1;
    s.cost += step_cost(cm, c.kind, axes, g, static_cast<double>(from.local_elements()) * es,
                        static_cast<double>(to.local_elements()) * es, senders_estimate(*pp));
    // Spreading (rank-independent, the whole step): point-to-point, no reduction, replicated
    // source, and a destination buffer split R ways still at least the threshold.
    const std::int64_t R = mesh_replicas(*pp);
    const bool reduces = pp->partial == internal::PartialMode::Reduce && !pp->reduced.empty();
    const bool spread = c.kind == StepKind::SendRecv && !reduces && R > 1 &&
                        static_cast<double>(to.local_elements()) * es / static_cast<double>(R) >=
                            static_cast<double>(spread_min_bytes(req));
    s.spread.push_back(spread);
    const std::int64_t k =
        chunk_count(staging_estimate(c.kind, *pp, static_cast<double>(from.local_elements()),
                                     static_cast<double>(to.local_elements()), spread ? R : 1),
                    staging_limit_bytes(req) / size_of(req.dtype));
    s.cost += static_cast<double>(k - 1) * cm.coeffs(c.kind, axes).alpha;  // one more call per chunk
    s.chunks.push_back(k);
    s.kinds.push_back(c.kind);
    s.axes.push_back(is_collective(c.kind) ? axes : std::vector<Axis>{});
    s.equal_blocks.push_back(c.equal_blocks);
    s.roots.push_back(c.root);
    s.pairs.push_back(pp);
    s.layouts.push_back(st.to);
  }
  return s;
}

// check_request's checks before the pair is built (the same errors in the same order).
void check_request_values(const PlanRequest& r) {
  if (r.spread_min_bytes < 0)
    fail("spread threshold " + std::to_string(r.spread_min_bytes) + " bytes is negative (0 means the default)");
  if (r.staging_limit < 0)
    fail("staging limit " + std::to_string(r.staging_limit) + " bytes is negative (0 means the default)");
  if (r.from.shape() != r.to.shape())
    fail("source layout '" + to_string(r.from.layout()) + "' has global shape " + internal::shape_text(r.from.shape()) +
         " but destination layout '" + to_string(r.to.layout()) + "' has " + internal::shape_text(r.to.shape()));
}
}  // namespace

Strategy choose(const PlanRequest& req, const CostModel& cm) {
  check_request_values(req);
  const LayoutPtr source = std::make_shared<const DistLayout>(req.from);
  const LayoutPtr target = std::make_shared<const DistLayout>(req.to);
  std::map<std::string, std::shared_ptr<Pair>> pair_cache;
  // The direct pair first: it is check_request's last check (partial compatibility), and the
  // direct candidate and the lower bound use it.
  const std::string direct_key = to_string(req.from) + " -> " + to_string(req.to);
  pair_cache[direct_key] = std::make_shared<Pair>(internal::make_pair(source, target));
  std::vector<Strategy> cands;
  const auto& fs = req.from.sharding();
  const auto& ts = req.to.sharding();
  const Mesh& mesh = req.from.mesh();
  if (fs && ts && mesh == req.to.mesh()) {
    const std::size_t na = mesh.ndim();
    std::vector<std::vector<int>> cls(na);
    for (std::size_t a = 0; a < na; ++a)
      cls[a] = classes(fs->per_axis[a], ts->per_axis[a], same_dim_order(*fs, *ts, a));
    auto advance = [&](std::vector<AxisPlacement>& cur, std::size_t a, int c) {
      // After class c on axis a: the destination placement, except S->P's gather (R).
      if (c == Gather && ts->per_axis[a].kind == K::Partial) cur[a] = Replicate();
      else cur[a] = ts->per_axis[a];
    };
    // Merged, shrink-first.
    {
      std::vector<Stage> stages;
      std::vector<Sharding> mids;
      std::vector<AxisPlacement> cur = fs->per_axis;
      for (int c = 0; c < NClasses; ++c) {
        std::vector<Axis> axes;
        for (std::size_t a = 0; a < na; ++a)
          if (std::find(cls[a].begin(), cls[a].end(), c) != cls[a].end()) {
            axes.push_back(mesh.axes()[a]);
            advance(cur, a, c);
          }
        if (axes.empty()) continue;
        Sharding mid = intermediate(*fs, *ts, cur);
        stages.push_back({std::make_shared<const DistLayout>(shard(req.from.shape(), mesh, mid)), kind_of(c), axes, false});
        mids.push_back(mid);
      }
      if (!stages.empty()) {
        stages.back().to = target;
        if (auto s = build(req, source, stages, cm, pair_cache)) cands.push_back(std::move(*s));
      }
      // The same with the all-reduce as reduce-scatter + all-gather over the largest dim
      // (cheaper when the model says the all-reduce's bandwidth term costs more than two steps).
      for (std::size_t k = 0; k < stages.size(); ++k) {
        if (stages[k].kind != StepKind::AllReduce) continue;
        const auto& shape = req.from.shape();
        const int d = static_cast<int>(std::max_element(shape.begin(), shape.end()) - shape.begin());
        Sharding scattered = k == 0 ? *fs : mids[k - 1];
        for (Axis a : stages[k].axes) {
          auto i = *mesh.axis_index(a);
          scattered.per_axis[i] = Shard(d);
          scattered.dim_axes[static_cast<std::size_t>(d)].push_back(i);
        }
        std::vector<Stage> alt(stages.begin(), stages.begin() + static_cast<std::ptrdiff_t>(k));
        alt.push_back({std::make_shared<const DistLayout>(shard(shape, mesh, scattered)), StepKind::ReduceScatter,
                       stages[k].axes, false});
        alt.push_back({stages[k].to, StepKind::AllGather, stages[k].axes, false});
        alt.insert(alt.end(), stages.begin() + static_cast<std::ptrdiff_t>(k) + 1, stages.end());
        if (auto s = build(req, source, alt, cm, pair_cache)) cands.push_back(std::move(*s));
      }
    }
    // Per axis, mesh order (DTensor).
    {
      std::vector<Stage> stages;
      std::vector<AxisPlacement> cur = fs->per_axis;
      for (std::size_t a = 0; a < na; ++a)
        for (int c : cls[a]) {
          advance(cur, a, c);
          stages.push_back({std::make_shared<const DistLayout>(shard(req.from.shape(), mesh, intermediate(*fs, *ts, cur))),
                            kind_of(c), {mesh.axes()[a]}, false});
        }
      if (stages.size() > 1) {
        stages.back().to = target;
        if (auto s = build(req, source, stages, cm, pair_cache)) cands.push_back(std::move(*s));
      }
    }
  }
  {
    Stage direct{target, StepKind::SendRecv, {}, true};
    auto s = build(req, source, {direct}, cm, pair_cache);
    cands.push_back(std::move(*s));
  }
  // The direct exchange (last) must beat the collectives by 10%: tuned collectives on a
  // sub-communicator usually beat the model's grouped send/recv at equal bytes.
  std::size_t best = 0;
  for (std::size_t i = 1; i < cands.size(); ++i) {
    double margin = i + 1 == cands.size() && cands.size() > 1 ? 0.9 : 1 - 1e-9;
    if (cands[i].cost < cands[best].cost * margin) best = i;
  }
  Strategy out = std::move(cands[best]);
  out.direct = pair_cache[direct_key];
  out.cost = cands[best].cost;
  return out;
}
}  // namespace axe::internal

namespace axe {

std::int64_t spread_min_bytes(const PlanRequest& r) { return r.spread_min_bytes > 0 ? r.spread_min_bytes : 16 * 1024; }

std::int64_t staging_limit_bytes(const PlanRequest& r) {
  if (r.staging_limit > 0) return r.staging_limit;
  const std::int64_t es = size_of(r.dtype);
  return std::max<std::int64_t>(4 * (r.from.local_elements() + r.to.local_elements()) * es, std::int64_t{1} << 20);
}

void check_request(const PlanRequest& r) {
  internal::check_request_values(r);
  (void)internal::make_pair(r.from, r.to);  // partial compatibility
}
}  // namespace axe
