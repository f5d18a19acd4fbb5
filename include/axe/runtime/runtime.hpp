// The distributed runtime: one process per device under mpirun / srun (DESIGN §5).
//
// Runtime bootstraps from MPI: rank and size of MPI_COMM_WORLD, the local rank on the node
// (OMPI_COMM_WORLD_LOCAL_RANK, SLURM_LOCALID, AXE_LOCAL_RANK, or an explicit option; it picks
// the GPU), and the backend (AXE_BACKEND=host|cuda; default cuda when the CUDA backend is built
// in and a GPU is visible, else host). Every DistTensor operation is collective over all ranks of
// the runtime and bounded in time by AXE_TIMEOUT_S: a rank that stops answering makes the others
// throw axe::Error within the timeout instead of hanging.
//
// Example (4 processes, `axe-run -np 4 ./app`):
//   int main(int argc, char** argv) {
//     axe::Runtime rt(&argc, &argv);               // rank 0..3, backend "host" without GPUs
//     auto t = axe::DistTensor::from_global(x, axe::parse_mesh("dp=2,tp=2"), {Shard(0), Shard(1)});
//     auto r = t.redistribute({axe::Replicate(), axe::Replicate()});   // all-gather
//   }                                               // ~Runtime finalizes MPI
//
// Under torchrun without an MPI launcher (WORLD_SIZE set and not 1, with RANK, MASTER_ADDR and
// MASTER_PORT; none of Open MPI's, PMI's or PMIx's rank variables; MPI not initialised) the
// runtime does not use MPI at all: rank and size come from RANK and WORLD_SIZE, the local rank from LOCAL_RANK (else
// from the ranks' host names), and the control plane is a TCP rendezvous at rank 0
// (tcp_control.hpp) on MASTER_ADDR, port AXE_RENDEZVOUS_PORT (default MASTER_PORT + 1: torchrun's
// own store holds MASTER_PORT). The cuda backend needs nothing else (NCCL's unique id and the
// peer transport's handles travel over it); the host backend moves its data over MPI and is
// then a clear error on every rank, as is transport().
//
// After a timeout of the MPI transport, or a failure of the backend (Backend::failed(): NCCL
// error or timeout, communicators aborted), the runtime is unusable (failed() is true): later
// operations throw at once (on every rank: a failed backend reports itself in agree()),
// and the destructor does not call MPI_Finalize (it could wait on the dead peer) but ends the job
// with MPI_Abort(1) (only when this Runtime initialised MPI), so the launcher stops every rank.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "axe/core/tunables.hpp"
#include "axe/runtime/backend.hpp"
#include "axe/runtime/calibrate.hpp"

namespace axe {

struct RuntimeOptions {
  std::string backend;   // "" : AXE_BACKEND, else automatic
  int local_rank = -1;   // -1 : from the launcher's environment
  double timeout_s = 0;  // 0 : AXE_TIMEOUT_S
  // The cost model (see Runtime::cost_model): "" : AXE_COST_MODEL, resp. AXE_CALIBRATE.
  std::string cost_model_file;
  std::string calibrate_file;
  CalibrationOptions calibration;  // sizes, iterations, mesh of a calibration
};

class Control;
class MpiTransport;

class Runtime {
 public:
  // Initialises MPI unless already initialised (then finalization is left to the caller).
  // Throws axe::Error (on every rank alike) on a bad tunable, launcher local rank or backend name
  // on any rank: these are checked before the first collective, and the ranks agree on them in a
  // bounded wait (AXE_TIMEOUT_S, or its default when that is the bad value), so the message names
  // every failing rank and its variable:
  //   axe start-up failed on 1 of 4 ranks: rank 1: AXE_TIMEOUT_S='abc' is not a number of seconds (...)
  // When this constructor initialised MPI and throws, MPI is finalized at exit (after the caller
  // reported the error); after a start-up wait timed out, the job is ended with MPI_Abort.
  Runtime(int* argc, char*** argv, RuntimeOptions options = {});
  explicit Runtime(RuntimeOptions options = {}) : Runtime(nullptr, nullptr, std::move(options)) {}
  ~Runtime();
  Runtime(const Runtime&) = delete;
  Runtime& operator=(const Runtime&) = delete;

  // The live runtime (the most recently constructed one); throws axe::Error when there is none.
  static Runtime& current();

  int rank() const { return rank_; }
  int size() const { return size_; }
  int local_rank() const { return local_rank_; }
  int local_size() const { return local_size_; }
  double timeout_s() const { return timeout_s_; }
  Backend& backend() { return *backend_; }
  const Backend& backend() const { return *backend_; }
  // The MPI transport (the host backend's data path); axe::Error under torchrun without MPI.
  MpiTransport& transport();
  // The control plane: the MPI transport, or the TCP rendezvous under torchrun (control.hpp).
  Control& control() { return *control_; }
  // "mpi", or "tcp" under torchrun without an MPI launcher.
  std::string_view bootstrap() const { return tcp_ ? "tcp" : "mpi"; }
  bool failed() const;

