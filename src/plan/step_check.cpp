// The shape check of a collective step (step_check.hpp). Formerly one copy in the host executor
// and one in the CUDA executor; the union of their checks.
#include "axe/plan/step_check.hpp"

#include <algorithm>
#include <string>

#include "axe/core/error.hpp"

namespace axe {

namespace {

bool same_src(const std::vector<Transfer>& a, const std::vector<Transfer>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (a[i].extents != b[i].extents || a[i].src_offset != b[i].src_offset || a[i].src_strides != b[i].src_strides)
      return false;
  return true;
}
bool same_dst(const std::vector<Transfer>& a, const std::vector<Transfer>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (a[i].extents != b[i].extents || a[i].dst_offset != b[i].dst_offset || a[i].dst_strides != b[i].dst_strides)
      return false;
  return true;
}
std::int64_t elements(const std::vector<Transfer>& boxes) {
  std::int64_t n = 0;
  for (const auto& b : boxes) n += b.elements();
  return n;
}

}  // namespace

const Message* find_message(const std::vector<Message>& v, std::int64_t peer) {
  auto it = std::lower_bound(v.begin(), v.end(), peer, [](const Message& m, std::int64_t p) { return m.peer < p; });
  return it != v.end() && it->peer == peer ? &*it : nullptr;
}

CollectiveShape check_collective(std::int64_t rank, const Step& s, std::size_t index, std::string_view who) {
  const auto& g = s.group;
  auto bad = [&](const std::string& why) {
    fail(std::string(who) + ": rank " + std::to_string(rank) + " step " + std::to_string(index) + " (" +
         std::string(to_string(s.kind)) + " on a group of " + std::to_string(g.size()) + "): " + why +
         " (a planner bug: every member must run the collective)");
  };
  if (!is_collective(s.kind)) bad("not a collective");
  CollectiveShape r;
  const auto self = std::find(g.begin(), g.end(), rank);
  if (self == g.end()) bad("this rank is not a member of its own group");
  r.me = static_cast<std::size_t>(self - g.begin());
  auto member = [&](std::int64_t p) { return std::find(g.begin(), g.end(), p) != g.end(); };
  for (const auto& m : s.sends)
    if (!member(m.peer)) bad("sends to rank " + std::to_string(m.peer) + " outside the group");
  for (const auto& m : s.recvs)
    if (!member(m.peer)) bad("receives from rank " + std::to_string(m.peer) + " outside the group");
  auto ascending = [](const std::vector<Message>& v) {
    return std::adjacent_find(v.begin(), v.end(), [](const Message& a, const Message& b) { return a.peer >= b.peer; }) ==
           v.end();
  };
  if (!ascending(s.sends) || !ascending(s.recvs)) bad("its messages are not in ascending peer order");
  auto received = [&](std::int64_t peer) {
    const Message* m = find_message(s.recvs, peer);
    return m ? m->elements() : std::int64_t{0};
  };
  auto sent = [&](std::int64_t peer) {
    const Message* m = find_message(s.sends, peer);
    return m ? m->elements() : std::int64_t{0};
  };
  const std::string unequal = "blocks of different sizes in a step recorded with equal_blocks";
  switch (s.kind) {
    case StepKind::AllGather: {
      if (s.reduce) bad("an all-gather cannot reduce");
      for (const auto& m : s.sends)
        if (!same_src(m.boxes, s.sends[0].boxes)) bad("sends different blocks to different members");
      if (!s.sends.empty() && s.sends.size() + 1 != g.size()) bad("does not send its block to every member");
      r.count = s.sends.empty() ? 0 : s.sends[0].elements();
      r.largest = r.total = r.count;
      for (auto peer : g) {
        if (peer == rank) continue;
        const std::int64_t n = received(peer);
        if (s.equal_blocks && n != r.count)
          bad(unequal + " (own block " + std::to_string(r.count) + " elements, rank " + std::to_string(peer) + "'s " +
              std::to_string(n) + ")");
        r.largest = std::max(r.largest, n);
        r.total += n;
      }
      return r;
    }
    case StepKind::AllToAll:
      if (s.reduce) bad("an all-to-all cannot reduce");
      return r;
    case StepKind::Broadcast: {
      if (s.reduce) bad("a broadcast cannot reduce");
      const auto it = std::find(g.begin(), g.end(), s.root);
      if (it == g.end()) bad("its root " + std::to_string(s.root) + " is not a member");
      r.root = static_cast<std::size_t>(it - g.begin());
      if (rank == s.root) {
        for (const auto& x : s.sends)
          if (!same_src(x.boxes, s.sends[0].boxes)) bad("the root sends different blocks");
        if (!s.recvs.empty()) bad("the root receives");
        if (!s.sends.empty() && s.sends.size() + 1 != g.size()) bad("the root does not send to every member");
        r.count = s.sends.empty() ? 0 : s.sends[0].elements();
      } else {
        if (!s.sends.empty() || s.recvs.size() > 1) bad("a non-root member sends or receives twice");
        if (!s.recvs.empty() && s.recvs[0].peer != s.root) bad("receives from a member other than the root");
        r.count = s.recvs.empty() ? 0 : s.recvs[0].elements();
      }
      return r;
    }
    case StepKind::ReduceScatter:
    case StepKind::AllReduce: {
      if (!s.reduce) bad("nothing to reduce");
      // Every member contributes one term of the same elements: the self copy and each received
      // message cover the same destination boxes.
      for (const auto& c : s.copies)
        if (c.term != s.copies[0].term) bad("holds several terms of one element");
      for (const auto& m : s.recvs)
        if (!same_dst(m.boxes, s.copies)) bad("a received term does not match the local term");
      if (!s.copies.empty() && s.recvs.size() + 1 != g.size()) bad("does not receive a term from every member");
      if (s.kind == StepKind::AllReduce) {
        for (const auto& m : s.sends)
          if (!same_src(m.boxes, s.copies)) bad("sends a block other than its own term");
        if (!s.copies.empty() && s.sends.size() + 1 != g.size()) bad("does not send to every member");
      }
      r.count = elements(s.copies);
      if (s.equal_blocks && s.kind == StepKind::ReduceScatter)
        for (auto peer : g)
          if (peer != rank && sent(peer) != r.count)
            bad(unequal + " (own block " + std::to_string(r.count) + " elements, the block for rank " +
                std::to_string(peer) + " " + std::to_string(sent(peer)) + ")");
      return r;
    }
    default:
      bad("not a collective");
  }
  return r;
}

CollectiveShape check_collective(const RankPlan& plan, std::size_t index, std::string_view who) {
  return check_collective(plan.rank, plan.steps.at(index), index, who);
}

}  // namespace axe
