// Plan values: sizes of boxes, messages and steps, step kinds, contiguous runs, summed stats.
#include <algorithm>
#include <optional>
#include <string_view>

#include "axe/plan/plan.hpp"
#include "plan/internal.hpp"

namespace axe {

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
namespace internal {

void sum_rank_stats(Plan& p) {
  p.totals = PlanStats{};
  p.max_bytes_received = 0;
  for (const auto& rp : p.ranks) {
    const auto& st = rp.stats;
    p.totals.bytes_sent += st.bytes_sent;
    p.totals.bytes_received += st.bytes_received;
    p.totals.messages += st.messages;
    p.totals.collectives += st.collectives;
    p.totals.staging_bytes = std::max(p.totals.staging_bytes, st.staging_bytes);
    p.totals.lower_bound_bytes += st.lower_bound_bytes;
    p.max_bytes_received = std::max(p.max_bytes_received, st.bytes_received);
  }
}

}  // namespace internal
}  // namespace axe