  // Collective agreement before an operation `what`: every rank passes its own error ("" when
  // fine) and a fingerprint of what it is about to do. Throws axe::Error on every rank when any
  // rank reported an error (the message of the lowest such rank, naming it) or when the
  // fingerprints differ (naming `description`, this rank's text form of the request).
  // `flag` (optional, in/out): replaced by the maximum over ranks of the values passed (the same
  // all-reduce carries it, e.g. "does any rank still have to prepare this plan").
  void agree(std::string_view what, const std::string& local_error, std::uint64_t fingerprint = 0,
             std::string_view description = {}, std::uint64_t* flag = nullptr);
  // The same with several flags (at most 8), each replaced by its maximum over ranks (one
  // all-reduce). Pass a std::span: a plain array would decay to the one-flag pointer above.
  void agree(std::string_view what, const std::string& local_error, std::uint64_t fingerprint,
             std::string_view description, std::span<std::uint64_t> flags);
  // The same check of `fingerprint` as agree() (without errors or flags), for a request every
  // rank agreed on before (DistTensor's cached redistributes): under MPI it runs in the
  // background and is finished by the next agree(), agree_later() or finish_agreements(), which
  // then throw the disagreement on every rank; under torchrun's TCP control it is agree().
  void agree_later(std::string_view what, std::uint64_t fingerprint, std::string description);
  // How many blocking agreements (agree()) this runtime ran: a cached redistribute adds none.
  std::uint64_t agreements() const { return agreements_; }
  // Finishes a background agreement (bounded by AXE_TIMEOUT_S); DistTensor::synchronize calls it.
  void finish_agreements();
  // Never waits: throws a background agreement's disagreement once it has finished with one (host
  // waits on peers poll it, e.g. the cuda backend's peer transport waiting for a post).
  void poll_agreements();
  void barrier();

  // The alpha-beta model every DistTensor plan of this runtime is chosen with (the plan cache
  // keys on it), identical on every rank (the ranks agreed on its fingerprint). At start-up:
  //   AXE_CALIBRATE=PATH   load PATH when it holds a calibration of this world (calibration_key:
  //                        backend, world size, ranks per node, mesh, sizes), else measure it on
  //                        this backend (calibrate.hpp; about a second) and write PATH (rank 0,
  //                        atomically). A file that is not a calibration is an error, never
  //                        overwritten.
  //   AXE_COST_MODEL=PATH  load a model file (CostModel's text format); a calibration header for
  //                        another world is an error.
  //   neither              the planner's default CostModel().
  // Setting both is an error. Example: AXE_CALIBRATE=/tmp/axe.model axe-run -np 4 ./app measures
  // on the first run ("measured in 0.4 s, written to /tmp/axe.model") and loads it after.
  const CostModel& cost_model() const { return cost_model_; }
  // Where the model came from: "default", "loaded PATH", "measured ..., written to PATH", "file
  // PATH" (AXE_COST_MODEL) or "set_cost_model".
  const std::string& cost_model_origin() const { return cost_model_origin_; }
  // Replaces the model (collective: throws axe::Error on every rank when the ranks pass models
  // with different fingerprints). Later redistributions plan with it.
  void set_cost_model(const CostModel& model);
  // Changes whenever the model does, and differs between runtimes: a key for caches of plans.
  std::uint64_t cost_model_version() const { return cost_model_version_; }

 private:
  void init_cost_model(const RuntimeOptions& options);
  void start_tcp(const RuntimeOptions& options);
  void start_backend(const BackendEntry& chosen, const RuntimeOptions& options);

  int rank_ = 0, size_ = 1, local_rank_ = 0, local_size_ = 1;
  double timeout_s_ = 300;
  bool owns_mpi_ = false;
  std::unique_ptr<MpiTransport> transport_;  // null under torchrun without MPI
  std::unique_ptr<Control> tcp_;             // under torchrun without MPI
  Control* control_ = nullptr;               // transport_ or tcp_
  std::unique_ptr<Backend> backend_;
  Runtime* previous_ = nullptr;
  CostModel cost_model_;
  std::string cost_model_origin_ = "default";
  std::uint64_t cost_model_version_ = 0;
  std::uint64_t agreements_ = 0;
};

// FNV-1a 64-bit of a text: fingerprints are computed from text forms (axis names, not ids), so
// every process computes the same value for the same request.
std::uint64_t fingerprint(std::string_view text);

}  // namespace axe
