// Solving a side's device coordinate for the digits of a refined box (DESIGN §4.2).
#include <algorithm>
#include <numeric>

#include "dist/internal.hpp"

namespace axe::internal {

std::int64_t row_major(const std::vector<std::int64_t>& digits, const std::vector<SideIter>& it) {
  std::int64_t x = 0;
  for (std::size_t i = 0; i < it.size(); ++i) x = x * it[i].extent + digits[i];
  return x;
}

// Solves one side's device coordinate `c` for box b: every assignment of the factors on that
// side's device axes and of its replica and term digits. `mem_rep_all`: enumerate replica digits
// on `m` (destination: every slot needs data) or fix them to 0 (source: one copy sends).
std::vector<Assign> solve_side(const GBox& b, const Side& s, bool is_src,
                               const std::vector<std::int64_t>& c, bool mem_rep_all) {
  const std::size_t nf = b.factors.size();
  Assign base;
  base.fd.assign(nf, -1);
  base.r.assign(s.rep.size(), 0);
  base.t.assign(s.part.size(), 0);
  std::vector<Assign> out{base};
  for (int a = 0; a <= s.naxes; ++a) {
    std::vector<std::pair<std::int64_t, std::int64_t>> vars;
    std::vector<VarRef> refs;
    if (a < s.naxes) {
      for (std::size_t i = 0; i < nf; ++i) {
        const Factor& m = b.factors[i];
        if ((is_src ? m.s_axis : m.d_axis) == a) {
          vars.push_back({m.extent, is_src ? m.s_stride : m.d_stride});
          refs.push_back({VarRef::FactorV, i});
        }
      }
    }
    for (std::size_t i = 0; i < s.rep.size(); ++i)
      if (s.rep[i].axis == a && (a < s.naxes || mem_rep_all)) {
        vars.push_back({s.rep[i].extent, s.rep[i].stride});
        refs.push_back({VarRef::RepV, i});
      }
    for (std::size_t i = 0; i < s.part.size(); ++i)
      if (s.part[i].axis == a) {
        vars.push_back({s.part[i].extent, s.part[i].stride});
        refs.push_back({VarRef::PartV, i});
      }
    if (vars.empty()) {
      if (a < s.naxes && c[static_cast<std::size_t>(a)] != (is_src ? b.s_base : b.d_base)[static_cast<std::size_t>(a)])
        return {};
      continue;
    }
    std::vector<std::vector<std::int64_t>> sols;
    if (a < s.naxes) {
      const std::int64_t base_a = (is_src ? b.s_base : b.d_base)[static_cast<std::size_t>(a)];
      sols = solve(vars, c[static_cast<std::size_t>(a)] - base_a);
      if (sols.empty()) return {};
    } else {
      std::vector<std::int64_t> ext;
      for (auto& v : vars) ext.push_back(v.first);
      odometer(ext, [&](const std::vector<std::int64_t>& d) { sols.push_back(d); });
    }
    std::vector<Assign> next;
    next.reserve(out.size() * sols.size());
    for (const auto& o : out)
      for (const auto& sol : sols) {
        Assign x = o;
        for (std::size_t v = 0; v < refs.size(); ++v) {
          auto& slot = refs[v].kind == VarRef::FactorV ? x.fd : refs[v].kind == VarRef::RepV ? x.r : x.t;
          slot[refs[v].index] = sol[v];
        }
        next.push_back(std::move(x));
      }
    out.swap(next);
  }
  return out;
}

std::vector<std::vector<std::int64_t>> solve(
    const std::vector<std::pair<std::int64_t, std::int64_t>>& vars, std::int64_t target) {
  const std::size_t n = vars.size();
  std::vector<std::size_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return std::abs(vars[a].second) > std::abs(vars[b].second);
  });
  // lo[i], hi[i]: the range reachable by vars order[i..].
  std::vector<std::int64_t> lo(n + 1, 0), hi(n + 1, 0);
  for (std::size_t i = n; i-- > 0;) {
    auto [e, s] = vars[order[i]];
    std::int64_t span = s * (e - 1);
    lo[i] = lo[i + 1] + std::min<std::int64_t>(0, span);
    hi[i] = hi[i + 1] + std::max<std::int64_t>(0, span);
  }
  std::vector<std::vector<std::int64_t>> out;
  std::vector<std::int64_t> cur(n, 0);
  auto rec = [&](auto&& self, std::size_t i, std::int64_t rest) -> void {
    if (rest < lo[i] || rest > hi[i]) return;
    if (i == n) {
      if (rest == 0) out.push_back(cur);
      return;
    }
    auto [e, s] = vars[order[i]];
    if (s == 0) {
      for (std::int64_t dgt = 0; dgt < e; ++dgt) {
        cur[order[i]] = dgt;
        self(self, i + 1, rest);
      }
      return;
    }
    // Only digits leaving a reachable remainder.
    std::int64_t a = (rest - hi[i + 1]), b = (rest - lo[i + 1]);
    std::int64_t dlo, dhi;
    if (s > 0) {
      dlo = a <= 0 ? 0 : (a + s - 1) / s;
      dhi = b < 0 ? -1 : b / s;
    } else {
      std::int64_t t = -s;  // d*s in [a,b]  <=>  d*t in [-b,-a]
      dlo = -b <= 0 ? 0 : (-b + t - 1) / t;
      dhi = -a < 0 ? -1 : (-a) / t;
    }
    dlo = std::max<std::int64_t>(dlo, 0);
    dhi = std::min<std::int64_t>(dhi, e - 1);
    for (std::int64_t dgt = dlo; dgt <= dhi; ++dgt) {
      cur[order[i]] = dgt;
      self(self, i + 1, rest - dgt * s);
    }
  };
  rec(rec, 0, target);
  return out;
}

void held_regions(const Side& s, std::int64_t rank, std::vector<StridedRegion>& regions,
                  std::vector<std::int64_t>& terms) {
  const Mesh& sm = s.layout->mesh();
  auto idx = sm.find_index(rank);
  if (!idx) return;
  const auto c = sm.coord_of_index(*idx);
  for (const GBox& b : common_boxes(s, s)) {
    for (const Assign& a : solve_side(b, s, true, c, false)) {
      StridedRegion r;
      r.begin = b.begin;
      for (std::size_t i = 0; i < b.factors.size(); ++i) {
        const Factor& m = b.factors[i];
        if (a.fd[i] >= 0) {
          r.begin[static_cast<std::size_t>(m.dim)] += a.fd[i] * m.place;
        } else if (!r.modes.empty() && r.modes.back().dim == m.dim &&
                   r.modes.back().step == m.extent * m.place) {
          r.modes.back().extent *= m.extent;
          r.modes.back().step = m.place;
        } else {
          r.modes.push_back({m.dim, m.extent, m.place});
        }
      }
      regions.push_back(std::move(r));
      terms.push_back(row_major(a.t, s.part));
    }
  }
}

}  // namespace axe::internal
