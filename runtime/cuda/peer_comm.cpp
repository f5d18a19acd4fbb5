// PeerComm without MPI (the all-gather is a callback, so programs that do not construct it from
// MPI need no libmpi): flag blocks, IPC mapping, the stream-ordered protocol, the bounded wait,
// and the transport choice.
#include "axe/cuda/peer_comm.hpp"

#include <cuda.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <map>
#include <set>

#include "axe/core/backoff.hpp"
#include "axe/core/tunables.hpp"
#include "axe/cuda/check.hpp"

namespace axe::cuda {

TransportChoice choose_transport(int setting, std::span<const RankPlace> places) {
  if (setting < 0 || setting > 2)
    fail("AXE_PEER_TRANSPORT=" + std::to_string(setting) + " is not 0, 1 or 2");
  std::set<std::string> nodes;
  std::map<std::pair<std::string, std::string>, int> first;  // (node, gpu) -> its first rank
  int a = -1, b = -1;                                         // two ranks sharing a GPU
  for (std::size_t r = 0; r < places.size(); ++r) {
    nodes.insert(places[r].node);
    auto [it, fresh] = first.try_emplace({places[r].node, places[r].gpu}, static_cast<int>(r));
    if (!fresh && a < 0) {
      a = it->second;
      b = static_cast<int>(r);
    }
  }
  const bool one_node = nodes.size() <= 1;
  const std::string spans = std::to_string(nodes.size()) + " nodes";
  if (a >= 0) {
    const std::string shared = "ranks " + std::to_string(a) + " and " + std::to_string(b) + " share GPU " +
                               places[static_cast<std::size_t>(a)].gpu + " on " +
                               places[static_cast<std::size_t>(a)].node;
    if (setting == 0)
      fail(shared + ", and AXE_PEER_TRANSPORT=0 leaves only NCCL, which needs a GPU per rank: set "
                    "AXE_PEER_TRANSPORT=1 or start one rank per GPU");
    if (!one_node)
      fail(shared + ", but the job spans " + spans +
           " and the peer transport works inside one node: start one rank per GPU");
    return {true, true, false, ""};
  }
  if (setting == 2) {
    if (one_node) return {true, false, false, ""};
    return {false, false, false, "AXE_PEER_TRANSPORT=2: the job spans " + spans +
                       " and the peer transport works inside one node; NCCL moves the data"};
  }
  return {false, false, one_node && setting == 1 && places.size() > 1, ""};
}

namespace {

using WaitValue = CUresult (*)(CUstream, CUdeviceptr, cuuint64_t, unsigned int);
using WriteValue = CUresult (*)(CUstream, CUdeviceptr, cuuint64_t, unsigned int);
using PointerAttributes = CUresult (*)(unsigned int, CUpointer_attribute*, void**, CUdeviceptr);

// The driver's stream memory operations, through the runtime (no link against libcuda, so
// programs still start on machines without a driver).
template <class F>
F driver_entry(const char* name) {
  void* p = nullptr;
  cudaDriverEntryPointQueryResult q{};
  const cudaError_t e = cudaGetDriverEntryPointByVersion(name, &p, 12000, cudaEnableDefault, &q);
  if (e != cudaSuccess || q != cudaDriverEntryPointSuccess || !p)
    fail(std::string("peer transport: the CUDA driver has no ") + name + " (" + cudaGetErrorString(e) + ")");
  return reinterpret_cast<F>(p);
}

void check_driver(CUresult r, const char* what) {
  if (r != CUDA_SUCCESS) fail(std::string("peer transport: ") + what + " failed (CUresult " + std::to_string(r) + ")");
}

CUdeviceptr address(const std::uint64_t* p) { return reinterpret_cast<CUdeviceptr>(p); }

std::string seconds_text(double s) {  // 5 -> "5", 2.5 -> "2.5"
  char b[32];
  std::snprintf(b, sizeof b, "%g", s);
  return b;
}

}  // namespace

PeerComm::PeerComm(AllGather allgather, int rank, int size, int device, double timeout_s)
    : allgather_(std::move(allgather)), rank_(rank), size_(size), device_(device) {
  timeout_ = timeout_s > 0 ? timeout_s : tunable_seconds("AXE_TIMEOUT_S");
  init();
}

namespace {

// A rank's flag block: POSIX shared memory, mapped by every rank of the node and registered with
// CUDA (the streams write and await it through its device address). Host memory on purpose: a
// failed rank releases its own streams' waits with plain CPU stores (release_waits), which no
// stream that is stuck on one of those waits can hold up, as a copy into device memory could
// (streams share the device's hardware queues).
void* map_shared(const std::string& name, std::size_t bytes, bool create, std::string& err) {
  const int fd = shm_open(name.c_str(), create ? O_CREAT | O_EXCL | O_RDWR : O_RDWR, 0600);
  if (fd < 0) {
    err = "shm_open(" + name + "): " + std::strerror(errno);
    return nullptr;
  }
  if (create && ftruncate(fd, static_cast<off_t>(bytes)) != 0) {
    err = "ftruncate(" + name + "): " + std::strerror(errno);
    close(fd);
    return nullptr;
  }
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  close(fd);
  if (p == MAP_FAILED) {
    err = "mmap(" + name + "): " + std::strerror(errno);
    return nullptr;
  }
  const cudaError_t e = cudaHostRegister(p, bytes, cudaHostRegisterMapped | cudaHostRegisterPortable);
  if (e != cudaSuccess) {
    cudaGetLastError();
    munmap(p, bytes);
    err = "cudaHostRegister(" + name + "): " + cudaGetErrorString(e);
    return nullptr;
  }
  return p;
}

}  // namespace

void PeerComm::init() {
  AXE_CUDA_CHECK(cudaSetDevice(device_));
  const auto n = static_cast<std::size_t>(size_);
  sent_.assign(n, 0);
  received_.assign(n, 0);
  waited_consumed_.assign(n, 0);
  posted_.assign(n, 0);
  taken_.assign(n, 0);
  maps_.assign(n, {});
  // Block words: ready[n], consumed[n], taken[n] (how many of this rank's posts each peer took),
  // then each sender's ring of posts to this rank (kPostDepth slots of kPostWords).
  block_bytes_ = ((3 * n + n * kPostDepth * kPostWords) * sizeof(std::uint64_t) + 4095) / 4096 * 4096;
  host_blocks_.assign(n, nullptr);
  peer_flags_.assign(n, nullptr);
  // This rank's block, zeroed before any peer can see its name.
  std::string err;
  char name[96];
  std::snprintf(name, sizeof name, "/axe-peer-%d-%d-%llx", static_cast<int>(getpid()), rank_,
                static_cast<unsigned long long>(std::chrono::steady_clock::now().time_since_epoch().count()));
  void* mine = map_shared(name, block_bytes_, true, err);
  if (mine) {
    host_blocks_[static_cast<std::size_t>(rank_)] = static_cast<std::uint64_t*>(mine);
    void* d = nullptr;
    AXE_CUDA_CHECK(cudaHostGetDevicePointer(&d, mine, 0));
    flags_ = static_cast<std::uint64_t*>(d);
    peer_flags_[static_cast<std::size_t>(rank_)] = flags_;
  }
  // Device memory is mapped through CUDA IPC (the staging, at connect time): probe it now on a
  // small allocation, so that a system that refuses it is known to every rank before any plan.
  void* probe = nullptr;
  AXE_CUDA_CHECK(cudaMalloc(&probe, 256));
  cudaIpcMemHandle_t probe_handle{};
  AXE_CUDA_CHECK(cudaIpcGetMemHandle(&probe_handle, probe));
  std::vector<std::byte> blob(sizeof probe_handle + std::strlen(name));
  std::memcpy(blob.data(), &probe_handle, sizeof probe_handle);
  std::memcpy(blob.data() + sizeof probe_handle, name, std::strlen(name));
  auto blobs = allgather(blob);
  for (int q = 0; q < size_ && err.empty(); ++q) {
    if (q == rank_) continue;
    const auto& b = blobs[static_cast<std::size_t>(q)];
    if (b.size() <= sizeof(cudaIpcMemHandle_t)) {
      err = "rank " + std::to_string(q) + " published no flag block";
      break;
    }
    const std::string peer_name(reinterpret_cast<const char*>(b.data()) + sizeof(cudaIpcMemHandle_t),
                                b.size() - sizeof(cudaIpcMemHandle_t));
    void* p = map_shared(peer_name, block_bytes_, false, err);
    if (!p) {
      err = "rank " + std::to_string(rank_) + " cannot map rank " + std::to_string(q) + "'s flags (" + err + ")";
      break;
    }
    host_blocks_[static_cast<std::size_t>(q)] = static_cast<std::uint64_t*>(p);
    void* d = nullptr;
    AXE_CUDA_CHECK(cudaHostGetDevicePointer(&d, p, 0));
    peer_flags_[static_cast<std::size_t>(q)] = static_cast<std::uint64_t*>(d);
    cudaIpcMemHandle_t h{};
    std::memcpy(&h, b.data(), sizeof h);
    void* mapped = nullptr;
    const cudaError_t e = cudaIpcOpenMemHandle(&mapped, h, cudaIpcMemLazyEnablePeerAccess);
    if (e != cudaSuccess) {
      cudaGetLastError();
      err = "rank " + std::to_string(rank_) + " cannot map rank " + std::to_string(q) +
            "'s device memory (cudaIpcOpenMemHandle: " + cudaGetErrorString(e) + ")";
      break;
    }
    cudaIpcCloseMemHandle(mapped);
  }
  // Every rank learns whether every rank could map its peers, so all choose alike; by then every
  // rank has opened this rank's block, so its name can go (the mappings stay).
  auto errors = allgather(std::as_bytes(std::span<const char>(err.data(), err.size())));
  if (mine) shm_unlink(name);
  cudaFree(probe);
  for (const auto& e : errors)
    if (!e.empty()) {
      failed_ = true;
      throw PeerUnavailable("peer transport unavailable: " +
                            std::string(reinterpret_cast<const char*>(e.data()), e.size()));
    }
}

PeerComm::~PeerComm() {
  for (auto& peer : maps_)
    for (auto& m : peer) unmap(m, !failed_);
  for (std::uint64_t* p : host_blocks_)
    if (p) {
      cudaHostUnregister(p);
      munmap(p, block_bytes_);
    }
}

std::vector<std::vector<std::byte>> PeerComm::allgather(std::span<const std::byte> mine) {
  if (!allgather_) fail("peer transport: no all-gather to exchange handles with");
  auto v = allgather_(mine);
  if (v.size() != static_cast<std::size_t>(size_))
    fail("peer transport: the all-gather returned " + std::to_string(v.size()) + " entries for " +
         std::to_string(size_) + " ranks");
  return v;
}

bool PostRing::try_put(std::uint64_t n, const PeerPost& post) {
  if (n > depth_ && __atomic_load_n(taken_, __ATOMIC_ACQUIRE) < n - depth_) return false;
  std::uint64_t* slot = slots_ + (n - 1) % depth_ * kPostWords;
  slot[1] = post.buffer;
  slot[2] = post.base;
  slot[3] = post.size;
  slot[4] = post.offset;
  static_assert(sizeof(cudaIpcMemHandle_t) <= (kPostWords - 5) * sizeof(std::uint64_t));
  std::memcpy(slot + 5, &post.handle, sizeof post.handle);
  __atomic_store_n(slot, n, __ATOMIC_RELEASE);
  return true;
}

bool PostRing::try_take(std::uint64_t n, PeerPost& post) {
  const std::uint64_t* slot = slots_ + (n - 1) % depth_ * kPostWords;
  if (__atomic_load_n(slot, __ATOMIC_ACQUIRE) != n) return false;
  post.buffer = slot[1];
  post.base = slot[2];
  post.size = slot[3];
  post.offset = slot[4];
  std::memcpy(&post.handle, slot + 5, sizeof post.handle);
  __atomic_store_n(taken_, n, __ATOMIC_RELEASE);  // after the reads: the slot may be written again
  return true;
}

PostRing PeerComm::ring(int sender, int receiver) const {
  const auto n = static_cast<std::size_t>(size_);
  std::uint64_t* block = host_blocks_[static_cast<std::size_t>(receiver)];
  std::uint64_t* taken = host_blocks_[static_cast<std::size_t>(sender)] + 2 * n + static_cast<std::size_t>(receiver);
  return PostRing(block + 3 * n + static_cast<std::size_t>(sender) * kPostDepth * kPostWords, taken, kPostDepth);
}

template <class Try>
void PeerComm::wait_host(Try&& ready, const std::string& what) {
  if (failed_) throw Error("peer transport: " + what + " after an earlier failure");
  if (ready()) return;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_);
  Backoff backoff;
  while (!ready()) {
    if (host_poll_) host_poll_();
    if (std::chrono::steady_clock::now() > deadline)
      fail_and_throw(what + " timed out after " + seconds_text(timeout_) +
                     " s (AXE_TIMEOUT_S): a peer stopped, exited or failed");
    backoff.pause();
  }
}

