// The "cuda" backend of the runtime: CudaBuffer, the lazily built NcclComm + CudaExecutor, and
// the cross-rank agreement before a plan's collective preparation (include/axe/cuda/backend.hpp).
#include "axe/cuda/backend.hpp"

#include <cuda_runtime_api.h>

#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "axe/cuda/check.hpp"
#include "axe/cuda/executor.hpp"
#include "axe/cuda/nccl_comm.hpp"
#include "axe/cuda/peer_comm.hpp"
#include "axe/core/error.hpp"
#include "axe/core/tunables.hpp"
#include "axe/runtime/control.hpp"
#include "axe/runtime/runtime.hpp"

namespace axe::cuda {

SharedStream make_shared_stream(int device) {
  AXE_CUDA_CHECK(cudaSetDevice(device));
  cudaStream_t s = nullptr;
  AXE_CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  return SharedStream(s, [device](cudaStream_t x) {
    cudaSetDevice(device);
    cudaStreamSynchronize(x);
    cudaStreamDestroy(x);
  });
}

namespace {

// The pool of stream_wait: free events per device, created on demand, never destroyed (buffers
// freed at exit still order their release through it, so it outlives every static).
struct EventPool {
  std::mutex mutex;
  std::vector<std::pair<int, cudaEvent_t>> free;
  std::atomic<std::size_t> created{0};
};

EventPool& event_pool() {
  static EventPool* pool = new EventPool;
  return *pool;
}

std::string handle_text(cudaStream_t s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%p", static_cast<void*>(s));
  return buf;
}

// stream_wait without throwing (buffer destructors): the first CUDA error, cleared.
cudaError_t try_stream_wait(cudaStream_t waiter, cudaStream_t signaller, int device) {
  if (waiter == signaller) return cudaSuccess;
  int previous = -1;
  if (cudaGetDevice(&previous) != cudaSuccess) previous = -1;
  cudaError_t e = previous == device ? cudaSuccess : cudaSetDevice(device);
  cudaEvent_t ev = nullptr;
  EventPool& pool = event_pool();
  if (e == cudaSuccess) {
    std::lock_guard<std::mutex> lock(pool.mutex);
    auto it = std::find_if(pool.free.begin(), pool.free.end(),
                           [&](const auto& p) { return p.first == device; });
    if (it != pool.free.end()) {
      ev = it->second;
      pool.free.erase(it);
    }
  }
  if (e == cudaSuccess && !ev) {
    e = cudaEventCreateWithFlags(&ev, cudaEventDisableTiming);
    if (e == cudaSuccess)
      ++pool.created;
    else
      ev = nullptr;
  }
  if (e == cudaSuccess) e = cudaEventRecord(ev, signaller);
  // The wait captures the event as recorded now: the event may be recorded again at once.
  if (e == cudaSuccess) e = cudaStreamWaitEvent(waiter, ev, 0);
  if (ev) {
    std::lock_guard<std::mutex> lock(pool.mutex);
    pool.free.emplace_back(device, ev);
  }
  if (e != cudaSuccess) cudaGetLastError();
  if (previous >= 0 && previous != device) cudaSetDevice(previous);
  return e;
}

}  // namespace

void stream_wait(cudaStream_t waiter, cudaStream_t signaller, int device) {
  const cudaError_t e = try_stream_wait(waiter, signaller, device);
  if (e != cudaSuccess)
    fail("cuda backend: cannot order stream " + handle_text(waiter) + " after stream " +
         handle_text(signaller) + " on device " + std::to_string(device) + ": " +
         cudaGetErrorString(e) + " (both must be live streams of device " + std::to_string(device) +
         "; 0 is its default stream)");
}

std::size_t stream_wait_events_created() {
  return event_pool().created.load();
}

CudaBuffer::CudaBuffer(std::size_t bytes, std::shared_ptr<DeviceMemory> memory, bool zero)
    : bytes_(bytes), memory_(std::move(memory)) {
  if (bytes_ == 0) return;
  data_ = memory_->allocate(bytes_);
  // On the backend's stream, where every later use of the buffer is ordered: cudaMemset on the
  // legacy default stream is asynchronous to the host and unordered with the backend's
  // non-blocking stream, so it could land after a copy_from_host or an execute had written.
  if (zero) {
    const cudaError_t e = cudaMemsetAsync(data_, 0, bytes_, memory_->stream());
    if (e != cudaSuccess) {
      memory_->free(data_);
      data_ = nullptr;
      AXE_CUDA_CHECK(e);
    }
  }
}

CudaBuffer::~CudaBuffer() {
  if (!data_) return;
  // The block goes back in the backend's stream order: first after the work of every stream it
  // was lent to (enqueued by now), so a consumer still reading it cannot see the next
  // allocation's writes. A failure here (a consumer stream already destroyed) cannot be reported
  // from a destructor; the block is still given back.
  for (cudaStream_t s : lent_to_) try_stream_wait(memory_->stream(), s, memory_->device());
  memory_->free(data_);
}

void CudaBuffer::used_on_stream(std::uintptr_t stream) const {
  auto s = reinterpret_cast<cudaStream_t>(stream);
  if (!data_ || s == memory_->stream()) return;
  if (std::find(lent_to_.begin(), lent_to_.end(), s) == lent_to_.end()) lent_to_.push_back(s);
}

namespace {

int device_count() {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    cudaGetLastError();  // no driver / no device: clear the sticky error
    return 0;
  }
  return n;
}

void* device_pointer(Buffer& b) { return b.device_data(); }
const void* device_pointer(const Buffer& b) { return const_cast<Buffer&>(b).device_data(); }

std::string pointer_text(const void* p) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%p", p);
  return buf;
}

