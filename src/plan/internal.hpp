// Planner internals: the (source, destination) pair of a redistribution refined to common factors
// (DESIGN §4.1; sides and the refinement are in dist/internal.hpp), its exchanges and the
// collectives recognised on it.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "axe/plan/plan.hpp"
#include "dist/internal.hpp"

namespace axe::internal {

// None: no partial terms. Reduce: destination term digits that are source term digits (same
// axis, extent, stride) are kept, the other source term digits are reduced, the other
// destination term digits are filled (sum/prod: the value on digit 0, the identity elsewhere;
// max/min/avg: the value everywhere). Match: term t of the source is term t of the destination.
enum class PartialMode { None, Reduce, Match };

// p.totals (summed over p.ranks; staging the largest) and p.max_bytes_received recomputed from
// the ranks' stats.
void sum_rank_stats(Plan& p);

struct Pair {
  Side src, dst;
  std::vector<GBox> boxes;  // disjoint, covering the logical tensor
  PartialMode partial = PartialMode::None;
  ReduceOp op = ReduceOp::Sum;
  // Reduce: destination P iter i is source P iter match[i] (kept terms); the source P iters in
  // `reduced` are combined (row-major over them is the term order), `terms` of them.
  std::vector<std::int64_t> match;  // per destination P iter: source P iter, or -1 (filled)
  std::vector<std::size_t> reduced;
  std::int64_t terms = 1;
  // The refinement over the whole padded range (one box, every digit at full extent, extent-1
  // digits dropped): what the step kind is decided from, rank-independently. `chain` is false
  // when some dim has no common factorisation (no collective is then recognised).
  std::vector<Factor> full_factors;
  bool chain = true;
  std::vector<bool> even;  // per dim: no padding on either side (the logical range is one box)
  bool nested = false;     // some dim of either side has a nested bound (boxes are its runs)
};
// Throws axe::Error naming both layouts when a partial destination cannot be produced.
Pair make_pair(const DistLayout& src, const DistLayout& dst);
// The same on shared layouts, which the Pair keeps without copying them (a layout copies its
// mesh's rank list: 32 KiB at 4096 ranks).
Pair make_pair(std::shared_ptr<const DistLayout> src, std::shared_ptr<const DistLayout> dst);

// One rank's exchange for one Pair (src layout -> dst layout).
struct Exchange {
  std::vector<Transfer> copies, fills;
  std::vector<Message> sends, recvs;
  std::int64_t lower_bound_elements = 0;  // needed elements not (fully) held locally
  // fast_exchange of a collective: the rank's group in group order (equal to Mesh::group).
  std::vector<std::int64_t> group;
};
// spread: every box a receiver needs from a replicated source (and does not hold itself) is
// split over all R source replicas (on mesh axes): replica j (row-major over the source's
// replica digits) sends elements [j*E/R, (j+1)*E/R) of it (possibly none). The flag is decided
// per step (rank-independently), so sender and receiver agree.
Exchange exchange(const Pair& p, std::int64_t rank, bool spread = false);
// The sub-boxes holding elements [lo, hi) of t (row-major over its extents), in element order.
void sub_boxes(const Transfer& t, std::int64_t lo, std::int64_t hi, std::vector<Transfer>& out);
// Only the lower bound of exchange(p, rank) (the receive side; no messages are built).
std::int64_t lower_bound_elements(const Pair& p, std::int64_t rank);

// A step's kind decided from the factorisation alone (the same on every rank; DESIGN §4.4).
// `axes` are the mesh axes of the group, in group order. Collective kinds are returned only when provable for
// every member of every group; anything else is SendRecv (or Permute/LocalCopy, which are
// point-to-point and need no agreement beyond matching messages).
struct Classified {
  StepKind kind = StepKind::SendRecv;
  bool equal_blocks = true;  // every member of a group moves blocks of one size
  std::int64_t root = -1;    // broadcast: index into the group of the member that holds the data
};
Classified classify(const Pair& p, const std::vector<Axis>& axes);
// Does the step from p.src to p.dst keep every element's coordinates on the axes outside `in`?
bool group_local(const Pair& p, const std::vector<bool>& in);
// Mesh axes whose coordinates some element, replica or term changes between the two sides.
std::vector<bool> touched_axes(const Pair& p);

// Closed-form exchange for a step recognised as a collective (or a local copy) on the group of
// `rank` over `axes`: one box per (peer, refined box), computed arithmetically from the peer's
// coordinate; O(group size) tiny work. Returns nullopt when the pair is outside the fast path
// (replicas/terms on `m`, negative or interleaved strides, filled or matched partial terms).
std::optional<Exchange> fast_exchange(const Pair& p, std::int64_t rank, const std::vector<Axis>& axes,
                                      StepKind kind);

}  // namespace axe::internal
