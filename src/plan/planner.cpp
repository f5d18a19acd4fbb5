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
#include <fstream>
#include <mutex>
#include <sstream>
#include <unordered_map>

#include "axe/error.hpp"
#include "axe/plan.hpp"
#include "plan/internal.hpp"

namespace axe {

using internal::Pair;

std::int64_t Transfer::elements() const {
  std::int64_t n = 1;
  for (auto e : extents) n *= e;
  return n;
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
  return m;
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

struct Stage {
  DistLayout to;
  StepKind kind = StepKind::SendRecv;
  std::vector<Axis> axes;
  bool label_from_traffic = false;  // direct: permute / local / send-recv decided by traffic
};

struct Strategy {
  std::vector<DistLayout> layouts;  // layouts[0] = from, back() = to
  std::vector<StepKind> kinds;
  std::vector<std::vector<Axis>> axes;
  std::vector<std::shared_ptr<Pair>> pairs;
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

std::vector<std::int64_t> reference_ranks(const PlanRequest& r) {
  // Small meshes (<= 16 ranks): every rank (labels and costs exact); larger: four spread-out
  // ranks per mesh, so choosing costs O(ranks), not O(ranks^2).
  std::vector<std::int64_t> out;
  for (const Mesh* m : {&r.from.mesh(), &r.to.mesh()}) {
    const auto& rk = m->ranks();
    if (rk.size() <= 16) {
      out.insert(out.end(), rk.begin(), rk.end());
    } else {
      for (std::size_t i : {std::size_t{0}, std::size_t{1}, rk.size() / 2, rk.size() - 1}) out.push_back(rk[i]);
    }
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

double step_cost(const CostModel& cm, StepKind kind, const std::vector<Axis>& axes,
                 const internal::Exchange& ex, std::int64_t es, std::int64_t group) {
  std::int64_t sent = 0, recv = 0, copied = 0;
  for (const auto& m : ex.sends) sent += m.elements();
  for (const auto& m : ex.recvs) recv += m.elements();
  for (const auto& c : ex.copies) copied += c.elements();
  double bytes = static_cast<double>(std::max(sent, recv) * es);
  if (kind == StepKind::AllReduce && group > 1) bytes = 2.0 * (group - 1) / group * static_cast<double>(copied * es);
  auto c = cm.coeffs(kind, axes);
  double t = cm.local_beta * static_cast<double>(copied * es);
  if (kind == StepKind::LocalCopy) return t;
  std::size_t msgs = std::max(ex.sends.size(), ex.recvs.size());
  if (msgs == 0) return t;
  if (kind == StepKind::Permute || kind == StepKind::SendRecv) return t + c.alpha * static_cast<double>(msgs) + c.beta * bytes;
  return t + c.alpha + c.beta * bytes;
}

std::int64_t group_size(const Mesh& m, const std::vector<Axis>& axes) {
  std::int64_t g = 1;
  for (Axis a : axes) g *= m.axis_size(a);
  return g;
}

using ExCache = std::map<const Pair*, std::vector<internal::Exchange>>;

std::optional<Strategy> build(const PlanRequest& req, const std::vector<Stage>& stages, const CostModel& cm,
                              std::map<std::string, std::shared_ptr<Pair>>& pair_cache,
                              const std::vector<std::int64_t>& refs, ExCache& ex_cache) {
  Strategy s;
  s.layouts.push_back(req.from);
  const std::int64_t es = size_of(req.dtype);
  for (const auto& st : stages) {
    const DistLayout& from = s.layouts.back();
    std::string key = to_string(from) + " -> " + to_string(st.to);
    auto& pp = pair_cache[key];
    if (!pp) pp = std::make_shared<Pair>(internal::make_pair(from, st.to));
    StepKind kind = st.kind;
    if (!st.label_from_traffic && kind != StepKind::SendRecv) {
      std::vector<bool> in(from.mesh().ndim(), false);
      for (Axis a : st.axes) in[*from.mesh().axis_index(a)] = true;
      if (!(from.mesh() == st.to.mesh()) || !group_local(*pp, in)) return std::nullopt;
    }
    auto& memo = ex_cache[pp.get()];
    if (memo.empty())
      for (auto r : refs) memo.push_back(internal::exchange(*pp, r));
    const std::vector<internal::Exchange>& ex = memo;
    if (st.label_from_traffic) {
      bool any = false, one_peer = true;
      for (const auto& e : ex) {
        any = any || !e.sends.empty() || !e.recvs.empty();
        one_peer = one_peer && e.sends.size() <= 1 && e.recvs.size() <= 1;
      }
      const bool reduces = pp->partial == internal::PartialMode::Reduce && !pp->reduced.empty();
      kind = !any ? StepKind::LocalCopy
             : one_peer && !reduces && from.mesh() == st.to.mesh() ? StepKind::Permute
                                                                   : StepKind::SendRecv;
    } else if (kind == StepKind::AllToAll && group_size(from.mesh(), st.axes) > 2) {
      // An all-to-all where every rank talks to at most one peer is a permute.
      bool one_peer = true;
      for (const auto& e : ex) one_peer = one_peer && e.sends.size() <= 1 && e.recvs.size() <= 1;
      if (one_peer) kind = StepKind::Permute;
    } else if (kind == StepKind::LocalCopy) {
      for (const auto& e : ex)
        if (!e.sends.empty() || !e.recvs.empty()) return std::nullopt;
    }
    double worst = 0;
    for (const auto& e : ex) worst = std::max(worst, step_cost(cm, kind, st.axes, e, es, group_size(from.mesh(), st.axes)));
    s.cost += worst;
    s.kinds.push_back(kind);
    s.axes.push_back(is_collective(kind) ? st.axes : std::vector<Axis>{});
    s.pairs.push_back(pp);
    s.layouts.push_back(st.to);
  }
  return s;
}

Strategy choose(const PlanRequest& req, const CostModel& cm) {
  check_request(req);
  std::map<std::string, std::shared_ptr<Pair>> pair_cache;
  ExCache ex_cache;
  const auto refs = reference_ranks(req);
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
        stages.push_back({shard(req.from.shape(), mesh, mid), kind_of(c), axes, false});
      }
      if (!stages.empty()) {
        stages.back().to = req.to;
        if (auto s = build(req, stages, cm, pair_cache, refs, ex_cache)) cands.push_back(std::move(*s));
      }
    }
    // Per axis, mesh order (DTensor).
    {
      std::vector<Stage> stages;
      std::vector<AxisPlacement> cur = fs->per_axis;
      for (std::size_t a = 0; a < na; ++a)
        for (int c : cls[a]) {
          advance(cur, a, c);
          stages.push_back({shard(req.from.shape(), mesh, intermediate(*fs, *ts, cur)), kind_of(c), {mesh.axes()[a]}, false});
        }
      if (stages.size() > 1) {
        stages.back().to = req.to;
        if (auto s = build(req, stages, cm, pair_cache, refs, ex_cache)) cands.push_back(std::move(*s));
      }
    }
  }
  {
    Stage direct{req.to, StepKind::SendRecv, {}, true};
    auto s = build(req, {direct}, cm, pair_cache, refs, ex_cache);
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
  std::string key = to_string(req.from) + " -> " + to_string(req.to);
  auto& dp = pair_cache[key];
  if (!dp) dp = std::make_shared<Pair>(internal::make_pair(req.from, req.to));
  out.direct = dp;
  out.cost = cands[best].cost;
  return out;
}

RankPlan build_rank(const PlanRequest& req, const Strategy& s, std::int64_t rank) {
  RankPlan rp;
  rp.rank = rank;
  rp.dtype = req.dtype;
  const std::int64_t es = size_of(req.dtype);
  for (const auto& l : s.layouts) rp.buffers.push_back(l.mesh().contains(rank) ? l.local_elements() : 0);
  std::int64_t peak_pack = 0, direct_lb = -1;
  for (std::size_t i = 0; i < s.pairs.size(); ++i) {
    internal::Exchange ex = internal::exchange(*s.pairs[i], rank);
    if (s.pairs[i] == s.direct) direct_lb = ex.lower_bound_elements;
    Step st;
    st.kind = s.kinds[i];
    st.axes = s.axes[i];
    if (is_collective(st.kind) && s.layouts[i].mesh().contains(rank)) st.group = s.layouts[i].mesh().group(rank, st.axes);
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
    std::int64_t sent = st.elements_sent() * es, recv = st.elements_received() * es;
    if (st.kind == StepKind::AllReduce && st.group.size() > 1) {
      std::int64_t n = 0;
      for (const auto& c : st.copies) n += c.elements();
      const auto g = static_cast<std::int64_t>(st.group.size());
      sent = recv = 2 * (g - 1) * n * es / g;
    }
    rp.stats.bytes_sent += sent;
    rp.stats.bytes_received += recv;
    rp.stats.messages += static_cast<std::int64_t>(st.sends.size());
    if (is_collective(st.kind) && (!st.sends.empty() || !st.recvs.empty())) ++rp.stats.collectives;
    peak_pack = std::max(peak_pack, st.elements_sent() * es + st.elements_received() * es);
    rp.steps.push_back(std::move(st));
  }
  std::int64_t staging = 0;
  for (std::size_t i = 1; i + 1 < rp.buffers.size(); ++i) staging += rp.buffers[i] * es;
  rp.stats.staging_bytes = staging + peak_pack;
  // Lower bound: elements this rank needs that it does not (fully) hold, each at least once.
  rp.stats.lower_bound_bytes = (direct_lb >= 0 ? direct_lb : internal::exchange(*s.direct, rank).lower_bound_elements) * es;
  return rp;
}

struct CacheKey {
  std::string text;
  bool operator==(const CacheKey&) const = default;
};

std::string request_key(const PlanRequest& r) {
  return to_string(r.from) + (r.from.sharding() ? " {" + to_string(*r.from.sharding()) + "}" : "") + " -> " +
         to_string(r.to) + (r.to.sharding() ? " {" + to_string(*r.to.sharding()) + "}" : "") + " " +
         std::string(to_string(r.dtype));
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

void check_request(const PlanRequest& r) {
  if (r.from.shape() != r.to.shape())
    fail("source layout '" + to_string(r.from.layout()) + "' has global shape " + internal::shape_text(r.from.shape()) +
         " but destination layout '" + to_string(r.to.layout()) + "' has " + internal::shape_text(r.to.shape()));
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
  p.kinds = s.kinds;
  p.axes = s.axes;
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
  std::string key = request_key(r);
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
