// Internals of the box kernels shared by box_list.cpp, copy_engine.cpp and the .cu files: the
// work split, the device descriptors of a BoxList, its cached tables and the host helpers that
// merge modes and choose units.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <map>
#include <mutex>
#include <utility>

#include "axe/codegen/copy_codegen.hpp"
#include "axe/codegen/transpose_codegen.hpp"
#include "axe/cuda/box_list.hpp"
#include "axe/cuda/check.hpp"
#include "axe/cuda/copy_engine.hpp"
#include "axe/plan/plan.hpp"

namespace axe::cuda {
namespace internal {

constexpr int kThreads = 256;
constexpr int kUnroll = 4;
constexpr long long kChunk = kThreads * kUnroll;

struct Desc {
  long long ext[kMaxModes];  // innermost extent in units
  long long sst[kMaxModes];  // strides in units
  long long dst[kMaxModes];
  long long soff, doff;  // units
  long long units;       // units in the box
  long long chunk_begin;
  int rank;
  int ulog;   // log2(unit bytes)
  int small;  // every index fits 32 bits
  int source;  // 0: src, 1: src2
};
static_assert(sizeof(Desc) % 8 == 0);

std::int64_t box_elements(const Transfer& t);

// Drops extent-1 modes and merges mode k into k+1 where both sides are contiguous across them.
Transfer merge_modes(const Transfer& t);

void check_box(const Transfer& t);

// The transpose of a box (is_transpose) as the generated kernel's descriptor
// (generated_transpose.cpp), and whether its tile rows start 16-byte aligned on both sides (the
// vector kernel).
codegen::TransposeDesc transpose_desc(const Transfer& box);
bool transpose_vectors_fit(const codegen::TransposeDesc& d, const void* src, const void* dst,
                           std::int64_t es);

// A box of copy_generated (its innermost mode contiguous on both sides) as the generated copy
// kernel's descriptor, without its tile counts (copy_generated.cpp).
codegen::CopyBoxDesc copy_box_desc(const Transfer& merged);

// Largest power-of-two unit (bytes, <= cap) that the box allows.
int unit_log2(const Transfer& t, std::int64_t es, int cap);

// Launch heuristics (launch.cpp): the alignment of a base pointer, the grid of a box-kernel launch
// (min(chunks, SMs x the blocks per SM of set_box_blocks_per_sm)), and the grid of a kernel that
// holds `resident` blocks on an SM at once: whole waves of them, the most within that bound where
// two or more fit, else that bound. On one H200 (2026-11-28, generated_copy.cpp) a kernel of 3
// resident ran faster on 6 blocks an SM than on 8 (2.67 waves, the last a third empty), and one
// of 5 slower on 5 (one wave) than on 8. grid_one_wave: one wave of them (at most that bound),
// for the flat copy tiles (generated_copy.cpp).
int pointer_align(const void* p);
int grid_for(std::int64_t chunks);
int grid_in_waves(std::int64_t chunks, int resident);
int grid_one_wave(std::int64_t chunks, int resident);

// A generated kernel, compiled for one device: its generator's description and the loaded kernel.
template <class Kernel>
struct Compiled {
  cudaKernel_t kernel = nullptr;
  Kernel k;
  int resident = 0;  // blocks of it an SM holds at once, where the launch needs it
};

// The process-wide cache of one call site's generated kernels (each instantiation, that is each
// `make` lambda, has its own): the entry of `key` on the current device, built once by
// make(entry, device) under the cache's lock. A failure leaves nothing behind, so the next call
// tries again and fails the same way, never with a half-built kernel. Entries are never evicted
// (std::map: a returned reference stays valid).
// Example: compile_once<Compiled<codegen::CopyKernel>>(std::tuple{es, a}, [&](auto& c, int dev) {...})
template <class Value, class Key, class Make>
const Value& compile_once(const Key& key, Make&& make) {
  static std::mutex mu;
  static std::map<std::pair<Key, int>, Value> cache;
  int device = 0;
  AXE_CUDA_CHECK(cudaGetDevice(&device));
  std::lock_guard<std::mutex> lock(mu);
  auto [it, fresh] = cache.try_emplace({key, device});
  if (fresh) {
    try {
      make(it->second, device);
    } catch (...) {
      cache.erase(it);
      throw;
    }
  }
  return it->second;
}

}  // namespace internal

struct BoxList::Tables {
  std::mutex mu;
  struct Entry {
    void* dev = nullptr;
    void* host = nullptr;
    std::int64_t chunks = 0;
    int modes = 0;
    std::int64_t boxes = 0;  // copy_tiles: the table's boxes (folded boxes add their tails)
  };
  std::map<int, Entry> by_align;         // the box kernel's tables by alignment (device)
  std::map<std::pair<std::int64_t, std::int64_t>, Entry> copy_tiles;  // copy_device by tile
  CopyEnginePolicy split_policy{-1, 0};  // the policy `split` was computed for (none yet)
  BoxList::Split split;
  ~Tables() {
    for (auto& [a, e] : by_align) {
      if (e.dev) cudaFree(e.dev);
      if (e.host) cudaFreeHost(e.host);
    }
    for (auto& [t, e] : copy_tiles) {
      if (e.dev) cudaFree(e.dev);
      if (e.host) cudaFreeHost(e.host);
    }
  }
};

}  // namespace axe::cuda
