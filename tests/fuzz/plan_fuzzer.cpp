// libFuzzer target for the planner and the simulator on random requests: the input is decoded
// (FuzzedDataProvider) into a global shape (1-3 dims of 1..12, uneven ones included), a source
// mesh of up to 16 devices over up to 3 axes, a destination mesh (the same, its ranks permuted,
// its ranks shifted, or another mesh), source and destination layouts (DTensor placements, JAX
// placements naming their axes, or general Axe layouts: interleaved / block-cyclic shards, local
// storage permuted, memory offsets, replicas, partial terms, offsets on unused axes, nested uneven
// bounds), a dtype, a staging limit and a spread threshold.
//
// The laws, whenever check_request + plan_all accept the request (they may throw axe::Error for
// a request they do not support; nothing else may escape):
//   - simulate(plan) runs (no exception, no hang: libFuzzer's -timeout);
//   - verify(request, result) == "": every destination slot equals the destination layout
//     applied to the global tensor, padding is NaN;
//   - every element sent is received, and no rank receives less than the lower bound.
// Known exception, src/exec/simulate.cpp (not this target's to fix): verify() checks a partial
// destination term by term (each term keeps its index, PartialMode::Match), while the meaning of
// P is only that the terms reduce to the value. A partial -> partial request whose verify()
// fails is therefore checked with reduce_check() below (per element and replica, the terms
// reduce to the value) and, when that holds, counted and printed as KNOWN instead of aborting.
#include <fuzzer/FuzzedDataProvider.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

#include "axe/core/error.hpp"
#include "axe/dist/mesh.hpp"
#include "axe/dist/placement.hpp"
#include "axe/exec/simulate.hpp"
#include "axe/plan/plan.hpp"
#include "fuzz_util.hpp"

