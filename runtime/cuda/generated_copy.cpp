// copy_generated (include/axe/cuda/kernels.hpp): box copies by the generated tile-copy kernel.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <tuple>

#include "axe/codegen/copy_codegen.hpp"
#include "axe/core/error.hpp"
#include "axe/cuda/check.hpp"
#include "axe/cuda/kernels.hpp"
#include "axe/cuda/nvrtc.hpp"
#include "cuda/internal.hpp"

namespace axe::cuda {
namespace {

using Compiled = internal::Compiled<codegen::CopyKernel>;

// The shortest run (elements) on which rows of 4-byte elements that are not all 16-byte aligned
// take exchanged tiles (codegen::CopyTile::exchange) of 1024 elements on 4 warps (8 a thread)
// instead of destination words. One H200, 2026-11-29 (examples/results/1xH200/edges_2026-11-29/):
// - a stand-alone experiment of both forms on kernel_bench's uneven f32 rows (copy_exp.cu, call
//   8, two rounds): the copy of rows of 4088 into rows of 4095 at 95.3% of memcpy as 2048-element
//   exchanged tiles on 8 warps against 84.5-85.1% as 2-D destination words, the pack of rows of
//   2047 at 99.2-99.3% against 88.3-88.9%. Triton's masked row copy runs the same two layouts
//   (its SASS: STS.128 and ldmatrix between them).
// - The runtime, kernel_bench (call 9), ms for the f32 pack / unpack / copy of those rows:
//   exchanged 1024 on 4 warps 0.0712 / 0.0741 / 0.1389, destination words 0.0734 / 0.0765-0.0766
//   / 0.1430-0.1444, Triton in the same call 0.0730 / 0.0824 / 0.1389. Exchanged 2048 on 8 warps
//   (one block a tile and its table search for 16 KiB) ran 0.0770-0.0772 / 0.0786-0.0788 /
//   0.1517-0.1520, 1024 on 8 warps 0.0986 / 0.0991 / 0.1867, 4096 on 8 warps the copy in 0.1371.
// Shorter runs were not measured.
constexpr std::int64_t kExchangeMinRun = 1024;

// One kernel per (element size, access, tile, device), compiled once.
const Compiled& compiled(std::int64_t element_bytes, codegen::TransposeAccess access, const codegen::CopyTile& tile) {
  return internal::compile_once<Compiled>(std::tuple{element_bytes, access, tile.a, tile.rows, tile.warps, tile.flat,
                                                     tile.wide, tile.exchange},
                                          [&](Compiled& c, int) {
                                            const codegen::Element e(element_bytes, codegen::Element::Kind::integer, "raw");
                                            c.k = codegen::copy_kernel(e, tile, access);
                                            c.kernel = KernelCache::global().kernel(c.k.source, c.k.name);
                                            AXE_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
                                                &c.resident, reinterpret_cast<const void*>(c.kernel),
                                                static_cast<int>(c.k.threads), 0));
                                          });
}

bool inner_contiguous(const Transfer& t) {
  return !t.extents.empty() && t.src_strides.back() == 1 && t.dst_strides.back() == 1;
}

// Whether every box of `list` (each inner_contiguous) has its offsets and outer strides in whole
// 16-byte vectors, and so do the base pointers; `run` becomes the shortest run (elements).
bool vectors_fit(const BoxList& list, const void* src, const void* dst, const void* src2, std::int64_t& run) {
  const std::int64_t v = 16 / size_of(list.dtype());
  bool fit = internal::pointer_align(dst) == 16 && (!src || internal::pointer_align(src) == 16) &&
             (!src2 || internal::pointer_align(src2) == 16);
  run = 0;
  for (const Transfer& t : list.boxes()) {
    run = run == 0 ? t.extents.back() : std::min(run, t.extents.back());
    fit = fit && t.src_offset % v == 0 && t.dst_offset % v == 0;
    for (std::size_t k = 0; k + 1 < t.extents.size(); ++k)
      fit = fit && t.src_strides[k] % v == 0 && t.dst_strides[k] % v == 0;
  }
  return fit;
}

}  // namespace

namespace internal {

codegen::CopyBoxDesc copy_box_desc(const Transfer& t) {
  const int r = static_cast<int>(t.extents.size());
  codegen::CopyBoxDesc d;
  d.A = t.extents[r - 1];
  if (r >= 2) {
    d.B = t.extents[r - 2];
    d.sb = t.src_strides[r - 2];
    d.db = t.dst_strides[r - 2];
  }
  d.soff = t.src_offset;
  d.doff = t.dst_offset;
  d.smin = d.smax = t.src_offset;
  for (int k = 0; k < r; ++k) {
    const long long reach = (t.extents[k] - 1) * t.src_strides[k];
    (reach < 0 ? d.smin : d.smax) += reach;
  }
  for (int k = 0; k + 2 < r; ++k) {
    if (d.nb == codegen::kCopyBatchModes) fail("copy_generated: box " + to_string(t) + " has more than 8 modes");
    d.bext[d.nb] = t.extents[k];
    d.bsst[d.nb] = t.src_strides[k];
    d.bdst[d.nb] = t.dst_strides[k];
    ++d.nb;
  }
  return d;
}

}  // namespace internal