void PeerComm::post(int peer, const PeerPost& p) {
  const auto q = static_cast<std::size_t>(peer);
  const std::uint64_t n = posted_[q] + 1;
  PostRing r = ring(rank_, peer);
  wait_host([&] { return r.try_put(n, p); }, "posting an input to rank " + std::to_string(peer));
  posted_[q] = n;
}

PeerPost PeerComm::take(int peer) {
  const auto q = static_cast<std::size_t>(peer);
  const std::uint64_t n = taken_[q] + 1;
  PostRing r = ring(peer, rank_);
  PeerPost p;
  wait_host([&] { return r.try_take(n, p); }, "waiting for rank " + std::to_string(peer) + "'s input");
  taken_[q] = n;
  return p;
}

namespace {

// The post of device address p (no handle yet); buffer 0 when CUDA cannot export its allocation
// (legacy IPC).
PeerPost locate(const void* p) {
  static const auto attributes = driver_entry<PointerAttributes>("cuPointerGetAttributes");
  unsigned long long buffer = 0;
  int ipc = 0;
  CUdeviceptr base = 0;
  std::size_t size = 0;
  CUpointer_attribute which[] = {CU_POINTER_ATTRIBUTE_BUFFER_ID, CU_POINTER_ATTRIBUTE_IS_LEGACY_CUDA_IPC_CAPABLE,
                                 CU_POINTER_ATTRIBUTE_RANGE_START_ADDR, CU_POINTER_ATTRIBUTE_RANGE_SIZE};
  void* data[] = {&buffer, &ipc, &base, &size};
  const auto at = reinterpret_cast<std::uintptr_t>(p);
  if (attributes(4, which, data, static_cast<CUdeviceptr>(at)) != CUDA_SUCCESS || !ipc || buffer == 0 || base == 0 ||
      at < base || at - base >= size)
    return {};
  PeerPost post;
  post.buffer = buffer;
  post.base = base;
  post.size = size;
  post.offset = at - base;
  return post;
}

}  // namespace