std::string memory_type_text(cudaMemoryType t) {
  switch (t) {
    case cudaMemoryTypeUnregistered: return "unregistered host memory";
    case cudaMemoryTypeHost: return "pinned host memory";
    case cudaMemoryTypeDevice: return "device memory";
    case cudaMemoryTypeManaged: return "managed memory";
  }
  return "memory of unknown type";
}

// Every rank's host and GPU (UUID), all-gathered over the runtime's control plane.
std::vector<RankPlace> gather_places(Control& control, int device) {
  cudaDeviceProp prop{};
  AXE_CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
  std::array<char, 256> mine{};
  gethostname(mine.data(), 127);
  mine[127] = '\0';
  char* gpu = mine.data() + 128;
  for (int i = 0; i < 16; ++i)
    std::snprintf(gpu + 2 * i, 3, "%02x", static_cast<unsigned char>(prop.uuid.bytes[i]));
  const auto all = control.allgather(std::as_bytes(std::span<const char>(mine)), "cuda backend: the ranks' GPUs");
  std::vector<RankPlace> places(all.size());
  for (std::size_t r = 0; r < places.size(); ++r) {
    if (all[r].size() != mine.size()) fail("cuda backend: rank " + std::to_string(r) + " sent a malformed GPU description");
    const char* p = reinterpret_cast<const char*>(all[r].data());
    places[r] = {std::string(p), "GPU-" + std::string(p + 128)};
  }
  return places;
}

class CudaBackend : public Backend {
 public:
  explicit CudaBackend(Runtime& rt) : rt_(rt) {
    const int n = device_count();
    if (n < 1) fail("cuda backend: rank " + std::to_string(rt.rank()) + " sees no CUDA device");
    device_ = rt.local_rank() % n;
    AXE_CUDA_CHECK(cudaSetDevice(device_));
    memory_ = std::make_shared<DeviceMemory>(device_, make_shared_stream(device_), rt.timeout_s());
    stream_ = memory_->stream();
    AXE_CUDA_CHECK(cudaEventCreateWithFlags(&done_, cudaEventDisableTiming));
  }
  ~CudaBackend() override {
    cudaSetDevice(device_);
    executor_.reset();  // waits for its stream (and the peers' copies), frees staging
    comm_.reset();      // finalizes (or aborts after a failure) every communicator
    peer_.reset();
    if (done_) cudaEventDestroy(done_);
    // memory_ (and its stream) goes with the last buffer allocated from it.
  }

  std::string_view name() const override { return "cuda"; }

  std::shared_ptr<Buffer> allocate(std::size_t bytes) override {
    return std::make_shared<CudaBuffer>(bytes, memory_);
  }
  std::shared_ptr<Buffer> allocate_uninitialized(std::size_t bytes) override {
    return std::make_shared<CudaBuffer>(bytes, memory_, false);
  }

  void copy_from_host(std::span<const std::byte> src, Buffer& dst) override {
    if (src.size() != dst.bytes())
      fail("cuda backend: copy of " + std::to_string(src.size()) + " host bytes into a device buffer of " +
           std::to_string(dst.bytes()));
    if (src.empty()) return;
    void* d = device_pointer(dst);
    if (!d) fail("cuda backend: copy_from_host into a buffer that is not in device memory");
    AXE_CUDA_CHECK(cudaSetDevice(device_));
    AXE_CUDA_CHECK(cudaMemcpyAsync(d, src.data(), src.size(), cudaMemcpyHostToDevice, stream_));
    wait_stream("cuda backend: copy_from_host");
  }

