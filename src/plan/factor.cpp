// Normalising layouts and refining a (source, destination) pair to common factors.
//
// Each logical dim is a mixed-radix number on each side (its D iters, grouped by the padded
// shape). When the place values of both sides form one divisibility chain, the union of the
// chains refines both sides, every refined digit lands on one axis per side, and the logical
// range [0, n) (n <= padded) is a union of at most L boxes in digit space (prefix
// decomposition of n). Otherwise the dim falls back to maximal runs on which both maps are
// affine (the "no common factorisation" case); a run is a one-mode box.
#include <algorithm>
#include <limits>
#include <numeric>
#include <string>
#include <unordered_set>

#include "axe/core/error.hpp"
#include "plan/internal.hpp"

namespace axe::internal {

std::string shape_text(const std::vector<std::int64_t>& v) {
  std::string s = "(";
  for (std::size_t i = 0; i < v.size(); ++i) s += (i ? "," : "") + std::to_string(v[i]);
  return s + ")";
}

namespace {

std::string layout_name(const DistLayout& l) { return "'" + to_string(l.layout()) + "'"; }

int axis_of(const Mesh& mesh, Axis a, const AxeLayout& l) {
  if (a.is_memory()) return static_cast<int>(mesh.ndim());
  auto i = mesh.axis_index(a);
  if (!i)
    fail("layout '" + to_string(l) + "' uses axis '" + std::string(a.name()) +
         "' which is not an axis of mesh " + to_string(mesh));
  return static_cast<int>(*i);
}

}  // namespace

std::vector<std::int64_t> infer_padded(const AxeLayout& l, const std::vector<std::int64_t>& shape) {
  std::int64_t n = 1;
  for (auto e : shape) {
    if (e < 1) fail("global shape " + shape_text(shape) + " has a dim < 1");
    n = checked_mul(n, e, "global shape size");
  }
  if (n == l.size()) return shape;
  std::vector<std::int64_t> padded(shape.size(), 1);
  std::vector<std::int64_t> ext;
  for (const auto& it : l.shard())
    if (it.extent > 1) ext.push_back(it.extent);
  std::size_t j = ext.size();
  for (std::size_t k = shape.size(); k-- > 0;) {
    std::int64_t prod = 1;
    while (prod < shape[k] && j > 0) prod *= ext[--j];
    if (prod < shape[k]) break;
    padded[k] = prod;
  }
  std::int64_t m = 1;
  for (auto e : padded) m *= e;
  if (j != 0 || m != l.size())
    fail("layout '" + to_string(l) + "' of size " + std::to_string(l.size()) +
         " does not admit global shape " + shape_text(shape) +
         " (no padded shape >= it groups the layout's iters)");
  return padded;
}

std::vector<Segment> nest_segments(std::int64_t n, std::int64_t padded, const std::vector<std::int64_t>& parts) {
  std::vector<Segment> out;
  auto rec = [&](auto&& self, std::int64_t size, std::int64_t P, std::size_t level, std::int64_t lbase,
                 std::int64_t pbase) -> void {
    if (size <= 0) return;
    if (level == parts.size()) {
      const std::int64_t shift = pbase - lbase;
      if (!out.empty() && out.back().lo + out.back().len == lbase && out.back().shift == shift)
        out.back().len += size;
      else
        out.push_back({lbase, size, shift});
      return;
    }
    const std::int64_t p = parts[level], c = (size + p - 1) / p, block = P / p;
    for (std::int64_t q = 0; q < p; ++q) {
      const std::int64_t sz = std::clamp<std::int64_t>(size - q * c, 0, c);
      if (sz == 0) break;
      self(self, sz, block, level + 1, lbase + q * c, pbase + q * block);
    }
  };
  rec(rec, n, padded, 0, 0, 0);
  return out;
}

std::vector<Segment> dim_segments(const DistLayout& l, std::size_t k) {
  if (!l.nested() || l.nest()[k].empty()) return {{0, l.shape()[k], 0}};
  return nest_segments(l.shape()[k], l.padded_shape()[k], l.nest()[k]);
}

Side make_side(const DistLayout& dl) {
  const AxeLayout& l = dl.layout();
  const Mesh& mesh = dl.mesh();
  Side s;
  s.layout = &dl;
  s.naxes = static_cast<int>(mesh.ndim());
  const auto& padded = dl.padded_shape();
  s.dims.resize(padded.size());
  std::vector<std::int64_t> need = padded;
  int k = static_cast<int>(padded.size()) - 1;
  auto skip = [&] {
    while (k >= 0 && need[static_cast<std::size_t>(k)] == 1) --k;
  };
  skip();
  const auto& d = l.shard();
  for (std::size_t j = d.size(); j-- > 0;) {
    std::int64_t e = d[j].extent, stride = d[j].stride;
    int axis = axis_of(mesh, d[j].axis, l);
    while (e > 1) {
      if (k < 0)
        fail("layout " + layout_name(dl) + " does not group by padded shape " +
             shape_text(padded) + " (iters left over)");
      std::int64_t& rem = need[static_cast<std::size_t>(k)];
      auto& out = s.dims[static_cast<std::size_t>(k)];
      if (rem % e == 0) {
        out.push_back({e, axis, stride});
        rem /= e;
        e = 1;
      } else if (e % rem == 0) {
        out.push_back({rem, axis, stride});
        stride = checked_mul(stride, rem, "split stride");
        e /= rem;
        rem = 1;
      } else {
        fail("layout " + layout_name(dl) + " does not group by padded shape " +
             shape_text(padded) + ": iter extent " + std::to_string(e) +
             " straddles dim " + std::to_string(k) + " (remaining " + std::to_string(rem) + ")");
      }
      skip();
    }
  }
  for (auto& v : s.dims) std::reverse(v.begin(), v.end());
  for (const auto& it : l.replica())
    if (it.extent > 1) s.rep.push_back({it.extent, axis_of(mesh, it.axis, l), it.stride});
  for (const auto& it : l.partial())
    if (it.extent > 1) s.part.push_back({it.extent, axis_of(mesh, it.axis, l), it.stride});
  s.offset.assign(static_cast<std::size_t>(s.naxes + 1), 0);
  for (const auto& [a, v] : l.offset()) s.offset[static_cast<std::size_t>(axis_of(mesh, a, l))] += v;
  for (const auto& it : s.rep) s.replicas *= it.extent;
  for (const auto& it : s.part) s.terms *= it.extent;
  s.op = l.reduce_op();
  return s;
}

std::int64_t check_side(const Side& s) {
  const DistLayout& dl = *s.layout;
  const Mesh& mesh = dl.mesh();
  std::vector<std::vector<std::pair<std::int64_t, std::int64_t>>> per(
      static_cast<std::size_t>(s.naxes + 1));
  for (const auto& dim : s.dims)
    for (const auto& it : dim) per[static_cast<std::size_t>(it.axis)].push_back({it.extent, it.stride});
  for (const auto& it : s.rep) per[static_cast<std::size_t>(it.axis)].push_back({it.extent, it.stride});
  for (const auto& it : s.part) per[static_cast<std::size_t>(it.axis)].push_back({it.extent, it.stride});
  std::int64_t buffer = 1;
  for (int a = 0; a <= s.naxes; ++a) {
    auto& v = per[static_cast<std::size_t>(a)];
    std::string aname = a == s.naxes ? "m" : std::string(mesh.axes()[static_cast<std::size_t>(a)].name());
    std::int64_t lo = s.offset[static_cast<std::size_t>(a)], hi = lo;
    for (auto [e, st] : v) {
      std::int64_t span = checked_mul(st, e - 1, "span");
      if (span < 0) lo += span; else hi += span;
    }
    if (a < s.naxes) {
      std::int64_t size = mesh.sizes()[static_cast<std::size_t>(a)];
      if (lo < 0 || hi >= size)
        fail("layout " + layout_name(dl) + " puts coordinates [" + std::to_string(lo) + ", " +
             std::to_string(hi) + "] on axis '" + aname + "' of size " + std::to_string(size) +
             " in mesh " + to_string(mesh));
    } else {
      if (lo < 0)
        fail("layout " + layout_name(dl) + " has a negative memory offset " + std::to_string(lo));
      buffer = hi + 1;
    }
    // Injectivity on this axis: nested strides (each at least the span of the smaller ones)
    // are injective; otherwise enumerate.
    std::sort(v.begin(), v.end(), [](auto x, auto y) { return std::abs(x.second) < std::abs(y.second); });
    std::int64_t reach = 1;
    bool nested = true;
    for (auto [e, st] : v) {
      if (st == 0) {
        fail("layout " + layout_name(dl) + " puts " + std::to_string(e) +
             " elements, replicas or terms on one slot (stride 0 on axis '" + aname + "')");
      }
      if (std::abs(st) < reach) nested = false;
      reach += std::abs(st) * (e - 1);
    }
    if (!nested) {
      std::int64_t count = 1;
      for (auto [e, st] : v) count = checked_mul(count, e, "digit count");
      if (count > (std::int64_t{1} << 22))
        fail("layout " + layout_name(dl) + ": cannot prove axis '" + aname +
             "' injective (interleaved strides over " + std::to_string(count) + " slots)");
      std::vector<std::int64_t> vals{0};
      for (auto [e, st] : v) {
        std::vector<std::int64_t> next;
        next.reserve(vals.size() * static_cast<std::size_t>(e));
        for (auto x : vals)
          for (std::int64_t i = 0; i < e; ++i) next.push_back(x + i * st);
        vals.swap(next);
      }
      std::sort(vals.begin(), vals.end());
      if (std::adjacent_find(vals.begin(), vals.end()) != vals.end())
        fail("layout " + layout_name(dl) + " puts two (element, replica, term) on one slot of axis '" +
             aname + "'");
    }
  }
  return buffer;
}

namespace {

struct DimPiece {
  std::vector<Mode> modes;
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

// The refined digits of dim k over [0, n) when both sides' place values form one chain (outer
// first, extent-1 digits kept); sets chain = false otherwise.
std::vector<Mode> chain_modes(const Side& src, const Side& dst, std::size_t k, std::int64_t n, bool& chain) {
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
  std::vector<Mode> modes(u.size());
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
    Mode& m = modes[j];
    m.extent = j == 0 ? (n + u[0] - 1) / u[0] : u[j - 1] / u[j];
    m.dim = static_cast<int>(k);
    m.place = u[j];
    map(si, ws, u[j], src.mem(), m.s_axis, m.s_stride);
    map(di, wd, u[j], dst.mem(), m.d_axis, m.d_stride);
  }
  return modes;
}

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
// P pieces with one more outer mode, so a nested dim costs O(runs of one piece) boxes, not
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
      Mode m;
      m.extent = L[r];
      m.dim = static_cast<int>(k);
      m.place = 1;
      m.s_axis = sax;
      m.s_stride = sst;
      m.d_axis = dax;
      m.d_stride = dst_st;
      p.modes.push_back(m);
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
      // The new outer mode repeats whole periods: coarser than what one period spans.
      if (db < X[start + P - 1] + L[start + P - 1] - X[start]) continue;
      for (std::size_t r = 0; r < P; ++r) {
        DimPiece p = piece(start + r);
        Mode m;
        m.extent = static_cast<std::int64_t>(M);
        m.dim = static_cast<int>(k);
        m.place = db;
        m.s_axis = fa;
        m.s_stride = fs;
        m.d_axis = ga;
        m.d_stride = gs;
        p.modes.insert(p.modes.begin(), m);
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

std::vector<DimPiece> refine_dim(const Side& src, const Side& dst, std::size_t k, std::int64_t n) {
  if ((src.layout->nested() && !src.layout->nest()[k].empty()) ||
      (dst.layout->nested() && !dst.layout->nest()[k].empty()))
    return refine_nested(src, dst, k, n);
  bool chain = false;
  const std::vector<Mode> modes = chain_modes(src, dst, k, n, chain);
  const auto& si = src.dims[k];
  const auto& di = dst.dims[k];
  auto ws = places(si), wd = places(di);
  std::vector<DimPiece> pieces;
  const std::size_t ns = static_cast<std::size_t>(src.naxes + 1), nd = static_cast<std::size_t>(dst.naxes + 1);
  if (chain) {
    const std::size_t L = modes.size();
    auto piece_for = [&](std::size_t j, const std::vector<std::int64_t>& digits, std::int64_t dj) {
      DimPiece p;
      p.s_base.assign(ns, 0);
      p.d_base.assign(nd, 0);
      for (std::size_t i = 0; i < j; ++i) {
        p.s_base[static_cast<std::size_t>(modes[i].s_axis)] += digits[i] * modes[i].s_stride;
        p.d_base[static_cast<std::size_t>(modes[i].d_axis)] += digits[i] * modes[i].d_stride;
        p.begin += digits[i] * modes[i].place;
      }
      Mode mj = modes[j];
      mj.extent = dj;
      if (dj > 1) p.modes.push_back(mj);
      for (std::size_t i = j + 1; i < L; ++i)
        if (modes[i].extent > 1) p.modes.push_back(modes[i]);
      return p;
    };
    if (modes[0].extent * modes[0].place == n) {
      pieces.push_back(piece_for(0, {}, modes[0].extent));
    } else {
      std::vector<std::int64_t> digits(L);
      for (std::size_t j = 0; j < L; ++j) digits[j] = j == 0 ? n / modes[0].place : (n / modes[j].place) % modes[j].extent;
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
    Mode m;
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
      p.modes.push_back(m);
    }
    pieces.push_back(std::move(p));
    i += len;
  }
  return pieces;
}

}  // namespace

namespace {
std::string axis_name(const Side& s, int a) {
  return a == s.naxes ? std::string("m") : std::string(s.layout->mesh().axes()[static_cast<std::size_t>(a)].name());
}
}  // namespace

Pair make_pair(const DistLayout& from, const DistLayout& to) {
  if (from.shape() != to.shape())
    fail("source layout " + layout_name(from) + " has global shape " + shape_text(from.shape()) +
         " but destination layout " + layout_name(to) + " has " + shape_text(to.shape()));
  return make_pair(std::make_shared<const DistLayout>(from), std::make_shared<const DistLayout>(to));
}

Pair make_pair(std::shared_ptr<const DistLayout> f, std::shared_ptr<const DistLayout> t) {
  const DistLayout& from = *f;
  const DistLayout& to = *t;
  if (from.shape() != to.shape())
    fail("source layout " + layout_name(from) + " has global shape " + shape_text(from.shape()) +
         " but destination layout " + layout_name(to) + " has " + shape_text(to.shape()));
  Pair p;
  p.src = make_side(*f);
  p.src.owner = f;
  p.dst = make_side(*t);
  p.dst.owner = t;
  bool sp = !p.src.part.empty(), dp = !p.dst.part.empty();
  auto cannot = [&](const std::string& why) {
    fail("partial destination " + layout_name(to) + " cannot be produced from source " + layout_name(from) + ": " +
         why);
  };
  if (sp || dp) {
    if (sp && dp && p.src.op != p.dst.op)
      cannot("the reductions differ (" + std::string(to_string(p.src.op)) + " vs " + std::string(to_string(p.dst.op)) +
             "); a " + std::string(to_string(p.dst.op)) + "-partial value cannot be made from " +
             std::string(to_string(p.src.op)) + " terms without reducing them first");
    p.op = sp ? p.src.op : p.dst.op;
    std::vector<bool> taken(p.src.part.size(), false);
    std::size_t unmatched = 0;
    for (const auto& it : p.dst.part) {
      std::int64_t found = -1;
      for (std::size_t j = 0; j < p.src.part.size() && found < 0; ++j)
        if (!taken[j] && axis_name(p.src, p.src.part[j].axis) == axis_name(p.dst, it.axis) &&
            p.src.part[j].extent == it.extent && p.src.part[j].stride == it.stride) {
          taken[j] = true;
          found = static_cast<std::int64_t>(j);
        }
      unmatched += found < 0;
      p.match.push_back(found);
    }
    for (std::size_t j = 0; j < p.src.part.size(); ++j)
      if (!taken[j]) {
        p.reduced.push_back(j);
        p.terms *= p.src.part[j].extent;
      }
    p.partial = PartialMode::Reduce;
    if (sp && dp && unmatched > 0 && !p.reduced.empty() && p.src.terms == p.dst.terms) {
      // Same number of terms on other axes: move the terms instead of reducing and refilling.
      p.partial = PartialMode::Match;
      p.match.clear();
      p.reduced.clear();
      p.terms = 1;
    }
  }
  const auto& shape = from.shape();
  p.nested = from.nested() || to.nested();
  std::vector<std::vector<DimPiece>> per_dim;
  for (std::size_t k = 0; k < shape.size(); ++k) per_dim.push_back(refine_dim(p.src, p.dst, k, shape[k]));
  // Cartesian product of the dims' pieces.
  GBox start;
  start.s_base = p.src.offset;
  start.d_base = p.dst.offset;
  start.begin.assign(shape.size(), 0);
  std::vector<GBox> boxes{start};
  for (std::size_t k = 0; k < per_dim.size(); ++k) {
    std::vector<GBox> next;
    next.reserve(boxes.size() * per_dim[k].size());
    for (const auto& b : boxes)
      for (const auto& dp2 : per_dim[k]) {
        GBox g = b;
        g.modes.insert(g.modes.end(), dp2.modes.begin(), dp2.modes.end());
        for (std::size_t a = 0; a < g.s_base.size(); ++a) g.s_base[a] += dp2.s_base[a];
        for (std::size_t a = 0; a < g.d_base.size(); ++a) g.d_base[a] += dp2.d_base[a];
        g.begin[k] = dp2.begin;
        next.push_back(std::move(g));
      }
    boxes.swap(next);
  }
  p.boxes = std::move(boxes);
  const auto& ps = from.padded_shape();
  const auto& pd = to.padded_shape();
  for (std::size_t k = 0; k < shape.size(); ++k) {
    bool chain = true;
    for (const Mode& m : chain_modes(p.src, p.dst, k, std::max(ps[k], pd[k]), chain))
      if (m.extent > 1) p.full_modes.push_back(m);
    p.chain = p.chain && chain;
    p.even.push_back(ps[k] == shape[k] && pd[k] == shape[k]);
  }
  return p;
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


}  // namespace axe::internal
