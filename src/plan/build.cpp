// One rank's plan: the exchange of every step of a strategy, chunked, with its staging and
// statistics.
#include <algorithm>
#include <optional>

#include "axe/plan/plan.hpp"
#include "plan/internal.hpp"
#include "plan/strategy.hpp"

namespace axe::internal {

namespace {

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
}  // namespace

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
}  // namespace axe::internal

namespace axe {

using internal::build_rank;
using internal::choose;
using internal::Strategy;
using internal::sum_rank_stats;

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
  for (auto rank : ranks) p.ranks.push_back(build_rank(r, s, rank));
  sum_rank_stats(p);
  return p;
}
}  // namespace axe
