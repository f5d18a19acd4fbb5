// The host backend's transport: MPI point-to-point and native MPI collectives, every wait bounded.
//
// exchange() posts MPI_Irecv/MPI_Isend on a private duplicate of the communicator and polls
// MPI_Testall until a deadline (the runtime timeout, AXE_TIMEOUT_S); on expiry it cancels what
// is pending, marks the transport failed and throws axe::Error naming the peers it still waited
// for. Messages above 1 GiB are split (MPI counts are int).
//
// The executor's collectives run as native non-blocking MPI collectives on a sub-communicator of
// the step's group, polled with MPI_Test against the same deadline:
//   all_gather      MPI_Iallgather (every block the same size) / MPI_Iallgatherv
//   all_to_all      MPI_Ialltoallw (the v-variant with a datatype per peer: each block is sent
//                   from and received into the executor's own buffers, no staging copy, and
//                   blocks of any size; counts 1 or 0, datatypes of absolute addresses)
//   reduce_scatter  MPI_Ireduce_scatter_block (same size) / MPI_Ireduce_scatter
//   all_reduce      MPI_Iallreduce
//   broadcast       MPI_Ibcast
// Reductions are native for f32/f64/i32/i64/u8 with sum/max/min/prod; avg is reduced as sum (the
// executor divides by the number of terms afterwards). f16/bf16 reductions, and collectives whose
// bytes do not fit MPI's int counts, use the Transport defaults over exchange() (the same bytes as
// a grouped send/recv, also bounded). MPI may combine terms in any order; for the exact values of
// the tests (small integers) every order gives the same bits, for general floats the result can
// differ from the exchange path in the last bits but is the same on every member.
//
// Which path a collective takes is decided from values every member of the group knows alike
// (the dtype, the op, the group and every member's block size, which the planner records
// consistently: plan.hpp "Agreement"), never from this rank's traffic alone, so the members
// always call the same MPI collective. all_to_all needs no decision: every member always calls
// MPI_Ialltoallw, whose per-peer datatypes have no int limit on the bytes.
//
// Sub-communicators are created lazily per group (ranks in collective order: sub-rank i is
// group[i]) with MPI_Comm_create_group, which is collective over the group's members only, and
// cached by the rank list. MPI_Comm_create_group cannot be bounded itself, so the members first
// shake hands over exchange() (bounded): they compare a fingerprint of the rank list and only
// then create the communicator. A group equal to the whole communicator in rank order uses it
// directly.
//
// Example: an all-gather of S(0) -> R of 8x6 f64 on gpu=4: rank 2 calls all_gather on group
// {0,1,2,3} with its 96-byte block; the transport creates the world-order communicator (here the
// world itself), stages the 4 blocks contiguously, runs MPI_Iallgather of 96 bytes per member and
// copies blocks 0, 1 and 3 into the executor's receive buffers; native_calls().all_gather == 1.
#pragma once

#include <mpi.h>

#include <array>
#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "axe/exec/executor.hpp"
#include "axe/runtime/control.hpp"

