// CUDA source generated from layouts (the codegen layer: above linear/ and plan/, below the
// runtime; it emits text and needs no CUDA to run).
//
// A thread layout (an Axe layout of a tile over `m` = registers, `lane`, `warp`; power-of-two
// extents, so F2-linear: linear/bridge.hpp) gives, for every hardware bit, the row-major tile
// index it adds by XOR: its columns. Every access the generator emits is one of those maps:
//   element(r, lane, warp) = C[r] ^ T(lane, warp)
// with C[r] a compile-time constant per register and T computed once per thread (an XOR of the
// lane and warp columns whose bits are set). Where the register columns and the thread columns
// touch disjoint bits the XOR is an addition and the constant folds into the address.
//
// Vectors. A global access groups the V = 2^k registers whose k register bits span the k lowest
// index bits while no other column touches them (any order inside the group: the registers are
// permuted on the way, e.g. bytes of a transposed 4x4 block), V * element bytes <= 16, and issues
// one V-wide load or store per group. Shared-memory accesses use the bank model's rule
// (linear/banks.hpp: register r + i at offset o + i, in order), so the instructions the
// generator emits are those the model counts.
//
// Example: blocked:1,4/8,4/4,1/1,0 on 32x16 f32 (4 columns per thread, 4 lanes across, 8 lanes
// and 4 warps down): columns m [1,2], lane [4,8,16,32,64], warp [128,256]; T = 4 (lane & 3)
// + 16 (lane >> 2) + 128 warp (disjoint bits: additions), and the load is one 16-byte vector per
// thread at T.
//
// Generated code is self-contained (no #include): NVRTC compiles it without the toolkit's headers.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "axe/core/dtype.hpp"
#include "axe/layout/layout.hpp"
#include "axe/linear/convert_plan.hpp"