PeerPost PeerComm::describe(const void* p) {
  PeerPost post = locate(p);
  if (!post.direct()) return {};
  auto it = std::find_if(exports_.begin(), exports_.end(), [&](const PeerPost& e) { return e.buffer == post.buffer; });
  if (it == exports_.end()) {
    if (cudaIpcGetMemHandle(&post.handle, reinterpret_cast<void*>(post.base)) != cudaSuccess) {
      cudaGetLastError();
      return {};
    }
    if (exports_.size() >= 4 * kMapsPerPeer) exports_.erase(exports_.begin());  // the oldest
    exports_.push_back(post);
    return post;
  }
  post.handle = it->handle;
  return post;
}

PeerPost PeerComm::export_staging(void* p) {
  PeerPost post = locate(p);
  if (!post.direct() || cudaIpcGetMemHandle(&post.handle, reinterpret_cast<void*>(post.base)) != cudaSuccess) {
    cudaGetLastError();
    fail("peer transport: rank " + std::to_string(rank_) + " cannot export its staging for the peers (CUDA IPC)");
  }
  return post;
}

const char* PeerComm::map(int peer, const PeerPost& post, bool pin) {
  auto& maps = maps_[static_cast<std::size_t>(peer)];
  const MapStep step = plan_mapping(maps, post, pin, kMapsPerPeer);
  if (step.reuse >= 0) {
    const auto it = maps.begin() + step.reuse;
    std::rotate(it, it + 1, maps.end());  // most recently used last
  } else {
    if (step.conflict)
      fail_and_throw("rank " + std::to_string(peer) + " posted an allocation over its staging, which this rank " +
                     "still maps (the ranks evicted their plans at different times)");
    for (auto i = step.unmap.rbegin(); i != step.unmap.rend(); ++i) {
      unmap(maps[*i], true);
      maps.erase(maps.begin() + static_cast<std::ptrdiff_t>(*i));
    }
    Mapping m;
    m.buffer = post.buffer;
    m.base = post.base;
    m.size = post.size;
    void* local = nullptr;
    cudaError_t e = cudaIpcOpenMemHandle(&local, post.handle, cudaIpcMemLazyEnablePeerAccess);
    if (e == cudaErrorAlreadyMapped) {
      // Some freed allocation of the peer's mapped here still holds this memory (outside its
      // range, e.g. the rest of a block it shared): unmap every input of the peer, then retry.
      cudaGetLastError();
      for (auto k = maps.begin(); k != maps.end();) {
        if (k->pins > 0) {
          ++k;
          continue;
        }
        unmap(*k, true);
        k = maps.erase(k);
      }
      e = cudaIpcOpenMemHandle(&local, post.handle, cudaIpcMemLazyEnablePeerAccess);
    }
    if (e != cudaSuccess) {
      cudaGetLastError();
      fail_and_throw("rank " + std::to_string(rank_) + " cannot map rank " + std::to_string(peer) + "'s " +
                     (pin ? "staging" : "input") + " (cudaIpcOpenMemHandle: " + cudaGetErrorString(e) + ")");
    }
    m.local = static_cast<char*>(local);
    maps.push_back(m);
  }
  Mapping& used = maps.back();
  if (pin) ++used.pins;
  return used.local + post.offset;
}

