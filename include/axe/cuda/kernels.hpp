// Device kernels driven by plan boxes (DESIGN §5): pack, unpack, reduce on receipt, fill, and the
// local layout transform (a transpose through swizzled shared memory).
//
// A BoxList is a whole step's worth of strided boxes (axe::Transfer, element units, row-major,
// last extent fastest) moved by ONE kernel launch. It is built once on the host (at plan time),
// uploaded once to the device (cudaMemcpyAsync from pinned memory on the first launch's stream)
// and reused by every launch; launches never synchronise the host.
//
// Each box reads `src` at (src_offset, src_strides) and writes `dst` at (dst_offset, dst_strides).
// pack() replaces the destination side by "packed back to back", unpack() the source side:
//   pack({(16,32) src 64+(128,1)}, f32)  moves 16 runs of 32 floats from src[64 + 128 i + j] to
//   dst[32 i + j]; unpack of the same box reads dst[32 i + j] and writes at its dst side.
// The packed position of box k is the sum of the elements of boxes 0..k-1 plus `packed_base`.
//
// Vectorisation: when the innermost mode is contiguous on both sides, every access moves the
// largest power-of-two unit (up to 16 bytes) that divides the run length, the outer strides and
// the offsets (in bytes) and the alignment of both base pointers; otherwise one element per
// access. Modes that are contiguous in both buffers are merged first, so a box of 8 modes often
// launches as 1 or 2.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <map>
#include <memory>
#include <vector>

#include "axe/core/dtype.hpp"
#include "axe/dist/placement.hpp"
#include "axe/plan/plan.hpp"

namespace axe::cuda {

inline constexpr int kMaxModes = 8;

// One cudaMemcpy2DAsync of copy_boxes (see CopyEnginePolicy below): `height` rows of `width` bytes,
// byte offsets and pitches into the source (0: src, 1: src2) and the destination.
struct EngineCopy {
  int source = 0;
  std::int64_t src_offset = 0, src_pitch = 0, dst_offset = 0, dst_pitch = 0, width = 0, height = 1;
  bool operator==(const EngineCopy&) const = default;
};

// How copy_boxes moves each box: which boxes go to the copy engines, and which rows go through
// the realigned-row kernel (see copy_engine_policy below).
struct CopyEnginePolicy {
  std::int64_t min_bytes = std::int64_t{2} << 20;  // boxes of at least this many bytes; 0: never
  int unit_below = 8;  // whose kernel unit would be smaller than this many bytes (17: any unit)
  std::int64_t realign_min_row = 64;  // realigned rows of at least this many bytes; 0: never
  bool operator==(const CopyEnginePolicy&) const = default;
};

// Boxes with both sides strided, merged and split into device descriptors.
class BoxList {
 public:
  BoxList() = default;
  // Box k: src side as given, dst side packed at packed_base + sum(elements of boxes < k).
  static BoxList pack(const std::vector<Transfer>& boxes, DType dtype, std::int64_t packed_base = 0);
  // Box k: src side packed at packed_base + sum(elements of boxes < k), dst side as given.
  static BoxList unpack(const std::vector<Transfer>& boxes, DType dtype,
                        std::int64_t packed_base = 0);
  // Both sides as given (local copies).
  static BoxList copy(const std::vector<Transfer>& boxes, DType dtype);
  // Appends another list's boxes (same dtype), so several messages share one launch.
  void append(const BoxList& other);
  // Marks every box to read from the launch's second source pointer (`src2`): local copies
  // (from the input buffer) and received messages (from staging) then share one launch.
  BoxList& from_second_source();

  DType dtype() const { return dtype_; }
  std::size_t size() const { return boxes_.size(); }
  bool empty() const { return boxes_.empty(); }
  std::int64_t elements() const;  // over every box
  // The boxes after merging (element units), for tests and printing.
  const std::vector<Transfer>& boxes() const { return boxes_; }

