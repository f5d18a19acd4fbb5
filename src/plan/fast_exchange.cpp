// Closed-form exchanges of recognised collectives and local slices (DESIGN §4.4): each member of
// the rank's group is visited once, and every refined box is placed arithmetically from the
// member's coordinate.
#include <algorithm>
#include <optional>
#include <utility>

#include "plan/internal.hpp"

namespace axe::internal {

namespace {

// One unknown of a side's device coordinate on one axis: a refined digit, a replica or a term.
struct Var {
  VarRef::Kind kind;
  std::size_t index;
  std::int64_t extent, stride;
};

// Per box, what the closed form needs: the box with only its (m, m) digits free (rank-independent),
// and per device axis of each side the unknowns, largest stride first (decoded greedily).
struct FastBox {
  Transfer tmpl;
  std::vector<std::vector<Var>> s_vars, d_vars;
  // (refined digit, stride): digits on a mesh axis on one side and on `m` on the other, which
  // shift the box's offset on the `m` side.
  std::vector<std::pair<std::size_t, std::int64_t>> s_off, d_off;
  std::int64_t elements = 0;
};

// Greedy mixed-radix decode of r over nested positive strides; false when r is not reachable.
bool decode_axis(std::int64_t r, const std::vector<Var>& vars, std::vector<std::int64_t>& fd,
                 std::vector<std::int64_t>& rep, std::vector<std::int64_t>& term) {
  for (const Var& v : vars) {
    std::int64_t d = r >= 0 ? r / v.stride : -1;
    if (d < 0 || d >= v.extent) return false;
    r -= d * v.stride;
    auto& slot = v.kind == VarRef::FactorV ? fd : v.kind == VarRef::RepV ? rep : term;
    if (v.kind == VarRef::FactorV && slot[v.index] >= 0 && slot[v.index] != d) return false;
    slot[v.index] = d;
  }
  return r == 0;
}

// Unknowns of one side on each device axis; false when a stride is negative or not nested.
bool side_vars(const GBox& b, const Side& s, bool is_src, std::vector<std::vector<Var>>& out) {
  out.assign(static_cast<std::size_t>(s.naxes), {});
  for (std::size_t i = 0; i < b.factors.size(); ++i) {
    const Factor& m = b.factors[i];
    int a = is_src ? m.s_axis : m.d_axis;
    if (a < s.naxes) out[static_cast<std::size_t>(a)].push_back({VarRef::FactorV, i, m.extent, is_src ? m.s_stride : m.d_stride});
  }
  for (std::size_t i = 0; i < s.rep.size(); ++i) {
    if (s.rep[i].axis == s.naxes) return false;
    out[static_cast<std::size_t>(s.rep[i].axis)].push_back({VarRef::RepV, i, s.rep[i].extent, s.rep[i].stride});
  }
  for (std::size_t i = 0; i < s.part.size(); ++i) {
    if (s.part[i].axis == s.naxes) return false;
    out[static_cast<std::size_t>(s.part[i].axis)].push_back({VarRef::PartV, i, s.part[i].extent, s.part[i].stride});
  }
  for (auto& v : out) {
    std::sort(v.begin(), v.end(), [](const Var& x, const Var& y) { return x.stride > y.stride; });
    std::int64_t reach = 1;
    for (std::size_t j = v.size(); j-- > 0;) {
      if (v[j].stride < reach) return false;  // also rejects <= 0
      reach = v[j].stride * v[j].extent;
    }
  }
  return true;
}

}  // namespace

std::optional<Exchange> fast_exchange(const Pair& p, std::int64_t rank, const std::vector<Axis>& axes,
                                      StepKind kind) {
  const Mesh& mesh = p.src.layout->mesh();
  if (!(mesh == p.dst.layout->mesh())) return std::nullopt;
  if (p.partial == PartialMode::Match) return std::nullopt;
  for (auto m : p.match)
    if (m < 0) return std::nullopt;  // filled terms
  const int mem = p.src.naxes;
  std::vector<FastBox> fb(p.boxes.size());
  for (std::size_t bi = 0; bi < p.boxes.size(); ++bi) {
    const GBox& b = p.boxes[bi];
    if (!side_vars(b, p.src, true, fb[bi].s_vars) || !side_vars(b, p.dst, false, fb[bi].d_vars)) return std::nullopt;
    Transfer& t = fb[bi].tmpl;
    t.src_offset = b.s_base[static_cast<std::size_t>(mem)];
    t.dst_offset = b.d_base[static_cast<std::size_t>(mem)];
    for (const Factor& m : b.factors) {
      if (m.s_axis != mem || m.d_axis != mem) continue;
      if (!t.extents.empty() && t.src_strides.back() == m.extent * m.s_stride &&
          t.dst_strides.back() == m.extent * m.d_stride) {
        t.extents.back() *= m.extent;
        t.src_strides.back() = m.s_stride;
        t.dst_strides.back() = m.d_stride;
      } else {
        t.extents.push_back(m.extent);
        t.src_strides.push_back(m.s_stride);
        t.dst_strides.push_back(m.d_stride);
      }
    }
  }
  Exchange ex;
  auto me = mesh.find_index(rank);
  if (!me) return ex;
  const std::vector<std::int64_t> c = mesh.coord_of_index(*me);
  std::vector<std::size_t> gaxes;
  for (Axis a : axes) gaxes.push_back(*mesh.axis_index(a));
  const bool self_only = kind == StepKind::LocalCopy;
  const bool reduce = p.partial == PartialMode::Reduce && !p.reduced.empty();
  // Per box, the refined digits that fix an offset in `m` on one side only, and the box's size.
  for (std::size_t bi = 0; bi < p.boxes.size(); ++bi) {
    FastBox& f = fb[bi];
    const GBox& b = p.boxes[bi];
    for (std::size_t i = 0; i < b.factors.size(); ++i) {
      const Factor& m = b.factors[i];
      if (m.s_axis == mem && m.d_axis != mem) f.s_off.push_back({i, m.s_stride});
      if (m.d_axis == mem && m.s_axis != mem) f.d_off.push_back({i, m.d_stride});
    }
    f.elements = f.tmpl.elements();
  }
  std::vector<std::int64_t> fd, rs, ts, rd, td;
  fd.reserve(16);
  rs.assign(p.src.rep.size(), 0);
  ts.assign(p.src.part.size(), 0);
  rd.assign(p.dst.rep.size(), 0);
  td.assign(p.dst.part.size(), 0);
  // Where box bi lands when it moves from the rank at source coordinate cs to the rank at
  // destination coordinate cd (false: it does not). Every replica and term digit is on a mesh
  // axis here (side_vars), so a successful decode sets all of rs, ts, rd, td.
  struct Hit {
    std::int64_t src_offset = 0, dst_offset = 0, term = 0;
  };
  auto between = [&](std::size_t bi, const std::vector<std::int64_t>& cs, const std::vector<std::int64_t>& cd,
                     Hit& h) -> bool {
    const GBox& b = p.boxes[bi];
    const FastBox& f = fb[bi];
    fd.assign(b.factors.size(), -1);
    for (int a = 0; a < mem; ++a) {
      const auto ua = static_cast<std::size_t>(a);
      if (!decode_axis(cs[ua] - b.s_base[ua], f.s_vars[ua], fd, rs, ts)) return false;
      if (!decode_axis(cd[ua] - b.d_base[ua], f.d_vars[ua], fd, rd, td)) return false;
    }
    for (std::size_t i = 0; i < p.match.size(); ++i)
      if (td[i] != ts[static_cast<std::size_t>(p.match[i])]) return false;
    h.src_offset = f.tmpl.src_offset;
    h.dst_offset = f.tmpl.dst_offset;
    for (auto [i, stride] : f.s_off) h.src_offset += fd[i] * stride;
    for (auto [i, stride] : f.d_off) h.dst_offset += fd[i] * stride;
    h.term = 0;
    if (reduce)
      for (auto j : p.reduced) h.term = h.term * p.src.part[j].extent + ts[j];
    return true;
  };
  // The box built in place from the template (no temporary, no zeroing first).
  auto emit = [&](std::vector<Transfer>& list, const FastBox& f, const Hit& h) {
    // Braces, not emplace_back's parentheses: aggregate init from a parenthesised list needs
    // clang 16, and the fuzzer builds with clang 14.
    list.push_back(Transfer{f.tmpl.extents, h.src_offset, f.tmpl.src_strides, h.dst_offset, f.tmpl.dst_strides, h.term});
  };
  // Members of the group (Mesh::group), visited by ascending rank so messages come out sorted.
  std::int64_t g = 1;
  for (auto a : gaxes) g *= mesh.sizes()[a];
  if (self_only) g = 1;
  // (rank, index in group order). Kept per thread: freeing a temporary this large (64 KiB at
  // 4096 ranks) while the plan's many small blocks are live makes glibc consolidate the heap.
  thread_local std::vector<std::pair<std::int64_t, std::int64_t>> members;
  members.clear();
  members.reserve(static_cast<std::size_t>(g));
  std::vector<std::int64_t> other = c;
  auto member_coord = [&](std::int64_t j) {
    for (std::size_t k = gaxes.size(); k-- > 0 && !self_only;) {
      other[gaxes[k]] = j % mesh.sizes()[gaxes[k]];
      j /= mesh.sizes()[gaxes[k]];
    }
  };
  // Member j's device index: this rank's, with the group axes' digits replaced (row-major).
  std::vector<std::int64_t> place(mesh.ndim(), 1);
  for (std::size_t k = mesh.ndim(); k-- > 1;) place[k - 1] = place[k] * mesh.sizes()[k];
  std::int64_t base = *me;
  for (auto a : gaxes) base -= c[a] * place[a];
  if (!self_only) ex.group.reserve(static_cast<std::size_t>(g));
  for (std::int64_t j = 0; j < g; ++j) {
    std::int64_t index = base, rest = j;
    for (std::size_t k = gaxes.size(); k-- > 0 && !self_only;) {
      index += rest % mesh.sizes()[gaxes[k]] * place[gaxes[k]];
      rest /= mesh.sizes()[gaxes[k]];
    }
    const std::int64_t r = self_only ? rank : mesh.ranks()[static_cast<std::size_t>(index)];
    members.push_back({r, j});
    if (!self_only) ex.group.push_back(r);
  }
  if (!std::is_sorted(members.begin(), members.end())) std::sort(members.begin(), members.end());
  ex.sends.reserve(members.size());
  ex.recvs.reserve(members.size());
  Hit h;
  for (auto [peer, j] : members) {
    member_coord(j);
    const bool self = peer == rank;
    Message* in = nullptr;
    Message* out = nullptr;
    for (std::size_t bi = 0; bi < p.boxes.size(); ++bi) {
      const FastBox& f = fb[bi];
      if (between(bi, other, c, h)) {
        if (self) {
          emit(ex.copies, f, h);
        } else {
          if (!in) {
            in = &ex.recvs.emplace_back();
            in->peer = peer;
          }
          emit(in->boxes, f, h);
          if (!reduce) ex.lower_bound_elements += f.elements;
        }
      }
      if (!self && between(bi, c, other, h)) {
        if (!out) {
          out = &ex.sends.emplace_back();
          out->peer = peer;
        }
        emit(out->boxes, f, h);
      }
    }
  }
  if (reduce && !ex.recvs.empty())
    for (const auto& cp : ex.copies) ex.lower_bound_elements += cp.elements();
  return ex;
}

}  // namespace axe::internal