void PeerComm::unpin(int peer, const PeerPost& post) {
  auto& maps = maps_[static_cast<std::size_t>(peer)];
  auto it = std::find_if(maps.begin(), maps.end(),
                         [&](const Mapping& m) { return m.base == post.base && m.buffer == post.buffer; });
  if (it == maps.end() || it->pins == 0) return;
  if (--it->pins == 0) {  // staging: the plan using it is gone (its executor synchronized)
    unmap(*it, true);
    maps.erase(it);
  }
}

void PeerComm::used(int peer, const PeerPost& post, cudaStream_t s) {
  auto& maps = maps_[static_cast<std::size_t>(peer)];
  auto it = std::find_if(maps.begin(), maps.end(),
                         [&](const Mapping& m) { return m.base == post.base && m.buffer == post.buffer; });
  if (it == maps.end()) fail("peer transport: rank " + std::to_string(peer) + "'s input is not mapped here");
  if (!it->last_use) AXE_CUDA_CHECK(cudaEventCreateWithFlags(&it->last_use, cudaEventDisableTiming));
  AXE_CUDA_CHECK(cudaEventRecord(it->last_use, s));
}

std::size_t PeerComm::mapped_inputs() const {
  std::size_t n = 0;
  for (const auto& peer : maps_)
    n += static_cast<std::size_t>(std::count_if(peer.begin(), peer.end(), [](const Mapping& m) { return m.pins == 0; }));
  return n;
}

