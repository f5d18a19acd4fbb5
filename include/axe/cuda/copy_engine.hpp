// How copy_boxes (kernels.hpp) moves a BoxList (box_list.hpp): which boxes go to the copy engines,
// which to the generated copy (realigned rows, aligned strided runs) and which to the box kernel,
// under a process-wide policy.
#pragma once

#include <cstdint>
#include <vector>

#include "axe/plan/plan.hpp"

namespace axe::cuda {

class BoxList;

// One cudaMemcpy2DAsync of copy_boxes (see CopyEnginePolicy below): `height` rows of `width` bytes,
// byte offsets and pitches into the source (0: src, 1: src2) and the destination.
struct EngineCopy {
  int source = 0;
  std::int64_t src_offset = 0, src_pitch = 0, dst_offset = 0, dst_pitch = 0, width = 0, height = 1;
  bool operator==(const EngineCopy&) const = default;
};

// How copy_boxes moves each box: which boxes go to the copy engines, which rows are realigned and
// which boxes the generated copy takes (see copy_engine_policy below).
struct CopyEnginePolicy {
  std::int64_t min_bytes = std::int64_t{2} << 20;  // boxes of at least this many bytes; 0: never
  int unit_below = 8;  // whose kernel unit would be smaller than this many bytes (17: any unit)
  std::int64_t realign_min_row = 64;  // realigned rows of at least this many bytes; 0: never
  std::int64_t generated_min_run = 128;  // the generated copy for runs of at least this; 0: never
  bool operator==(const CopyEnginePolicy&) const = default;
};

// Realigned rows: a box whose innermost mode is contiguous on both sides in rows of at least
// policy.realign_min_row bytes, but whose row length, pitches or offsets hold the box kernel to
// units of 1, 2 or 4 bytes (rows of an uneven shard: 2047 of 4095 elements), goes through the
// generated copy's destination words (copy_generated, codegen/copy_codegen.hpp): aligned 16-byte
// stores, each assembled from the two aligned 16-byte source words it straddles (a funnel shift
// by the row's source-minus-destination misalignment), source words read whole within the box's
// span; the partial words at either end of a row are written element by element, so no store
// leaves the row. Its unit counts as 16 bytes in the copy-engine rule below. Example: rows of 2047
// bf16 at source pitch 4095 and offset 1 move as 256 words per row instead of 2047 2-byte
// accesses. It replaced a hand-written kernel of the same scheme (one thread per word, indices
// decoded per word, row ends read in pieces): in the same run (kernel_bench --copies, one H100,
// 2026-11-27, % of cudaMemcpy; examples/results/1xH100/copies_2026-11-27/) rows of 2047 of 4095
// at offset 1 packed / unpacked at 91.2 / 86.1% (bf16), 91.8 / 90.6% (f32), 87.9 / 80.2% (u8)
// against 82.3 / 79.8%, 91.3 / 88.8%, 65.9 / 64.9% by hand, and rows of 4088 copied into rows of
// 4095 at 88.2 / 89.4 / 85.0% against 88.4 / 89.4 / 84.5%.
//
// The generated copy (copy_generated, kernels.hpp) also takes the boxes left for the box kernel
// when every one of them has at least two modes after merging (a strided box, not one contiguous
// run), its innermost mode contiguous on both sides in runs of at least policy.generated_min_run
// bytes, and offsets, strides and base pointers in whole 16-byte vectors. Measured in the same
// run, alternated (as above): packs of f32 runs of 128 B to 16 KiB 89.9-93.2% against 88.1-91.7%
// on the box kernel, 64 boxes of 256-byte runs 90.6% against 88.6%; but runs of 64 B 86.2%
// against 92.1% (8 modes: 86.2% against 93.0%), 16 B 65.1% against 65.9%, and one contiguous run
// (folded into rows) 92.8-93.8% against 93.8-95.3%, which the box kernel therefore keeps.
//
// Copy engines: copy_boxes moves a box with cudaMemcpyAsync / cudaMemcpy2DAsync instead of the
// kernels when it has at least policy.min_bytes bytes and either is one contiguous run (1 mode
// after merging), or has its innermost mode contiguous on both sides with rows of at least
// kCopyEngineMinRow bytes (2 modes; 3 modes when the outermost extent is at most 4) and the
// kernel would move it in units smaller than policy.unit_below bytes (the unit is the largest
// power of two up to 16 dividing the row length, pitches and offsets in bytes; 16 for realigned
// rows). Measured on an H200 (examples/results/2xH200/kernel.txt, copy_engines.txt), 256 MiB,
// as % of cudaMemcpy: a contiguous run 99.9 % on the engines, 91.5 % on the kernel; rows of
// 8 KiB at 16-byte alignment 41 % on the engines, 88 % on the kernel; rows of 2047 of 4095
// elements at odd offsets (uneven shards, kernel units of 2 / 4 bytes) 37 % / 43 % on the
// engines, 20 % / 36 % on the box kernel (realigned rows now take them). Hence the
// default unit_below of 8. A box becomes one call per plane (3 modes) and per
// kMaxCopyEngineRows rows; at most kMaxCopyEngineCalls calls per list; the realigned rows, then
// the other boxes, go through one kernel launch each after them, on the same stream.
// The executor gives plans that run as CUDA graphs (executor.hpp) a policy with min_bytes 0: a
// captured cudaMemcpyAsync (a memcpy node) of 64-128 MiB between device buffers took 1.27-1.44x
// its direct time on an H200, 2.6-2.9x between buffers 2 bytes apart in their 16-byte alignment,
// while the kernels run as they do outside a graph. S0->R of an uneven shard on 2 H200s (its
// unpack is one contiguous run a rank), graph launches, 256 MiB: 0.71 ms with the engines off
// against 0.78 (f32) and 1.17 (bf16) on them (examples/results/2xH200/graphs_2026-11-28/).
// Defaults: AXE_COPY_ENGINE_MIN (bytes, 0 turns the engines off), AXE_COPY_ENGINE_UNIT (1..17),
// AXE_REALIGN_MIN_ROW (bytes, 0 turns realigned rows off) and AXE_GENERATED_COPY_MIN_RUN (bytes,
// 0 turns the generated copy off), else the CopyEnginePolicy defaults. Process-wide; set returns
// the previous policy and throws axe::Error on a negative min_bytes, realign_min_row or
// generated_min_run or a unit_below outside 1..17.
inline constexpr std::int64_t kCopyEngineMinRow = 1024;
inline constexpr int kMaxCopyEngineCalls = 32;
inline constexpr std::int64_t kMaxCopyEngineRows = 65536;
CopyEnginePolicy copy_engine_policy();
CopyEnginePolicy set_copy_engine_policy(CopyEnginePolicy policy);
// The copy-engine calls copy_boxes makes for `list` under `policy`, for tests.
std::vector<EngineCopy> engine_copies(const BoxList& list, const CopyEnginePolicy& policy);
// The (merged) boxes copy_boxes moves as realigned rows under `policy`, for tests.
std::vector<Transfer> realigned_rows(const BoxList& list, const CopyEnginePolicy& policy);
// Whether copy_boxes moves the boxes `list` leaves for the box kernel through the generated copy
// instead, under `policy`, on these base pointers (see above).
bool copies_generated(const BoxList& list, const void* src, const void* dst, const void* src2,
                      const CopyEnginePolicy& policy);

}  // namespace axe::cuda
