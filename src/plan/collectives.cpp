// Recognising collectives from the refined factors of a pair (DESIGN §4.4): which mesh axes a
// step touches, whether it stays inside its groups, and its kind.
#include <algorithm>
#include <tuple>

#include "axe/plan/plan.hpp"
#include "plan/internal.hpp"

namespace axe::internal {

// Does the step from p.src to p.dst keep every element's coordinates on the axes outside `in`?
bool group_local(const Pair& p, const std::vector<bool>& in) {
  const int mem = p.src.naxes;
  auto outside = [&](int a) { return a != mem && !in[static_cast<std::size_t>(a)]; };
  for (const auto& b : p.boxes) {
    for (const auto& m : b.factors)
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

std::vector<bool> touched_axes(const Pair& p) {
  const int mem = p.src.naxes;
  std::vector<bool> t(static_cast<std::size_t>(mem), false);
  if (!(p.src.layout->mesh() == p.dst.layout->mesh())) return std::vector<bool>(t.size(), true);
  auto mark = [&](int a) {
    if (a != mem) t[static_cast<std::size_t>(a)] = true;
  };
  for (const auto& b : p.boxes) {
    for (const auto& m : b.factors)
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
  for (const auto& m : p.full_factors) {
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
