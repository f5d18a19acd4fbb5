// The in-process simulator and the element-by-element reference.
#include "axe/exec/simulate.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <thread>

#include "axe/core/error.hpp"
#include "axe/exec/executor.hpp"
#include "plan/internal.hpp"

namespace axe {

double partial_term(double x, std::int64_t j, std::int64_t T, ReduceOp op) {
  const double tri = static_cast<double>(T) * static_cast<double>(T - 1) / 2;
  const std::int64_t hot = static_cast<std::int64_t>(std::fmod(x, static_cast<double>(T)));
  switch (op) {
    case ReduceOp::Sum: return j == 0 ? x - tri : static_cast<double>(j);
    case ReduceOp::Avg: return j == 0 ? x - tri : x + static_cast<double>(j);
    case ReduceOp::Max: return j == hot ? x : x - 1 - static_cast<double>(j);
    case ReduceOp::Min: return j == hot ? x : x + 1 + static_cast<double>(j);
    case ReduceOp::Prod: return j == hot ? x : 1.0;
  }
  return x;
}

namespace {

// f(x, rank, mem, term) for every (logical element, replica, term) slot of l.
template <class F>
void for_each_slot(const DistLayout& l, F&& f) {
  internal::Side s = internal::make_side(l);
  const auto& shape = l.shape();
  const std::size_t nd = shape.size();
  std::vector<std::vector<std::int64_t>> places(nd);
  for (std::size_t d = 0; d < nd; ++d) {
    std::int64_t p = 1;
    places[d].resize(s.dims[d].size());
    for (std::size_t j = s.dims[d].size(); j-- > 0;) {
      places[d][j] = p;
      p *= s.dims[d][j].extent;
    }
  }
  std::int64_t n = l.elements();
  std::vector<std::int64_t> coord(nd, 0), pcoord(nd, 0), c(static_cast<std::size_t>(s.naxes + 1));
  std::vector<std::int64_t> dev(static_cast<std::size_t>(s.naxes));
  for (std::int64_t x = 0; x < n; ++x) {
    std::copy(s.offset.begin(), s.offset.end(), c.begin());
    for (std::size_t d = 0; d < nd; ++d) pcoord[d] = l.padded_index(d, coord[d]);  // nested bounds
    for (std::size_t d = 0; d < nd; ++d)
      for (std::size_t j = 0; j < s.dims[d].size(); ++j) {
        const auto& it = s.dims[d][j];
        c[static_cast<std::size_t>(it.axis)] += ((pcoord[d] / places[d][j]) % it.extent) * it.stride;
      }
    for (std::int64_t r = 0; r < s.replicas; ++r)
      for (std::int64_t t = 0; t < s.terms; ++t) {
        std::vector<std::int64_t> cc = c;
        std::int64_t rr = r, tt = t;
        for (std::size_t i = s.rep.size(); i-- > 0;) {
          cc[static_cast<std::size_t>(s.rep[i].axis)] += (rr % s.rep[i].extent) * s.rep[i].stride;
          rr /= s.rep[i].extent;
        }
        for (std::size_t i = s.part.size(); i-- > 0;) {
          cc[static_cast<std::size_t>(s.part[i].axis)] += (tt % s.part[i].extent) * s.part[i].stride;
          tt /= s.part[i].extent;
        }
        std::copy(cc.begin(), cc.end() - 1, dev.begin());
        f(x, l.mesh().rank_at(dev), cc.back(), t, s.terms);
      }
    for (std::size_t d = nd; d-- > 0;) {
      if (++coord[d] < shape[d]) break;
      coord[d] = 0;
    }
  }
}

}  // namespace

namespace {
// The source buffers of the ranks `out` holds (each sized and NaN-filled here), in one pass over
// the slots: the simulator fills every rank's at once (per rank it would be ranks x slots),
// fill_source only its own rank's.
void fill_into(const DistLayout& l, std::map<std::int64_t, std::vector<double>>& out) {
  for (auto& [r, b] : out)
    b.assign(static_cast<std::size_t>(l.local_elements()), std::numeric_limits<double>::quiet_NaN());
  const ReduceOp op = l.layout().reduce_op();
  for_each_slot(l, [&](std::int64_t x, std::int64_t r, std::int64_t mem, std::int64_t t, std::int64_t T) {
    auto it = out.find(r);
    if (it == out.end()) return;
    it->second[static_cast<std::size_t>(mem)] =
        T > 1 ? partial_term(static_cast<double>(x), t, T, op) : static_cast<double>(x);
  });
}

std::map<std::int64_t, std::vector<double>> fill_sources(const DistLayout& l) {
  std::map<std::int64_t, std::vector<double>> out;
  for (std::int64_t r : l.mesh().ranks()) out[r];
  fill_into(l, out);
  return out;
}
}  // namespace

std::vector<double> fill_source(const DistLayout& l, std::int64_t rank) {
  if (!l.mesh().contains(rank)) return {};
  std::map<std::int64_t, std::vector<double>> one{{rank, {}}};
  fill_into(l, one);
  return std::move(one[rank]);
}

std::map<std::int64_t, std::vector<double>> reference_destination(const DistLayout& from, const DistLayout& to) {
  internal::Pair p = internal::make_pair(from, to);  // validates the partial combination
  std::map<std::int64_t, std::vector<double>> out;
  for (auto r : to.mesh().ranks())
    out[r].assign(static_cast<std::size_t>(to.local_elements()), std::numeric_limits<double>::quiet_NaN());
  const ReduceOp op = p.op;
  std::vector<std::int64_t> src_ext;
  for (const auto& it : p.src.part) src_ext.push_back(it.extent);
  std::vector<std::int64_t> dst_ext;
  for (const auto& it : p.dst.part) dst_ext.push_back(it.extent);
  for_each_slot(to, [&](std::int64_t x, std::int64_t r, std::int64_t mem, std::int64_t t, std::int64_t T) {
    double v = static_cast<double>(x);
    std::vector<std::int64_t> td(dst_ext.size());
    for (std::size_t i = dst_ext.size(), tt = static_cast<std::size_t>(t); i-- > 0;) {
      td[i] = static_cast<std::int64_t>(tt) % dst_ext[i];
      tt /= static_cast<std::size_t>(dst_ext[i]);
    }
    bool filled_zero = false;
    for (std::size_t i = 0; i < p.match.size(); ++i)
      filled_zero = filled_zero || (p.match[i] < 0 && td[i] != 0);
    if (p.partial == internal::PartialMode::Match) {
      v = partial_term(v, t, T, op);
    } else if (p.partial == internal::PartialMode::Reduce && filled_zero &&
               (op == ReduceOp::Sum || op == ReduceOp::Prod)) {
      v = reduce_identity(op);
    } else if (p.partial == internal::PartialMode::Reduce && !p.src.part.empty()) {
      // Kept terms: fold the reduced source digits, in term order.
      std::int64_t R = p.terms;
      double acc = 0;
      for (std::int64_t k = 0; k < R; ++k) {
        std::vector<std::int64_t> ts(src_ext.size(), 0);
        for (std::size_t i = 0; i < p.match.size(); ++i)
          if (p.match[i] >= 0) ts[static_cast<std::size_t>(p.match[i])] = td[i];
        std::int64_t kk = k;
        for (std::size_t j = p.reduced.size(); j-- > 0;) {
          ts[p.reduced[j]] = kk % src_ext[p.reduced[j]];
          kk /= src_ext[p.reduced[j]];
        }
        std::int64_t ti = 0;
        for (std::size_t j = 0; j < ts.size(); ++j) ti = ti * src_ext[j] + ts[j];
        double term = partial_term(static_cast<double>(x), ti, p.src.terms, op);
        if (k == 0) acc = term;
        else if (op == ReduceOp::Sum || op == ReduceOp::Avg) acc += term;
        else if (op == ReduceOp::Prod) acc *= term;
        else if (op == ReduceOp::Max) acc = std::max(acc, term);
        else acc = std::min(acc, term);
      }
      if (op == ReduceOp::Avg && R > 1) acc /= static_cast<double>(R);
      v = acc;
    }
    out[r][static_cast<std::size_t>(mem)] = v;
  });
  return out;
}

namespace {
// a + b, saturating at INT64_MAX (the sizes summed here come from valid layouts, but many of them).
std::int64_t add_sat(std::int64_t a, std::int64_t b) {
  return a > std::numeric_limits<std::int64_t>::max() - b ? std::numeric_limits<std::int64_t>::max() : a + b;
}
std::int64_t mul_sat(std::int64_t a, std::int64_t b) {
  return b != 0 && a > std::numeric_limits<std::int64_t>::max() / b ? std::numeric_limits<std::int64_t>::max() : a * b;
}
}  // namespace

std::int64_t simulation_elements(const Plan& plan) {
  const DistLayout& from = plan.request.from;
  const DistLayout& to = plan.request.to;
  std::int64_t n = 0;
  for (const RankPlan& rp : plan.ranks) {
    if (from.mesh().contains(rp.rank)) n = add_sat(n, from.local_elements());
    for (std::int64_t b : rp.buffers) n = add_sat(n, b);
  }
  return add_sat(n, mul_sat(to.local_elements(), to.mesh().size()));
}

SimulationResult simulate(const Plan& plan) {
  const auto ranks = static_cast<std::int64_t>(plan.ranks.size());
  if (ranks > kMaxSimulatedRanks)
    fail("simulate: the plan has " + std::to_string(ranks) + " ranks, more than the simulator's " +
         std::to_string(kMaxSimulatedRanks) + " (one thread each)");
  if (const std::int64_t n = simulation_elements(plan); n > kMaxSimulatedElements)
    fail("simulate: the plan needs " + std::to_string(n) + " float64 elements over its " + std::to_string(ranks) +
         " ranks, more than the simulator's " + std::to_string(kMaxSimulatedElements) +
         " (512 MiB); simulate a smaller shape");
  InMemoryNetwork net;
  SimulationResult res;
  std::vector<std::vector<double>> dst(plan.ranks.size());
  std::vector<std::string> errors(plan.ranks.size());
  std::map<std::int64_t, std::vector<double>> sources = fill_sources(plan.request.from);
  std::vector<std::thread> threads;
  threads.reserve(plan.ranks.size());
  for (std::size_t i = 0; i < plan.ranks.size(); ++i) {
    threads.emplace_back([&, i] {
      try {
        RankPlan rp = plan.ranks[i];
        rp.dtype = DType::F64;
        auto it = sources.find(rp.rank);
        std::span<const double> src = it == sources.end() ? std::span<const double>() : it->second;
        dst[i].assign(static_cast<std::size_t>(rp.buffers.back()), 0.0);
        InMemoryTransport t(net, rp.rank);
        execute(rp, t, std::as_bytes(src), std::as_writable_bytes(std::span<double>(dst[i])));
      } catch (const std::exception& e) {
        errors[i] = e.what();
        net.abort();
      }
    });
  }
  for (auto& t : threads) t.join();
  for (std::size_t i = 0; i < errors.size(); ++i)
    if (!errors[i].empty() && errors[i].find("aborted") == std::string::npos)
      fail("simulation failed on rank " + std::to_string(plan.ranks[i].rank) + ": " + errors[i]);
  for (std::size_t i = 0; i < errors.size(); ++i)
    if (!errors[i].empty()) fail("simulation failed on rank " + std::to_string(plan.ranks[i].rank) + ": " + errors[i]);
  for (std::size_t i = 0; i < plan.ranks.size(); ++i)
    if (plan.request.to.mesh().contains(plan.ranks[i].rank)) res.destination[plan.ranks[i].rank] = std::move(dst[i]);
  res.bytes_moved = net.bytes_moved();
  return res;
}

namespace {
// The op over terms, in term order (avg: their mean).
double reduce_terms(ReduceOp op, const std::vector<double>& v) {
  double acc = v.front();
  for (std::size_t k = 1; k < v.size(); ++k) {
    switch (op) {
      case ReduceOp::Sum:
      case ReduceOp::Avg: acc += v[k]; break;
      case ReduceOp::Prod: acc *= v[k]; break;
      case ReduceOp::Max: acc = std::max(acc, v[k]); break;
      case ReduceOp::Min: acc = std::min(acc, v[k]); break;
    }
  }
  return op == ReduceOp::Avg ? acc / static_cast<double>(v.size()) : acc;
}

std::string number(double v) {
  char b[40];
  std::snprintf(b, sizeof b, "%.17g", v);
  return b;
}
}  // namespace

std::string verify(const PlanRequest& request, const SimulationResult& r) {
  auto ref = reference_destination(request.from, request.to);
  for (const auto& [rank, want] : ref) {
    auto it = r.destination.find(rank);
    if (it == r.destination.end()) return "rank " + std::to_string(rank) + ": no destination buffer";
    if (it->second.size() != want.size())
      return "rank " + std::to_string(rank) + ": buffer has " + std::to_string(it->second.size()) +
             " elements, expected " + std::to_string(want.size());
  }
  // A partial destination holds each element as terms that only have to reduce to it (any split
  // of the value over the terms is correct): those slots are checked by reducing, per element and
  // replica, the terms the destination holds. Every other slot (no terms, padding) must equal the
  // reference exactly.
  std::map<std::int64_t, std::vector<char>> reduced;  // rank -> slots checked by reduction
  const ReduceOp op = request.to.layout().reduce_op();
  std::string err;
  if (internal::make_side(request.to).terms > 1) {
    for (const auto& [rank, want] : ref) reduced[rank].assign(want.size(), 0);
    std::vector<double> terms;
    std::vector<std::pair<std::int64_t, std::int64_t>> where;  // (rank, slot) of each term
    for_each_slot(request.to, [&](std::int64_t x, std::int64_t rank, std::int64_t mem, std::int64_t t, std::int64_t T) {
      const auto& got = r.destination.at(rank);
      terms.push_back(got[static_cast<std::size_t>(mem)]);
      where.emplace_back(rank, mem);
      reduced[rank][static_cast<std::size_t>(mem)] = 1;
      if (t + 1 < T) return;
      const double v = reduce_terms(op, terms), want = static_cast<double>(x);
      // Exact for sum/max/min/prod (small integers); avg divides, so it may round.
      const bool ok = op == ReduceOp::Avg ? std::abs(v - want) <= 1e-9 * std::max(1.0, std::abs(want)) : v == want;
      if (!ok && err.empty()) {
        err = "element " + std::to_string(x) + ": its " + std::to_string(T) + " " + std::string(to_string(op)) +
              " terms (";
        for (std::size_t k = 0; k < terms.size(); ++k)
          err += (k ? ", " : "") + number(terms[k]) + " at rank " + std::to_string(where[k].first) + " slot " +
                 std::to_string(where[k].second);
        err += ") reduce to " + number(v) + ", expected " + number(want);
      }
      terms.clear();
      where.clear();
    });
  }
  if (!err.empty()) return err;
  for (const auto& [rank, want] : ref) {
    const auto& got = r.destination.at(rank);
    const auto red = reduced.find(rank);
    for (std::size_t i = 0; i < want.size(); ++i) {
      if (red != reduced.end() && red->second[i]) continue;
      bool same = (std::isnan(want[i]) && std::isnan(got[i])) || want[i] == got[i];
      if (!same)
        return "rank " + std::to_string(rank) + " slot " + std::to_string(i) + ": expected " + std::to_string(want[i]) +
               ", got " + std::to_string(got[i]);
    }
  }
  return "";
}

}  // namespace axe