namespace axe {

// Wraps an MPI call: throws axe::Error with file, line, the call and MPI's own message.
#define AXE_MPI_CHECK(call)                                                 \
  do {                                                                      \
    int axe_mpi_rc_ = (call);                                               \
    if (axe_mpi_rc_ != MPI_SUCCESS) ::axe::mpi_fail(axe_mpi_rc_, #call, __FILE__, __LINE__); \
  } while (0)
[[noreturn]] void mpi_fail(int rc, const char* call, const char* file, int line);

// How many executor collectives ran as native MPI collectives, and how many used the exchange()
// based defaults (f16/bf16 reductions, oversized blocks, native collectives switched off).
struct CollectiveCounts {
  std::int64_t all_gather = 0, all_to_all = 0, reduce_scatter = 0, all_reduce = 0, broadcast = 0;
  std::int64_t fallback = 0;        // collectives run over exchange()
  std::int64_t communicators = 0;   // sub-communicators created
  std::int64_t native() const { return all_gather + all_to_all + reduce_scatter + all_reduce + broadcast; }
};

class MpiTransport : public Transport, public Control {
 public:
  // Duplicates `comm` (errors return instead of aborting). Collective over `comm`.
  MpiTransport(MPI_Comm comm, double timeout_s);
  ~MpiTransport() override;
  MpiTransport(const MpiTransport&) = delete;
  MpiTransport& operator=(const MpiTransport&) = delete;

  std::int64_t rank() const override { return rank_; }
  int size() const { return size_; }
  MPI_Comm comm() const { return comm_; }
  double timeout_s() const { return timeout_s_; }
  bool failed() const { return failed_; }

  void exchange(std::span<const SendBuffer> sends, std::span<const RecvBuffer> recvs) override;

  // Native collectives (see the header comment); same contracts as Transport's.
  void all_gather(std::span<const std::int64_t> group, std::span<const std::byte> mine,
                  std::span<const RecvBuffer> blocks) override;
  void all_to_all(std::span<const std::int64_t> group, std::span<const SendBuffer> send,
                  std::span<const RecvBuffer> recv) override;
  void reduce_scatter(std::span<const std::int64_t> group, std::span<const SendBuffer> send,
                      std::span<std::byte> out, DType dtype, ReduceOp op) override;
  void broadcast(std::span<const std::int64_t> group, std::size_t root, std::span<std::byte> data) override;
  void all_reduce(std::span<const std::int64_t> group, std::span<const std::byte> in, std::span<std::byte> out,
                  DType dtype, ReduceOp op) override;

  // Native collectives on (default) or off: off, every collective uses the exchange() defaults.
  // Must be set alike on every rank (tests compare both paths).
  void set_native_collectives(bool on) { native_ = on; }
  bool native_collectives() const { return native_; }
  const CollectiveCounts& collective_counts() const { return counts_; }

  // The plan being executed (by the host backend): errors then name the step. The executor makes
  // exactly one transport call per step, so the k-th call after begin_plan is plan.steps[k].
  void begin_plan(const RankPlan* plan) {
    plan_ = plan;
    calls_ = 0;
  }
  void end_plan() { plan_ = nullptr; }

  // The control plane (control.hpp): bounded collectives over the whole communicator.
  int control_rank() const override { return rank_; }
  int control_size() const override { return size_; }
  bool control_failed() const override { return failed_; }
  void allreduce_max(std::span<std::uint64_t> values, std::string_view what) override;
  void broadcast(std::span<std::byte> data, int root, std::string_view what) override;
  std::vector<std::vector<std::byte>> allgather(std::span<const std::byte> mine, std::string_view what) override;
  void barrier(std::string_view what) override;

  // The control plane's collectives (Control) run on a communicator of their own, so they never
  // match the data path's collectives. Among them, a background check of a request (Runtime::
  // agree_later): an all-reduce (max) of the same kCheckValues values as Runtime::agree's, so it
  // matches a rank's blocking agreement as well as another rank's check. At most one runs:
  // finish_check waits for it (bounded) and throws the disagreement (fingerprint values[1], its
  // complement values[2]) on every rank; the data path's waits poll it too (poll_check), so a
  // host-backend exchange stuck on a rank that asked for something else ends with the
  // disagreement rather than a timeout.
  static constexpr std::size_t kCheckValues = 11;
  void start_check(std::span<const std::uint64_t, kCheckValues> values, std::string what, std::string description);
  void finish_check();
  // Never waits: throws the check's disagreement when it has finished with one.
  void poll_check();

  // Waits for collective `reqs` until the deadline; on expiry abandons them (collectives cannot
  // be cancelled), marks the transport failed and throws axe::Error "rank R: WHAT timed out
  // after T s" + `detail`.
  void wait_all(std::span<MPI_Request> reqs, std::string_view what, const std::string& detail = {});

 private:
  void check_usable(std::string_view what) const;
  // The communicator of `group` (sub-rank i = group[i]); creates and caches it. `what` names the
  // collective for errors.
  MPI_Comm group_comm(std::span<const std::int64_t> group, const std::string& what);
  // "step K of N (KIND on group {..})" for the current call, or "KIND on group {..}".
  std::string describe(std::string_view kind, std::span<const std::int64_t> group) const;
  void exchange_impl(std::span<const SendBuffer> sends, std::span<const RecvBuffer> recvs);
  // Counts one step's transport call (nested calls, e.g. defaults over exchange(), count once).
  struct CallScope {
    MpiTransport& t;
    explicit CallScope(MpiTransport& x) : t(x) { ++t.depth_; }
    ~CallScope() {
      if (--t.depth_ == 0) ++t.calls_;
    }
  };

  MPI_Comm comm_ = MPI_COMM_NULL;
  MPI_Comm control_comm_ = MPI_COMM_NULL;  // the control plane's own
  MPI_Request check_req_ = MPI_REQUEST_NULL;
  std::array<std::uint64_t, kCheckValues> check_{};
  std::uint64_t check_fp_ = 0;
  std::string check_what_, check_description_;
  int rank_ = 0, size_ = 1;
  double timeout_s_ = 300;
  bool failed_ = false;
  bool native_ = true;
  CollectiveCounts counts_;
  std::map<std::vector<std::int64_t>, MPI_Comm> groups_;
  const RankPlan* plan_ = nullptr;
  std::size_t calls_ = 0;
  int depth_ = 0;
};

}  // namespace axe