  void copy_to_host(const Buffer& src, std::span<std::byte> dst) override {
    if (dst.size() != src.bytes())
      fail("cuda backend: copy of a device buffer of " + std::to_string(src.bytes()) + " bytes into " +
           std::to_string(dst.size()) + " host bytes");
    if (dst.empty()) return;
    const void* s = device_pointer(src);
    if (!s) fail("cuda backend: copy_to_host from a buffer that is not in device memory");
    AXE_CUDA_CHECK(cudaSetDevice(device_));
    AXE_CUDA_CHECK(cudaMemcpyAsync(dst.data(), s, dst.size(), cudaMemcpyDeviceToHost, stream_));
    wait_stream("cuda backend: copy_to_host");
  }

  // Synchronous: enqueue, then wait (bounded, NCCL errors polled).
  void execute(const RankPlan& plan, const Buffer& src, Buffer& dst) override {
    execute_async(plan, src, dst);
    synchronize();
  }

  // Host work first (checks, plan preparation, one bounded agreement, communicator splits
  // for a freshly prepared plan), then every step enqueued on stream_; no wait on the device.
  void execute_async(const RankPlan& plan, const Buffer& src, Buffer& dst) override {
    std::string err = check_buffers(plan, src, dst);
    if (err.empty() && (!executor_ || (can_add_peer() && rt_.cost_model().has_peer()))) {
      // First execute: every rank gets here together (DistTensor runs each plan on every rank),
      // so the broadcast of the NCCL unique id over the control plane is matched. Later, a cost
      // model given peer lines since (Runtime::set_cost_model, agreed by every rank) sets the peer
      // transport up beside NCCL, as every rank prepares the plans it makes anew.
      try {
        AXE_CUDA_CHECK(cudaSetDevice(device_));
        if (!executor_) connect_transport();
        else ensure_per_step();
      } catch (const std::exception& e) {
        err = e.what();
      }
    }
    bool fresh = false;
    if (err.empty()) {
      try {
        AXE_CUDA_CHECK(cudaSetDevice(device_));
        fresh = executor_->prepare_local(plan);
      } catch (const std::exception& e) {
        err = e.what();
      }
    }
    // One bounded all-reduce: the lowest failing rank (size - rank), and whether any rank
    // prepared the plan now (then every rank joins the communicator splits of connect()).
    const auto size = static_cast<std::uint64_t>(rt_.size());
    std::uint64_t v[2] = {err.empty() ? 0 : size - static_cast<std::uint64_t>(rt_.rank()), fresh ? 1u : 0u};
    rt_.control().allreduce_max(v, "cuda backend: plan preparation");
    if (v[0] != 0) {
      const auto bad = static_cast<std::int64_t>(size - v[0]);
      if (!err.empty()) fail("cuda backend: " + err);
      fail("cuda backend: rank " + std::to_string(bad) + " could not prepare the plan (rank " +
           std::to_string(rt_.rank()) + " stops too; see rank " + std::to_string(bad) + "'s error)");
    }
    if (v[1] != 0) executor_->connect(plan);
    executor_->execute(plan, device_pointer(src), device_pointer(dst));
  }

  bool needs_preparation(const RankPlan& plan) const override { return !executor_ || !executor_->ready(plan); }

  // After an agreement that every rank has `plan` prepared and connected: the local checks, then
  // the steps are enqueued; no cross-rank step.
  void execute_agreed(const RankPlan& plan, const Buffer& src, Buffer& dst, bool any_rank_prepares) override {
    if (any_rank_prepares || !executor_) return execute_async(plan, src, dst);
    if (std::string err = check_buffers(plan, src, dst); !err.empty()) fail("cuda backend: " + err);
    AXE_CUDA_CHECK(cudaSetDevice(device_));
    executor_->execute(plan, device_pointer(src), device_pointer(dst));
  }

  // Everything enqueued on stream_ (plans, copies, memsets) has completed. With a communicator,
  // the wait polls NCCL and is bounded by AXE_TIMEOUT_S (NcclComm::wait: error or timeout ->
  // every communicator aborted, axe::Error; failed() is true from then on).
  void synchronize() override { wait_stream("cuda backend: synchronize"); }

  // Event ordering with a caller's stream (backend.hpp): no host wait.
  void wait_for_stream(std::uintptr_t stream) override {
    stream_wait(stream_, reinterpret_cast<cudaStream_t>(stream), device_);
  }
  void signal_stream(std::uintptr_t stream) override {
    stream_wait(reinterpret_cast<cudaStream_t>(stream), stream_, device_);
  }

