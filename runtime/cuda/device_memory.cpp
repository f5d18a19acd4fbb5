// DeviceMemory (include/axe/cuda/device_memory.hpp): BlockCache over cudaMalloc.
#include "axe/cuda/device_memory.hpp"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cassert>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>
#include <thread>
#include <utility>

#include "axe/core/error.hpp"
#include "axe/cuda/check.hpp"

namespace axe::cuda {

namespace {

std::string seconds_text(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", s);
  return buf;
}

}  // namespace

DeviceMemory::DeviceMemory(int device, SharedStream stream, double timeout_s)
    : device_(device),
      stream_(std::move(stream)),
      timeout_s_(timeout_s),
      cache_(
          [this](std::size_t n) -> std::uint64_t {
            void* p = nullptr;
            const cudaError_t e = cudaMalloc(&p, n);
            if (e != cudaSuccess) {
              cudaGetLastError();
              refused_ = e;
              return 0;
            }
            return reinterpret_cast<std::uintptr_t>(p);
          },
          // At exit CUDA may be unloaded before this: nothing to report from here.
          [](std::uint64_t p, std::size_t) {
            if (cudaFree(reinterpret_cast<void*>(static_cast<std::uintptr_t>(p))) != cudaSuccess) cudaGetLastError();
          }) {}

DeviceMemory::~DeviceMemory() {
  cudaSetDevice(device_);
  if (cudaStreamSynchronize(stream_.get()) != cudaSuccess) cudaGetLastError();
  if (drain_) cudaEventDestroy(drain_);
}  // cache_ frees every allocation

void* DeviceMemory::allocate(std::size_t bytes) {
  std::lock_guard<std::mutex> lock(mutex_);
  AXE_CUDA_CHECK(cudaSetDevice(device_));
  std::uint64_t p = cache_.allocate(bytes);
  if (p == 0 && has_unused()) {
    // The cached blocks' last uses are enqueued on the stream (frees are ordered there): once it
    // has drained, cudaFree cannot take memory from under a kernel or a peer's copy. Bounded: a
    // stream stuck waiting for a peer that stopped must not hang an allocation.
    if (!drained())
      fail("cuda backend: cannot allocate " + std::to_string(bytes) + " bytes on device " + std::to_string(device_) +
           ": cudaMalloc failed (" + cudaGetErrorString(refused_) + ") and the backend's stream did not finish its " +
           "work within AXE_TIMEOUT_S = " + seconds_text(timeout_s_) + " s, so its cached memory could not be given back");
    cache_.trim();
    p = cache_.allocate(bytes);
  }
  if (p == 0) {
    const BlockCache::Stats s = cache_.stats();
    fail("cuda backend: cannot allocate " + std::to_string(bytes) + " bytes on device " + std::to_string(device_) +
         ": cudaMalloc of " + std::to_string(BlockCache::size_class(bytes) <= BlockCache::kSlabLimit
                                                 ? BlockCache::kSlabBytes
                                                 : BlockCache::size_class(bytes)) +
         " bytes failed (" + cudaGetErrorString(refused_) + ") with " + std::to_string(s.live_bytes) +
         " bytes in " + std::to_string(s.live) + " live buffers of this rank and nothing cached left to give back");
  }
  return reinterpret_cast<void*>(static_cast<std::uintptr_t>(p));
}

bool DeviceMemory::has_unused() const {
  const BlockCache::Stats s = cache_.stats();
  return s.reserved > s.live_bytes;  // else every byte held is a live buffer's
}

bool DeviceMemory::drained() {
  if (!drain_) AXE_CUDA_CHECK(cudaEventCreateWithFlags(&drain_, cudaEventDisableTiming));
  AXE_CUDA_CHECK(cudaEventRecord(drain_, stream_.get()));
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s_);
  for (auto pause = std::chrono::microseconds(20);; pause = std::min(pause * 2, std::chrono::microseconds(10000))) {
    const cudaError_t e = cudaEventQuery(drain_);
    if (e == cudaSuccess) return true;
    if (e != cudaErrorNotReady) AXE_CUDA_CHECK(e);
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(pause);
  }
}

void DeviceMemory::free(void* p) noexcept {
  std::lock_guard<std::mutex> lock(mutex_);
  const bool known = cache_.free(reinterpret_cast<std::uintptr_t>(p));
  assert(known);
  (void)known;
}

std::size_t DeviceMemory::release_cached() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!has_unused()) return 0;
  AXE_CUDA_CHECK(cudaSetDevice(device_));
  if (!drained())
    fail("cuda backend: the cached device memory cannot be given back: the backend's stream did not finish its "
         "work within AXE_TIMEOUT_S = " + seconds_text(timeout_s_) + " s");
  return cache_.trim();
}

BlockCache::Stats DeviceMemory::stats() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return cache_.stats();
}

}  // namespace axe::cuda