  // Internal: the device table for base pointers aligned to `align` bytes (1..16); uploaded on
  // `stream` on first use and cached. Returns the device pointer, the number of chunks and of
  // boxes, and the most modes of a box.
  struct Device {
    const void* table = nullptr;
    std::int64_t chunks = 0;
    int boxes = 0;
    int modes = 0;
  };
  Device device(int align, cudaStream_t stream) const;
  // Internal: the table of the realigned-row kernel for this list's boxes (each must be a row
  // copy_boxes realigns; see split), cached like device().
  Device row_device(cudaStream_t stream) const;
  // Internal: how copy_boxes moves this list under `policy`: the copy-engine calls, the boxes of
  // the realigned-row kernel and those of the box kernel (null: none, or, when both of the others
  // are empty, this list itself). The last policy's is cached.
  struct Split {
    std::vector<EngineCopy> engine;
    std::shared_ptr<const BoxList> rows;
    std::shared_ptr<const BoxList> rest;
  };
  Split split(const CopyEnginePolicy& policy) const;

 private:
  struct Tables;
  static BoxList build(const std::vector<Transfer>& boxes, DType dtype, int mode,
                       std::int64_t packed_base);
  DType dtype_ = DType::F32;
  std::vector<Transfer> boxes_;
  std::vector<int> source_;  // per box: 0 reads src, 1 reads src2
  std::shared_ptr<Tables> tables_;  // device tables by alignment, shared by copies
};

// Realigned rows: a box whose innermost mode is contiguous on both sides in rows of at least
// policy.realign_min_row bytes, but whose row length, pitches or offsets hold the box kernel to
// units of 1, 2 or 4 bytes (rows of an uneven shard: 2047 of 4095 elements), goes through a
// second kernel that moves every row in 16-byte slots of the destination: aligned 16-byte
// stores, each assembled from the two aligned 16-byte source words it straddles (a funnel shift
// by the row's source-minus-destination misalignment); the partial words at either end of a row
// are read and written element by element, so no access leaves the row. Its unit counts as 16
// bytes in the copy-engine rule below. Example: rows of 2047 bf16 at source pitch 4095 and
// offset 1 move as 256 slots per row instead of 2047 2-byte accesses. Measured on an H200
// (examples/results/1xH200/kernel256.txt), as % of cudaMemcpy on the same bytes: such rows
// packed 71 % (bf16) / 77 % (f32), unpacked 66 % / 76 %, copied between odd pitches 74 % / 77 %,
// against 20-21 % / 37-39 % on the box kernel alone and 37-38 % / 41-44 % on the copy engines.
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
// engines, 20 % / 36 % on the box kernel (the realigned-row kernel now takes them). Hence the
// default unit_below of 8. A box becomes one call per plane (3 modes) and per
// kMaxCopyEngineRows rows; at most kMaxCopyEngineCalls calls per list; the realigned rows, then
// the other boxes, go through one kernel launch each after them, on the same stream.
// Defaults: AXE_COPY_ENGINE_MIN (bytes, 0 turns the engines off), AXE_COPY_ENGINE_UNIT (1..17)
// and AXE_REALIGN_MIN_ROW (bytes, 0 turns realigned rows off), else the CopyEnginePolicy
// defaults. Process-wide; set returns the previous policy and throws axe::Error on a negative
// min_bytes or realign_min_row or a unit_below outside 1..17.
inline constexpr std::int64_t kCopyEngineMinRow = 1024;
inline constexpr int kMaxCopyEngineCalls = 32;
inline constexpr std::int64_t kMaxCopyEngineRows = 65536;
CopyEnginePolicy copy_engine_policy();
CopyEnginePolicy set_copy_engine_policy(CopyEnginePolicy policy);
// The copy-engine calls copy_boxes makes for `list` under `policy`, for tests.
std::vector<EngineCopy> engine_copies(const BoxList& list, const CopyEnginePolicy& policy);
// The (merged) boxes copy_boxes moves through the realigned-row kernel under `policy`, for tests.
std::vector<Transfer> realigned_rows(const BoxList& list, const CopyEnginePolicy& policy);

// Occupancy of the box kernels (copy_boxes, reduce_boxes, fill_boxes): at most n blocks of 256
// threads per SM (1..8; 8, the default, fills the GPU). A pipelined step lowers it while NCCL runs
// on another stream, so NCCL's blocks find room on every SM. Per host thread; returns the previous
// value; axe::Error outside 1..8.
int set_box_blocks_per_sm(int n);

// dst box = src box (bitwise), every box of `list`, one launch. Boxes marked
// from_second_source() read `src2` instead of `src`.
void copy_boxes(const BoxList& list, const void* src, void* dst, cudaStream_t stream,
                const void* src2 = nullptr);

// Reduce on receipt: dst box = op(dst box, src box) when `combine`, else dst box = src box; then,
// when divide != 1, dst box = dst box / divide (avg: the last term divides by the term count).
// Integer arithmetic wraps; f16 and bf16 combine in float and round to nearest even; division
// truncates for integers, as the host executor does.
void reduce_boxes(const BoxList& list, const void* src, void* dst, ReduceOp op, bool combine,
                  double divide, cudaStream_t stream, const void* src2 = nullptr);

// Sets every element of the dst side of each box to `value` converted to the list's dtype
// (NaN and infinities map to the integer extremes as on the host; NaN to 0 for u8 padding).
void fill_boxes(const BoxList& list, void* dst, double value, cudaStream_t stream);

// Local layout transform of one box on one GPU. When one mode is contiguous in src and another in
// dst (a transpose, possibly batched over the other modes), the box goes through a 64x64 tile of
// shared memory (32x32 for 8-byte types) whose column index is XOR-swizzled by the row
// (transpose_swizzle below, no padding): loads and stores are coalesced on both sides and no
// warp access hits a bank twice, for 1-, 2-, 4- and 8-byte elements. Any other box is a
// copy_boxes of that box. Example: a 4096x8192 f32 matrix into its transpose is the box
// (4096,8192) src 0+(8192,1) dst 0+(1,4096).
void transform(const Transfer& box, DType dtype, const void* src, void* dst, cudaStream_t stream);
// True when transform() takes the shared-memory path for this box.
bool is_transpose(const Transfer& box);

// The transpose's shared tile: transpose_tile(b) x transpose_tile(b) elements of b bytes; element
// (r, c) (r: the destination's contiguous index within the tile, c: the source's) sits in row r,
// column transpose_swizzle(b, r, c). Blocks of 32 x 8 threads: a warp writes 32 consecutive c of
// one row, then reads one column c over 32 consecutive rows r, and every such access touches
// each 4-byte bank at most once (8-byte elements: per half-warp, as the hardware serves them):
//   4- and 8-byte: c ^ (r mod 32)              -> bank (c ^ r) mod 32 (8-byte: banks 2w, 2w + 1)
//   2-byte (a row of 64 is 32 banks): c ^ ((r mod 32) << 1) -> bank (c >> 1) ^ (r mod 32)
//   1-byte (a row of 64 is 16 banks): c ^ (((r >> 1) mod 16) << 2)
//                                      -> bank 16 (r mod 2) + ((c >> 2) ^ ((r >> 1) mod 16))
// The XOR term is below the tile width, so each row is permuted in place: no padding.
// Example: 4-byte, the read of column c = 5 over rows 0..31 hits banks 5 ^ r: 5, 4, 7, 6, ...
constexpr int transpose_tile(int elem_bytes) {
  return elem_bytes == 8 ? 32 : 64;
}
constexpr int transpose_swizzle(int elem_bytes, int r, int c) {
  return elem_bytes == 2   ? c ^ ((r & 31) << 1)
         : elem_bytes == 1 ? c ^ (((r >> 1) & 15) << 2)
                           : c ^ (r & 31);
}

// Bit pattern of `value` in `dtype` (little-endian, size_of(dtype) bytes used).
std::uint64_t value_bits(DType dtype, double value);

}  // namespace axe::cuda