  // Caller device memory on this backend's GPU, aliased (never freed).
  std::shared_ptr<Buffer> wrap_memory(void* data, std::size_t bytes) override {
    if (bytes == 0) return std::make_shared<CudaView>(nullptr, 0, device_);
    cudaPointerAttributes a{};
    const cudaError_t e = cudaPointerGetAttributes(&a, data);
    if (e != cudaSuccess) {
      cudaGetLastError();
      fail("cuda backend: cannot wrap caller memory at " + pointer_text(data) +
           ": cudaPointerGetAttributes failed: " + cudaGetErrorString(e));
    }
    if (a.type != cudaMemoryTypeDevice)
      fail("cuda backend: caller memory at " + pointer_text(data) + " is " + memory_type_text(a.type) +
           ", not device memory: DistTensor::wrap over a pointer needs cudaMalloc'd memory on device " +
           std::to_string(device_) + " (wrap host data by value instead)");
    if (a.device != device_)
      fail("cuda backend: caller memory at " + pointer_text(data) + " is on device " + std::to_string(a.device) +
           ", this rank's backend uses device " + std::to_string(device_));
    return std::make_shared<CudaView>(data, bytes, device_);
  }

  bool failed() const override { return (comm_ && comm_->failed()) || (peer_ && peer_->failed()); }

  std::size_t release_cached_memory() override { return memory_->release_cached(); }

  BackendStats stats() const {
    BackendStats s;
    if (executor_) {
      s.input_reads = executor_->input_reads();
      s.source_reads = executor_->source_reads();
    }
    s.memory = memory_->stats();
    return s;
  }

  // Per-step transports (backend.hpp): collective, every rank calls it with the same `which`.
  bool set_transport(std::string_view which) override {
    if (which != "" && which != "network" && which != "peer")
      fail("cuda backend: set_transport('" + std::string(which) + "'): expected '', 'network' or 'peer'");
    AXE_CUDA_CHECK(cudaSetDevice(device_));
    if (!executor_) connect_transport();
    if (which.empty() ? !(peer_ && comm_) : !ensure_per_step()) return which.empty();
    executor_->set_step_transport(which.empty() ? StepTransport::Model
                                  : which == "peer" ? StepTransport::Peer
                                                    : StepTransport::Network);
    return true;
  }

 private:
  // The transport of this job (choose_transport; peer_comm.hpp) and the executor over it.
  // Collective over the world, called by every rank at its first execute. Every decision is
  // made from all-gathered facts, so all ranks decide alike.
  // With a GPU per rank on one node (per_step), the peer transport joins NCCL when the cost model
  // prices it (peer entries) or calibration asks for it (set_transport): ensure_per_step().
  void connect_transport() {
    Control& control = rt_.control();
    const auto places = gather_places(control, device_);
    const TransportChoice choice = choose_transport(static_cast<int>(tunable_int("AXE_PEER_TRANSPORT")), places);
    per_step_ = choice.per_step;
    std::string note = choice.note;
    if (choice.peer) {
      try {
        peer_ = make_peer();
      } catch (const PeerUnavailable& e) {
        if (choice.shared) throw;  // NCCL cannot carry ranks that share a GPU
        note = std::string(e.what()) + "; NCCL moves the data";
      }
    }
    if (peer_) {
      executor_ = std::make_unique<CudaExecutor>(peer_.get(), stream_);
    } else {
      ncclUniqueId id{};
      if (rt_.rank() == 0) id = NcclComm::unique_id();
      control.broadcast(std::as_writable_bytes(std::span<ncclUniqueId>(&id, 1)), 0, "cuda backend: NCCL unique id");
      comm_ = std::make_unique<NcclComm>(id, rt_.rank(), rt_.size(), device_, rt_.timeout_s());
      executor_ = std::make_unique<CudaExecutor>(comm_.get(), stream_);
    }
    if (!note.empty() && rt_.rank() == 0) std::fprintf(stderr, "axe: %s\n", note.c_str());
    if (can_add_peer() && rt_.cost_model().has_peer()) ensure_per_step();
  }

  // The peer transport can still join NCCL here (per step): the same on every rank.
  bool can_add_peer() const { return per_step_ && comm_ && !peer_ && !peer_refused_; }

