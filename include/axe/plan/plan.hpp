// Redistribution plans: who sends what to whom, with which collective (DESIGN §4).
//
// A plan moves a tensor from a source DistLayout (mesh A) to a destination DistLayout (mesh B:
// the same mesh, a reordering, or other ranks). It is a list of steps; every rank that takes
// part runs the same steps in order (a step may be empty on some ranks). Each step reads the
// rank's buffer `in` and writes its buffer `out`: buffer 0 is the source shard, the last one the
// destination shard, those between are staging.
//
// Data is never described element by element: a Transfer is one strided box, the same extents
// read at (src_offset, src_strides) in the sender's buffer and written at (dst_offset,
// dst_strides) in the receiver's (element units, row-major: last extent fastest). Example,
// S(0) -> S(1) of 64x128 on gpu=4 (PLANNER_EXAMPLES §2): the message 1 -> 2 is the box
//   extents (16,32)  src 64 + (128,1)  dst 512 + (32,1)
// i.e. 16 runs of 32 contiguous elements in the source, contiguous in the destination.
//
// Step kinds: local-copy (no traffic), all-gather, reduce-scatter, all-reduce, all-to-all,
// broadcast, permute (every rank sends to at most one peer) and send-recv (grouped point-to-point
// exchange, the general fallback). A collective runs on `group`: the ranks sharing every mesh
// coordinate of this rank except those on `axes` (Mesh::group). The messages of a collective step
// are still listed (a backend may run a collective as a grouped send/recv inside the group).
//
// Agreement (what MPI/NCCL backends rely on): a step's kind, axes, equal_blocks and root are
// decided from the two layouts' common factorisation alone, never from one rank's traffic, so
// every rank of the plan records the same values, and every member of a group records the same
// group. A collective kind is emitted only when it is provably that collective for every member
// of every group (e.g. all-gather: the factors on the group's axes in the source all move to
// memory and the destination replicates over the group); otherwise the step is send-recv. The
// executor follows the recorded kind and never switches per rank.
//
// Partial sources: each Transfer carries the term it holds; with `reduce` the receiver combines
// the terms with `op` (avg: sum, then divide by `terms`).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <iterator>
#include <type_traits>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "axe/layout/layout.hpp"
#include "axe/core/dtype.hpp"
#include "axe/dist/mesh.hpp"
#include "axe/dist/placement.hpp"
#include "axe/plan/cost_model.hpp"
#include "axe/plan/mode_vector.hpp"

