// PeerComm's MPI constructor, in its own translation unit (as NcclComm's): the all-gather of
// handles and offsets over the job's communicator.
#include <string>

#include "axe/core/error.hpp"
#include "axe/cuda/peer_comm.hpp"

namespace axe::cuda {

#ifdef AXE_CUDA_HAVE_MPI
namespace {

// Every rank's bytes, in rank order: MPI_Allgather of the sizes, then MPI_Allgatherv. Called at
// plan time by ranks that have just agreed (bounded) to prepare the same plan.
PeerComm::AllGather mpi_allgather(MPI_Comm comm) {
  return [comm](std::span<const std::byte> mine) {
    int size = 0, rank = 0;
    MPI_Comm_size(comm, &size);
    MPI_Comm_rank(comm, &rank);
    const int n = static_cast<int>(mine.size());
    std::vector<int> counts(static_cast<std::size_t>(size)), displs(static_cast<std::size_t>(size));
    auto check = [&](int rc, const char* what) {
      if (rc != MPI_SUCCESS)
        fail(std::string("peer transport: ") + what + " failed on rank " + std::to_string(rank) + " (MPI error " +
             std::to_string(rc) + ")");
    };
    check(MPI_Allgather(&n, 1, MPI_INT, counts.data(), 1, MPI_INT, comm), "MPI_Allgather");
    long total = 0;
    for (int r = 0; r < size; ++r) {
      displs[static_cast<std::size_t>(r)] = static_cast<int>(total);
      total += counts[static_cast<std::size_t>(r)];
    }
    if (total > (1L << 30)) fail("peer transport: " + std::to_string(total) + " bytes of handles to exchange");
    std::vector<std::byte> all(static_cast<std::size_t>(total));
    check(MPI_Allgatherv(mine.data(), n, MPI_BYTE, all.data(), counts.data(), displs.data(), MPI_BYTE, comm),
          "MPI_Allgatherv");
    std::vector<std::vector<std::byte>> out(static_cast<std::size_t>(size));
    for (std::size_t r = 0; r < out.size(); ++r)
      out[r].assign(all.begin() + displs[r], all.begin() + displs[r] + counts[r]);
    return out;
  };
}

int comm_rank(MPI_Comm c) {
  int r = 0;
  MPI_Comm_rank(c, &r);
  return r;
}
int comm_size(MPI_Comm c) {
  int s = 0;
  MPI_Comm_size(c, &s);
  return s;
}

}  // namespace

PeerComm::PeerComm(MPI_Comm comm, int device, double timeout_s)
    : PeerComm(mpi_allgather(comm), comm_rank(comm), comm_size(comm), device, timeout_s) {}
#endif

}  // namespace axe::cuda
