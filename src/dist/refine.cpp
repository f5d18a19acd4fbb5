// Refining two sides to common factors: a (source, destination) pair, or one layout and itself
// (its local shards).
//
// Each logical dim is a mixed-radix number on each side (its D iters, grouped by the padded
// shape). When the place values of both sides form one divisibility chain, the union of the
// chains refines both sides, every refined digit lands on one axis per side, and the logical
// range [0, n) (n <= padded) is a union of at most L boxes in digit space (prefix
// decomposition of n). Otherwise the dim falls back to maximal runs on which both maps are
// affine (the "no common factorisation" case); a run is a one-factor box.
#include <algorithm>
#include <limits>
#include <numeric>

#include "axe/core/error.hpp"
#include "dist/internal.hpp"

namespace axe::internal {

namespace {

// One dim's part of the refinement of (src, dst): its refined digits on top of fixed bases.
struct DimPiece {
  std::vector<Factor> factors;
  std::vector<std::int64_t> s_base, d_base;
  std::int64_t begin = 0;
};

// Place values of a side's iters of one dim, outer first.
std::vector<std::int64_t> places(const std::vector<SideIter>& it) {
  std::vector<std::int64_t> w(it.size());
  std::int64_t p = 1;
  for (std::size_t j = it.size(); j-- > 0;) {
    w[j] = p;
    p *= it[j].extent;
  }
  return w;
}

// Coordinate contribution of logical index i of one dim on one side.
void side_coord(const std::vector<SideIter>& it, const std::vector<std::int64_t>& w, std::int64_t i,
                std::vector<std::int64_t>& out) {
  for (std::size_t j = 0; j < it.size(); ++j)
    out[static_cast<std::size_t>(it[j].axis)] += ((i / w[j]) % it[j].extent) * it[j].stride;
}

}  // namespace

// The refined digits of dim k over [0, n) when both sides' place values form one chain (outer
// first, extent-1 digits kept); sets chain = false otherwise.
std::vector<Factor> chain_factors(const Side& src, const Side& dst, std::size_t k, std::int64_t n, bool& chain) {
  const auto& si = src.dims[k];
  const auto& di = dst.dims[k];
  auto ws = places(si), wd = places(di);
  std::vector<std::int64_t> u(ws.begin(), ws.end());
  u.insert(u.end(), wd.begin(), wd.end());
  u.push_back(1);
  std::sort(u.begin(), u.end());
  u.erase(std::unique(u.begin(), u.end()), u.end());
  chain = true;
  for (std::size_t j = 1; j < u.size(); ++j) chain = chain && u[j] % u[j - 1] == 0;
  if (!chain) return {};
  std::reverse(u.begin(), u.end());
  std::vector<Factor> factors(u.size());
  auto map = [&](const std::vector<SideIter>& it, const std::vector<std::int64_t>& w, std::int64_t uj, int mem,
                 int& axis, std::int64_t& stride) {
    axis = mem;
    stride = 0;
    for (std::size_t t = 0; t < it.size(); ++t)
      if (w[t] <= uj) {
        axis = it[t].axis;
        stride = it[t].stride * (uj / w[t]);
        return;
      }
  };
  for (std::size_t j = 0; j < u.size(); ++j) {
    Factor& m = factors[j];
    m.extent = j == 0 ? (n + u[0] - 1) / u[0] : u[j - 1] / u[j];
    m.dim = static_cast<int>(k);
    m.place = u[j];
    map(si, ws, u[j], src.mem(), m.s_axis, m.s_stride);
    map(di, wd, u[j], dst.mem(), m.d_axis, m.d_stride);
  }
  return factors;
}

namespace {

// The innermost affine block of one side's dim: the trailing iters that continue one another on
// one axis (B padded indexes move by `stride` on `axis`). No iters: an unbounded block.
void affine_block(const std::vector<SideIter>& it, int mem, std::int64_t& B, int& axis, std::int64_t& stride) {
  if (it.empty()) {
    B = std::numeric_limits<std::int64_t>::max() / 4;
    axis = mem;
    stride = 0;
    return;
  }
  B = it.back().extent;
  axis = it.back().axis;
  stride = it.back().stride;
  for (std::size_t t = it.size() - 1; t-- > 0;) {
    if (it[t].axis != axis || it[t].stride != stride * B) break;
    B *= it[t].extent;
  }
}

// A dim with a nested bound on either side: the logical range is cut where either side's
// padded index jumps (nest_segments) and where either side leaves its innermost affine block;
// each run is one mode (logical place 1). Runs repeat: those of one nested chunk level recur at
// every level-1 piece, shifted by a constant logical step and constant single-axis coordinate
// steps on both sides; such an arithmetic progression (period P runs, M periods) is folded into
// P pieces with one more outer factor, so a nested dim costs O(runs of one piece) boxes, not
// O(shards). Runs outside a progression stay as they are. Work: O(runs) plain integers.
std::vector<DimPiece> refine_nested(const Side& src, const Side& dst, std::size_t k, std::int64_t n) {
  const auto& si = src.dims[k];
  const auto& di = dst.dims[k];
  auto ws = places(si), wd = places(di);
  const auto ss = dim_segments(*src.layout, k), ds = dim_segments(*dst.layout, k);
  std::int64_t Bs = 1, Bd = 1, sst = 0, dst_st = 0;
  int sax = 0, dax = 0;
  affine_block(si, src.mem(), Bs, sax, sst);
  affine_block(di, dst.mem(), Bd, dax, dst_st);
  const std::size_t ns = static_cast<std::size_t>(src.naxes + 1), nd = static_cast<std::size_t>(dst.naxes + 1);
  // Runs as plain integers: logical begin, length, and both sides' coordinates (flat arrays).
  std::vector<std::int64_t> X, L, SB, DB;
  std::vector<std::int64_t> cs(ns), cd(nd);
  std::size_t i = 0, j = 0;
  std::int64_t x = 0;
  while (x < n) {
    while (ss[i].lo + ss[i].len <= x) ++i;
    while (ds[j].lo + ds[j].len <= x) ++j;
    const std::int64_t end = std::min(ss[i].lo + ss[i].len, ds[j].lo + ds[j].len);
    std::int64_t a = x + ss[i].shift, b = x + ds[j].shift;
    while (x < end) {
      const std::int64_t len = std::min({end - x, Bs - a % Bs, Bd - b % Bd});
      std::fill(cs.begin(), cs.end(), 0);
      std::fill(cd.begin(), cd.end(), 0);
      side_coord(si, ws, a, cs);
      side_coord(di, wd, b, cd);
      X.push_back(x);
      L.push_back(len);
      SB.insert(SB.end(), cs.begin(), cs.end());
      DB.insert(DB.end(), cd.begin(), cd.end());
      x += len;
      a += len;
      b += len;
    }
  }
  const std::size_t N = X.size();
  auto piece = [&](std::size_t r) {
    DimPiece p;
    p.s_base.assign(SB.begin() + static_cast<std::ptrdiff_t>(r * ns), SB.begin() + static_cast<std::ptrdiff_t>((r + 1) * ns));
    p.d_base.assign(DB.begin() + static_cast<std::ptrdiff_t>(r * nd), DB.begin() + static_cast<std::ptrdiff_t>((r + 1) * nd));
    p.begin = X[r];
    if (L[r] > 1) {
      Factor m;
      m.extent = L[r];
      m.dim = static_cast<int>(k);
      m.place = 1;
      m.s_axis = sax;
      m.s_stride = sst;
      m.d_axis = dax;
      m.d_stride = dst_st;
      p.factors.push_back(m);
    }
    return p;
  };
  // The single axis (and step) on which two coordinate rows differ; false unless exactly one.
  auto one_axis = [](const std::int64_t* u, const std::int64_t* v, std::size_t len, int& axis, std::int64_t& step) {
    int touched = 0;
    for (std::size_t t = 0; t < len; ++t)
      if (u[t] != v[t]) {
        ++touched;
        axis = static_cast<int>(t);
        step = v[t] - u[t];
      }
    return touched == 1;
  };
  std::vector<DimPiece> out;
  std::size_t start = 0;
  std::size_t budget = 8 * N + 4096;  // period trials; bounds the work where nothing repeats
  while (start < N) {
    const std::size_t left = N - start;
    bool folded = false;
    for (std::size_t P = 1; left >= 4 && budget > 0 && P <= std::min<std::size_t>(left / 2, 512); ++P, --budget) {
      int fa = 0, ga = 0;
      std::int64_t fs = 0, gs = 0;
      if (!one_axis(&SB[start * ns], &SB[(start + P) * ns], ns, fa, fs) ||
          !one_axis(&DB[start * nd], &DB[(start + P) * nd], nd, ga, gs))
        continue;
      const std::int64_t db = X[start + P] - X[start];
      auto step_ok = [&](std::size_t u) {
        const std::size_t v = u + P;
        if (X[v] - X[u] != db || L[v] != L[u]) return false;
        for (std::size_t t = 0; t < ns; ++t)
          if (SB[v * ns + t] - SB[u * ns + t] != (static_cast<int>(t) == fa ? fs : 0)) return false;
        for (std::size_t t = 0; t < nd; ++t)
          if (DB[v * nd + t] - DB[u * nd + t] != (static_cast<int>(t) == ga ? gs : 0)) return false;
        return true;
      };
      std::size_t M = 1;
      while ((M + 1) * P <= left) {
        bool ok = true;
        for (std::size_t r = 0; r < P && ok; ++r) ok = step_ok(start + (M - 1) * P + r);
        if (!ok) break;
        ++M;
      }
      if (M < 2) continue;
      // The new outer factor repeats whole periods: coarser than what one period spans.
      if (db < X[start + P - 1] + L[start + P - 1] - X[start]) continue;
      for (std::size_t r = 0; r < P; ++r) {
        DimPiece p = piece(start + r);
        Factor m;
        m.extent = static_cast<std::int64_t>(M);
        m.dim = static_cast<int>(k);
        m.place = db;
        m.s_axis = fa;
        m.s_stride = fs;
        m.d_axis = ga;
        m.d_stride = gs;
        p.factors.insert(p.factors.begin(), m);
        out.push_back(std::move(p));
      }
      start += M * P;
      folded = true;
      break;
    }
    if (!folded) out.push_back(piece(start++));
  }
  return out;
}

// Dim k's pieces: the common chain's prefix decomposition of [0, n), the runs of a nested bound,
// or maximal affine runs when there is no common factorisation.
std::vector<DimPiece> refine_dim(const Side& src, const Side& dst, std::size_t k, std::int64_t n) {
  if ((src.layout->nested() && !src.layout->nest()[k].empty()) ||
      (dst.layout->nested() && !dst.layout->nest()[k].empty()))
    return refine_nested(src, dst, k, n);
  bool chain = false;
  const std::vector<Factor> factors = chain_factors(src, dst, k, n, chain);
  const auto& si = src.dims[k];
  const auto& di = dst.dims[k];
  auto ws = places(si), wd = places(di);
  std::vector<DimPiece> pieces;
  const std::size_t ns = static_cast<std::size_t>(src.naxes + 1), nd = static_cast<std::size_t>(dst.naxes + 1);
  if (chain) {
    const std::size_t L = factors.size();
    auto piece_for = [&](std::size_t j, const std::vector<std::int64_t>& digits, std::int64_t dj) {
      DimPiece p;
      p.s_base.assign(ns, 0);
      p.d_base.assign(nd, 0);
      for (std::size_t i = 0; i < j; ++i) {
        p.s_base[static_cast<std::size_t>(factors[i].s_axis)] += digits[i] * factors[i].s_stride;
        p.d_base[static_cast<std::size_t>(factors[i].d_axis)] += digits[i] * factors[i].d_stride;
        p.begin += digits[i] * factors[i].place;
      }
      Factor mj = factors[j];
      mj.extent = dj;
      if (dj > 1) p.factors.push_back(mj);
      for (std::size_t i = j + 1; i < L; ++i)
        if (factors[i].extent > 1) p.factors.push_back(factors[i]);
      return p;
    };
    if (factors[0].extent * factors[0].place == n) {
      pieces.push_back(piece_for(0, {}, factors[0].extent));
    } else {
      std::vector<std::int64_t> digits(L);
      for (std::size_t j = 0; j < L; ++j) digits[j] = j == 0 ? n / factors[0].place : (n / factors[j].place) % factors[j].extent;
      for (std::size_t j = 0; j < L; ++j)
        if (digits[j] > 0) pieces.push_back(piece_for(j, digits, digits[j]));
    }
    return pieces;
  }
  // No common factorisation: maximal runs where both sides move by a constant single-axis step.
  std::vector<std::int64_t> cs(ns), cd(nd), ps(ns), pd(nd);
  auto coords = [&](std::int64_t i, std::vector<std::int64_t>& a, std::vector<std::int64_t>& b) {
    std::fill(a.begin(), a.end(), 0);
    std::fill(b.begin(), b.end(), 0);
    side_coord(si, ws, i, a);
    side_coord(di, wd, i, b);
  };
  auto single = [](const std::vector<std::int64_t>& x, const std::vector<std::int64_t>& y, int& axis,
                   std::int64_t& step) {
    int touched = 0;
    for (std::size_t a = 0; a < x.size(); ++a)
      if (x[a] != y[a]) {
        ++touched;
        axis = static_cast<int>(a);
        step = y[a] - x[a];
      }
    return touched == 1;
  };
  std::int64_t i = 0;
  while (i < n) {
    DimPiece p;
    coords(i, cs, cd);
    p.s_base = cs;
    p.d_base = cd;
    p.begin = i;
    Factor m;
    m.dim = static_cast<int>(k);
    m.place = 1;
    std::int64_t len = 1;
    ps = cs;
    pd = cd;
    while (i + len < n) {
      coords(i + len, cs, cd);
      int sa = 0, da = 0;
      std::int64_t ss = 0, dstep = 0;
      if (!single(ps, cs, sa, ss) || !single(pd, cd, da, dstep)) break;
      if (len == 1) {
        m.s_axis = sa;
        m.s_stride = ss;
        m.d_axis = da;
        m.d_stride = dstep;
      } else if (sa != m.s_axis || ss != m.s_stride || da != m.d_axis || dstep != m.d_stride) {
        break;
      }
      ps = cs;
      pd = cd;
      ++len;
    }
    if (len > 1) {
      m.extent = len;
      p.factors.push_back(m);
    }
    pieces.push_back(std::move(p));
    i += len;
  }
  return pieces;
}

}  // namespace

std::vector<GBox> common_boxes(const Side& src, const Side& dst) {
  const auto& shape = src.layout->shape();
  std::vector<std::vector<DimPiece>> per_dim;
  for (std::size_t k = 0; k < shape.size(); ++k) per_dim.push_back(refine_dim(src, dst, k, shape[k]));
  // Cartesian product of the dims' pieces.
  GBox start;
  start.s_base = src.offset;
  start.d_base = dst.offset;
  start.begin.assign(shape.size(), 0);
  std::vector<GBox> boxes{start};
  for (std::size_t k = 0; k < per_dim.size(); ++k) {
    std::vector<GBox> next;
    next.reserve(boxes.size() * per_dim[k].size());
    for (const auto& b : boxes)
      for (const auto& dp2 : per_dim[k]) {
        GBox g = b;
        g.factors.insert(g.factors.end(), dp2.factors.begin(), dp2.factors.end());
        for (std::size_t a = 0; a < g.s_base.size(); ++a) g.s_base[a] += dp2.s_base[a];
        for (std::size_t a = 0; a < g.d_base.size(); ++a) g.d_base[a] += dp2.d_base[a];
        g.begin[k] = dp2.begin;
        next.push_back(std::move(g));
      }
    boxes.swap(next);
  }
  return boxes;
}

}  // namespace axe::internal