  std::unique_ptr<PeerComm> make_peer() {
    Control& control = rt_.control();
    PeerComm::AllGather allgather = [&control](std::span<const std::byte> mine) {
      return control.allgather(mine, "peer transport: handles");
    };
    auto peer = std::make_unique<PeerComm>(std::move(allgather), rt_.rank(), rt_.size(), device_, rt_.timeout_s());
    // A rank waiting on its host for a peer's post (a cached redistribute reading the peers'
    // input) ends with the disagreement when the peer asked for another request.
    Runtime& rt = rt_;
    peer->set_host_poll([&rt] { rt.poll_agreements(); });
    return peer;
  }

  // The peer transport beside NCCL, and an executor over both (the prepared plans go with the old
  // one). Collective over the world; every rank has the same per_step_ and peer_refused_. Returns
  // whether both are there; a system that refuses CUDA IPC leaves NCCL alone, with one line.
  bool ensure_per_step() {
    if (peer_ && comm_) return true;
    if (!can_add_peer()) return false;
    try {
      peer_ = make_peer();
    } catch (const PeerUnavailable& e) {
      peer_refused_ = true;
      if (rt_.rank() == 0) std::fprintf(stderr, "axe: %s; NCCL moves the data\n", e.what());
      return false;
    }
    executor_.reset();
    executor_ = std::make_unique<CudaExecutor>(comm_.get(), peer_.get(), stream_);
    executor_->set_cost_model(&rt_.cost_model());
    return true;
  }

  // Waits for all of stream_ (wait_transports: bounded, NCCL errors polled, once a transport
  // exists; before, only copies and memsets can be pending, and a plain event wait serves).
  void wait_stream(const char* what) {
    AXE_CUDA_CHECK(cudaSetDevice(device_));
    AXE_CUDA_CHECK(cudaEventRecord(done_, stream_));
    wait_transports(done_, comm_.get(), peer_.get(), what);
  }

  // This rank's reason not to run `plan` on these buffers ("" when fine).
  std::string check_buffers(const RankPlan& plan, const Buffer& src, const Buffer& dst) const {
    const std::int64_t es = size_of(plan.dtype);
    std::string err;
    if (comm_ && comm_->failed())
      err = "rank " + std::to_string(rt_.rank()) + ": NCCL failed earlier (communicators aborted)";
    else if (peer_ && peer_->failed())
      err = "rank " + std::to_string(rt_.rank()) + ": the peer transport failed earlier";
    else if (plan.buffers.empty())
      err = "rank " + std::to_string(rt_.rank()) + ": the plan has no buffers";
    else if (static_cast<std::int64_t>(src.bytes()) != plan.buffers.front() * es)
      err = "rank " + std::to_string(rt_.rank()) + ": source buffer has " + std::to_string(src.bytes()) +
            " bytes, the plan expects " + std::to_string(plan.buffers.front() * es);
    else if (static_cast<std::int64_t>(dst.bytes()) != plan.buffers.back() * es)
      err = "rank " + std::to_string(rt_.rank()) + ": destination buffer has " + std::to_string(dst.bytes()) +
            " bytes, the plan expects " + std::to_string(plan.buffers.back() * es);
    else if ((src.bytes() && !device_pointer(src)) || (dst.bytes() && !device_pointer(dst)))
      err = "rank " + std::to_string(rt_.rank()) + ": buffers are not in device memory";
    return err;
  }

  Runtime& rt_;
  int device_ = 0;
  std::shared_ptr<DeviceMemory> memory_;
  cudaStream_t stream_ = nullptr;  // memory_->stream()
  cudaEvent_t done_ = nullptr;
  std::unique_ptr<NcclComm> comm_;
  // Instead of comm_: ranks of one node that share GPUs (or asked to); beside it: per step.
  std::unique_ptr<PeerComm> peer_;
  bool per_step_ = false;      // choose_transport's per_step
  bool peer_refused_ = false;  // the system refused CUDA IPC when the peer transport was tried
  std::unique_ptr<CudaExecutor> executor_;
};

}  // namespace

std::optional<BackendStats> backend_stats(const Backend& backend) {
  if (const auto* b = dynamic_cast<const CudaBackend*>(&backend)) return b->stats();
  return std::nullopt;
}

void register_backend() {
  axe::register_backend({"cuda", [] { return device_count() > 0; },
                         [](Runtime& rt) -> std::unique_ptr<Backend> { return std::make_unique<CudaBackend>(rt); }});
}

}  // namespace axe::cuda

// The backend registers itself when this object is linked in: axe::runtime's link options name
// this symbol (`--undefined`, runtime/cuda/CMakeLists.txt), so every program that links the runtime
// pulls the object from the static library and runs this initializer before main. The runtime
// never names the backend. No CUDA call happens here: availability is asked when a Runtime starts.
extern "C" const bool axe_cuda_backend_registered = (axe::cuda::register_backend(), true);
