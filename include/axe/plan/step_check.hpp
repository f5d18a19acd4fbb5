// The shape check of a collective step: what every executor verifies before it runs one.
//
// A collective step (plan.hpp, "Agreement") is run by every member of its group with the same
// call; a rank whose messages do not have the declared collective's shape would make a different
// call (or none) and hang or corrupt its peers. Executors therefore check each collective step of
// their RankPlan first and throw instead: this is the one check, used by the host executor
// (axe/exec/executor.hpp) and the CUDA executor alike, and it returns what both need to run the
// step (this rank's index in the group, the root's index, the block sizes).
//
// A well-formed collective step on rank r with group g (r a member of g, every peer in g, sends
// and recvs ascending by peer):
//   all-gather:     no reduction; one block (the same source boxes) sent to every other member,
//                   or none; with equal_blocks every received block has the own block's size.
//   all-to-all:     no reduction.
//   broadcast:      no reduction; root a member; the root sends one block to every other
//                   member (or none) and receives nothing; any other member sends nothing and
//                   receives at most one message, from the root.
//   reduce-scatter: reduction; the local copies are one term; every received term has the
//   all-reduce      copies' destination boxes, one from every other member (when the rank holds
//                   a term); all-reduce: every send is the own term (the copies' source boxes),
//                   to every other member; reduce-scatter with equal_blocks: every block sent
//                   has the own term's size.
// Example: S(0) -> R of 64x128 f32 on gpu=4, rank 1 (group {0,1,2,3}): one block of 2048
// elements sent to 0, 2 and 3 and one of 2048 received from each: me 1, count 2048, largest
// 2048, total 8192.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "axe/plan/plan.hpp"

namespace axe {

// What a well-formed collective step looks like from one member.
struct CollectiveShape {
  std::size_t me = 0;    // index of the rank in Step::group
  std::size_t root = 0;  // broadcast: index of Step::root in the group (else 0)
  // Elements of this member's block: all-gather, the block it sends (0 when it sends none);
  // broadcast, the block the root sends (on the root) or this member receives; all-reduce and
  // reduce-scatter, its own term (the local copies); all-to-all 0. With equal_blocks every
  // member's block has this many elements (checked).
  std::int64_t count = 0;
  // All-gather: the largest block of any member and the elements of all blocks together, as this
  // member sees them (its own block and each block it receives); 0 for other kinds.
  std::int64_t largest = 0, total = 0;
  bool operator==(const CollectiveShape&) const = default;
};

// Checks step `step` of rank `rank` against the shape of its collective kind (above) and returns
// it. `index` names the step in messages (its plan step), `who` the caller. Throws axe::Error
//   "<who>: rank R step I (KIND on a group of G): WHY (a planner bug: every member must run the
//   collective)"
// when the step does not have that shape, or its kind is not a collective.
CollectiveShape check_collective(std::int64_t rank, const Step& step, std::size_t index,
                                 std::string_view who = "executor");
// The same for step `index` of `plan`.
CollectiveShape check_collective(const RankPlan& plan, std::size_t index, std::string_view who = "executor");

// The message to `peer` in `messages` (ascending by peer, as in a Step), or null.
const Message* find_message(const std::vector<Message>& messages, std::int64_t peer);

}  // namespace axe
