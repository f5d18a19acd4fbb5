// The cuda backend's device memory: DeviceMemory, a BlockCache (block_cache.hpp) over cudaMalloc
// whose blocks are reused in one stream's order (the backend's CudaBuffers come from it, backend.hpp).
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <memory>
#include <mutex>

#include "axe/cuda/block_cache.hpp"

namespace axe::cuda {

// A CUDA stream shared by a backend and the buffers it allocated (destroyed with the last holder,
// so a buffer that outlives its backend can still be freed in stream order).
using SharedStream = std::shared_ptr<CUstream_st>;

// The backend's device memory (one per backend): a BlockCache (block_cache.hpp) over cudaMalloc on
// `device`, so that its buffers can be exported to the peers with legacy CUDA IPC (a receiver of
// the peer transport reads a message straight out of the sender's buffer; memory from the
// stream-ordered pool of cudaMallocAsync cannot be exported) and a redistribute that allocates its
// result costs no cudaMalloc once the cache is warm. A freed block is reused by the next
// allocation of its class at once: safe because every use of the backend's buffers is ordered on
// `stream` (CudaBuffer's free is, backend.hpp). When cudaMalloc refuses and the cache holds
// blocks no buffer uses, allocate() waits for `stream` (at most `timeout_s`: a stream stuck on a
// stopped peer fails the allocation instead of hanging it), gives them back (trim) and asks once
// more; a refusal then throws axe::Error naming the bytes, the device and the live buffers. The
// destructor waits for `stream` and frees all.
// Thread-safe.
// Example: DeviceMemory m(0, s, 300); void* p = m.allocate(1000);  // a 1 KiB slot of a 2 MiB slab
//   m.free(p); m.allocate(900) == p;                          // the same block, no cudaMalloc
class DeviceMemory {
 public:
  DeviceMemory(int device, SharedStream stream, double timeout_s);
  ~DeviceMemory();
  DeviceMemory(const DeviceMemory&) = delete;
  DeviceMemory& operator=(const DeviceMemory&) = delete;
  void* allocate(std::size_t bytes);
  // p (from allocate) may be reused by work enqueued on stream() from now on.
  void free(void* p) noexcept;
  int device() const { return device_; }
  cudaStream_t stream() const { return stream_.get(); }
  BlockCache::Stats stats() const;
  // Gives back every allocation no buffer uses (BlockCache::trim) after `stream` has finished
  // what was enqueued, waiting at most `timeout_s` (axe::Error after it); returns the bytes.
  std::size_t release_cached();

 private:
  bool has_unused() const;  // the cache holds bytes no live buffer uses
  bool drained();           // the stream finished what was enqueued, within timeout_s_
  int device_;
  SharedStream stream_;
  double timeout_s_;
  cudaEvent_t drain_ = nullptr;
  mutable std::mutex mutex_;
  cudaError_t refused_ = cudaSuccess;  // the last cudaMalloc error (for the message)
  BlockCache cache_;
};

}  // namespace axe::cuda
