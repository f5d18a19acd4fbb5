// CudaExecutor, lowering: the run-time form (PStep) of each plan step on this rank: the NCCL path,
// pack / unpack box lists, zero-copy sends and in-place receives, and the kernel work that
// pipelining weighs. Moved from cuda_executor.cpp.
#include <algorithm>
#include <map>
#include <optional>
#include <string>

#include "axe/core/error.hpp"
#include "axe/plan/step_check.hpp"
#include "executor_internal.hpp"

namespace axe::cuda {
namespace internal {

// Kinds that have a native NCCL collective (used when Step::equal_blocks; an all-gather of
// unequal blocks also, with padded slots, see collective_path).
bool native_kind(StepKind k) {
  return k == StepKind::AllGather || k == StepKind::ReduceScatter || k == StepKind::AllReduce ||
         k == StepKind::Broadcast;
}

namespace {

std::int64_t elements(const std::vector<Transfer>& boxes) {
  std::int64_t n = 0;
  for (const auto& b : boxes) n += b.elements();
  return n;
}

// Bytes to which the slots of a padded all-gather (unequal blocks) are rounded.
constexpr std::int64_t kSlotAlign = 256;

// One contiguous range on both sides (NCCL can then move the list in place): the plan's rule,
// contiguous_run (plan.hpp), on the list's merged boxes. It decides as on the Transfers the list
// was built from: BoxList drops empty boxes and extent-1 modes and joins exactly the modes that
// are row-major contiguous on both sides (kernels.cu, merge_modes), keeping offsets and
// element counts, so a merged box is one stride-1 mode exactly when its Transfer's modes are
// row-major contiguous on both sides.
std::optional<ContiguousRun> contiguous_run(const BoxList& l) { return axe::contiguous_run(l.boxes()); }

// The native path of collective step `s` (plan step `index`), or P2P, with ps.count, ps.root
// and ps.me. The shape is the shared check's (plan/step_check.hpp), which throws naming rank and
// step when the rank's messages do not have the declared collective's shape; the path is this
// backend's choice.
Path collective_path(const RankPlan& plan, const Step& s, std::size_t index, PStep& ps) {
  const CollectiveShape shape = check_collective(plan.rank, s, index, "CudaExecutor");
  const auto g = static_cast<std::int64_t>(s.group.size());
  Path path = Path::P2P;
  switch (s.kind) {
    case StepKind::AllGather:
      ps.count = shape.count;
      path = Path::AllGather;
      if (!s.equal_blocks) {
        // Unequal blocks (an uneven dim): one all-gather of blocks padded to the largest, rounded
        // up to kSlotAlign bytes, into staging, when the padding is at most an eighth of the
        // data; else grouped send/recv. Every member sees every block's size (it receives all
        // others), so all members decide alike. Aligned slots keep NCCL on its fast path: an
        // all-gather of unaligned blocks ran 1.65x slower on 4 H200s (uneven S0->R).
        const std::int64_t unit = std::max<std::int64_t>(1, kSlotAlign / static_cast<std::int64_t>(size_of(plan.dtype)));
        ps.count = (shape.largest + unit - 1) / unit * unit;
        if (shape.largest == 0 || ps.count * g > shape.total + shape.total / 8) {
          ps.count = 0;
          path = Path::P2P;
        }
      }
      break;
    case StepKind::Broadcast:
      ps.root = static_cast<int>(shape.root);
      ps.count = shape.count;
      path = s.equal_blocks ? Path::Broadcast : Path::P2P;
      break;
    case StepKind::ReduceScatter:
    case StepKind::AllReduce:
      if (!s.equal_blocks) break;
      ps.count = shape.count;
      path = s.kind == StepKind::AllReduce ? Path::AllReduce : Path::ReduceScatter;
      break;
    default:  // all-to-all
      break;
  }
  if (path != Path::P2P) ps.me = static_cast<int>(shape.me);
  return path;
}

}  // namespace

// The run-time form of step `s` (plan step `index`, for messages) on this rank: the collective
// path, pack / unpack lists, zero-copy sends and in-place receives.
PStep build_step(const RankPlan& pl, const Step& s, std::size_t index, bool comm, std::int64_t overlap_min,
                 bool peer, bool pull_unpack) {
  const DType dt = pl.dtype;
  PStep ps;
  ps.peer = peer;
  // Local copies worth overlapping with the step's transfer (non-reducing steps: the copies and
  // the received boxes write disjoint elements of `out`, so they may run concurrently).
  const bool big_local = !s.reduce && overlap_min > 0 &&
                         elements(s.copies) * static_cast<std::int64_t>(size_of(dt)) >= overlap_min;
  const auto& g = s.group;
  // The host executor's rule: a collective kind on a group of 2 or more runs the collective.
  if (is_collective(s.kind) && g.size() > 1) {
    ps.path = collective_path(pl, s, index, ps);  // checks the step's shape in any case
    if (peer) {  // the peer transport runs the v-variant: the step's own messages
      ps.path = Path::P2P;
      ps.count = 0;
      ps.me = ps.root = 0;
    }
  }
  if (ps.path != Path::P2P && !comm)
    fail("CudaExecutor: rank " + std::to_string(pl.rank) + " step " + std::to_string(index) + " (" +
         std::string(to_string(s.kind)) + ") needs NCCL but the executor has no communicator");

  ps.fills = BoxList::copy(s.fills, dt);
  if (ps.path == Path::AllGather) {
    ps.pack = BoxList::pack(s.sends.empty() ? std::vector<Transfer>{} : s.sends[0].boxes, dt, ps.me * ps.count);
    ps.recv_elems = ps.count * static_cast<std::int64_t>(g.size());
    const std::int64_t own = ps.pack.elements();
    if (!s.equal_blocks) {  // padded slots: the padding every member's slot carries beyond its block
      ps.pad = ps.recv_elems - own;
      for (const auto& m : s.recvs) ps.pad -= m.elements();
    }
    // NCCL reads `count` elements from send_at: with padded slots, past the own block, so only
    // where `in` holds them and the block starts 16-byte aligned; else it is packed into its slot.
    if (auto run = contiguous_run(ps.pack))
      if (s.equal_blocks || (run->src + ps.count <= pl.buffers[static_cast<std::size_t>(s.in)] &&
                             run->src * static_cast<std::int64_t>(size_of(dt)) % 16 == 0))
        ps.send_at = run->src;
    // In place: the local copy is exactly this rank's send block packed into one slot of
    // `out`, and every member's block arrives contiguously at the slot of its index.
    if (ps.count > 0 && !s.copies.empty()) {
      BoxList c = BoxList::copy(s.copies, dt);
      const std::int64_t slot = c.boxes().front().dst_offset;
      const std::int64_t base = slot - ps.me * ps.count;
      bool ok = base >= 0 && c.elements() == ps.count && BoxList::pack(s.sends[0].boxes, dt, slot).boxes() == c.boxes();
      for (std::size_t i = 0; ok && i < g.size(); ++i) {
        if (g[i] == pl.rank) continue;
        const Message* m = find_message(s.recvs, g[i]);
        auto run = m ? contiguous_run(BoxList::unpack(m->boxes, dt, 0)) : std::nullopt;
        ok = run && run->n == ps.count && run->dst == base + static_cast<std::int64_t>(i) * ps.count;
      }
      if (ok) {
        ps.recv_at = base;
        ps.pack = BoxList::pack(s.sends[0].boxes, dt, slot);  // into out's own slot
        ps.recv_elems = 0;
      }
    }
    if (ps.recv_at < 0) {
      BoxList u = BoxList::copy({}, dt);
      for (std::size_t i = 0; i < g.size(); ++i) {
        if (g[i] == pl.rank) continue;
        if (const Message* m = find_message(s.recvs, g[i]))
          u.append(BoxList::unpack(m->boxes, dt, static_cast<std::int64_t>(i) * ps.count));
      }
      BoxList c = BoxList::copy(s.copies, dt);
      if (big_local && ps.count > 0 && g.size() == 2) {  // the own block goes from in to out meanwhile
        ps.local = std::move(c);
        ps.overlap = true;
      } else {
        c.from_second_source();
        u.append(c);
      }
      ps.unpack.push_back({0, std::move(u)});
    }
  } else if (ps.path == Path::Broadcast) {
    ps.recv_elems = ps.count;
    BoxList u = BoxList::copy({}, dt);
    if (pl.rank == s.root)
      ps.pack = BoxList::pack(s.sends.empty() ? std::vector<Transfer>{} : s.sends[0].boxes, dt, 0);
    else if (!s.recvs.empty())
      u.append(BoxList::unpack(s.recvs[0].boxes, dt, 0));
    BoxList c = BoxList::copy(s.copies, dt);
    c.from_second_source();
    u.append(c);
    ps.unpack.push_back({0, std::move(u)});
  } else if (ps.path == Path::AllReduce) {
    ps.pack = BoxList::pack(s.copies, dt, 0);
    ps.send_elems = ps.count;
    ps.recv_elems = ps.count;
    ps.result = BoxList::unpack(s.copies, dt, 0);
    if (auto run = contiguous_run(ps.pack); run && run->n == ps.count) ps.send_at = run->src;
    if (auto run = contiguous_run(ps.result); run && run->n == ps.count) ps.recv_at = run->dst;
    if (ps.send_at >= 0 || ps.recv_at >= 0) ps.send_elems = 0;  // packs into out, or no pack
    if (ps.recv_at >= 0) ps.recv_elems = 0;
    if (ps.recv_at >= 0) ps.in_place = BoxList::copy({Transfer{{ps.count}, ps.recv_at, {1}, ps.recv_at, {1}, 0}}, dt);
  } else if (ps.path == Path::ReduceScatter) {
    BoxList pk = BoxList::copy({}, dt);
    for (std::size_t i = 0; i < g.size(); ++i) {
      if (ps.count == 0) break;  // count > 0: the step check found every member's block
      const auto& boxes = g[i] == pl.rank ? s.copies : find_message(s.sends, g[i])->boxes;
      pk.append(BoxList::pack(boxes, dt, static_cast<std::int64_t>(i) * ps.count));
    }
    ps.pack = std::move(pk);
    ps.send_elems = ps.count * static_cast<std::int64_t>(g.size());
    ps.recv_elems = ps.count;
    ps.result = BoxList::unpack(s.copies, dt, 0);
    if (auto run = contiguous_run(ps.pack); run && run->n == ps.send_elems) {
      ps.send_at = run->src;
      ps.send_elems = 0;
    }
    if (auto run = contiguous_run(ps.result); run && run->n == ps.count) {
      ps.recv_at = run->dst;
      ps.recv_elems = 0;
      ps.in_place = BoxList::copy({Transfer{{ps.count}, ps.recv_at, {1}, ps.recv_at, {1}, 0}}, dt);
    }
  } else {
    if ((!s.sends.empty() || !s.recvs.empty()) && !comm)
      fail("CudaExecutor: rank " + std::to_string(pl.rank) + " step " + std::to_string(index) + " (" +
           std::string(to_string(s.kind)) + ") has messages but the executor has no NCCL communicator");
    std::vector<Transfer> all;
    std::int64_t pos = 0;
    for (const auto& m : s.sends) {
      // Send straight from in (NCCL reads it); the peer transport's receivers read staging only.
      if (auto run = peer ? std::nullopt : contiguous_run(BoxList::pack(m.boxes, dt, 0))) {
        ps.sends.push_back({m.peer, run->src, m.elements(), true});
        continue;
      }
      all.insert(all.end(), m.boxes.begin(), m.boxes.end());
      ps.sends.push_back({m.peer, pos, m.elements(), false});
      pos += m.elements();
    }
    ps.pack = BoxList::pack(all, dt, 0);
    ps.send_elems = pos;
    pos = 0;
    std::map<std::int64_t, BoxList> by_term;
    auto term_of = [&](const Transfer& t) { return s.reduce ? t.term : 0; };
    for (const auto& m : s.recvs) {
      if (!s.reduce) {
        if (auto run = contiguous_run(BoxList::unpack(m.boxes, dt, 0))) {  // receive into out
          ps.recvs.push_back({m.peer, run->dst, m.elements(), true});
          continue;
        }
        if (peer && pull_unpack) {  // read straight from the sender's staging
          PStep::Msg r{m.peer, 0, m.elements(), false};
          r.unpack = BoxList::unpack(m.boxes, dt, 0);
          ps.recvs.push_back(std::move(r));
          continue;
        }
      }
      if (s.reduce && peer && pull_unpack) {  // reduced straight from the sender's staging
        PStep::Msg r{m.peer, 0, m.elements(), false};
        std::map<std::int64_t, BoxList> terms;
        std::int64_t at = 0;
        for (const auto& b : m.boxes) {
          terms[b.term].append(BoxList::unpack({b}, dt, at));
          at += b.elements();
        }
        for (auto& [t, l] : terms) r.terms.emplace_back(t, std::move(l));
        ps.recvs.push_back(std::move(r));
        continue;
      }
      ps.recvs.push_back({m.peer, pos, m.elements(), false});
      for (const auto& b : m.boxes) {
        by_term[term_of(b)].append(BoxList::unpack({b}, dt, pos));
        pos += b.elements();
      }
    }
    ps.recv_elems = pos;
    // Overlap only with one peer, as for all-gathers: a copy beside an exchange with several
    // peers slows it (see "Overlap" in executor.hpp).
    std::vector<std::int64_t> peers;
    for (const auto& m : ps.sends) peers.push_back(m.peer);
    for (const auto& m : ps.recvs) peers.push_back(m.peer);
    std::sort(peers.begin(), peers.end());
    ps.overlap = big_local && !peers.empty() && std::unique(peers.begin(), peers.end()) - peers.begin() == 1;
    for (const auto& c : s.copies) {
      if (!s.reduce && is_transpose(c)) {
        ps.transposes.push_back(c);
        continue;
      }
      BoxList l = BoxList::copy({c}, dt);
      if (ps.overlap) {
        ps.local.append(l);
        continue;
      }
      l.from_second_source();
      by_term[term_of(c)].append(l);
    }
    for (auto& [t, l] : by_term) ps.unpack.push_back({t, std::move(l)});
  }
  return ps;
}

// Pack and unpack work of a step on this rank (elements moved by kernels around its transfer),
// and its transferred elements; 0 work when the step is one zero-copy call or purely local.
std::pair<std::int64_t, std::int64_t> kernel_work(const PStep& ps) {
  // A native collective whose block is contiguous in `in` (send_at >= 0) sends it as is: its
  // pack list (the own slot of an in-place all-gather) is never launched.
  const bool packs = ps.path == Path::P2P || ps.send_at < 0;
  std::int64_t work = (packs ? ps.pack.elements() : 0) + (ps.recv_at < 0 ? ps.result.elements() : 0) +
                     ps.local.elements();
  for (const auto& [t, l] : ps.unpack) work += l.elements();
  std::int64_t moved = 0;
  switch (ps.path) {
    case Path::AllGather:
    case Path::ReduceScatter:
      moved = ps.count;
      break;
    case Path::P2P:
      for (const auto& m : ps.sends) moved += m.n;
      for (const auto& m : ps.recvs) moved += m.n;
      break;
    default:
      break;
  }
  return {moved > 0 ? work : 0, moved};
}

// Whether any step of the plan goes beyond local copies (the same on every rank).
bool moves_data(const RankPlan& plan) {
  return std::any_of(plan.steps.begin(), plan.steps.end(), [](const Step& s) { return s.kind != StepKind::LocalCopy; });
}

}  // namespace internal
}  // namespace axe::cuda
