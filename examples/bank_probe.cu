// bank_probe: replays the shared-memory accesses of the bank model (axe/linear/banks.hpp) on the
// GPU, so that Nsight Compute can count their wavefronts and compare them with the model.
//
//   M=l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum
//   ncu --clock-control none --csv --log-file ncu.csv --metrics $M build/bin/bank_probe > model.txt
//   python3 examples/bank_probe_check.py model.txt ncu.csv
//
// For each (shared layout, thread layout, shape, element size, swizzle) of the list below, it
// prints the model's line ("case K: ... model W") and launches two kernels of one block with the
// layout's warps: probe_store, in which every lane executes the model's instructions as shared
// stores of vector_bytes at the model's offsets (BankReport::offsets; idle lanes skip), and
// probe_load, the same as loads. Each should take exactly the model's wavefronts (W), which
// bank_probe_check.py checks against ncu's counters for launch 2K and 2K + 1.
#include <cuda_runtime_api.h>

#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "axe/core/error.hpp"
#include "axe/cute/swizzle.hpp"
#include "axe/layout/layout.hpp"
#include "axe/linear/banks.hpp"

namespace {

#define CHECK(x)                                                                             \
  do {                                                                                       \
    cudaError_t e_ = (x);                                                                    \
    if (e_ != cudaSuccess) {                                                                 \
      std::fprintf(stderr, "bank_probe: %s failed: %s\n", #x, cudaGetErrorString(e_));      \
      return 1;                                                                              \
    }                                                                                        \
  } while (0)

template <int B>
__device__ void shared_store(std::uint32_t a, std::uint32_t v) {
  if constexpr (B == 1) asm volatile("st.shared.u8 [%0], %1;" ::"r"(a), "r"(v));
  if constexpr (B == 2) asm volatile("st.shared.u16 [%0], %1;" ::"r"(a), "h"(static_cast<unsigned short>(v)));
  if constexpr (B == 4) asm volatile("st.shared.b32 [%0], %1;" ::"r"(a), "r"(v));
  if constexpr (B == 8) asm volatile("st.shared.v2.b32 [%0], {%1, %1};" ::"r"(a), "r"(v));
  if constexpr (B == 16) asm volatile("st.shared.v4.b32 [%0], {%1, %1, %1, %1};" ::"r"(a), "r"(v));
}

template <int B>
__device__ std::uint32_t shared_load(std::uint32_t a) {
  std::uint32_t x = 0, y = 0, z = 0, w = 0;
  if constexpr (B == 1) asm volatile("ld.shared.u8 %0, [%1];" : "=r"(x) : "r"(a));
  if constexpr (B == 2) {
    unsigned short h = 0;
    asm volatile("ld.shared.u16 %0, [%1];" : "=h"(h) : "r"(a));
    x = h;
  }
  if constexpr (B == 4) asm volatile("ld.shared.b32 %0, [%1];" : "=r"(x) : "r"(a));
  if constexpr (B == 8) asm volatile("ld.shared.v2.b32 {%0, %1}, [%2];" : "=r"(x), "=r"(y) : "r"(a));
  if constexpr (B == 16)
    asm volatile("ld.shared.v4.b32 {%0, %1, %2, %3}, [%4];" : "=r"(x), "=r"(y), "=r"(z), "=r"(w) : "r"(a));
  return x ^ y ^ z ^ w;
}

// offsets: [warp][instruction][lane] byte offsets into shared memory, -1: the lane is idle.
template <int B, bool Store>
__global__ void probe(const long long* offsets, int instructions, unsigned* out) {
  extern __shared__ __align__(16) unsigned char smem[];
  const int warp = static_cast<int>(threadIdx.x) / 32, lane = static_cast<int>(threadIdx.x) % 32;
  const auto base = static_cast<std::uint32_t>(__cvta_generic_to_shared(smem));
  std::uint32_t acc = 0;
  for (int i = 0; i < instructions; ++i) {
    const long long o = offsets[(static_cast<long long>(warp) * instructions + i) * 32 + lane];
    if (o < 0) continue;
    if constexpr (Store) shared_store<B>(base + static_cast<std::uint32_t>(o), threadIdx.x);
    else acc ^= shared_load<B>(base + static_cast<std::uint32_t>(o));
  }
  if constexpr (!Store) out[threadIdx.x] = acc;
}

template <int B>
cudaError_t launch_pair(const long long* offsets, int instructions, int warps, std::size_t bytes, unsigned* out) {
  const int smem = static_cast<int>(bytes);
  for (auto* k : {&probe<B, true>, &probe<B, false>}) {
    cudaError_t e = cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
    if (e != cudaSuccess) return e;
  }
  probe<B, true><<<1, warps * 32, bytes>>>(offsets, instructions, out);
  probe<B, false><<<1, warps * 32, bytes>>>(offsets, instructions, out);
  return cudaDeviceSynchronize();
}

struct Case {
  std::string smem, threads;
  std::vector<std::int64_t> shape;
  std::int64_t element_bytes;
  std::optional<axe::cute::Swizzle> swizzle;
};

std::vector<Case> cases() {
  // TV-15's 16x32 tile: the store (lane = column, register = row), the load (lane % 16 = row,
  // column = 2 register + lane / 16), and a 4-wide access (lane = 8 (row % 4) + column / 4,
  // register = 4 (row / 4) + column % 4, vectorizable on a row-major tile).
  const char* st = "S[(16,32):(1,1@lane)]";
  const char* ld = "S[(16,16,2):(1@lane,1,16@lane)]";
  const char* v4 = "S[(4,4,8,4):(4,8@lane,1@lane,1)]";
  const char* row = "S[(16,32):(32,1)]";
  const char* col = "S[(16,32):(1,16)]";
  const char* pad = "S[(16,32):(33,1)]";
  std::vector<Case> out;
  for (std::int64_t e : {4, 2, 8})
    for (const char* s : {row, col, pad})
      for (const char* t : {st, ld, v4}) out.push_back({s, t, {16, 32}, e, std::nullopt});
  for (auto sw : {axe::cute::Swizzle(4, 0, 5), axe::cute::Swizzle(4, 1, 4), axe::cute::Swizzle(3, 2, 3)})
    for (const char* t : {st, ld, v4}) out.push_back({row, t, {16, 32}, 4, sw});
  // The layout `axe swizzle` chooses for TV-15 (Sw<2,3,4> over an Axe layout): 16-byte stores,
  // both sides conflict-free.
  for (const char* t : {st, ld})
    out.push_back({"S[(4,4,4,4,2):(8,1,32,128,4)]", t, {16, 32}, 4, axe::cute::Swizzle(2, 3, 4)});
  // Two warps on a 32x32 tile: warp = row / 16.
  out.push_back({"S[(32,32):(32,1)]", "S[(2,16,32):(1@warp,1,1@lane)]", {32, 32}, 4, std::nullopt});
  out.push_back({"S[(32,32):(32,1)]", "S[(2,16,32):(1@warp,1@lane,1)]", {32, 32}, 4, std::nullopt});
  out.push_back({"S[(32,32):(32,1)]", "S[(2,16,32):(1@warp,1@lane,1)]", {32, 32}, 4, axe::cute::Swizzle(5, 0, 5)});
  return out;
}

}  // namespace

int main() {
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices < 1) {
    std::printf("skipped: no GPU visible\n");
    return 77;
  }
  unsigned* out = nullptr;
  CHECK(cudaMalloc(&out, 1024 * sizeof(unsigned)));
  int k = 0;
  for (const Case& c : cases()) {
    axe::linear::BankReport r;
    try {
      r = axe::linear::bank_conflicts(axe::parse_axe_layout(c.smem), axe::parse_axe_layout(c.threads), c.shape,
                                      c.element_bytes, c.swizzle);
    } catch (const axe::Error& e) {
      std::fprintf(stderr, "bank_probe: case %s / %s: %s\n", c.smem.c_str(), c.threads.c_str(), e.what());
      return 1;
    }
    std::vector<long long> bytes(r.offsets.size());
    long long top = 0;
    for (std::size_t i = 0; i < bytes.size(); ++i) {
      bytes[i] = r.offsets[i] < 0 ? -1 : r.offsets[i] * c.element_bytes;
      top = std::max(top, bytes[i] + r.vector_bytes);
    }
    long long* d = nullptr;
    CHECK(cudaMalloc(&d, bytes.size() * sizeof(long long)));
    CHECK(cudaMemcpy(d, bytes.data(), bytes.size() * sizeof(long long), cudaMemcpyHostToDevice));
    const auto smem = static_cast<std::size_t>((top + 127) / 128 * 128);
    const int n = static_cast<int>(r.instructions), w = static_cast<int>(r.warps);
    cudaError_t e = cudaErrorInvalidValue;
    switch (r.vector_bytes) {
      case 1: e = launch_pair<1>(d, n, w, smem, out); break;
      case 2: e = launch_pair<2>(d, n, w, smem, out); break;
      case 4: e = launch_pair<4>(d, n, w, smem, out); break;
      case 8: e = launch_pair<8>(d, n, w, smem, out); break;
      case 16: e = launch_pair<16>(d, n, w, smem, out); break;
    }
    CHECK(e);
    CHECK(cudaFree(d));
    std::string sw = c.swizzle ? " swizzle " + std::to_string(c.swizzle->bits) + "," + std::to_string(c.swizzle->base) +
                                     "," + std::to_string(c.swizzle->shift)
                               : "";
    std::printf("case %d: smem %s%s access %s element %lld bytes: vector %lld bytes, %lld warp(s) x %lld instructions, "
                "model %lld\n",
                k, c.smem.c_str(), sw.c_str(), c.threads.c_str(), static_cast<long long>(c.element_bytes),
                static_cast<long long>(r.vector_bytes), static_cast<long long>(r.warps),
                static_cast<long long>(r.instructions), static_cast<long long>(r.wavefronts));
    ++k;
  }
  CHECK(cudaFree(out));
  return 0;
}