namespace axe {

struct Transfer {
  ModeVector extents;  // at most 8 modes after coalescing in practice
  std::int64_t src_offset = 0;
  ModeVector src_strides;
  std::int64_t dst_offset = 0;
  ModeVector dst_strides;
  std::int64_t term = 0;  // partial term carried (0 when the source is not partial)
  std::int64_t elements() const;
  bool operator==(const Transfer&) const = default;
};
std::string to_string(const Transfer& t);  // "(16,32) src 64+(128,1) dst 512+(32,1)"

// The boxes as one contiguous range on both sides: each box's modes (extent-1 modes ignored) are
// row-major contiguous in source and destination, and, in the given order, each box continues
// where the previous one ended on both sides (empty boxes are skipped). nullopt when they are
// not, or hold no element. Example: {(4,8) src 32+(8,1) dst 0+(8,1)}, {(2,8) src 64+(8,1) dst
// 32+(8,1)} -> src 32, dst 0, n 48.
struct ContiguousRun {
  std::int64_t src = 0, dst = 0, n = 0;
};
std::optional<ContiguousRun> contiguous_run(const std::vector<Transfer>& boxes);

struct Message {
  std::int64_t peer = 0;
  std::vector<Transfer> boxes;  // packed back to back in this order
  std::int64_t elements() const;
  bool operator==(const Message&) const = default;
};

enum class StepKind {
  LocalCopy,
  AllGather,
  ReduceScatter,
  AllReduce,
  AllToAll,
  Broadcast,
  Permute,
  SendRecv
};
std::string_view to_string(StepKind k);  // "local", "all-gather", ..., "send-recv"
bool is_collective(StepKind k);          // all-gather .. broadcast

struct Step {
  StepKind kind = StepKind::SendRecv;
  std::vector<Axis> axes;          // mesh axes of the group (collectives)
  std::vector<std::int64_t> group;  // this rank's group in collective order (collectives)
  int in = 0, out = 1;              // buffer indices
  bool reduce = false;              // combine received terms with op
  ReduceOp op = ReduceOp::Sum;
  std::int64_t terms = 1;
  std::vector<Transfer> copies;  // local copies (in -> out, reduced like messages when reduce)
  std::vector<Transfer> fills;   // out boxes set to op's identity (partial destinations)
  std::vector<Message> sends;    // by peer, ascending
  std::vector<Message> recvs;
  // Collectives: true when every member's block has the same number of elements (the native
  // collective applies); false for uneven shards (torch.chunk tails), where a backend runs the
  // v-variant (e.g. grouped send/recv inside the group). The same on every rank.
  bool equal_blocks = true;
  std::int64_t root = -1;  // broadcast: the rank that holds the data (a member of group)
  // Bytes the executor allocates for this step on this rank: packed send blocks, receive
  // buffers, local term + result of a reduction, local copy staging. Example: S(0)->R of 64x128
  // f32 on gpu=4: one packed 2048-element block, 3 received blocks and the 2048-element local
  // copy: 5 * 2048 * 4 = 40960 bytes.
  std::int64_t staging_bytes = 0;
  // Chunking (staging bound, see PlanRequest::staging_limit): this step is chunk `chunk` of
  // `chunks` consecutive steps of the same kind, group and buffers that together move what one
  // step would. The same on every rank.
  std::int64_t chunk = 0, chunks = 1;
  std::int64_t elements_sent() const;
  std::int64_t elements_received() const;
  bool operator==(const Step&) const = default;
};

// Per-rank counts. Bytes of an all-reduce are those of a ring (2(g-1)/g of the data each way);
// every other step counts its messages.
struct PlanStats {
  std::int64_t bytes_sent = 0;
  std::int64_t bytes_received = 0;
  std::int64_t messages = 0;     // messages sent
  std::int64_t collectives = 0;  // collective steps this rank takes part in
  // Peak staging: the intermediate buffers (between steps) plus the largest Step::staging_bytes.
  std::int64_t staging_bytes = 0;
  std::int64_t lower_bound_bytes = 0;  // bytes this rank must receive for the transition
  bool operator==(const PlanStats&) const = default;
};

// One rank's part of a plan.
struct RankPlan {
  std::int64_t rank = 0;
  DType dtype = DType::F32;
  std::vector<std::int64_t> buffers;  // elements of each buffer on this rank
  std::vector<Step> steps;
  PlanStats stats;
  // Padding (pad_unwritten, plan/passes.hpp): when not empty, one list per buffer of the boxes
  // (destination sides) that an executor sets to NaN (0 for integers) before the steps: the
  // elements no step writes. Empty: not computed, and executors pad every buffer but the source
  // whole.
  std::vector<std::vector<Transfer>> pads;
  bool operator==(const RankPlan&) const = default;
};

// What is planned: the same on every rank.
struct PlanRequest {
  DistLayout from;
  DistLayout to;
  DType dtype = DType::F32;
  // Bound on Step::staging_bytes (bytes); 0: the default, 4 x (source + destination local
  // buffer bytes), at least 1 MiB (staging_limit_bytes). The default never splits a DTensor
  // collective (all-gather stages <= A + B, all-to-all A + B, all-reduce 2B, reduce-scatter
  // A + B * terms = 2A for P->S, A and B the local buffers), only exchanges that fan data out
  // beyond that; a tighter limit is the caller's choice (with the destination's bytes as the
  // limit, a 4096-rank reduce-scatter of 128 MiB, which stages every received term, takes ~300
  // chunks). A step whose staging could exceed the limit is split into K chunks of the same
  // kind; K is decided rank-independently from the step's kind and the two layouts' local buffer
  // sizes (an upper bound on any rank's staging), so every rank of a group runs the same number
  // of chunks. Each chunk moves the elements [c*M/K, (c+1)*M/K) of every message (M its
  // elements) and of the local copies, as sub-boxes; a point-to-point reduction splits every box
  // alike so all terms of an element stay in one chunk. Law: every step's staging_bytes <= the
  // limit, provided the limit is at least 8 * (boxes and messages of the step) * element size
  // (rounding adds at most one element per box or message per chunk and per spread box; 1/4 of
  // the limit is kept for it). The bound is loose where a replicated source is not spread (it
  // counts every destination slot of an element against one sender). Example: S(0)->R of 64x128
  // f32 on gpu=4 stages 5 * 2048 * 4 = 40960 bytes in one all-gather; with staging_limit = 32768
  // it is 2 all-gathers of 20480 bytes each.
  std::int64_t staging_limit = 0;
  // Replicated sources spread the sending load (point-to-point exchanges): in a step whose
  // source has R > 1 replicas on mesh axes and whose destination buffer split R ways is at least
  // this many bytes (a rank-independent decision), every box a receiver does not hold itself is
  // split into R contiguous parts, one sent by each replica; 0: the default, 16 KiB. Not applied
  // to permutes (one peer per rank) nor to steps that reduce partial terms.
  // Example: (S0,R) -> (R,S0) of 256x256 f32 on x=2,y=2 as one exchange: ranks 1 and 2 each need
  // a 128 KiB row block held by two replicas; every rank sends 64 KiB (unsplit: ranks 0 and 3
  // would send 128 KiB and ranks 1, 2 nothing).
  std::int64_t spread_min_bytes = 0;
};
// The spread threshold in force for r (see PlanRequest::spread_min_bytes).
std::int64_t spread_min_bytes(const PlanRequest& r);
// The staging limit in force for r (see PlanRequest::staging_limit).
std::int64_t staging_limit_bytes(const PlanRequest& r);

// Every rank's plan plus the rank-independent outline.
struct Plan {
  PlanRequest request;
  std::vector<StepKind> kinds;             // per step
  std::vector<std::vector<Axis>> axes;     // per step
  std::vector<bool> equal_blocks;          // per step (see Step::equal_blocks)
  std::vector<RankPlan> ranks;             // every rank of either mesh, ascending
  double estimated_seconds = 0;
  PlanStats totals;                        // summed over ranks
  std::int64_t max_bytes_received = 0;     // busiest rank
  const RankPlan* find(std::int64_t rank) const;
};

// Validates the request (before any data moves): the global shapes agree, both layouts fit
// their meshes, a partial destination can be produced (source not partial, or partial with the
// same op and number of terms). Throws axe::Error naming both layouts and the condition.
void check_request(const PlanRequest& r);

// This rank's part of the plan. Work is proportional to the rank's own messages, never to
// ranks^2. Law: running plan_rank(r, k) on every rank k moves the data so that every destination
// shard equals the destination layout applied to the global tensor.
RankPlan plan_rank(const PlanRequest& r, std::int64_t rank, const CostModel& cost = CostModel());
// plan_rank for every rank of both meshes (for printing and simulation).
Plan plan_all(const PlanRequest& r, const CostModel& cost = CostModel());

// Step `st` (not itself a chunk) as k >= 1 consecutive steps of the same kind, group and buffers
// that together move what it moves: chunk c carries the elements [c*M/k, (c+1)*M/k) of every
// message and of the local copies (M their elements), as sub-boxes, and chunk 0 the fills; a
// point-to-point reduction splits every box alike so all terms of an element stay in one chunk.
// Equal messages give equal chunks, so equal_blocks holds per chunk; a message with no elements
// in a chunk is left out of it (on both sides alike). Chunk c records chunk = c, chunks = k.
// Example: an all-gather step whose block is the box (64,128) src 0+(128,1) split in 2: chunk 1
// sends (32,128) src 4096+(128,1). staging_bytes is left 0 (the caller's).
std::vector<Step> split_step(const Step& st, std::int64_t k);

// A process-wide cache of plan_rank keyed by (shapes, dtype, layouts, meshes, rank).
std::shared_ptr<const RankPlan> cached_plan_rank(const PlanRequest& r, std::int64_t rank,
                                                 const CostModel& cost = CostModel());
void clear_plan_cache();

// Text: a header, one line per step "step i: KIND on {axes} bytes/rank ... peers ...", then
// totals against the lower bound. JSON: the same as one object.
std::string to_string(const Plan& p);
std::string to_json(const Plan& p);
std::string to_string(const RankPlan& p);  // every message and box of one rank

}  // namespace axe
