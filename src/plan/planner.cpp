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
#include <cstdio>
#include <fstream>
#include <mutex>
#include <sstream>
#include <unordered_map>

#include "axe/core/error.hpp"
#include "axe/plan/plan.hpp"
#include "plan/internal.hpp"

namespace axe {

using internal::Pair;

std::int64_t Transfer::elements() const {
  std::int64_t n = 1;
  for (auto e : extents) n *= e;
  return n;
}

std::optional<ContiguousRun> contiguous_run(const std::vector<Transfer>& boxes) {
  std::optional<ContiguousRun> r;
  for (const auto& t : boxes) {
    const std::int64_t n = t.elements();
    if (n == 0) continue;
    std::int64_t want = 1;
    for (std::size_t k = t.extents.size(); k-- > 0;) {
      if (t.extents[k] == 1) continue;
      if (t.src_strides[k] != want || t.dst_strides[k] != want) return std::nullopt;
      want *= t.extents[k];
    }
    if (!r)
      r = ContiguousRun{t.src_offset, t.dst_offset, 0};
    else if (t.src_offset != r->src + r->n || t.dst_offset != r->dst + r->n)
      return std::nullopt;
    r->n += n;
  }
  return r;
}

std::int64_t Message::elements() const {
  std::int64_t n = 0;
  for (const auto& b : boxes) n += b.elements();
  return n;
}

std::int64_t Step::elements_sent() const {
  std::int64_t n = 0;
  for (const auto& m : sends) n += m.elements();
  return n;
}
std::int64_t Step::elements_received() const {
  std::int64_t n = 0;
  for (const auto& m : recvs) n += m.elements();
  return n;
}

std::string_view to_string(StepKind k) {
  switch (k) {
    case StepKind::LocalCopy: return "local";
    case StepKind::AllGather: return "all-gather";
    case StepKind::ReduceScatter: return "reduce-scatter";
    case StepKind::AllReduce: return "all-reduce";
    case StepKind::AllToAll: return "all-to-all";
    case StepKind::Broadcast: return "broadcast";
    case StepKind::Permute: return "permute";
    case StepKind::SendRecv: return "send-recv";
  }
  return "?";
}

bool is_collective(StepKind k) {
  return k == StepKind::AllGather || k == StepKind::ReduceScatter || k == StepKind::AllReduce ||
         k == StepKind::AllToAll || k == StepKind::Broadcast;
}

const RankPlan* Plan::find(std::int64_t rank) const {
  for (const auto& r : ranks)
    if (r.rank == rank) return &r;
  return nullptr;
}

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
        axes.emplace_back(a.substr(pos, e == std::string::npos ? std::string::npos : e - pos));
        if (e == std::string::npos) break;
        pos = e + 1;
      }
    }
    double alpha = 0, gbps = 0;
    try {
      alpha = std::stod(w[w.size() - 2]);
      gbps = std::stod(w[w.size() - 1]);
    } catch (const std::exception&) {
      bad("ALPHA_US and GBPS must be numbers");
    }
    if (alpha < 0 || gbps <= 0) bad("ALPHA_US must be >= 0 and GBPS > 0");
    m.set(*kind, {alpha * 1e-6, 1.0 / (gbps * 1e9)}, axes);
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

