// NCCL communicators of one rank (DESIGN §5): the world communicator, bootstrapped by
// broadcasting the unique id over MPI, and one sub-communicator per collective group (the ranks
// sharing every mesh coordinate but the step's axes), split off lazily with ncclCommSplit and
// cached by group.
//
// Two kinds of communicators:
//   - control: the world communicator is non-blocking (ncclConfig_t::blocking = 0), so its
//     calls (bootstrap, the agreements of allreduce_max, the splits) never hang the host: they
//     return at once and NcclComm polls ncclCommGetAsyncError under a deadline of timeout()
//     seconds (AXE_TIMEOUT_S, default 300).
//   - data: the communicators the executor moves data on (data_world(), the groups) are split
//     off the world at plan time, when every rank has just taken part in a bounded agreement.
//     With AXE_NCCL_BLOCKING=1 (the default) they are blocking: a non-blocking communicator
//     hands every call to a background thread and the caller polls for it (measured on 2 H200s:
//     ~20 us more host time per NCCL call). A blocking call can only wait on the host for a peer
//     while NCCL sets up a connection on first use, at a step every rank has agreed to run, so a
//     peer that dies in that window can hang this rank; AXE_NCCL_BLOCKING=0 makes them
//     non-blocking too, for jobs that want every host wait bounded.
// Work on the GPU is waited for by wait(), which polls every communicator and the deadline. On an
// asynchronous error or a timeout every communicator of this rank is aborted (ncclCommAbort) and
// axe::Error is thrown naming the rank, the operation and the NCCL message; peers blocked on this
// rank then fail the same way within their own timeout, so every rank raises.
//
// Example (2 processes): NcclComm c(MPI_COMM_WORLD, local_rank); c.size() == 2;
//   ncclComm_t g = c.group({0, 1});  // == the world's ranks, in this order
#pragma once

#include <cuda_runtime_api.h>
#include <nccl.h>

#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <vector>

#include "axe/cuda/check.hpp"
#include "axe/cuda/mpi_c.hpp"
#include "axe/core/dtype.hpp"
#include "axe/dist/placement.hpp"

namespace axe::cuda {

[[noreturn]] void throw_nccl_error(ncclResult_t r, const char* expr, const char* file, int line);

ncclDataType_t nccl_type(DType t);
// Avg maps to ncclSum (the caller divides by the term count, as the host executor does).
ncclRedOp_t nccl_op(ReduceOp op);

class NcclComm {
 public:
#ifdef AXE_CUDA_HAVE_MPI
  // Collective over `comm`: rank 0 of comm creates the unique id and broadcasts it; this rank
  // becomes NCCL rank MPI_Comm_rank(comm) on CUDA device `device`.
  NcclComm(MPI_Comm comm, int device, double timeout_s = 0);
#endif
  // Collective over the `nranks` callers that share `id` (threads of one process, or processes
  // that exchanged it themselves). timeout_s == 0: AXE_TIMEOUT_S.
  NcclComm(const ncclUniqueId& id, int rank, int nranks, int device, double timeout_s = 0);
  static ncclUniqueId unique_id();
  NcclComm(const NcclComm&) = delete;
  NcclComm& operator=(const NcclComm&) = delete;
  ~NcclComm();  // destroys every communicator (aborts them after a failure)

  int rank() const { return rank_; }
  int size() const { return size_; }
  int device() const { return device_; }
  double timeout() const { return timeout_; }
  bool failed() const { return failed_; }
  ncclComm_t world() const { return world_; }  // control: non-blocking
  // The world for data (point-to-point steps): a blocking duplicate of world() in blocking mode.
  ncclComm_t data_world() const { return data_ ? data_ : world_; }

  // The cached communicator of `group` (world ranks in collective order), nullptr if none yet.
  ncclComm_t find_group(std::span<const std::int64_t> group) const;
  // Collective over the world: each rank passes the groups of the same sequence of steps (an
  // empty group where it takes no part). The groups no member has yet are split off, one
  // ncclCommSplit per step that needs one anywhere. Host-synchronous: call at plan time.
  void ensure_groups(const std::vector<std::vector<std::int64_t>>& groups);
  // Element-wise maximum of `values` over the world, in place. Collective over the world (every
  // rank passes as many values); host-synchronous and bounded like wait().
  void allreduce_max(std::vector<std::int64_t>& values, const char* what);
  // Sub-communicator of `group` (split now if this rank does not have it; collective as above).
  ncclComm_t group(std::span<const std::int64_t> group);

  // Waits until NCCL accepted the last call on `comm` (non-blocking mode); throws on error.
  void settle(ncclComm_t comm, const char* what);
  // Waits for `event` while polling every communicator for asynchronous errors; on error or
  // after timeout() seconds aborts every communicator and throws axe::Error.
  void wait(cudaEvent_t event, const char* what = "plan execution");
  // Aborts every communicator and throws axe::Error with `message`.
  [[noreturn]] void abort_and_throw(const std::string& message);

 private:
  void init(const ncclUniqueId& id);
  ncclConfig_t config(bool data) const;
  // ncclCommSplit of the world (collective over the world) into a data communicator; nullptr for
  // NCCL_SPLIT_NOCOLOR.
  ncclComm_t split(int color, int key, const char* what);
  bool blocking_ = false;
  int rank_ = 0, size_ = 1, device_ = 0;
  double timeout_ = 300;
  bool failed_ = false;
  ncclComm_t world_ = nullptr;
  ncclComm_t data_ = nullptr;  // blocking duplicate of world_ (blocking mode)
  std::map<std::vector<std::int64_t>, ncclComm_t> groups_;
};

}  // namespace axe::cuda

#define AXE_NCCL_CHECK(expr)                                                              \
  do {                                                                                    \
    ncclResult_t axe_nccl_res_ = (expr);                                                  \
    if (axe_nccl_res_ != ncclSuccess && axe_nccl_res_ != ncclInProgress)                  \
      ::axe::cuda::throw_nccl_error(axe_nccl_res_, #expr, __FILE__, __LINE__);            \
  } while (0)
