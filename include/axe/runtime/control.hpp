// The runtime's control plane: small, bounded collectives over every rank of the job (the
// agreements before each operation, the NCCL unique id, the peer transport's handles, the cost
// model's calibration). Two implementations:
//   MpiTransport (mpi_transport.hpp)  under mpirun / srun: non-blocking MPI collectives on the
//                                     world communicator;
//   TcpControl   (tcp_control.hpp)    under torchrun without an MPI launcher: a star of TCP
//                                     connections to rank 0 (MASTER_ADDR), no MPI at all.
// Every call is collective over all ranks, in the same order on every rank, and bounded by the
// runtime's timeout (AXE_TIMEOUT_S): a peer that exits, fails or stops answering makes the others
// throw axe::Error naming the call (`what`) instead of waiting forever; failed() is true from then
// on and later calls throw at once.
//
// Example (3 ranks): std::uint64_t v[1] = {rank}; control.allreduce_max(v, "demo");  // v[0] == 2
//   control.allgather(bytes of "r<rank>", "demo") == {"r0", "r1", "r2"} on every rank.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

namespace axe {

class Control {
 public:
  virtual ~Control() = default;
  virtual int control_rank() const = 0;
  virtual int control_size() const = 0;
  // True once a call timed out or a peer failed: the control plane cannot be used any more.
  virtual bool control_failed() const = 0;
  // values[i] = max over ranks of values[i] (every rank passes as many values).
  virtual void allreduce_max(std::span<std::uint64_t> values, std::string_view what) = 0;
  // Rank `root`'s bytes into every rank's `data` (every rank passes as many bytes).
  virtual void broadcast(std::span<std::byte> data, int root, std::string_view what) = 0;
  // Every rank's bytes, in rank order (lengths may differ between ranks).
  virtual std::vector<std::vector<std::byte>> allgather(std::span<const std::byte> mine,
                                                        std::string_view what) = 0;
  virtual void barrier(std::string_view what) = 0;
};

// Throws the agreement's disagreement: "WHAT: the ranks disagree on the request; rank R has
// 'DESCRIPTION', fingerprint FP (ranks range LO..HI)".
[[noreturn]] void fail_disagreement(std::string_view what, int rank, std::string_view description, std::uint64_t fp,
                                    std::uint64_t lo, std::uint64_t hi);

}  // namespace axe