namespace {

// ---- candidates --------------------------------------------------------------------------

// Layouts are shared, never copied: a DistLayout copies its mesh's rank list (32 KiB at 4096
// ranks), and a strategy search used to copy some twenty of them.
using LayoutPtr = std::shared_ptr<const DistLayout>;

struct Stage {
  LayoutPtr to;
  StepKind kind = StepKind::SendRecv;
  std::vector<Axis> axes;
  bool label_from_traffic = false;  // direct: permute / local / send-recv decided by traffic
};

struct Strategy {
  std::vector<LayoutPtr> layouts;  // layouts[0] = from, back() = to
  std::vector<StepKind> kinds;
  std::vector<std::vector<Axis>> axes;
  std::vector<bool> equal_blocks;
  std::vector<std::int64_t> roots;
  std::vector<std::shared_ptr<Pair>> pairs;
  std::vector<std::int64_t> chunks;  // per step: how many chunked steps (staging bound)
  std::vector<bool> spread;          // per step: replicated source split over its replicas
  std::shared_ptr<Pair> direct;  // for the lower bound
  double cost = 0;
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

// Does the step from p.src to p.dst keep every element's coordinates on the axes outside `in`?
bool group_local(const Pair& p, const std::vector<bool>& in) {
  const int mem = p.src.naxes;
  auto outside = [&](int a) { return a != mem && !in[static_cast<std::size_t>(a)]; };
  for (const auto& b : p.boxes) {
    for (const auto& m : b.modes)
      if ((outside(m.s_axis) || outside(m.d_axis)) && (m.s_axis != m.d_axis || m.s_stride != m.d_stride))
        return false;
    for (int a = 0; a < mem; ++a)
      if (outside(a) && b.s_base[static_cast<std::size_t>(a)] != b.d_base[static_cast<std::size_t>(a)]) return false;
  }
  auto iters = [&](const std::vector<internal::SideIter>& v) {
    std::vector<std::tuple<int, std::int64_t, std::int64_t>> r;
    for (const auto& it : v)
      if (outside(it.axis)) r.emplace_back(it.axis, it.extent, it.stride);
    std::sort(r.begin(), r.end());
    return r;
  };
  return iters(p.src.rep) == iters(p.dst.rep) && iters(p.src.part) == iters(p.dst.part);
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
  for (const auto& m : p.full_modes)
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

// What the executor allocates for a step (Step::staging_bytes): packed sends (all-gather and
// broadcast pack one block for every peer), receive buffers, the local term and its reduced
// result for all-reduce / reduce-scatter (whose received terms the transport stages), and local
// copies (the point-to-point path packs them all). `sent` and `received`: the step's
// elements_sent() and elements_received() (counted once by the caller).
std::int64_t staging_of(const Step& st, std::int64_t es, std::int64_t sent, std::int64_t received) {
  std::int64_t copies = 0, largest = 0;
  for (const auto& c : st.copies) {
    copies += c.elements();
    largest = std::max(largest, c.elements());
  }
  const std::int64_t one = st.sends.empty() ? 0 : st.sends[0].elements();
  const bool coll = is_collective(st.kind) && st.group.size() > 1;
  std::int64_t e = 0;
  switch (coll ? st.kind : StepKind::SendRecv) {
    case StepKind::AllGather:
    case StepKind::Broadcast: e = one + received + largest; break;
    case StepKind::AllReduce: e = 2 * copies; break;
    case StepKind::ReduceScatter: e = 2 * copies + sent + received; break;
    case StepKind::AllToAll: e = sent + received + largest; break;
    default: e = sent + received + copies; break;
  }
  return e * es;
}

RankPlan build_rank(const PlanRequest& req, const Strategy& s, std::int64_t rank) {
  RankPlan rp;
  rp.rank = rank;
  rp.dtype = req.dtype;
  const std::int64_t es = size_of(req.dtype);
  for (const auto& l : s.layouts) rp.buffers.push_back(l->mesh().contains(rank) ? l->local_elements() : 0);
  std::int64_t peak_pack = 0, direct_lb = -1;
  for (std::size_t i = 0; i < s.pairs.size(); ++i) {
    // Recognised collectives (and local slices) in closed form; everything else by the general
    // per-rank exchange. Both are decided by the step's kind, which is the same on every rank.
    std::optional<internal::Exchange> fast;
    if (is_collective(s.kinds[i]) || s.kinds[i] == StepKind::LocalCopy)
      fast = internal::fast_exchange(*s.pairs[i], rank, s.axes[i], s.kinds[i]);
    internal::Exchange ex = fast ? std::move(*fast) : internal::exchange(*s.pairs[i], rank, s.spread[i]);
    if (s.pairs[i] == s.direct) direct_lb = ex.lower_bound_elements;
    Step st;
    st.kind = s.kinds[i];
    st.axes = s.axes[i];
    st.equal_blocks = s.equal_blocks[i];
    if (is_collective(st.kind) && s.layouts[i]->mesh().contains(rank)) {
      // fast_exchange lists the group as it walks it (the same as Mesh::group).
      st.group = fast && !ex.group.empty() ? std::move(ex.group) : s.layouts[i]->mesh().group(rank, st.axes);
      if (st.kind == StepKind::Broadcast) st.root = st.group[static_cast<std::size_t>(s.roots[i])];
    }
    st.in = static_cast<int>(i);
    st.out = static_cast<int>(i + 1);
    const Pair& p = *s.pairs[i];
    st.reduce = p.partial == internal::PartialMode::Reduce && !p.reduced.empty();
    st.op = p.op;
    st.terms = st.reduce ? p.terms : 1;
    st.copies = std::move(ex.copies);
    st.fills = std::move(ex.fills);
    st.sends = std::move(ex.sends);
    st.recvs = std::move(ex.recvs);
    const std::int64_t sent_elements = st.elements_sent(), received_elements = st.elements_received();
    std::int64_t sent = sent_elements * es, recv = received_elements * es;
    if (st.kind == StepKind::AllReduce && st.group.size() > 1) {
      std::int64_t n = 0;
      for (const auto& c : st.copies) n += c.elements();
      const auto g = static_cast<std::int64_t>(st.group.size());
      sent = recv = 2 * (g - 1) * n * es / g;
    }
    rp.stats.bytes_sent += sent;
    rp.stats.bytes_received += recv;
    const std::size_t first = rp.steps.size();
    if (s.chunks[i] <= 1) {
      rp.steps.push_back(std::move(st));
    } else {
      for (auto& x : split_step(st, s.chunks[i])) rp.steps.push_back(std::move(x));
    }
    for (std::size_t j = first; j < rp.steps.size(); ++j) {
      Step& x = rp.steps[j];
      rp.stats.messages += static_cast<std::int64_t>(x.sends.size());
      if (is_collective(x.kind) && x.group.size() > 1) ++rp.stats.collectives;
      x.staging_bytes = s.chunks[i] <= 1 ? staging_of(x, es, sent_elements, received_elements)
                                         : staging_of(x, es, x.elements_sent(), x.elements_received());
      peak_pack = std::max(peak_pack, x.staging_bytes);
    }
  }
  std::int64_t staging = 0;
  for (std::size_t i = 1; i + 1 < rp.buffers.size(); ++i) staging += rp.buffers[i] * es;
  rp.stats.staging_bytes = staging + peak_pack;
  // Lower bound: elements this rank needs that it does not (fully) hold, each at least once.
  rp.stats.lower_bound_bytes = (direct_lb >= 0 ? direct_lb : internal::lower_bound_elements(*s.direct, rank)) * es;
  return rp;
}

struct CacheKey {
  std::string text;
  bool operator==(const CacheKey&) const = default;
};

std::string request_key(const PlanRequest& r) {
  return to_string(r.from) + (r.from.sharding() ? " {" + to_string(*r.from.sharding()) + "}" : "") + " -> " +
         to_string(r.to) + (r.to.sharding() ? " {" + to_string(*r.to.sharding()) + "}" : "") + " " +
         std::string(to_string(r.dtype)) + (r.staging_limit ? " limit " + std::to_string(r.staging_limit) : "") +
         (r.spread_min_bytes ? " spread " + std::to_string(r.spread_min_bytes) : "");
}

std::mutex cache_mu;
std::unordered_map<std::string, std::shared_ptr<const Strategy>> strategy_cache;
std::unordered_map<std::string, std::shared_ptr<const RankPlan>> plan_cache;

std::shared_ptr<const Strategy> strategy_for(const PlanRequest& r, const CostModel& cm, const std::string& key) {
  {
    std::lock_guard<std::mutex> g(cache_mu);
    if (auto it = strategy_cache.find(key); it != strategy_cache.end()) return it->second;
  }
  auto s = std::make_shared<const Strategy>(choose(r, cm));
  std::lock_guard<std::mutex> g(cache_mu);
  if (strategy_cache.size() > 4096) strategy_cache.clear();
  return strategy_cache.emplace(key, s).first->second;
}

}  // namespace

std::int64_t spread_min_bytes(const PlanRequest& r) { return r.spread_min_bytes > 0 ? r.spread_min_bytes : 16 * 1024; }

std::int64_t staging_limit_bytes(const PlanRequest& r) {
  if (r.staging_limit > 0) return r.staging_limit;
  const std::int64_t es = size_of(r.dtype);
  return std::max<std::int64_t>(4 * (r.from.local_elements() + r.to.local_elements()) * es, std::int64_t{1} << 20);
}

void check_request(const PlanRequest& r) {
  check_request_values(r);
  (void)internal::make_pair(r.from, r.to);  // partial compatibility
}

RankPlan plan_rank(const PlanRequest& r, std::int64_t rank, const CostModel& cost) {
  Strategy s = choose(r, cost);
  return build_rank(r, s, rank);
}

Plan plan_all(const PlanRequest& r, const CostModel& cost) {
  Plan p;
  p.request = r;
  Strategy s = choose(r, cost);
  for (std::size_t i = 0; i < s.kinds.size(); ++i)
    for (std::int64_t c = 0; c < s.chunks[i]; ++c) {
      p.kinds.push_back(s.kinds[i]);
      p.axes.push_back(s.axes[i]);
      p.equal_blocks.push_back(s.equal_blocks[i]);
    }
  p.estimated_seconds = s.cost;
  std::vector<std::int64_t> ranks = r.from.mesh().ranks();
  ranks.insert(ranks.end(), r.to.mesh().ranks().begin(), r.to.mesh().ranks().end());
  std::sort(ranks.begin(), ranks.end());
  ranks.erase(std::unique(ranks.begin(), ranks.end()), ranks.end());
  for (auto rank : ranks) {
    p.ranks.push_back(build_rank(r, s, rank));
    const auto& st = p.ranks.back().stats;
    p.totals.bytes_sent += st.bytes_sent;
    p.totals.bytes_received += st.bytes_received;
    p.totals.messages += st.messages;
    p.totals.collectives += st.collectives;
    p.totals.staging_bytes = std::max(p.totals.staging_bytes, st.staging_bytes);
    p.totals.lower_bound_bytes += st.lower_bound_bytes;
    p.max_bytes_received = std::max(p.max_bytes_received, st.bytes_received);
  }
  return p;
}

std::shared_ptr<const RankPlan> cached_plan_rank(const PlanRequest& r, std::int64_t rank, const CostModel& cost) {
  // The default model (the common case) adds nothing to the key, and is recognised by comparing
  // the coefficients, not their text (formatting them was most of a cached lookup).
  static const CostModel default_model;
  std::string key = request_key(r);
  if (!(cost == default_model)) key += " cost " + cost.fingerprint();
  std::string pkey = key + " @" + std::to_string(rank);
  {
    std::lock_guard<std::mutex> g(cache_mu);
    if (auto it = plan_cache.find(pkey); it != plan_cache.end()) return it->second;
  }
  auto s = strategy_for(r, cost, key);
  auto rp = std::make_shared<const RankPlan>(build_rank(r, *s, rank));
  std::lock_guard<std::mutex> g(cache_mu);
  if (plan_cache.size() > 65536) plan_cache.clear();
  return plan_cache.emplace(pkey, rp).first->second;
}

void clear_plan_cache() {
  std::lock_guard<std::mutex> g(cache_mu);
  plan_cache.clear();
  strategy_cache.clear();
}

}  // namespace axe

namespace axe::internal {

std::vector<bool> touched_axes(const Pair& p) {
  const int mem = p.src.naxes;
  std::vector<bool> t(static_cast<std::size_t>(mem), false);
  if (!(p.src.layout->mesh() == p.dst.layout->mesh())) return std::vector<bool>(t.size(), true);
  auto mark = [&](int a) {
    if (a != mem) t[static_cast<std::size_t>(a)] = true;
  };
  for (const auto& b : p.boxes) {
    for (const auto& m : b.modes)
      if (m.s_axis != m.d_axis || m.s_stride != m.d_stride) {
        mark(m.s_axis);
        mark(m.d_axis);
      }
    for (int a = 0; a < mem; ++a)
      if (b.s_base[static_cast<std::size_t>(a)] != b.d_base[static_cast<std::size_t>(a)]) mark(a);
  }
  auto iters = [&](const std::vector<SideIter>& v, int a) {
    std::vector<std::pair<std::int64_t, std::int64_t>> r;
    for (const auto& it : v)
      if (it.axis == a) r.emplace_back(it.extent, it.stride);
    std::sort(r.begin(), r.end());
    return r;
  };
  for (int a = 0; a < mem; ++a)
    if (iters(p.src.rep, a) != iters(p.dst.rep, a) || iters(p.src.part, a) != iters(p.dst.part, a)) mark(a);
  return t;
}

Classified classify(const Pair& p, const std::vector<Axis>& axes) {
  Classified c;
  const Mesh& mesh = p.src.layout->mesh();
  if (!(mesh == p.dst.layout->mesh())) return c;
  const int mem = p.src.naxes;
  std::vector<bool> in(mesh.ndim(), false);
  for (Axis a : axes) in[*mesh.axis_index(a)] = true;
  if (!group_local(p, in)) return c;
  bool any = false;
  for (bool t : touched_axes(p)) any = any || t;
  if (!any) {
    c.kind = StepKind::LocalCopy;
    return c;
  }
  if (!p.chain && !p.nested) return c;
  auto on = [&](int a) { return a != mem && in[static_cast<std::size_t>(a)]; };
  std::int64_t g = 1;
  for (std::size_t a = 0; a < in.size(); ++a)
    if (in[a]) g *= mesh.sizes()[a];
  // Products of what each side puts on the group's axes.
  std::int64_t sm = 1, dm = 1, sr = 1, sp = 1, dr = 1, dp = 1;
  bool s_to_mem = true, d_from_mem = true, same = true;
  for (const auto& m : p.full_modes) {
    if (on(m.s_axis)) {
      sm *= m.extent;
      s_to_mem = s_to_mem && m.d_axis == mem;
      same = same && on(m.d_axis);
      c.equal_blocks = c.equal_blocks && p.even[static_cast<std::size_t>(m.dim)];
    }
    if (on(m.d_axis)) {
      dm *= m.extent;
      d_from_mem = d_from_mem && m.s_axis == mem;
      same = same && on(m.s_axis);
      c.equal_blocks = c.equal_blocks && p.even[static_cast<std::size_t>(m.dim)];
    }
  }
  if (!p.chain) {
    // Nested bounds with no common factorisation of the padded ranges: what each side puts on
    // the group's axes, from its own iters. Group-local (checked above) and no D iters of the
    // other side on the group imply the mem-to-group conditions; all-to-all needs no pattern
    // (its v-variant takes any blocks). Blocks are uneven; no permute is claimed.
    sm = dm = 1;
    for (const auto& dim : p.src.dims)
      for (const auto& it : dim)
        if (on(it.axis)) sm *= it.extent;
    for (const auto& dim : p.dst.dims)
      for (const auto& it : dim)
        if (on(it.axis)) dm *= it.extent;
    s_to_mem = d_from_mem = true;
    same = false;
    c.equal_blocks = false;
  }
  for (const auto& it : p.src.rep) if (on(it.axis)) sr *= it.extent;
  for (const auto& it : p.src.part) if (on(it.axis)) sp *= it.extent;
  for (const auto& it : p.dst.rep) if (on(it.axis)) dr *= it.extent;
  for (const auto& it : p.dst.part) if (on(it.axis)) dp *= it.extent;
  const bool reduce = p.partial == PartialMode::Reduce && !p.reduced.empty();
  const bool match = p.partial == PartialMode::Match;
  // With injective in-bounds layouts, a product equal to the group size is a bijection onto it.
  if (sr == g && sm == 1 && sp == 1 && !match) {
    c.kind = StepKind::LocalCopy;  // every member holds a replica of what it needs
  } else if (match) {
    // terms move between axes: point-to-point
  } else if (sm == g && sr == 1 && sp == 1 && dm == 1 && dr == g && dp == 1 && s_to_mem && !reduce) {
    c.kind = StepKind::AllGather;
  } else if (sp == g && sm == 1 && sr == 1 && dm == g && dr == 1 && dp == 1 && d_from_mem && reduce) {
    c.kind = StepKind::ReduceScatter;
  } else if (sp == g && sm == 1 && sr == 1 && dm == 1 && dr == g && dp == 1 && reduce) {
    c.kind = StepKind::AllReduce;
  } else if (sm == g && dm == g && sr == 1 && sp == 1 && dr == 1 && dp == 1 && !reduce && s_to_mem && d_from_mem) {
    c.kind = StepKind::AllToAll;
  } else if (sm == g && dm == g && sr == 1 && sp == 1 && dr == 1 && dp == 1 && !reduce && same) {
    c.kind = StepKind::Permute;
  } else if (sm == 1 && sr == 1 && sp == 1 && dm == 1 && dr == g && dp == 1 && !reduce) {
    // Held at one coordinate of the group (the source offset), replicated over it after.
    c.kind = StepKind::Broadcast;
    std::int64_t root = 0;
    for (Axis a : axes) {
      auto i = *mesh.axis_index(a);
      root = root * mesh.sizes()[i] + p.src.offset[i];
    }
    c.root = root;
  }
  // Nested bounds: the padded factors no longer say that one rank's shard lands on one peer.
  if (p.nested && c.kind == StepKind::Permute) c.kind = StepKind::SendRecv;
  if (!is_collective(c.kind)) c.equal_blocks = true;
  return c;
}

}  // namespace axe::internal