void PeerComm::unmap(Mapping& m, bool wait_first) {
  if (m.last_use) {
    if (wait_first) {
      try {
        wait(m.last_use, "unmapping a peer's input");
      } catch (const std::exception&) {  // failed: the streams' waits are released; unmap anyway
      }
    }
    cudaEventDestroy(m.last_use);
    m.last_use = nullptr;
  }
  if (m.local) cudaIpcCloseMemHandle(m.local);
  m.local = nullptr;
}

void PeerComm::signal_ready(int peer, cudaStream_t s) {
  static const auto write = driver_entry<WriteValue>("cuStreamWriteValue64");
  const auto q = static_cast<std::size_t>(peer);
  check_driver(write(s, address(peer_flags_[q] + rank_), ++sent_[q], CU_STREAM_WRITE_VALUE_DEFAULT),
               "cuStreamWriteValue64 (ready)");
}

std::uint64_t PeerComm::wait_ready(int peer, cudaStream_t s) {
  static const auto wait = driver_entry<WaitValue>("cuStreamWaitValue64");
  const auto q = static_cast<std::size_t>(peer);
  const std::uint64_t n = ++received_[q];
  check_driver(wait(s, address(flags_ + q), n, CU_STREAM_WAIT_VALUE_GEQ), "cuStreamWaitValue64 (ready)");
  return n;
}

