// Executing a RankPlan through an abstract Transport (DESIGN §5).
//
// The executor packs each message's strided boxes into a contiguous buffer, hands the buffers to
// the transport (a grouped send/recv, or a collective on the step's group), and unpacks the
// received bytes into the destination with the receiver's boxes, reducing partial terms in term
// order. The same executor drives every backend: the in-memory transport below (simulated ranks,
// used by the tests), and later MPI (host) and NCCL (CUDA).
//
// Example: an all-gather of S(0) -> R on gpu=4 for 64x128 f32: rank 1 packs its 16x128 rows
// (one contiguous box, 8192 bytes), calls all_gather on group {0,1,2,3}, and unpacks the three
// received 8192-byte blocks at rows 0, 32 and 48 of its 64x128 destination (its own rows are a
// local copy).
#pragma once

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <mutex>
#include <span>
#include <vector>

#include "axe/plan/plan.hpp"

namespace axe {

struct SendBuffer {
  std::int64_t peer = 0;
  std::span<const std::byte> data;
};
struct RecvBuffer {
  std::int64_t peer = 0;
  std::span<std::byte> data;  // sized by the receiver; the message must match exactly
};

class Transport {
 public:
  virtual ~Transport() = default;
  virtual std::int64_t rank() const = 0;
  // Grouped point-to-point: posts every send and receive of a step and returns when all are
  // complete. Between one pair of ranks, messages of successive calls arrive in order.
  virtual void exchange(std::span<const SendBuffer> sends, std::span<const RecvBuffer> recvs) = 0;

  // Collectives on `group` (ranks in collective order, this rank included). The defaults are
  // built on exchange(); zero-byte blocks are not sent. blocks[i] belongs to group[i].
  // all_gather: every member's `mine` lands in the others' blocks (own block untouched).
  virtual void all_gather(std::span<const std::int64_t> group, std::span<const std::byte> mine,
                          std::span<const RecvBuffer> blocks);
  // all_to_all: send[i] goes to group[i], recv[i] comes from group[i] (own entries skipped).
  virtual void all_to_all(std::span<const std::int64_t> group, std::span<const SendBuffer> send,
                          std::span<const RecvBuffer> recv);
  // reduce_scatter: out = reduction over members i (in group order) of member i's send block
  // for this rank; send[i] is this rank's block for group[i] (all of out's size for this rank).
  virtual void reduce_scatter(std::span<const std::int64_t> group, std::span<const SendBuffer> send,
                              std::span<std::byte> out, DType dtype, ReduceOp op);
  // broadcast: group[root]'s `data` lands in every other member's `data` (sized alike).
  virtual void broadcast(std::span<const std::int64_t> group, std::size_t root, std::span<std::byte> data);
  // all_reduce: out = reduction over members (in group order) of their `in`.
  virtual void all_reduce(std::span<const std::int64_t> group, std::span<const std::byte> in,
                          std::span<std::byte> out, DType dtype, ReduceOp op);
};

// Collective steps always call the transport's collective (every member of the group calls it,
// with blocks of equal size when Step::equal_blocks, possibly unequal or empty otherwise); a
// rank whose messages do not have the collective's shape is a planner bug and raises
// axe::Error naming the rank and step (never a silent per-rank fallback).
//
// Runs `plan` on this rank: `source` holds the rank's source shard (plan.buffers.front()
// elements, empty when the rank is not in the source mesh); `destination` receives its
// destination shard (plan.buffers.back() elements), padding set to NaN (0 for integer types).
// The source is never modified. Throws axe::Error on a size mismatch.
void execute(const RankPlan& plan, Transport& transport, std::span<const std::byte> source,
             std::span<std::byte> destination);

// dst[i] = op(dst[i], src[i]) for `count` elements of `dtype` (avg accumulates like sum).
void reduce_into(DType dtype, ReduceOp op, std::byte* dst, const std::byte* src, std::int64_t count);

// In-memory transport: one mailbox per (sender, receiver), for simulated ranks on threads.
class InMemoryNetwork {
 public:
  explicit InMemoryNetwork(double timeout_seconds = 60.0) : timeout_(timeout_seconds) {}
  void post(std::int64_t from, std::int64_t to, std::vector<std::byte> data);
  std::vector<std::byte> take(std::int64_t from, std::int64_t to);  // blocks; throws on abort/timeout
  void abort();  // wakes every waiter with an error (a rank failed)
  std::int64_t bytes_moved() const;

 private:
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::map<std::pair<std::int64_t, std::int64_t>, std::deque<std::vector<std::byte>>> box_;
  bool aborted_ = false;
  double timeout_;
  std::int64_t bytes_ = 0;
};

class InMemoryTransport : public Transport {
 public:
  InMemoryTransport(InMemoryNetwork& net, std::int64_t rank) : net_(net), rank_(rank) {}
  std::int64_t rank() const override { return rank_; }
  void exchange(std::span<const SendBuffer> sends, std::span<const RecvBuffer> recvs) override;

 private:
  InMemoryNetwork& net_;
  std::int64_t rank_;
};

}  // namespace axe
