// NcclComm's MPI bootstrap, in its own translation unit so that programs which bootstrap NCCL
// otherwise (the GPU tests: threads sharing a unique id) do not need libmpi at run time.
#include <string>

#include "axe/cuda/nccl_comm.hpp"
#include "axe/core/error.hpp"
#include "axe/core/tunables.hpp"

namespace axe::cuda {

#ifdef AXE_CUDA_HAVE_MPI
NcclComm::NcclComm(MPI_Comm comm, int device, double timeout_s) : device_(device) {
  timeout_ = timeout_s > 0 ? timeout_s : tunable_seconds("AXE_TIMEOUT_S");
  MPI_Comm_rank(comm, &rank_);
  MPI_Comm_size(comm, &size_);
  ncclUniqueId id{};
  if (rank_ == 0) AXE_NCCL_CHECK(ncclGetUniqueId(&id));
  const int rc = MPI_Bcast(&id, sizeof(id), MPI_BYTE, 0, comm);
  if (rc != MPI_SUCCESS)
    fail("NcclComm: MPI_Bcast of the NCCL unique id failed on rank " + std::to_string(rank_) +
         " (MPI error " + std::to_string(rc) + ")");
  init(id);
}
#endif

}  // namespace axe::cuda
