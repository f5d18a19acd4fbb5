// The in-memory kernel cache (axe/cuda/nvrtc.hpp): a generated kernel compiled for the current
// device, loaded once and launched; a clear error without a GPU.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "axe/core/error.hpp"
#include "axe/cuda/nvrtc.hpp"
#include "cuda/cuda_test_util.hpp"

namespace axe::cuda {
namespace {

using test::DeviceBuffer;

// Each thread writes its index; the second kernel of the source adds an offset.
constexpr const char* kSource = R"(
extern "C" __global__ void axe_gen_iota(int* out) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  out[i] = i;
}
extern "C" __global__ void axe_gen_add(int* out, int k) { out[threadIdx.x] += k; }
)";

std::vector<int> download_ints(const DeviceBuffer& b) {
  const auto bytes = b.download();
  std::vector<int> v(bytes.size() / sizeof(int));
  std::memcpy(v.data(), bytes.data(), v.size() * sizeof(int));
  return v;
}

TEST(KernelCache, LaunchedKernel_WritesThreadIndex) {
  AXE_REQUIRE_GPUS(1);
  const int n = 2 * 96;
  DeviceBuffer out(n * sizeof(int));
  void* p = out.p;
  void* args[] = {&p};
  launch(KernelCache::global().kernel(kSource, "axe_gen_iota"), dim3(2), dim3(96), args);
  AXE_CUDA_CHECK(cudaDeviceSynchronize());
  const auto v = download_ints(out);
  for (int i = 0; i < n; ++i) ASSERT_EQ(v[i], i) << "element " << i;
}

TEST(KernelCache, SecondCall_IsTheSameHandleWithoutCompiling) {
  AXE_REQUIRE_GPUS(1);
  KernelCache cache;
  const cudaKernel_t a = cache.kernel(kSource, "axe_gen_iota");
  const auto before = nvrtc_compilations();
  EXPECT_EQ(cache.kernel(kSource, "axe_gen_iota"), a);
  const cudaKernel_t add = cache.kernel(kSource, "axe_gen_add");  // same library
  EXPECT_NE(add, a);
  EXPECT_EQ(nvrtc_compilations(), before);

  DeviceBuffer out(32 * sizeof(int));
  void* p = out.p;
  int k = 1000;
  void* iota_args[] = {&p};
  void* add_args[] = {&p, &k};
  launch(a, dim3(1), dim3(32), iota_args);
  launch(add, dim3(1), dim3(32), add_args);
  AXE_CUDA_CHECK(cudaDeviceSynchronize());
  const auto v = download_ints(out);
  for (int i = 0; i < 32; ++i) ASSERT_EQ(v[i], 1000 + i) << "element " << i;
}

TEST(KernelCache, UnknownKernel_ThrowsNamingIt) {
  AXE_REQUIRE_GPUS(1);
  try {
    KernelCache::global().kernel(kSource, "axe_gen_missing");
    FAIL() << "no axe::Error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("'axe_gen_missing'"), std::string::npos) << e.what();
  }
}

TEST(KernelCache, NoGpu_ThrowsClearError) {
  if (test::gpu_count() > 0) GTEST_SKIP() << "a GPU is visible; this checks the error without one";
  try {
    KernelCache::global().kernel(kSource, "axe_gen_iota");
    FAIL() << "no axe::Error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("no CUDA device: generated kernels need a GPU"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace axe::cuda