namespace {

using namespace axe;

const char* const kNames[] = {"x", "y", "z"};

template <class T>
T pick(FuzzedDataProvider& in, std::initializer_list<T> options) {
  return options.begin()[in.ConsumeIntegralInRange<std::size_t>(0, options.size() - 1)];
}

std::vector<std::pair<std::string, std::int64_t>> random_axes(FuzzedDataProvider& in) {
  const int n = in.ConsumeIntegralInRange(1, 3);
  std::vector<std::pair<std::string, std::int64_t>> axes;
  std::int64_t total = 1;
  for (int k = 0; k < n; ++k) {
    std::int64_t s = in.ConsumeIntegralInRange<std::int64_t>(1, 4);
    if (total * s > 16) s = 1;
    total *= s;
    axes.emplace_back(kNames[k], s);
  }
  return axes;
}

std::vector<std::pair<std::string, std::int64_t>> axes_of(const Mesh& m) {
  std::vector<std::pair<std::string, std::int64_t>> ax;
  for (std::size_t i = 0; i < m.ndim(); ++i) ax.emplace_back(std::string(m.axes()[i].name()), m.sizes()[i]);
  return ax;
}

Mesh other_mesh(FuzzedDataProvider& in, const Mesh& a) {
  switch (in.ConsumeIntegralInRange(0, 4)) {
    case 0:
    case 1: return a;
    case 2: {  // the same axes, ranks permuted
      std::vector<std::int64_t> r = a.ranks();
      for (std::size_t i = r.size(); i > 1; --i)
        std::swap(r[i - 1], r[in.ConsumeIntegralInRange<std::size_t>(0, i - 1)]);
      return Mesh(axes_of(a), r);
    }
    case 3: {  // the same axes, ranks shifted (overlapping or disjoint)
      const std::int64_t shift = in.ConsumeIntegralInRange<std::int64_t>(0, 20);
      std::vector<std::int64_t> r;
      for (auto x : a.ranks()) r.push_back(x + shift);
      return Mesh(axes_of(a), r);
    }
    default: {  // another mesh
      auto ax = random_axes(in);
      const std::int64_t shift = in.ConsumeIntegralInRange<std::int64_t>(0, 3);
      std::int64_t n = 1;
      for (auto& [name, s] : ax) n *= s;
      std::vector<std::int64_t> r;
      for (std::int64_t i = 0; i < n; ++i) r.push_back(i + shift);
      return Mesh(ax, r);
    }
  }
}

ReduceOp random_op(FuzzedDataProvider& in) {
  return pick(in, {ReduceOp::Sum, ReduceOp::Avg, ReduceOp::Max, ReduceOp::Min, ReduceOp::Prod});
}

// DTensor style: one placement per mesh axis.
DistLayout dtensor(FuzzedDataProvider& in, const std::vector<std::int64_t>& shape, const Mesh& m, bool partial,
                   ReduceOp op) {
  std::vector<AxisPlacement> ps;
  const int nd = static_cast<int>(shape.size());
  for (std::size_t a = 0; a < m.ndim(); ++a) {
    switch (in.ConsumeIntegralInRange(0, partial ? 2 : 1)) {
      case 0: ps.push_back(Shard(in.ConsumeIntegralInRange(-nd, nd - 1))); break;
      case 1: ps.push_back(Replicate()); break;
      default: ps.push_back(Partial(op)); break;
    }
  }
  return shard(std::span<const std::int64_t>(shape), m, std::span<const AxisPlacement>(ps));
}

// JAX style: items naming their axes (major first); unnamed axes replicate.
DistLayout jax(FuzzedDataProvider& in, const std::vector<std::int64_t>& shape, const Mesh& m, bool partial,
               ReduceOp op) {
  std::vector<std::size_t> order(m.ndim());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  for (std::size_t i = order.size(); i > 1; --i)
    std::swap(order[i - 1], order[in.ConsumeIntegralInRange<std::size_t>(0, i - 1)]);
  std::vector<AxisPlacement> dims(shape.size());
  for (std::size_t d = 0; d < shape.size(); ++d) {
    dims[d].kind = AxisPlacement::Kind::Shard;
    dims[d].dim = static_cast<int>(d);
  }
  AxisPlacement p;
  p.kind = AxisPlacement::Kind::Partial;
  p.op = op;
  for (auto a : order) {
    const int k = in.ConsumeIntegralInRange(0, partial ? 2 : 1);
    if (k == 0) dims[in.ConsumeIntegralInRange<std::size_t>(0, shape.size() - 1)].axes.push_back(m.axes()[a]);
    else if (k == 2) p.axes.push_back(m.axes()[a]);
  }
  std::vector<AxisPlacement> ps;
  for (auto& d : dims)
    if (!d.axes.empty()) ps.push_back(d);
  if (!p.axes.empty()) ps.push_back(p);
  if (ps.empty()) {  // every axis replicates: say so with one item naming no dim's axes
    std::vector<AxisPlacement> none;
    for (std::size_t a = 0; a < m.ndim(); ++a) none.push_back(Replicate());
    return shard(std::span<const std::int64_t>(shape), m, std::span<const AxisPlacement>(none));
  }
  return shard(std::span<const std::int64_t>(shape), m, std::span<const AxisPlacement>(ps));
}

// A general Axe layout: each dim split over some device axes, blocked / cyclic / block-cyclic,
// local digits stored in any order, a memory offset; each unused axis replicates, holds partial
// terms or holds the data at one coordinate only (an offset on that axis). Dims over several
// axes may take DTensor's nested bounds.
DistLayout general(FuzzedDataProvider& in, const std::vector<std::int64_t>& shape, const Mesh& m, bool partial,
                   ReduceOp op) {
  std::vector<std::vector<std::size_t>> dim_axes(shape.size());
  std::vector<bool> used(m.ndim(), false);
  std::vector<std::size_t> order(m.ndim());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  for (std::size_t i = order.size(); i > 1; --i)
    std::swap(order[i - 1], order[in.ConsumeIntegralInRange<std::size_t>(0, i - 1)]);
  for (auto a : order)
    if (in.ConsumeBool()) {
      dim_axes[in.ConsumeIntegralInRange<std::size_t>(0, shape.size() - 1)].push_back(a);
      used[a] = true;
    }
  struct It {
    std::int64_t e;
    bool device;
    std::size_t axis;
  };
  std::vector<It> D;
  std::vector<std::int64_t> padded;
  for (std::size_t d = 0; d < shape.size(); ++d) {
    std::int64_t p = 1;
    for (auto a : dim_axes[d]) p *= m.sizes()[a];
    const std::int64_t c = (shape[d] + p - 1) / p;
    padded.push_back(c * p);
    std::vector<It> dev;
    for (auto a : dim_axes[d]) dev.push_back({m.sizes()[a], true, a});
    int style = in.ConsumeIntegralInRange(0, 2);  // blocked, cyclic, block-cyclic
    if (dev.empty() || (style == 2 && c % 2 != 0)) style = 0;
    if (style == 0) {
      D.insert(D.end(), dev.begin(), dev.end());
      D.push_back({c, false, 0});
    } else if (style == 1) {
      D.push_back({c, false, 0});
      D.insert(D.end(), dev.begin(), dev.end());
    } else {
      D.push_back({c / 2, false, 0});
      D.insert(D.end(), dev.begin(), dev.end());
      D.push_back({2, false, 0});
    }
  }
  std::vector<std::size_t> mem;
  for (std::size_t i = 0; i < D.size(); ++i)
    if (!D[i].device) mem.push_back(i);
  if (in.ConsumeBool())
    for (std::size_t i = mem.size(); i > 1; --i)
      std::swap(mem[i - 1], mem[in.ConsumeIntegralInRange<std::size_t>(0, i - 1)]);
  std::vector<std::int64_t> stride(D.size(), 0);
  std::int64_t st = 1;
  for (std::size_t k = mem.size(); k-- > 0;) {
    stride[mem[k]] = st;
    st *= D[mem[k]].e;
  }
  std::vector<Iter> d_iters, r_iters, p_iters;
  for (std::size_t i = 0; i < D.size(); ++i)
    d_iters.push_back(D[i].device ? Iter{D[i].e, 1, m.axes()[D[i].axis]} : Iter{D[i].e, stride[i], Axis()});
  std::vector<std::pair<Axis, std::int64_t>> off;
  if (const auto moff = in.ConsumeIntegralInRange<std::int64_t>(0, 2)) off.emplace_back(Axis(), moff);
  for (std::size_t a = 0; a < m.ndim(); ++a) {
    if (used[a]) continue;
    const int k = in.ConsumeIntegralInRange(0, partial ? 2 : 1);
    if (k == 0) {
      r_iters.push_back({m.sizes()[a], 1, m.axes()[a]});
    } else if (k == 1) {
      if (const auto at = in.ConsumeIntegralInRange<std::int64_t>(0, m.sizes()[a] - 1)) off.emplace_back(m.axes()[a], at);
    } else {
      p_iters.push_back({m.sizes()[a], 1, m.axes()[a]});
    }
  }
  std::vector<std::vector<std::int64_t>> nest(shape.size());
  for (std::size_t d = 0; d < shape.size(); ++d)
    if (dim_axes[d].size() >= 2 && in.ConsumeBool())
      for (auto a : dim_axes[d]) nest[d].push_back(m.sizes()[a]);
  return DistLayout(shape, AxeLayout(d_iters, r_iters, p_iters, off, op), m, padded, nest);
}

DistLayout random_layout(FuzzedDataProvider& in, const std::vector<std::int64_t>& shape, const Mesh& m,
                         bool partial, ReduceOp op) {
  switch (in.ConsumeIntegralInRange(0, 2)) {
    case 0: return dtensor(in, shape, m, partial, op);
    case 1: return jax(in, shape, m, partial, op);
    default: return general(in, shape, m, partial, op);
  }
}

double reduce(ReduceOp op, const std::vector<double>& terms) {
  double r = reduce_identity(op);
  for (double t : terms) {
    switch (op) {
      case ReduceOp::Sum:
      case ReduceOp::Avg: r += t; break;
      case ReduceOp::Max: r = std::max(r, t); break;
      case ReduceOp::Min: r = std::min(r, t); break;
      case ReduceOp::Prod: r *= t; break;
    }
  }
  if (op == ReduceOp::Avg) r /= static_cast<double>(terms.size());
  return r;
}

// The meaning of a destination: for every logical element x and every replica, its partial terms
// (one per term index, wherever they sit) reduce with the layout's op to x. Returns "" or the
// first element that does not.
std::string reduce_check(const DistLayout& to, const SimulationResult& res) {
  const auto& shape = to.shape();
  const auto& padded = to.padded_shape();
  const Mesh& mesh = to.mesh();
  const std::int64_t n = to.elements();
  std::vector<std::int64_t> c(shape.size());
  for (std::int64_t x = 0; x < n; ++x) {
    std::int64_t rest = x, px = 0;
    for (std::size_t k = shape.size(); k-- > 0;) {
      c[k] = rest % shape[k];
      rest /= shape[k];
    }
    for (std::size_t k = 0; k < shape.size(); ++k) px = px * padded[k] + to.padded_index(k, c[k]);
    std::map<std::int64_t, std::vector<double>> by_replica;
    for (const auto& p : to.layout().forward(px)) {
      std::vector<std::int64_t> dc;
      for (auto a : mesh.axes()) dc.push_back(p.coord[a]);
      const std::int64_t rank = mesh.rank_at(dc);
      const auto it = res.destination.find(rank);
      const std::int64_t slot = p.coord[Axis::memory()];
      if (it == res.destination.end() || slot < 0 || slot >= static_cast<std::int64_t>(it->second.size()))
        return "element " + std::to_string(x) + ": rank " + std::to_string(rank) + " slot " + std::to_string(slot) +
               " missing";
      by_replica[p.replica].push_back(it->second[static_cast<std::size_t>(slot)]);
    }
    for (const auto& [replica, terms] : by_replica) {
      const double got = reduce(to.layout().reduce_op(), terms);
      if (!(got == static_cast<double>(x)))
        return "element " + std::to_string(x) + " replica " + std::to_string(replica) + ": terms reduce to " +
               std::to_string(got);
    }
  }
  return "";
}

long known = 0;

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  FuzzedDataProvider in(data, size);
  PlanRequest r;
  try {
    const Mesh a(random_axes(in));
    const Mesh b = other_mesh(in, a);
    std::vector<std::int64_t> shape(in.ConsumeIntegralInRange<std::size_t>(1, 3));
    for (auto& e : shape) e = in.ConsumeIntegralInRange<std::int64_t>(1, 12);
    const ReduceOp op = random_op(in);
    const bool src_partial = in.ConsumeBool();
    r.from = random_layout(in, shape, a, src_partial, op);
    // A partial destination needs a partial source of the same op and term count, or none: the
    // planner must say so (check_request) when they differ, so sometimes they do.
    const bool dst_partial = in.ConsumeBool();
    const ReduceOp dst_op = in.ConsumeBool() ? op : random_op(in);
    r.to = random_layout(in, shape, b, dst_partial, dst_op);
    r.dtype = pick(in, {DType::F32, DType::F16, DType::BF16, DType::F64, DType::I32, DType::I64, DType::U8});
    r.staging_limit = pick<std::int64_t>(in, {0, 0, 1, 64, 1024, 4096, 65536});
    r.spread_min_bytes = pick<std::int64_t>(in, {0, 0, 1, 256, 4096});
  } catch (const Error&) {
    return 0;  // the decoded layout does not fit (e.g. an offset collides): not a request
  }
  Plan p;
  try {
    check_request(r);
    p = plan_all(r);
  } catch (const Error&) {
    return 0;  // unsupported request: reported, as it may be
  }
  const std::string what = to_string(r.from) + " -> " + to_string(r.to) + " (" + std::string(to_string(r.dtype)) +
                           ", staging " + std::to_string(r.staging_limit) + ", spread " +
                           std::to_string(r.spread_min_bytes) + ")";
  std::string_view input(reinterpret_cast<const char*>(data), size);
  static const bool verbose = std::getenv("AXE_FUZZ_VERBOSE") != nullptr;  // replaying: say what runs
  if (verbose) std::fprintf(stderr, "request: %s\n", what.c_str());
  SimulationResult res;
  try {
    res = simulate(p);
  } catch (const Error& e) {
    fuzz::broken("simulate runs every planned request", input, what + ": " + e.what());
  }
  if (const std::string why = verify(r, res); !why.empty()) {
    const bool p_to_p = r.from.layout().terms() > 1 && r.to.layout().terms() > 1;
    if (!p_to_p) fuzz::broken("verify(plan) == \"\"", input, what + ": " + why + "\n" + to_string(p));
    if (const std::string sum = reduce_check(r.to, res); !sum.empty())
      fuzz::broken("the destination's terms reduce to the value", input, what + ": " + sum + "\n" + to_string(p));
    if (++known <= 20 || (known & (known - 1)) == 0)
      std::fprintf(stderr, "KNOWN (simulate.cpp checks P terms by index) #%ld: %s: %s\n", known, what.c_str(),
                   why.c_str());
  }
  std::int64_t sent = 0, received = 0;
  for (const auto& rp : p.ranks)
    for (const auto& s : rp.steps) {
      sent += s.elements_sent();
      received += s.elements_received();
    }
  if (sent != received)
    fuzz::broken("every element sent is received", input,
                 what + ": sent " + std::to_string(sent) + ", received " + std::to_string(received));
  if (p.totals.bytes_received < p.totals.lower_bound_bytes)
    fuzz::broken("bytes received >= the lower bound", input, what + "\n" + to_string(p));
  return 0;
}
