// Backends of the distributed runtime: where a rank's local buffers live and how a plan runs
// on them (DESIGN §5).
//
// A Backend owns one rank's device (the host, or one GPU) and executes RankPlans on Buffers it
// allocated. The runtime picks one by name ("host", "cuda") through a registry:
//   - "host" is always registered: host memory, the MPI transport (mpi_transport.hpp).
//   - "cuda" is registered by the CUDA backend (runtime/cuda/, target axe::cuda) itself, before
//     main, in every program that links axe::runtime while the backend is built in; the runtime
//     does not name it. Without it, AXE_BACKEND=cuda is an axe::Error.
//
// Example: Runtime rt; rt.backend().name() == "host" on a machine without GPUs;
//   auto b = rt.backend().allocate(4096);  // 4096 zero bytes of host memory
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "axe/exec/executor.hpp"
#include "axe/plan/plan.hpp"

namespace axe {

// One local buffer: bytes on the backend's device. Ownership is the Buffer's; DistTensor holds it
// by shared_ptr. host_data() is non-null only when the bytes are host-addressable.
class Buffer {
 public:
  virtual ~Buffer() = default;
  virtual std::size_t bytes() const = 0;
  virtual std::byte* host_data() { return nullptr; }
  virtual const std::byte* host_data() const { return nullptr; }
  virtual void* device_data() { return nullptr; }  // device pointer (CUDA), else nullptr
  // Work on the caller's stream `stream` (a CUDA stream handle as an integer, as in
  // Backend::wait_for_stream; 0 = the legacy default stream) may use these bytes: the buffer was
  // lent out, e.g. as a torch tensor over it (Python's `t.local`). The rule of release: when the
  // last owner lets go, the memory is returned only after every stream so marked has completed
  // the work enqueued on it by then (CudaBuffer: each such stream gets an event, which the
  // backend's stream waits for before its cudaFreeAsync; no host wait). Each stream marked must
  // outlive the buffer (torch's streams and the default stream do). Default: nothing (host memory,
  // or memory the buffer does not free). Marking the same stream again is free.
  // Example: r.buffer().used_on_stream(s); kernel<<<g, b, 0, s>>>(r.buffer().device_data());
  //   r = {};  // the free waits for the kernel on s, which may still be running
  virtual void used_on_stream(std::uintptr_t stream) const { (void)stream; }
};

// Host memory buffer (zero-initialised).
class HostBuffer : public Buffer {
 public:
  explicit HostBuffer(std::size_t bytes) : data_(bytes) {}
  explicit HostBuffer(std::vector<std::byte> data) : data_(std::move(data)) {}
  std::size_t bytes() const override { return data_.size(); }
  std::byte* host_data() override { return data_.data(); }
  const std::byte* host_data() const override { return data_.data(); }
  std::vector<std::byte>& vector() { return data_; }

 private:
  std::vector<std::byte> data_;
};

// Caller-owned host memory (DistTensor::wrap over a pointer): the buffer aliases it and never
// frees it; the caller keeps it alive while any tensor over it exists.
class HostView : public Buffer {
 public:
  HostView(std::byte* data, std::size_t bytes) : data_(data), bytes_(bytes) {}
  std::size_t bytes() const override { return bytes_; }
  std::byte* host_data() override { return data_; }
  const std::byte* host_data() const override { return data_; }

 private:
  std::byte* data_;
  std::size_t bytes_;
};

// Bytes [offset, offset + bytes) of another buffer, which it keeps alive: the result of a
// redistribution that is a view of its source (DistTensor::redistribute). Host- or
// device-addressable as the parent is.
class BufferSlice : public Buffer {
 public:
  BufferSlice(std::shared_ptr<Buffer> parent, std::size_t offset, std::size_t bytes)
      : parent_(std::move(parent)), offset_(offset), bytes_(bytes) {}
  std::size_t bytes() const override { return bytes_; }
  std::byte* host_data() override {
    std::byte* p = parent_->host_data();
    return p ? p + offset_ : nullptr;
  }
  const std::byte* host_data() const override {
    const std::byte* p = static_cast<const Buffer&>(*parent_).host_data();
    return p ? p + offset_ : nullptr;
  }
  void* device_data() override {
    void* p = parent_->device_data();
    return p ? static_cast<std::byte*>(p) + offset_ : nullptr;
  }
  void used_on_stream(std::uintptr_t stream) const override { parent_->used_on_stream(stream); }
  const Buffer& parent() const { return *parent_; }

 private:
  std::shared_ptr<Buffer> parent_;
  std::size_t offset_, bytes_;
};

class Runtime;

class Backend {
 public:
  virtual ~Backend() = default;
  virtual std::string_view name() const = 0;
  // Zero-filled buffer of `bytes` bytes on this backend's device.
  virtual std::shared_ptr<Buffer> allocate(std::size_t bytes) = 0;
  // A buffer whose contents are unspecified until written (the result of a redistribute, which
  // the plan writes whole, padding included): no fill pass. Default: allocate(bytes).
  virtual std::shared_ptr<Buffer> allocate_uninitialized(std::size_t bytes) { return allocate(bytes); }
  // Copies between host memory and a buffer; sizes must match exactly (axe::Error otherwise).
  virtual void copy_from_host(std::span<const std::byte> src, Buffer& dst) = 0;
  virtual void copy_to_host(const Buffer& src, std::span<std::byte> dst) = 0;
  // Runs this rank's part of a plan: `src` is never modified, `dst` receives the destination
  // shard (padding NaN / 0). Both sized exactly as plan.buffers front/back (axe::Error otherwise).
  // Bounded in time by the runtime's timeout; throws axe::Error on timeout or peer failure.
  virtual void execute(const RankPlan& plan, const Buffer& src, Buffer& dst) = 0;