void PeerComm::signal_consumed(int peer, std::uint64_t n, cudaStream_t s) {
  static const auto write = driver_entry<WriteValue>("cuStreamWriteValue64");
  check_driver(write(s, address(peer_flags_[static_cast<std::size_t>(peer)] + size_ + rank_), n,
                     CU_STREAM_WRITE_VALUE_DEFAULT),
               "cuStreamWriteValue64 (consumed)");
}

void PeerComm::wait_consumed(cudaStream_t s) { wait_consumed(s, sent_); }

void PeerComm::wait_consumed(cudaStream_t s, std::span<const std::uint64_t> mark) {
  static const auto wait = driver_entry<WaitValue>("cuStreamWaitValue64");
  if (mark.size() != sent_.size())
    fail("peer transport: a consumption mark of " + std::to_string(mark.size()) + " peers for " +
         std::to_string(sent_.size()) + " ranks");
  for (std::size_t q = 0; q < sent_.size(); ++q) {
    // Counts only grow: a mark at or below what this stream already waited for needs no wait.
    if (mark[q] <= waited_consumed_[q]) continue;
    check_driver(wait(s, address(flags_ + size_ + q), mark[q], CU_STREAM_WAIT_VALUE_GEQ),
                 "cuStreamWaitValue64 (consumed)");
    waited_consumed_[q] = mark[q];
  }
}

void PeerComm::wait(cudaEvent_t event, const char* what) {
  if (failed_) throw Error(std::string("peer transport: ") + what + " after an earlier failure");
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_);
  Backoff backoff;
  while (true) {
    const cudaError_t e = cudaEventQuery(event);
    if (e == cudaSuccess) return;
    if (e != cudaErrorNotReady) fail_and_throw(std::string(what) + ": CUDA error " + cudaGetErrorString(e));
    if (std::chrono::steady_clock::now() > deadline)
      fail_and_throw(std::string(what) + " timed out after " + seconds_text(timeout_) +
                     " s (AXE_TIMEOUT_S): a peer stopped, exited or failed");
    backoff.pause();
  }
}

void PeerComm::release_waits() noexcept {
  // Every word of this rank's block beyond any count, by plain stores to the shared host page: each
  // cuStreamWaitValue64 (>=) enqueued on this rank's streams is satisfied, so they drain and
  // cudaStreamSynchronize / cudaFree at teardown return instead of waiting forever for a peer that
  // is gone. What they then copy is garbage (or faults, if the peer's memory went with it): the
  // operation has already failed.
  std::uint64_t* own = host_blocks_.empty() ? nullptr : host_blocks_[static_cast<std::size_t>(rank_)];
  if (!own) return;
  // 2^62, not the maximum: the streams compare as (int64_t)(flag - awaited) >= 0
  // (CU_STREAM_WAIT_VALUE_GEQ wraps), which every count this job can reach satisfies.
  for (std::size_t i = 0; i < 2 * static_cast<std::size_t>(size_); ++i)
    __atomic_store_n(own + i, std::uint64_t{1} << 62, __ATOMIC_SEQ_CST);
}

void PeerComm::fail_and_throw(const std::string& message) {
  failed_ = true;
  release_waits();
  throw Error("peer transport rank " + std::to_string(rank_) + " of " + std::to_string(size_) + ": " + message);
}

}  // namespace axe::cuda
