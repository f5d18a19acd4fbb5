// The host backend's transport: MPI point-to-point and small collectives, every wait bounded.
//
// exchange() posts MPI_Irecv/MPI_Isend on a private duplicate of the communicator and polls
// MPI_Testall until a deadline (the runtime timeout, AXE_TIMEOUT_S); on expiry it cancels what
// is pending, marks the transport failed and throws axe::Error naming the peers it still waited
// for. The executor's collectives (all-gather, all-to-all, reduce-scatter, all-reduce) use the
// Transport defaults over exchange(): the same bytes as a grouped send/recv, and bounded.
// Messages above 1 GiB are split (MPI counts are int).
#pragma once

#include <mpi.h>

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "axe/executor.hpp"

namespace axe {

// Wraps an MPI call: throws axe::Error with file, line, the call and MPI's own message.
#define AXE_MPI_CHECK(call)                                                 \
  do {                                                                      \
    int axe_mpi_rc_ = (call);                                               \
    if (axe_mpi_rc_ != MPI_SUCCESS) ::axe::mpi_fail(axe_mpi_rc_, #call, __FILE__, __LINE__); \
  } while (0)
[[noreturn]] void mpi_fail(int rc, const char* call, const char* file, int line);

class MpiTransport : public Transport {
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

  // Bounded collectives over the whole communicator (used by the runtime's agreement checks).
  void allreduce_max(std::span<std::uint64_t> values, std::string_view what);
  void broadcast(std::span<std::byte> data, int root, std::string_view what);
  void barrier(std::string_view what);

  // Waits for collective `reqs` until the deadline; on expiry abandons them (collectives cannot
  // be cancelled), marks the transport failed and throws axe::Error "rank R: WHAT timed out
  // after T s" + `detail`.
  void wait_all(std::span<MPI_Request> reqs, std::string_view what, const std::string& detail = {});

 private:
  void check_usable(std::string_view what) const;
  MPI_Comm comm_ = MPI_COMM_NULL;
  int rank_ = 0, size_ = 1;
  double timeout_s_ = 300;
  bool failed_ = false;
};

}  // namespace axe