  // Asynchronous execution (DistTensor::redistribute uses it): enqueues the plan on the backend's
  // stream and may return before the data has moved. Requires what execute requires; the caller
  // keeps `src` and `dst` alive and unwritten, and does not read `dst` on the host, until
  // synchronize() returns; the backend must not use `plan` after returning (it copies what it
  // needs). Work enqueued by successive calls runs in call order, so a later plan may read an
  // earlier plan's `dst` without synchronizing. Errors may surface here or at synchronize().
  // Default: execute (synchronous; the host backend).
  virtual void execute_async(const RankPlan& plan, const Buffer& src, Buffer& dst) {
    execute(plan, src, dst);
  }
  // The same split in two around the caller's agreement, to save the backend its own: before it,
  // needs_preparation(plan) says (locally, without side effects) whether this rank would still
  // have plan-time work for `plan`; the caller max-reduces that over every rank in its
  // agreement and passes the result to execute_agreed. With false (every rank has the plan
  // ready) the backend may skip its cross-rank steps. Defaults: false, and execute_async.
  virtual bool needs_preparation(const RankPlan& plan) const {
    (void)plan;
    return false;
  }
  virtual void execute_agreed(const RankPlan& plan, const Buffer& src, Buffer& dst, bool any_rank_prepares) {
    (void)any_rank_prepares;
    execute_async(plan, src, dst);
  }
  // Waits until every execute_async issued on this rank has completed (host-visible); rethrows
  // their errors as axe::Error. Default: nothing pending.
  virtual void synchronize() {}

  // Ordering with a caller's stream through events, without host waits (what
  // DistTensor::redistribute(to, CallerStream{s}) and Python's redistribute(stream=) use).
  // `stream` is a CUDA stream handle (cudaStream_t as an integer; 0 = the legacy default stream,
  // which is torch's default current stream) on this backend's device.
  //   wait_for_stream(s): backend work enqueued after this call (plans, copies, frees) starts only
  //     after everything enqueued on `s` before this call has completed. Call it before a plan
  //     reads memory that work on `s` writes.
  //   signal_stream(s): work enqueued on `s` after this call starts only after everything the
  //     backend enqueued before this call has completed. Call it before work on `s` reads (or
  //     writes) a result, or writes memory a pending plan reads.
  // Both return at once (the CUDA backend: cudaEventRecord on one stream, cudaStreamWaitEvent on
  // the other, with an event from a small per-device pool of reusable events; never a host wait
  // and no event created per call). Neither orders anything after later work on `s`. A handle of
  // another device or a destroyed stream: axe::Error. Default (the host backend, whose work has
  // finished when its calls return): nothing.
  // Example (cuda): produce<<<g, b, 0, s>>>(src_ptr);   // writes the source
  //   backend.wait_for_stream(s); backend.execute_async(plan, src, dst); backend.signal_stream(s);
  //   consume<<<g, b, 0, s>>>(dst_ptr);                  // reads the plan's result: no synchronize
  virtual void wait_for_stream(std::uintptr_t stream) { (void)stream; }
  virtual void signal_stream(std::uintptr_t stream) { (void)stream; }
  // Per-step transports (the CUDA backend with one GPU per rank on one node: NCCL and the peer
  // transport, each step on the one the cost model prices lower; include/axe/cuda/executor.hpp).
  // Collective over the world. `which`: "" the cost model chooses, "network" or "peer" forces one
  // for the plans run from now on (calibration measures both). Returns false, on every rank
  // alike, when there is no such choice here (the host backend, ranks sharing a GPU or on
  // several nodes, AXE_PEER_TRANSPORT 0 or 2, a system that refuses CUDA IPC): nothing changes.
  // Default: no choice ("" alone is accepted).
  virtual bool set_transport(std::string_view which) { return which.empty(); }
  // True once the backend is unusable (the CUDA backend: NCCL reported an error or timed out and
  // its communicators were aborted). Runtime::failed() includes it, so ~Runtime ends the job with
  // MPI_Abort instead of waiting in MPI_Finalize on a peer that may be dead. Default: never.
  virtual bool failed() const { return false; }
  // Gives the device memory the backend keeps cached for reuse (freed buffers) back to the system,
  // so that another allocator on the device (torch's) may use it; returns its bytes. Local (no
  // other rank takes part); waits for the backend's work first, at most the runtime's timeout
  // (axe::Error after it). Live buffers keep their memory. Default: 0 (nothing cached).
  // Example (cuda): { auto t = x.redistribute(...); }  // t's block is cached now
  //   backend.release_cached_memory() -> t's block among the bytes given back
  virtual std::size_t release_cached_memory() { return 0; }

  // A Buffer over caller-owned memory (DistTensor::wrap over a pointer), which the backend reads
  // and writes in place and never frees: host memory for "host". Default: axe::Error (the backend
  // cannot alias caller memory).
  virtual std::shared_ptr<Buffer> wrap_memory(void* data, std::size_t bytes);
};

// Registry. `available` says whether the backend can run here (e.g. a GPU is visible); the
// default backend is "cuda" when registered and available, else "host".
struct BackendEntry {
  std::string name;
  std::function<bool()> available;
  std::function<std::unique_ptr<Backend>(Runtime&)> make;
};
void register_backend(BackendEntry entry);  // replaces an entry of the same name
std::vector<std::string> registered_backends();

}  // namespace axe
