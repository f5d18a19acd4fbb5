// For a next session (not part of the build): a generated copy kernel's source (KERNEL, from
// gen.cpp, possibly edited by run_next_2d_gap.sh) launched on kernel_bench's uneven u8 pack (rows
// of 2047 bytes 4095 apart at offset 1, packed), one box, the table built as BoxList::copy_device
// builds it, on one wave (GRID_PER_SM blocks an SM), timed as kernel_bench times (median of 30
// event pairs around 10 launches, 5 warm-ups) against cudaMemcpyAsync of the same bytes, and
// checked byte for byte against a host copy unless NOCHECK is defined.
//   nvcc -O3 -std=c++17 -arch=sm_90a -DKERNEL='"k.cu"' -DTILE_A=512 -DTILE_B=32 -DWORDS=1 harness.cu
// TILE_A: elements along the row (the kernel's tile_a), TILE_B: rows (tile_b), WORDS 1: 2-D
// destination words, 2: flat (TILE_B 1).
#include KERNEL

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#ifndef GRID_PER_SM
#define GRID_PER_SM 3
#endif

#define CK(x)                                                                                 \
  do {                                                                                        \
    cudaError_t e_ = (x);                                                                     \
    if (e_ != cudaSuccess) {                                                                  \
      std::printf("CUDA %s at %s:%d\n", cudaGetErrorString(e_), __FILE__, __LINE__);         \
      std::exit(1);                                                                           \
    }                                                                                         \
  } while (0)

int main(int argc, char** argv) {
  const char* label = argc > 1 ? argv[1] : "kernel";
  const long long L = 2047, SB = 4095, N = (256ll << 20) / 4095;
  const size_t sbytes = (size_t)(N * SB + 64), dbytes = (size_t)(N * L + 64);
  unsigned char *a, *b;
  CK(cudaMalloc(&a, sbytes));
  CK(cudaMalloc(&b, dbytes));
  std::vector<unsigned char> ha(sbytes), hb(dbytes, 0x5a), ref(dbytes, 0x5a);
  unsigned s = 2026u;
  for (auto& x : ha) x = (unsigned char)((s = s * 1664525u + 1013904223u) >> 24);
  CK(cudaMemcpy(a, ha.data(), sbytes, cudaMemcpyHostToDevice));
  CK(cudaMemcpy(b, hb.data(), dbytes, cudaMemcpyHostToDevice));
  for (long long y = 0; y < N; ++y) std::memcpy(&ref[y * L], &ha[1 + y * SB], (size_t)L);
  axe_copy_box d;
  std::memset(&d, 0, sizeof d);
  d.A = L, d.B = N, d.sb = SB, d.db = L, d.soff = 1, d.doff = 0, d.source = 0;
  const long long v = 16, row_words = (L + 30) / 16;
  d.tiles_a = WORDS == 2 ? (N * row_words + TILE_A / v - 1) / (TILE_A / v) : (row_words + TILE_A / v - 1) / (TILE_A / v);
  d.tiles_b = WORDS == 2 ? 1 : (N + TILE_B - 1) / TILE_B;
  d.per = d.tiles_a * d.tiles_b;
  d.first = 0;
  d.tiles = d.per;
  d.small = d.tiles < (1ll << 32) ? 1 : 0;
  d.smin = 1;
  d.smax = 1 + (L - 1) + (N - 1) * SB;
  axe_copy_box* table;
  CK(cudaMalloc(&table, sizeof d));
  CK(cudaMemcpy(table, &d, sizeof d, cudaMemcpyHostToDevice));
  cudaDeviceProp prop;
  CK(cudaGetDeviceProperties(&prop, 0));
  const long long tiles = d.tiles;
  const unsigned grid = (unsigned)std::min<long long>(tiles, (long long)prop.multiProcessorCount * GRID_PER_SM);
  int nboxes = 1;
  auto launch = [&] { axe_copy<<<grid, 256>>>(a, b, nullptr, table, nboxes, tiles); };
  launch();
  CK(cudaDeviceSynchronize());
  CK(cudaMemcpy(hb.data(), b, dbytes, cudaMemcpyDeviceToHost));
#ifdef NOCHECK
  const char* ok = "unchecked";
#else
  const char* ok = hb == ref ? "correct" : "WRONG";
#endif
  auto median = [&](auto f) {
    cudaEvent_t e0, e1;
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    for (int i = 0; i < 5; ++i) f();
    std::vector<float> t;
    for (int i = 0; i < 30; ++i) {
      CK(cudaEventRecord(e0));
      for (int r = 0; r < 10; ++r) f();
      CK(cudaEventRecord(e1));
      CK(cudaEventSynchronize(e1));
      float ms = 0;
      CK(cudaEventElapsedTime(&ms, e0, e1));
      t.push_back(ms / 10);
    }
    std::sort(t.begin(), t.end());
    CK(cudaGetLastError());
    return t[t.size() / 2];
  };
  const float mc = median([&] { CK(cudaMemcpyAsync(b, a, (size_t)(N * L), cudaMemcpyDeviceToDevice)); });
  const float ms = median(launch);
  cudaFuncAttributes fa;
  CK(cudaFuncGetAttributes(&fa, axe_copy));
  std::printf("%-28s %.4f ms %5.1f%% of memcpy  %s  regs %d  grid %u\n", label, ms, 100.0 * mc / ms, ok, fa.numRegs, grid);
  return 0;
}