namespace axe::codegen {

// The columns of a thread layout on `shape`: for each bit of m, lane and warp, the row-major
// tile index it contributes (0 for a broadcast bit). Lanes and warps beyond the layout's bits
// hold nothing. Throws axe::Error (linear_refusal's reason, or an axis other than m, lane, warp,
// or an offset) naming the layout.
struct ThreadColumns {
  std::vector<std::uint64_t> m, lane, warp;
  std::int64_t registers() const { return std::int64_t{1} << m.size(); }
  std::int64_t lanes() const { return std::int64_t{1} << lane.size(); }
  std::int64_t warps() const { return std::int64_t{1} << warp.size(); }
};
ThreadColumns thread_columns(const AxeLayout& threads, std::span<const std::int64_t> shape);

// The shared offset of each tile-index bit under `shared` (element offsets, swizzle applied).
// Throws axe::Error when the shared layout is not XOR-linear on the tile (e.g. padded rows), which
// generated kernels do not take.
std::vector<std::uint64_t> shared_offset_columns(const linear::SharedLayout& shared,
                                                 std::span<const std::int64_t> shape);

// The element of a generated kernel: its size and what the round trip's op does to it (data
// movement depends on the size only). From a DType, or by name: u8 i8 u16 i16 f16 bf16 u32 i32
// f32 u64 i64 f64 (the tile benchmarks' dtypes; parse_element throws axe::Error naming the text
// and the names otherwise).
struct Element {
  enum class Kind { integer, f16, bf16, f32, f64 };
  std::int64_t bytes = 4;
  Kind kind = Kind::f32;
  std::string name = "f32";
  Element() = default;
  Element(DType t);  // NOLINT(google-explicit-constructor): a DType is an element
  Element(std::int64_t bytes, Kind kind, std::string name);
};
Element parse_element(std::string_view name);

// The C type generated code holds an element of `bytes` bytes in (the bits, whatever the dtype):
// 1 "unsigned char", 2 "unsigned short", 4 "unsigned int", 8 "unsigned long long".
std::string_view element_type(std::int64_t bytes);

// A device function running `plan` (linear/convert_plan.hpp) on one thread's registers:
//   __device__ __forceinline__ void NAME(const T (&in)[RS], T (&out)[RD], unsigned char* smem,
//                                        unsigned lane, unsigned warp)
// with T = element_type(element_bytes), RS / RD the plan's register counts and smem a 16-byte
// aligned shared buffer of plan.counts.shared_bytes (unused unless the mechanism is shared).
// Renames are register moves (no instruction), conditional swaps selects, shuffles `__shfl_sync`
// on all 32 lanes (lanes beyond the layout's take part and hold nothing), stores and loads the
// bank model's vectors, barriers `__syncthreads` (`__syncwarp` with one warp).
// Within one call the function is complete: a caller that runs two conversions through the same
// buffer back to back puts a barrier between them (round_trip_kernel does).
// @pre plan = plan_conversion(from, to, shape, {element_bytes, ...}); else axe::Error.
// @post the emitted text has exactly plan.counts.shuffles shuffles per thread and, for a shared
// plan, plan.counts.store_instructions + load_instructions shared accesses.
//
// packed (elements of 1 or 2 bytes, a plan packable() takes): the registers are 32-bit words,
// 4 / element_bytes elements each (element i in bytes (i % per) * element_bytes .. of word i / per),
// so in and out are `unsigned (&)[RS / per]` and `unsigned (&)[RD / per]`: renames and the shared
// vectors assemble words by byte permutes instead of holding each element in a register of its own.
std::string emit_conversion(const linear::ConvertPlan& plan, std::span<const std::int64_t> shape,
                            std::int64_t element_bytes, std::string_view name, bool packed = false);

// Whether emit_conversion can run `plan` on packed registers: elements under 4 bytes, register
// counts (and every rename's) whole words, and only renames, barriers and shared stores and loads
// (no selects, shuffles or ldmatrix) in a single repetition.
bool packable(const linear::ConvertPlan& plan, std::int64_t element_bytes);

// Loads (stores) the tile held row-major at `tile` into (from) the registers of `threads`:
//   __device__ __forceinline__ void NAME(T (&r)[R], const T* tile, unsigned lane, unsigned warp)
//   __device__ __forceinline__ void NAME(const T (&r)[R], T* tile, unsigned lane, unsigned warp)
// in the widest vectors (see the header comment; `tile` 16-byte aligned). A load fills every
// register (broadcast registers copy their twin, no access); a store writes every element once
// (the location with the broadcast bits 0 writes it). Lanes beyond the layout's do nothing.
std::string emit_tile_load(const AxeLayout& threads, std::span<const std::int64_t> shape,
                           std::int64_t element_bytes, std::string_view name);
std::string emit_tile_store(const AxeLayout& threads, std::span<const std::int64_t> shape,
                            std::int64_t element_bytes, std::string_view name);

// The tile benchmark's kernel (examples/tile_bench): one CTA of 32 x warps threads
//   extern "C" __global__ void NAME(const T* in, T* out, int iters, S scale)
// loads the row-major tile `in` in layout `a`; `iters` times converts a -> b, applies the
// runtime-valued op (x * scale for floating elements, with S their type (f16/bf16 as float,
// rounded), x ^ scale for integers, S unsigned long long), converts b -> a, applies the op
// again; stores the tile to `out` in layout a. With scale 1 (0 for integers) out == in.
// Where both conversions use shared memory they use two buffers when both fit the budget (else
// one, with a barrier after each conversion). The shared buffer is dynamic:
// a launch passes shared_bytes (above 48 KiB after raising cudaFuncAttributeMaxDynamicSharedMemorySize);
// options.shared_budget_bytes bounds it (repetitions beyond).
struct TileKernel {
  std::string source;
  std::string name;
  std::int64_t threads = 0;       // 32 x warps
  std::int64_t shared_bytes = 0;  // dynamic shared memory the launch passes (extern __shared__)
  linear::ConvertPlan there, back;
};
// Throws axe::Error (plan_conversion's, or naming the layout) when a conversion cannot be
// planned or generated, when the layouts use different numbers of warps, or when `a` leaves
// an element of the tile unheld.
TileKernel round_trip_kernel(const AxeLayout& a, const AxeLayout& b,
                             std::span<const std::int64_t> shape, const Element& element,
                             const linear::ConvertOptions& options = {});

// One conversion, every destination register dumped (the element-by-element check):
//   extern "C" __global__ void axe_tile_convert(const T* in, T* dump)
// loads `in` in layout a, converts to b, and writes register r of thread t (= 32 warp + lane) to
// dump[t * RB + r], RB = b's registers: dump[t * RB + r] == in[x] for the element x that b places
// at (r, lane, warp), on every thread and register b uses (replicas included). `there` is the plan.
TileKernel conversion_kernel(const AxeLayout& a, const AxeLayout& b,
                             std::span<const std::int64_t> shape, const Element& element,
                             const linear::ConvertOptions& options = {});

}  // namespace axe::codegen