bool copies_generated(const BoxList& list, const void* src, const void* dst, const void* src2,
                      const CopyEnginePolicy& policy) {
  if (policy.generated_min_run <= 0 || list.empty()) return false;
  for (const Transfer& t : list.boxes())
    if (t.extents.size() < 2 || !inner_contiguous(t)) return false;
  std::int64_t run = 0;
  return vectors_fit(list, src, dst, src2, run) && run * size_of(list.dtype()) >= policy.generated_min_run;
}

bool copy_generated_fits(const BoxList& list) {
  return std::all_of(list.boxes().begin(), list.boxes().end(), inner_contiguous);
}

void copy_generated(const BoxList& list, const void* src, void* dst, cudaStream_t stream, const void* src2,
                    const codegen::CopyTile* tile, std::optional<codegen::TransposeAccess> forced) {
  if (list.empty()) return;
  const std::int64_t es = size_of(list.dtype());
  for (const Transfer& t : list.boxes())
    if (!inner_contiguous(t))
      fail("copy_generated: box " + to_string(t) + " is not contiguous along its innermost mode on both sides");
  std::int64_t run = 0;
  const bool fit = vectors_fit(list, src, dst, src2, run);
  // Rows that are not all 16-byte aligned: exchanged tiles (one element an access, two layouts)
  // for 4-byte elements on runs of kExchangeMinRun or more, destination words otherwise.
  const codegen::CopyTile* given = tile;
  codegen::CopyTile exchanged;
  if (!tile && !forced && !fit && es == 4 && run >= kExchangeMinRun) {
    exchanged = codegen::CopyTile{1024, 1, 4};
    exchanged.exchange = true;
    tile = &exchanged;
  }
  const codegen::TransposeAccess access = forced                  ? *forced
                                          : tile && tile->exchange ? codegen::TransposeAccess::scalar
                                          : fit                    ? codegen::TransposeAccess::vectors
                                                                   : codegen::TransposeAccess::realigned;
  if (access == codegen::TransposeAccess::vectors && !fit)
    fail("copy_generated: vectors forced on boxes whose rows are not all 16-byte aligned");
  // Destination words: the box of the longest rows, and whether every box's destination rows are
  // back to back (a pack; asked only where the default tile is taken).
  const bool words = access == codegen::TransposeAccess::realigned;
  const Transfer* longest = nullptr;
  bool packed = words && !given;
  if (words) {
    for (const Transfer& t : list.boxes()) {
      const std::size_t r = t.extents.size();
      if (!longest || t.extents.back() > longest->extents.back()) longest = &t;
      packed = packed && (r < 2 || t.dst_strides[r - 2] == t.extents[r - 1]);
    }
  }
  const std::int64_t longest_bytes = longest ? longest->extents.back() * es : 0;
  const codegen::CopyTile chosen = !words ? (tile ? *tile : codegen::default_copy_tile(es, access, run))
                                          : codegen::copy_words_tile(es, run, packed, longest_bytes, tile);
  if (chosen.flat && !codegen::copy_rows_fit_32(longest_bytes))
    fail("copy_generated: box " + to_string(*longest) + " has rows of 2^31 - 64 bytes or more, over a flat tile's limit");
  const Compiled& c = compiled(es, access, chosen);
  const BoxList::Device dev =
      list.copy_device(c.k.tile_a, c.k.tile_b, access == codegen::TransposeAccess::realigned, stream, c.k.flat);
  if (dev.chunks == 0) return;
  long long tiles = dev.chunks;
  int nboxes = dev.boxes;
  const void* table = dev.table;
  void* args[] = {&src, &dst, &src2, &table, &nboxes, &tiles};
  // Whole waves (internal::grid_in_waves). One H200, 2026-11-28, two builds alternated twice
  // (examples/results/1xH200/row_ends_2026-11-28/, call 4), % of memcpy:
  // - destination words (3 blocks an SM) on 6 blocks an SM against 8: uneven packs 75.6-75.9 /
  //   87.7-87.9 / 91.2-91.4 (u8 / bf16 / f32) against 75.7-75.8 / 83.4-83.5 / 87.2-87.4, unpacks
  //   72.8-73.2 / 84.3 / 88.2-88.5 against 70.7-71.1 / 80.8-80.9 / 85.3;
  // - the short-run vector tiles (5 an SM) on 5 against 8: packs of 64-256-byte runs 0.8-1.6
  //   points behind, so one wave takes the cap.
  // Flat tiles (the u8 packs) run one wave (internal::grid_one_wave): one H200, 2026-11-29, the
  // same kernel under a cap of 3 an SM against 6 (examples/results/1xH200/one_wave_2026-11-29/,
  // call 3, two rounds), 88.7-88.9% of memcpy against 86.0%. The 2-D tiles lost 0.3-3.7 points on
  // one wave (u8 unpack / copy 74.7 / 86.3-87.1 against 75.1 / 87.8-88.0, f32 pack 92.0 against
  // 92.8, bf16 copy 86.6 against 90.3; call 1 and call 3), so they keep two.
  // Exchanged tiles take one block a tile (kExchangeMinRun's experiment: one wave of blocks looping
  // over the tiles ran the f32 copy at 84.6% of memcpy against 95.3%).
  const int grid = c.k.exchange ? static_cast<int>(std::min<long long>(tiles, 0x7fffffffll))
                   : c.k.flat   ? internal::grid_one_wave(tiles, c.resident)
                                : internal::grid_in_waves(tiles, c.resident);
  launch(c.kernel, dim3(static_cast<unsigned>(grid)),
         dim3(static_cast<unsigned>(c.k.threads)), args, 0, stream);
}

}  // namespace axe::cuda
