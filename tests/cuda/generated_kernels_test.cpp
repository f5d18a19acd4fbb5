// Generated tile kernels (codegen/tile_codegen.hpp) through NVRTC (cuda/nvrtc.hpp): 200 seeded
// random conversion plans compile to PTX (no GPU needed: this runs in CI), and on a GPU every one
// reproduces its destination layout element by element (every thread and register the layout
// uses, replicas included); the tile benchmark's round trips bring the tile back unchanged.
#include <gtest/gtest.h>

#include <future>
#include <random>
#include <string>
#include <vector>

#include "axe/codegen/copy_codegen.hpp"
#include "axe/codegen/tile_codegen.hpp"
#include "axe/codegen/transpose_codegen.hpp"
#include "axe/cuda/check.hpp"
#include "axe/cuda/nvrtc.hpp"
#include "axe/cuda/transpose.hpp"
#include "axe/linear/bridge.hpp"
#include "axe/linear/thread_spec.hpp"
#include "cuda_test_util.hpp"
#include "codegen/random_plans.hpp"
#include "linear/linear_test_util.hpp"

namespace axe::cuda::test {
namespace {

namespace tl = axe::test::linear;
using axe::codegen::Element;
using axe::test::codegen::label;
using axe::test::codegen::random_plans;
using Shape = std::vector<std::int64_t>;

TEST(GeneratedKernels, RandomPlansCompileToPtx) {
  const auto plans = random_plans(200);
  // Two at a time (NVRTC is thread-safe): CI has two cores.
  std::vector<std::future<std::string>> done;
  for (std::size_t i = 0; i < plans.size(); ++i) {
    done.push_back(std::async(std::launch::async, [&plans, i] {
      const auto& p = plans[i];
      const auto k = codegen::conversion_kernel(p.from, p.to, p.shape, p.element, p.options);
      try {
        const std::string ptx = compile_to_ptx(k.source, "plan_" + std::to_string(i) + ".cu");
        return ptx.find(".entry axe_tile_convert") != std::string::npos ? std::string()
                                                                        : "no .entry in the PTX";
      } catch (const std::exception& e) {
        return std::string(e.what());
      }
    }));
    if (done.size() == 2 || i + 1 == plans.size()) {
      for (std::size_t j = 0; j < done.size(); ++j) {
        const std::size_t at = i + 1 - done.size() + j;
        EXPECT_EQ(done[j].get(), "") << label(plans[at]);
      }
      done.clear();
    }
  }
}

// The runtime's transpose kernels (every element size and access) compile to PTX.
TEST(GeneratedKernels, TransposeKernelsCompileToPtx) {
  for (std::int64_t es : {1, 2, 4, 8}) {
    for (auto access : {codegen::TransposeAccess::vectors, codegen::TransposeAccess::realigned,
                        codegen::TransposeAccess::scalar}) {
      const codegen::Element e(es, codegen::Element::Kind::integer, "raw");
      const auto k = codegen::transpose_kernel(e, codegen::default_transpose_tile(es, access), access);
      SCOPED_TRACE(std::to_string(es) + "-byte, " + std::string(to_string(access)));
      const std::string ptx = compile_to_ptx(k.source, "transpose.cu");
      EXPECT_NE(ptx.find(".entry axe_transpose"), std::string::npos);
      EXPECT_EQ(k.shared_bytes, 2 * k.tile.a * k.tile.b * es);  // two buffers of a tile
    }
    for (std::int64_t vb : {4, 8}) {  // narrower vectors
      if (vb < es) continue;
      codegen::TransposeTile tile = codegen::default_transpose_tile(es, codegen::TransposeAccess::vectors);
      tile.vector_bytes = vb;
      SCOPED_TRACE(std::to_string(es) + "-byte, " + std::to_string(vb) + "-byte vectors");
      const codegen::Element e(es, codegen::Element::Kind::integer, "raw");
      const auto k = codegen::transpose_kernel(e, tile, codegen::TransposeAccess::vectors);
      EXPECT_NE(compile_to_ptx(k.source, "transpose.cu").find(".entry axe_transpose"), std::string::npos);
    }
  }
}

// The runtime's copy kernels (every element size and access; the default tile, one lane along the
// run and one warp, and 32 lanes by 8 rows by 8 warps; flat word tiles of 4 words a thread on 8
// warps and 1 on 1 warp; the default tile of destination words in 64-bit row arithmetic; exchanged
// tiles of 4 and 8 elements a thread) compile to PTX, with shared memory where they exchange.
TEST(GeneratedKernels, CopyKernelsCompileToPtx) {
  for (std::int64_t es : {1, 2, 4, 8}) {
    for (auto access : {codegen::TransposeAccess::vectors, codegen::TransposeAccess::realigned,
                        codegen::TransposeAccess::scalar}) {
      const std::int64_t v = access == codegen::TransposeAccess::scalar ? 1 : 16 / es;
      std::vector<codegen::CopyTile> tiles{codegen::default_copy_tile(es, access, 4096), codegen::CopyTile{v, 1, 1},
                                           codegen::CopyTile{32 * v, 8, 8}};
      if (access == codegen::TransposeAccess::realigned) {
        tiles.push_back(codegen::CopyTile{1024 * v, 1, 8, true});
        tiles.push_back(codegen::CopyTile{32 * v, 1, 1, true});
        codegen::CopyTile wide = codegen::default_copy_tile(es, access, 4096);
        wide.wide = true;
        tiles.push_back(wide);
      }
      if (access == codegen::TransposeAccess::scalar) {  // exchanged: 4 elements a thread on 2 warps, 8 on 8
        tiles.push_back(codegen::CopyTile{256, 1, 2, false, false, true});
        tiles.push_back(codegen::CopyTile{2048, 1, 8, false, false, true});
      }
      for (const codegen::CopyTile& tile : tiles) {
        const codegen::Element e(es, codegen::Element::Kind::integer, "raw");
        const auto k = codegen::copy_kernel(e, tile, access);
        SCOPED_TRACE(std::to_string(es) + "-byte, " + std::string(to_string(access)) + ", tile " +
                     std::to_string(k.tile_b) + "x" + std::to_string(k.tile_a));
        const std::string ptx = compile_to_ptx(k.source, "copy.cu");
        EXPECT_NE(ptx.find(".entry axe_copy"), std::string::npos);
        // Shared memory for the exchange only.
        const std::string buffer = "smem[" + std::to_string(k.shared_bytes) + "];";
        EXPECT_EQ(ptx.find(buffer) != std::string::npos && k.shared_bytes > 0, tile.exchange) << buffer;
      }
    }
  }
}

// The kernel of `k` for this GPU, allowed its dynamic shared memory.
cudaKernel_t load(const codegen::TileKernel& k) {
  cudaKernel_t kernel = KernelCache::global().kernel(k.source, k.name);
  int device = 0;
  AXE_CUDA_CHECK(cudaGetDevice(&device));
  AXE_CUDA_CHECK(cudaKernelSetAttributeForDevice(
      kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(k.shared_bytes), device));
  return kernel;
}

// Random bits, one element of `bytes` each.
std::vector<unsigned char> random_bytes(std::size_t n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<unsigned char> v(n);
  for (auto& x : v) x = static_cast<unsigned char>(rng());
  return v;
}

TEST(GeneratedKernels, RandomPlansReproduceTheDestinationOnAGpu) {
  AXE_REQUIRE_GPUS(1);
  int checked = 0;
  for (const auto& p : random_plans(200)) {
    SCOPED_TRACE(label(p));
    const auto k = codegen::conversion_kernel(p.from, p.to, p.shape, p.element, p.options);
    const auto cols = codegen::thread_columns(p.to, p.shape);
    const std::int64_t n = p.shape[0] * p.shape[1], es = p.element.bytes;
    const std::int64_t regs = cols.registers(), threads = k.threads;
    const auto in = random_bytes(static_cast<std::size_t>(n * es), static_cast<std::uint64_t>(checked));
    DeviceBuffer din(in.size()), dump(static_cast<std::size_t>(threads * regs * es));
    AXE_CUDA_CHECK(cudaMemcpy(din.p, in.data(), in.size(), cudaMemcpyHostToDevice));
    cudaKernel_t kernel = load(k);
    void* args[] = {&din.p, &dump.p};
    launch(kernel, dim3(1), dim3(static_cast<unsigned>(threads)), args,
           static_cast<std::size_t>(k.shared_bytes));
    AXE_CUDA_CHECK(cudaDeviceSynchronize());
    std::vector<unsigned char> got(dump.bytes);
    AXE_CUDA_CHECK(cudaMemcpy(got.data(), dump.p, got.size(), cudaMemcpyDeviceToHost));
    const std::string wrong = axe::test::codegen::check_dump(cols, in, got.data(), threads, es);
    EXPECT_EQ(wrong, "") << k.source;
    ++checked;
  }
  EXPECT_EQ(checked, 200);
}

// The tile benchmark's cases (examples/tile_bench.cpp) come back unchanged after 3 round trips.
TEST(GeneratedKernels, RoundTripsBringTheTileBack) {
  AXE_REQUIRE_GPUS(1);
  struct Case {
    const char *from, *to;
    Shape shape;
    DType dtype;
  };
  const std::vector<Case> cases{
      {"blocked:1,4/8,4/4,1/1,0", "blocked:4,1/4,8/1,4/0,1", {64, 64}, DType::F32},
      {"blocked:1,8/16,2/4,1/1,0", "blocked:8,1/2,16/1,4/0,1", {128, 64}, DType::F16},
      {"wgmma:128/4,1", "blocked:1,4/4,8/4,1/1,0", {128, 128}, DType::F32},
      {"blocked:1,4/4,8/1,1/1,0", "blocked:4,1/8,4/1,1/0,1", {32, 32}, DType::F32},
      {"blocked:4/32/4/0", "blocked:1/32/4/0", {2048}, DType::F32},
      {"S[(4,4):(1@lane,1)]", "S[(4,4):(1,1@lane)]", {4, 4}, DType::I32},
      {"mma:2,2", "blocked:1,4/8,4/4,1/1,0", {64, 64}, DType::BF16},
      {"blocked:1,16/8,4/4,1/1,0", "blocked:16,1/4,8/1,4/0,1", {64, 64}, DType::U8},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(std::string(c.from) + " <-> " + c.to);
    const auto a = linear::parse_thread_layout(c.from, c.shape);
    const auto b = linear::parse_thread_layout(c.to, c.shape);
    linear::ConvertOptions o;
    o.shared_budget_bytes = 96 * 1024;
    const auto k = codegen::round_trip_kernel(a, b, c.shape, c.dtype, o);
    std::int64_t n = 1;
    for (auto e : c.shape) n *= e;
    const std::int64_t es = size_of(c.dtype);
    auto in = random_bytes(static_cast<std::size_t>(n * es), 7);
    if (is_floating(c.dtype)) {  // finite values: x * 1.0 == x
      for (std::int64_t i = 0; i < n; ++i) in[static_cast<std::size_t>(i * es + es - 1)] &= 0x3f;
    }
    DeviceBuffer din(in.size()), dout(in.size());
    AXE_CUDA_CHECK(cudaMemcpy(din.p, in.data(), in.size(), cudaMemcpyHostToDevice));
    cudaKernel_t kernel = load(k);
    int iters = 3;
    float fs = 1.0f;
    unsigned long long is = 0;
    void* scale = is_floating(c.dtype) ? static_cast<void*>(&fs) : static_cast<void*>(&is);
    void* args[] = {&din.p, &dout.p, &iters, scale};
    launch(kernel, dim3(1), dim3(static_cast<unsigned>(k.threads)), args,
           static_cast<std::size_t>(k.shared_bytes));
    AXE_CUDA_CHECK(cudaDeviceSynchronize());
    std::vector<unsigned char> out(in.size());
    AXE_CUDA_CHECK(cudaMemcpy(out.data(), dout.p, out.size(), cudaMemcpyDeviceToHost));
    EXPECT_TRUE(out == in);
  }
}

}  // namespace
}  // namespace axe::cuda::test
