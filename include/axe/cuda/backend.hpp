// The runtime's "cuda" backend (DESIGN §5): device buffers, NCCL, one stream per rank.
//
// axe::cuda::register_backend() adds the BackendEntry "cuda" to the runtime's registry
// (backend.hpp): available when cudaGetDeviceCount() > 0; make() selects the GPU of this rank
// (cudaSetDevice(local rank % device count)) and creates a non-blocking stream. The rest is lazy:
// the first execute() builds the NcclComm from the runtime's MPI communicator (the NCCL unique id
// broadcast over MPI, world rank = MPI rank) and a CudaExecutor on that stream.
//
// execute_async(plan, src, dst) (what DistTensor::redistribute calls):
//   1. prepares this rank's part of the plan (cached; shape checks) and agrees with every world
//      rank, in one bounded MPI all-reduce, whether any rank failed to (-> axe::Error on every
//      rank, naming the lowest failing rank) and whether any rank prepared it afresh (-> every
//      rank splits the plan's sub-communicators together, so per-rank caches can never
//      deadlock ncclCommSplit);
//   2. enqueues every step on the stream and returns (no host synchronisation on the data path).
// synchronize(): waits for everything on the stream, polling NCCL for asynchronous errors,
//   bounded by AXE_TIMEOUT_S (NcclComm::wait): a timeout or an NCCL error aborts the
//   communicators and throws axe::Error; failed() is then true, so every later agreement fails
//   on every rank and ~Runtime ends the job with MPI_Abort. execute() = execute_async +
//   synchronize.
// wait_for_stream(s) / signal_stream(s) (backend.hpp): one event from the pool (stream_wait
//   below) recorded on one stream and waited for by the other; no host wait.
// copy_from_host / copy_to_host: cudaMemcpyAsync on the same stream, then the same bounded wait.
// allocate(n) / allocate_uninitialized(n): a CudaBuffer from the backend's DeviceMemory (below).
// wrap_memory(p, n): a CudaView over p after cudaPointerGetAttributes says it is device memory of
//   this rank's GPU (host, pinned or managed memory, or another GPU: axe::Error naming it).
//
// Example (2 processes, 2 GPUs): AXE_BACKEND=cuda mpirun -np 2 ./app
//   axe::Runtime rt;                 // rt.backend().name() == "cuda", rank k on GPU k
//   auto t = axe::DistTensor::from_global(x, mesh, {Shard(0)});   // CudaBuffer on GPU k
//   auto r = t.redistribute({Replicate()});                        // ncclAllGather
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "axe/cuda/block_cache.hpp"
#include "axe/cuda/device_memory.hpp"
#include "axe/runtime/backend.hpp"

namespace axe::cuda {

// A non-blocking stream of `device` as a SharedStream (device_memory.hpp) that synchronizes before
// it is destroyed.
SharedStream make_shared_stream(int device);

// Stream ordering without a host wait: work enqueued on `waiter` after this call starts only
// after everything enqueued on `signaller` before it has completed (cudaEventRecord on
// `signaller`, cudaStreamWaitEvent on `waiter`). Both are streams of `device` (0 = its legacy
// default stream); the same stream twice is a no-op. The event comes from a process-wide pool of
// reusable events per device (cudaEventDisableTiming) and goes back at once: a stream wait
// captures the event's state when it is enqueued, so the pool holds as many events as calls run
// at the same time (one per thread), never one per call. The current device is restored. Throws
// axe::Error naming both handles when CUDA refuses (a stream of another device, a destroyed one).
// Example: stream_wait(axe_stream, torch_stream, 0);  // axe's next plan after torch's kernels
void stream_wait(cudaStream_t waiter, cudaStream_t signaller, int device);
// Events the pool has created in this process (a diagnostic: bounded by the calls that ever ran
// at the same time, whatever the number of calls).
std::size_t stream_wait_events_created();

// Device memory of one rank from the backend's DeviceMemory, given back to it (free) after all
// work enqueued on its stream that may still use the buffer, and after all work enqueued by then
// on the streams the buffer was lent to (used_on_stream, backend.hpp: the stream first waits for
// each of them). Zero-filled by a memset on the stream unless `zero` is false (a buffer that is
// written whole before any read, e.g. a redistribute result).
class CudaBuffer : public Buffer {
 public:
  CudaBuffer(std::size_t bytes, std::shared_ptr<DeviceMemory> memory, bool zero = true);
  ~CudaBuffer() override;
  CudaBuffer(const CudaBuffer&) = delete;
  CudaBuffer& operator=(const CudaBuffer&) = delete;
  std::size_t bytes() const override { return bytes_; }
  void* device_data() override { return data_; }
  const void* device_data() const { return data_; }
  int device() const { return memory_->device(); }
  void used_on_stream(std::uintptr_t stream) const override;
  // The streams marked by used_on_stream, in marking order.
  const std::vector<cudaStream_t>& lent_to() const { return lent_to_; }

 private:
  void* data_ = nullptr;
  std::size_t bytes_ = 0;
  std::shared_ptr<DeviceMemory> memory_;
  mutable std::vector<cudaStream_t> lent_to_;
};

// Caller-owned device memory (DistTensor::wrap over a device pointer, Backend::wrap_memory): the
// buffer aliases it and never frees it.
class CudaView : public Buffer {
 public:
  CudaView(void* data, std::size_t bytes, int device)
      : data_(data), bytes_(bytes), device_(device) {}
  std::size_t bytes() const override { return bytes_; }
  void* device_data() override { return data_; }
  int device() const { return device_; }

 private:
  void* data_;
  std::size_t bytes_;
  int device_;
};

// Diagnostics of a "cuda" backend (nullopt for another backend): what its last execute read
// straight from the peers' inputs (CudaExecutor::input_reads / source_reads; 0 before the first)
// and its device memory.
struct BackendStats {
  std::int64_t input_reads = 0, source_reads = 0;
  BlockCache::Stats memory;
};
std::optional<BackendStats> backend_stats(const Backend& backend);

// Registers BackendEntry "cuda". Programs that link axe::runtime call it before main, through
// a static initializer in cuda_backend.cpp; calling it again replaces the entry with an equal one.
void register_backend();

}  // namespace axe::cuda
