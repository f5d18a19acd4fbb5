// Boxes of a plan step on the device (DESIGN §5), the input of every kernel in kernels.hpp.
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
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <memory>
#include <vector>

#include "axe/core/dtype.hpp"
#include "axe/cuda/copy_engine.hpp"
#include "axe/plan/plan.hpp"

namespace axe::cuda {

inline constexpr int kMaxModes = 8;

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
  // Internal: the table of the generated copy kernel (codegen/copy_codegen.hpp) on tiles of
  // tile_b rows by tile_a elements, or by tile_a / V destination words with `words` (each box's
  // innermost mode contiguous on both sides; see copy_generated_fits), cached like device();
  // `chunks` counts the tiles and `boxes` the table's entries (a box of few rows and a long run
  // is folded into shorter rows and a tail). With `flat` (words only), tiles of tile_a / V words
  // of each box's rows taken one after another (codegen::CopyTile::flat), no folding.
  Device copy_device(std::int64_t tile_a, std::int64_t tile_b, bool words, cudaStream_t stream,
                     bool flat = false) const;
  // Internal: how copy_boxes moves this list under `policy`: the copy-engine calls, the realigned
  // rows (the generated copy's destination words) and the boxes of the box kernel (null: none,
  // or, when both of the others are empty, this list itself). The last policy's is cached.
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

}  // namespace axe::cuda
