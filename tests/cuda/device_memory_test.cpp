// DeviceMemory (device_memory.hpp): the cuda backend's cached cudaMalloc blocks on a GPU. Skips
// without one (BlockCache's rules are tested without a GPU in block_cache_test.cpp).
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>

#include "axe/core/error.hpp"
#include "axe/cuda/device_memory.hpp"
#include "cuda_test_util.hpp"

namespace axe::cuda {
namespace {

constexpr std::size_t kMiB = std::size_t{1} << 20;

SharedStream own_stream() {
  cudaStream_t s = nullptr;
  AXE_CUDA_CHECK(cudaSetDevice(0));
  AXE_CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  return SharedStream(s, [](cudaStream_t x) {
    cudaStreamSynchronize(x);
    cudaStreamDestroy(x);
  });
}

std::string error_of(DeviceMemory& m, std::size_t bytes) {
  try {
    m.allocate(bytes);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

// Two 1000-byte buffers are neighbouring 1 KiB slots of one 2 MiB slab, device memory that a
// memset reaches; a freed one is the next of its class.
TEST(DeviceMemory, SmallBuffersShareASlabAndAreReused) {
  AXE_REQUIRE_GPUS(1);
  DeviceMemory m(0, own_stream(), 60);
  char* p = static_cast<char*>(m.allocate(1000));
  char* q = static_cast<char*>(m.allocate(1000));
  EXPECT_EQ(q, p + 1024);
  AXE_CUDA_CHECK(cudaMemsetAsync(p, 1, 2048, m.stream()));
  AXE_CUDA_CHECK(cudaStreamSynchronize(m.stream()));
  m.free(p);
  EXPECT_EQ(m.allocate(900), p);
  const auto s = m.stats();
  EXPECT_EQ(s.allocations, 1u);
  EXPECT_EQ(s.reserved, BlockCache::kSlabBytes);
  EXPECT_EQ(s.live, 2u);
}

// A refused cudaMalloc gives back what no buffer uses, asks again, then names the request.
TEST(DeviceMemory, RefusedAllocationGivesBackTheCacheAndNamesTheBytes) {
  AXE_REQUIRE_GPUS(1);
  DeviceMemory m(0, own_stream(), 60);
  void* a = m.allocate(64 * kMiB);
  void* b = m.allocate(1000);
  m.free(a);
  EXPECT_EQ(m.stats().reserved, 64 * kMiB + BlockCache::kSlabBytes);
  const std::size_t huge = std::size_t{1} << 50;
  const std::string err = error_of(m, huge);
  EXPECT_NE(err.find("cannot allocate " + std::to_string(huge) + " bytes on device 0"), std::string::npos) << err;
  EXPECT_NE(err.find("1024 bytes in 1 live buffers"), std::string::npos) << err;
  EXPECT_EQ(m.stats().reserved, BlockCache::kSlabBytes);  // the free 64 MiB went back; b's slab stays
  m.free(b);
}

// release_cached gives back the allocations no buffer uses (the freed 64 MiB and 8 MiB blocks),
// keeps a slab a live buffer uses, and has nothing left for a second call.
TEST(DeviceMemory, ReleaseCachedGivesBackWhatNoBufferUses) {
  AXE_REQUIRE_GPUS(1);
  DeviceMemory m(0, own_stream(), 60);
  void* a = m.allocate(64 * kMiB);
  void* b = m.allocate(1000);
  void* c = m.allocate(8 * kMiB);
  void* d = m.allocate(2000);  // class 2048: a slab of its own, not b's
  m.free(a);
  m.free(c);
  m.free(d);
  EXPECT_EQ(m.release_cached(), 64 * kMiB + 8 * kMiB + BlockCache::kSlabBytes);
  EXPECT_EQ(m.stats().reserved, BlockCache::kSlabBytes);
  EXPECT_EQ(m.release_cached(), 0u);
  m.free(b);
}

// A stream that does not finish (a host function blocks it, as a flag wait on a stopped peer
// would) fails the allocation after the timeout instead of hanging it.
TEST(DeviceMemory, StuckStreamFailsTheAllocationInBoundedTime) {
  AXE_REQUIRE_GPUS(1);
  auto m = std::make_unique<DeviceMemory>(0, own_stream(), 0.5);
  m->free(m->allocate(64 * kMiB));
  static std::atomic<bool> release{false};
  release = false;
  AXE_CUDA_CHECK(cudaLaunchHostFunc(
      m->stream(), [](void*) {
        while (!release) std::this_thread::sleep_for(std::chrono::milliseconds(1));
      },
      nullptr));
  const auto t0 = std::chrono::steady_clock::now();
  const std::string err = error_of(*m, std::size_t{1} << 50);
  const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  release = true;
  EXPECT_NE(err.find("did not finish its work within AXE_TIMEOUT_S"), std::string::npos) << err;
  EXPECT_GE(took, 0.5);
  EXPECT_LT(took, 5.0);
  EXPECT_EQ(m->stats().reserved, 64 * kMiB);  // nothing given back while the stream may use it
  m.reset();  // waits for the released stream
}

}  // namespace
}  // namespace axe::cuda
