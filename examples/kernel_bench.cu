// kernel_bench: pack / unpack / transpose bandwidth against cudaMemcpy device-to-device on the
// same bytes, in the same process (CUDA events: the median over 30 event pairs of the time per
// call of 10 calls made back to back between them, after 5 warm-ups, so that the host's launch
// time is not timed, as in examples/transpose_triton.py). Pack and
// unpack rows run copy_boxes on the kernels: the box kernel, and the generated copy's destination
// words for the realigned rows copy_boxes takes (copy_engine.hpp); rows marked "unit" run the same
// boxes on the box kernel alone (realigned rows off), rows marked "engines" through the copy
// engines (cudaMemcpy2DAsync), where they qualify.
//
//   kernel_bench [--json FILE] [--mib N] [--iters N] [--warmup N] [--reps N] [--copies | --transposes]
//                [--no-sweeps | --uneven-sweeps] [--dtype T] [--rows S]
//
// --copies runs the pack, unpack and copy rows only (no transposes), --transposes the transposes
// only; --no-sweeps leaves out the tile sweeps (the rows naming a tile: "generated a=..." and
// "generated BxA wW"), each of which compiles a kernel, --uneven-sweeps keeps only the sweeps of
// the large uneven transpose and, on the uneven copies, the cap rows and the flat, wide, 2-D and
// exchanged tiles. --dtype T (f32, f16, bf16, f64, u8) keeps the transposes and the uneven packs,
// unpacks and copies of that type only (the f32 runs of the pack rows stay). --rows S keeps the
// pack, unpack and copy rows whose name contains S (with their sweeps), so that a profiler's
// --launch-skip counts from their first launch.
//
// --iters 1 --warmup 0 --reps 1 launches each row's kernel once (for a profiler: ncu --kernel-name
// regex:"box_kernel|axe_copy|axe_transpose" ... kernel_bench --iters 1 --warmup 0 --reps 1).
//
// Transpose rows run transform() (the runtime's path: the kernel generated from thread layouts,
// codegen/transpose_codegen.hpp) and, marked "generated", transform_generated() called directly
// (the same kernel since the hand-written one was retired: a check on the dispatch), on square matrices,
// 4096 x 65536 (fewer rows for wider types, within --mib) and uneven boxes at offset 1, 3001 x 5003
// and R x 16383 (R odd, within --mib) (realigned words or scalar accesses,
// codegen::unaligned_transpose_access; the row marked "realigned" forces realigned words);
// Rows marked "generated" after a pack, unpack or copy run copy_generated (the tile copy generated
// from one thread layout, codegen/copy_codegen.hpp) on the same boxes; "generated a=A RxW access"
// other tiles and accesses of it on the uneven rows, "generated cap N/SM" its default tile with
// at most N blocks per SM; where that tile is flat (u8 packs), "generated 2-D a=A RxW" the 2-D tile
// of the same rows on two waves and, "... cap 3/SM", on one; "generated wide a=A RxW" the 2-D
// default tile in 64-bit row arithmetic (rows of 2^31 - 64 bytes or more); "generated exchange
// a=A wW" exchanged tiles (CopyTile::exchange) of 4- and 8-byte elements; on the uneven 4-byte
// rows, whose default is an exchanged tile, "generated words" the destination words they replaced.
// rows "generated BxA wW" try other tiles (on the square, and "uneven" on the uneven box).
//
// Bandwidth counts bytes read plus bytes written (2 x payload). Targets (DESIGN §5, the issue):
// pack/unpack >= 85% of the copy when the innermost contiguous run is >= 64 bytes; the 2-D
// transpose >= 75%.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "axe/core/error.hpp"
#include "axe/cuda/check.hpp"
#include "axe/cuda/kernels.hpp"
#include "axe/cuda/transpose.hpp"

using namespace axe;
using namespace axe::cuda;

namespace {

struct Row {
  std::string name;
  double bytes;  // payload
  double ms, memcpy_ms;
};

int g_iters = 30, g_warmup = 5, g_reps = 10;  // timed samples (median), untimed warm-ups, calls per sample

double median_ms(const std::function<void()>& f, cudaStream_t s) {
  cudaEvent_t a, b;
  AXE_CUDA_CHECK(cudaEventCreate(&a));
  AXE_CUDA_CHECK(cudaEventCreate(&b));
  for (int i = 0; i < g_warmup; ++i) f();
  std::vector<float> t;
  for (int i = 0; i < g_iters; ++i) {
    AXE_CUDA_CHECK(cudaEventRecord(a, s));
    for (int r = 0; r < g_reps; ++r) f();
    AXE_CUDA_CHECK(cudaEventRecord(b, s));
    AXE_CUDA_CHECK(cudaEventSynchronize(b));
    float ms = 0;
    AXE_CUDA_CHECK(cudaEventElapsedTime(&ms, a, b));
    t.push_back(ms / static_cast<float>(g_reps));
  }
  std::sort(t.begin(), t.end());
  cudaEventDestroy(a);
  cudaEventDestroy(b);
  return t[t.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  std::string json;
  std::int64_t mib = 256;
  bool copies_only = false, transposes_only = false;
  enum class Sweeps { all, uneven, none } sweeps = Sweeps::all;
  std::string only;  // --dtype: one element type
  std::string keep;  // --rows: the copy rows whose name holds it
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--json") && i + 1 < argc) json = argv[++i];
    else if (!std::strcmp(argv[i], "--mib") && i + 1 < argc) mib = std::atoll(argv[++i]);
    else if (!std::strcmp(argv[i], "--iters") && i + 1 < argc) g_iters = std::max(1, std::atoi(argv[++i]));
    else if (!std::strcmp(argv[i], "--warmup") && i + 1 < argc) g_warmup = std::max(0, std::atoi(argv[++i]));
    else if (!std::strcmp(argv[i], "--reps") && i + 1 < argc) g_reps = std::max(1, std::atoi(argv[++i]));
    else if (!std::strcmp(argv[i], "--copies")) copies_only = true;
    else if (!std::strcmp(argv[i], "--transposes")) transposes_only = true;
    else if (!std::strcmp(argv[i], "--no-sweeps")) sweeps = Sweeps::none;
    else if (!std::strcmp(argv[i], "--uneven-sweeps")) sweeps = Sweeps::uneven;
    else if (!std::strcmp(argv[i], "--dtype") && i + 1 < argc) only = argv[++i];
    else if (!std::strcmp(argv[i], "--rows") && i + 1 < argc) keep = argv[++i];
    else {
      std::fprintf(stderr, "kernel_bench: unknown argument '%s' (see the comment at the top of kernel_bench.cu)\n", argv[i]);
      return 2;
    }
  }
  const auto wanted = [&](DType dt) { return only.empty() || only == to_string(dt); };
  if (!only.empty() && !wanted(DType::F32) && !wanted(DType::F16) && !wanted(DType::BF16) && !wanted(DType::F64) &&
      !wanted(DType::U8)) {
    std::fprintf(stderr, "kernel_bench: --dtype '%s' is not one of f32, f16, bf16, f64, u8\n", only.c_str());
    return 2;
  }
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess || n == 0) {
    std::printf("kernel_bench: no CUDA GPU visible, nothing to measure\n");
    return 0;
  }
  cudaDeviceProp prop;
  AXE_CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
  cudaStream_t s;
  AXE_CUDA_CHECK(cudaStreamCreate(&s));
  const std::int64_t payload = mib << 20;
  void *a = nullptr, *b = nullptr;
  AXE_CUDA_CHECK(cudaMalloc(&a, static_cast<std::size_t>(payload) * 2 + 4096));
  AXE_CUDA_CHECK(cudaMalloc(&b, static_cast<std::size_t>(payload) * 2 + 4096));
  AXE_CUDA_CHECK(cudaMemset(a, 1, static_cast<std::size_t>(payload) * 2 + 4096));
  AXE_CUDA_CHECK(cudaMemset(b, 2, static_cast<std::size_t>(payload) * 2 + 4096));
  std::vector<Row> rows;
  auto memcpy_ms = [&](std::int64_t bytes) {
    return median_ms([&] { AXE_CUDA_CHECK(cudaMemcpyAsync(b, a, static_cast<std::size_t>(bytes), cudaMemcpyDeviceToDevice, s)); }, s);
  };

  // copy_boxes on the kernels only (copy engines off, and the generated copy off for aligned runs:
  // the box kernel, realigned rows on the generated copy); where it has realigned rows, also on the
  // box kernel alone; and, where the box qualifies, on the copy engines (cudaMemcpy2DAsync;
  // kernels.hpp, CopyEnginePolicy).
  const CopyEnginePolicy off{0, 1, 64, 0}, unit{0, 1, 0, 0}, any{1, 17, 64, 0};
  const auto kept = [&](const std::string& name) { return keep.empty() || name.find(keep) != std::string::npos; };
  auto both = [&](const std::string& name, const BoxList& l, const void* src, void* dst, double mc) {
    if (!kept(name)) return;
    const CopyEnginePolicy old = set_copy_engine_policy(off);
    // The kernels and the generated copy alternately, twice each, the better median of each kept
    // (two medians of the same kernel a few rows apart differed by up to 11%).
    const bool gen = copy_generated_fits(l);
    double kernels = 1e30, generated = 1e30;
    for (int round = 0; round < 2; ++round) {
      kernels = std::min(kernels, median_ms([&] { copy_boxes(l, src, dst, s); }, s));
      if (gen) generated = std::min(generated, median_ms([&] { copy_generated(l, src, dst, s); }, s));
    }
    rows.push_back({name, double(l.elements() * size_of(l.dtype())), kernels, mc});
    // The generated tile copy (copy_generated: the runtime's choice of access and tile), where
    // every box is contiguous along its innermost mode on both sides.
    if (gen) rows.push_back({name + " generated", double(l.elements() * size_of(l.dtype())), generated, mc});
    if (!realigned_rows(l, off).empty()) {
      set_copy_engine_policy(unit);
      rows.push_back({name + " unit", double(l.elements() * size_of(l.dtype())),
                      median_ms([&] { copy_boxes(l, src, dst, s); }, s), mc});
    }
    if (!engine_copies(l, any).empty()) {
      std::fprintf(stderr, "kernel_bench: %s on the copy engines\n", name.c_str());
      set_copy_engine_policy(any);
      rows.push_back({name + " engines", double(l.elements() * size_of(l.dtype())),
                      median_ms([&] { copy_boxes(l, src, dst, s); }, s), mc});
    }
    set_copy_engine_policy(old);
  };
  // Other tiles and accesses of the generated copy on one list ("generated a=A RxW access").
  auto copy_sweep = [&](const std::string& name, const BoxList& l, const void* src, void* dst, double mc,
                        std::vector<codegen::TransposeAccess> accesses) {
    if (sweeps == Sweeps::none || !kept(name)) return;
    const bool uneven =
        std::find(accesses.begin(), accesses.end(), codegen::TransposeAccess::realigned) != accesses.end();
    if (sweeps == Sweeps::uneven && !uneven) return;
    const std::int64_t v = 16 / size_of(l.dtype());
    std::int64_t run = INT64_MAX;  // the shortest run: tiles over twice as wide are skipped
    for (const Transfer& t : l.boxes()) run = std::min(run, t.extents.back());
    for (auto access : accesses) {
      if (sweeps == Sweeps::uneven) break;  // the cap rows only
      const std::int64_t w = access == codegen::TransposeAccess::scalar ? 1 : v;
      // Up to a warp's vectors along the run, then wider: registers along it (a lane's vectors
      // 32 apart), one or two rows a thread.
      for (const codegen::CopyTile& t : {codegen::CopyTile{4 * w, 4, 8}, codegen::CopyTile{8 * w, 4, 8},
                                         codegen::CopyTile{8 * w, 2, 8}, codegen::CopyTile{16 * w, 4, 8},
                                         codegen::CopyTile{32 * w, 4, 8}, codegen::CopyTile{32 * w, 2, 8},
                                         codegen::CopyTile{32 * w, 4, 4}, codegen::CopyTile{64 * w, 2, 8},
                                         codegen::CopyTile{64 * w, 4, 8}, codegen::CopyTile{8 * w, 8, 8},
                                         codegen::CopyTile{16 * w, 8, 8}, codegen::CopyTile{32 * w, 8, 8},
                                         codegen::CopyTile{128 * w, 1, 8}, codegen::CopyTile{128 * w, 2, 8},
                                         codegen::CopyTile{256 * w, 1, 8}, codegen::CopyTile{512 * w, 1, 8},
                                         codegen::CopyTile{256 * w, 1, 4}}) {
        if (t.a > 2 * run) continue;
        rows.push_back({name + " generated a=" + std::to_string(t.a) + " " + std::to_string(t.rows) + "x" +
                            std::to_string(t.warps) + " " + std::string(to_string(access)),
                        double(l.elements() * size_of(l.dtype())),
                        median_ms([&] { copy_generated(l, src, dst, s, nullptr, &t, access); }, s), mc});
      }
    }
    // Flat destination-word tiles ("generated flat T words wW": the rows' words one after another).
    if (uneven) {
      for (std::int64_t words : {512, 1024, 2048}) {
        for (std::int64_t warps : {8, 4}) {
          if (words == 2048 && warps == 4) continue;
          const codegen::CopyTile t{words * v, 1, warps, true};
          rows.push_back({name + " generated flat " + std::to_string(words) + " words w" + std::to_string(warps),
                          double(l.elements() * size_of(l.dtype())), median_ms([&] {
                            copy_generated(l, src, dst, s, nullptr, &t, codegen::TransposeAccess::realigned);
                          }, s), mc});
        }
      }
    }
    // The default tile under a cap of N blocks per SM ("generated cap N/SM", set_box_blocks_per_sm;
    // the default cap is 8). The runtime launches whole waves of the blocks an SM holds at once (3
    // for destination words, 4-5 for the others, by their registers) where two fit under the cap,
    // else the cap: destination words run 6 an SM under caps 8 and 6, 4 under cap 4; flat tiles
    // run one wave (3 an SM under caps 8 to 3).
    for (int n : {2, 3, 4, 6}) {
      const int old = set_box_blocks_per_sm(n);
      rows.push_back({name + " generated cap " + std::to_string(n) + "/SM", double(l.elements() * size_of(l.dtype())),
                      median_ms([&] { copy_generated(l, src, dst, s); }, s), mc});
      set_box_blocks_per_sm(old);
    }
    const std::int64_t es = size_of(l.dtype());
    // The 2-D default tile of destination words in 64-bit row arithmetic, as rows of 2^31 - 64 bytes
    // or more take it ("generated wide a=A RxW"; the others are 32-bit).
    if (uneven) {
      codegen::CopyTile tw = codegen::default_copy_tile(es, codegen::TransposeAccess::realigned, run);
      tw.wide = true;
      rows.push_back({name + " generated wide a=" + std::to_string(tw.a) + " " + std::to_string(tw.rows) + "x" +
                          std::to_string(tw.warps),
                      double(l.elements() * es), median_ms([&] {
                        copy_generated(l, src, dst, s, nullptr, &tw, codegen::TransposeAccess::realigned);
                      }, s), mc});
    }
    // Exchanged tiles (one element an access, loaded 4 a thread and stored 1 a thread through shared
    // memory; the default for 4-byte elements on long runs): "generated exchange a=A wW".
    if (uneven && es >= 4) {
      for (const codegen::CopyTile& t0 : {codegen::CopyTile{1024, 1, 8}, codegen::CopyTile{2048, 1, 8},
                                          codegen::CopyTile{4096, 1, 8}, codegen::CopyTile{1024, 1, 4},
                                          codegen::CopyTile{2048, 1, 4}}) {
        codegen::CopyTile t = t0;
        t.exchange = true;
        if (t.a > 2 * run) continue;
        rows.push_back({name + " generated exchange a=" + std::to_string(t.a) + " w" + std::to_string(t.warps),
                        double(l.elements() * es), median_ms([&] { copy_generated(l, src, dst, s, nullptr, &t); }, s),
                        mc});
      }
    }
    // Where the default is a flat tile (u8 packs), the 2-D tile the same rows would take otherwise,
    // under the default cap (two waves) and under cap 3 (one wave): "generated 2-D a=A RxW [cap 3/SM]".
    if (uneven && codegen::default_copy_tile(es, codegen::TransposeAccess::realigned, run, true).flat) {
      const codegen::CopyTile t2 = codegen::default_copy_tile(es, codegen::TransposeAccess::realigned, run, false);
      const std::string n2 = name + " generated 2-D a=" + std::to_string(t2.a) + " " + std::to_string(t2.rows) + "x" +
                             std::to_string(t2.warps);
      for (int cap : {0, 3}) {
        const int old = cap ? set_box_blocks_per_sm(cap) : 0;
        rows.push_back({n2 + (cap ? " cap 3/SM" : ""), double(l.elements() * es), median_ms([&] {
                          copy_generated(l, src, dst, s, nullptr, &t2, codegen::TransposeAccess::realigned);
                        }, s), mc});
        if (cap) set_box_blocks_per_sm(old);
      }
    }
  };
  const std::vector<codegen::TransposeAccess> unaligned{codegen::TransposeAccess::realigned,
                                                        codegen::TransposeAccess::scalar};
  if (!transposes_only) {  // --transposes skips the packs, unpacks and copies
    // pack / unpack: runs of `run` bytes (f32), every other run of the source (stride 2 runs).
    for (std::int64_t run : {4, 16, 64, 128, 256, 1024, 4096, 8192, 16384}) {
      const std::int64_t es = 4, re = run / es, nrun = payload / run;
      Transfer t{{nrun, re}, 0, {2 * re, 1}, 0, {re, 1}, 0};
      auto pk = BoxList::pack({t}, DType::F32);
      auto up = BoxList::unpack({t}, DType::F32);
      const double mc = memcpy_ms(payload);
      both("pack f32 run " + std::to_string(run) + "B", pk, a, b, mc);
      both("unpack f32 run " + std::to_string(run) + "B", up, a, b, mc);
      if (run == 16 || run == 64 || run == 128 || run == 256 || run == 4096) {
        copy_sweep("pack f32 run " + std::to_string(run) + "B", pk, a, b, mc, {codegen::TransposeAccess::vectors});
        if (run == 4096)
          copy_sweep("unpack f32 run " + std::to_string(run) + "B", up, a, b, mc, {codegen::TransposeAccess::vectors});
      }
    }
    // uneven shards: rows of 2047 bf16 (4094 B) out of rows of 4095, the source one element past an
    // aligned address (2-byte units for the box kernel alone), of 2047 f32 (4-byte units), of 2047
    // f64 (8-byte units) and of 2047 u8 (1-byte units); the same rows unpacked into rows of 4095
    // one element past an aligned address; rows of 4088 out of 4096 copied into rows of 4095 (an
    // uneven S(1) destination).
    for (DType dt : {DType::BF16, DType::F32, DType::F64, DType::U8}) {
      if (!wanted(dt)) continue;
      const std::int64_t es = size_of(dt), re = 2047, nrun = payload / (4095 * es);  // source rows fit `a`
      Transfer t{{nrun, re}, 1, {4095, 1}, 0, {re, 1}, 0};
      const std::string n = std::string(to_string(dt));
      const double mc = memcpy_ms(nrun * re * es);
      // Where the default is an exchanged tile (4-byte elements), the destination words it replaced:
      // "generated words" (the default tile of realigned access).
      auto words = [&](const std::string& name, const BoxList& l, const void* src, void* dst, double m) {
        if (es != 4 || !kept(name)) return;
        rows.push_back({name + " generated words", double(l.elements() * es), median_ms([&] {
                          copy_generated(l, src, dst, s, nullptr, nullptr, codegen::TransposeAccess::realigned);
                        }, s), m});
      };
      both("pack " + n + " run 2047 of 4095 odd", BoxList::pack({t}, dt), a, b, mc);
      words("pack " + n + " run 2047 of 4095 odd", BoxList::pack({t}, dt), a, b, mc);
      copy_sweep("pack " + n + " run 2047 of 4095 odd", BoxList::pack({t}, dt), a, b, mc, unaligned);
      Transfer u{{nrun, re}, 0, {re, 1}, 1, {4095, 1}, 0};
      both("unpack " + n + " run 2047 into 4095 odd", BoxList::unpack({u}, dt), b, a, mc);
      words("unpack " + n + " run 2047 into 4095 odd", BoxList::unpack({u}, dt), b, a, mc);
      copy_sweep("unpack " + n + " run 2047 into 4095 odd", BoxList::unpack({u}, dt), b, a, mc, unaligned);
      Transfer c{{nrun, 4088}, 0, {4096, 1}, 1, {4095, 1}, 0};
      const double mcc = memcpy_ms(nrun * 4088 * es);
      both("copy " + n + " rows 4088 into 4095 odd", BoxList::copy({c}, dt), a, b, mcc);
      words("copy " + n + " rows 4088 into 4095 odd", BoxList::copy({c}, dt), a, b, mcc);
      copy_sweep("copy " + n + " rows 4088 into 4095 odd", BoxList::copy({c}, dt), a, b, mcc, unaligned);
    }
    // 8 modes (nothing mergeable), innermost run 64 B, and a step of 64 messages in one launch.
    {
      const std::int64_t re = 16, inner = payload / 4 / re / 128;  // 2^7 from the six 2-modes x 2
      Transfer t{{2, 2, 2, 2, 2, 2, inner, re}, 0, {}, 0, {}, 0};
      std::int64_t ss = 1;
      t.src_strides.assign(8, 0);
      t.dst_strides.assign(8, 0);
      for (int k = 7; k >= 0; --k) {
        t.src_strides[k] = ss;
        ss = ss * t.extents[k] + (k == 7 ? 16 : 0);  // a 64-byte gap after each run
      }
      (void)inner;
      auto pk = BoxList::pack({t}, DType::F32);
      std::int64_t el = pk.elements();
      both("pack f32 8 modes run 64B", pk, a, b, memcpy_ms(el * 4));
      std::vector<Transfer> msgs;
      const std::int64_t per = payload / 4 / 64;
      for (int m = 0; m < 64; ++m)
        msgs.push_back(Transfer{{per / 64, 64}, m * 2 * per, {128, 1}, 0, {64, 1}, 0});
      auto many = BoxList::pack(msgs, DType::F32);
      both("pack f32 64 boxes run 256B", many, a, b, memcpy_ms(many.elements() * 4));
    }
  }
  if (!copies_only) {  // --copies skips the transposes
    // transposes: square matrices of the payload size (the largest power-of-two side within it).
    auto square_side = [&](std::int64_t es) {
      std::int64_t side = 1;
      while ((side * 2) * (side * 2) * es <= payload) side *= 2;
      return side;
    };
    for (DType dt : {DType::F32, DType::F16, DType::F64, DType::U8}) {
      if (!wanted(dt)) continue;
      const std::int64_t es = size_of(dt);
      const std::int64_t side = square_side(es);
      Transfer t{{side, side}, 0, {side, 1}, 0, {1, side}, 0};
      const std::int64_t bytes = side * side * es;
      const double mc = memcpy_ms(bytes);
      rows.push_back({"transpose " + std::string(to_string(dt)) + " " + std::to_string(side) + "^2",
                      double(bytes), median_ms([&] { transform(t, dt, a, b, s); }, s), mc});
      // The same by the kernel generated from thread layouts (codegen/transpose_codegen.hpp).
      rows.push_back({"transpose " + std::string(to_string(dt)) + " " + std::to_string(side) + "^2 generated",
                      double(bytes), median_ms([&] { transform_generated(t, dt, a, b, s); }, s), mc});
    }
    // The generated transpose's tile, per dtype (tile b x a, warps): on the square and on "wide"
    // 4096 x 65536 (fewer rows for wider types; 16-byte vectors), tiles along a first, a few along b
    // first; and on the
    // large uneven box (R x 16383 at offset 1, as below) with realigned words, then scalar (rows
    // ending "scalar"), each tile along a first and along b first (rows ending "b-first"). Tiles
    // the kernel cannot take are skipped, with the reason on stderr.
    const std::vector<codegen::TransposeTile> tiles{
        {64, 64, 4},  {64, 64, 8},  {128, 64, 8}, {64, 128, 8}, {128, 128, 8}, {32, 32, 4},
        {64, 32, 4},  {128, 32, 8}, {64, 128, 4}, {128, 64, 4}, {128, 128, 4}, {64, 64, 2},
        {32, 64, 4},  {32, 32, 2},  {32, 128, 4}, {32, 128, 8}, {32, 256, 8},
        // 8-byte vectors (rows ending "v8"): smaller squares of elements under 4 bytes
        {128, 64, 8, false, 8}, {128, 32, 4, false, 8}, {64, 64, 4, false, 8}, {64, 128, 8, false, 8},
        {128, 128, 8, false, 8}, {128, 64, 4, false, 8},
        // packed registers (rows ending "packed"; 1- and 2-byte elements): 4 / size to a register
        {128, 64, 4, false, 16, true}, {128, 128, 4, false, 16, true}, {64, 64, 2, false, 16, true},
        {128, 64, 8, false, 16, true}, {128, 128, 8, false, 16, true}, {64, 128, 4, false, 16, true},
        {128, 64, 8, false, 8, true}};
    // Along b first on the aligned boxes (rows ending "b-first"; Triton's transpose walks its
    // blocks that way): the defaults and Triton's best blocks.
    const std::vector<codegen::TransposeTile> aligned_b_first_tiles{
        {64, 64, 8, true},  {64, 128, 4, true}, {128, 64, 4, true}, {128, 128, 4, true},
        {128, 128, 8, true}, {32, 64, 4, true}, {128, 128, 4, true, 16, true}, {128, 128, 8, true, 16, true},
        {64, 64, 4, true, 8}, {128, 64, 4, true, 8}, {64, 32, 4, true}};
    const std::vector<codegen::TransposeTile> uneven_tiles{
        {64, 64, 4}, {64, 64, 8}, {64, 128, 8}, {128, 128, 8}, {32, 128, 4}, {32, 128, 8}, {32, 256, 8}, {64, 256, 8},
        {128, 32, 4}};  // the last: Triton's best u8 block on this box (32 rows by 128 columns)
    for (DType dt : {DType::F32, DType::F16, DType::U8, DType::F64}) {
      if (!wanted(dt)) continue;
      const std::int64_t es = size_of(dt);
      const std::int64_t side = square_side(es);
      const std::int64_t urows = (payload / (16383 * es) - 1) | 1;  // the large uneven box below
      const Transfer sq{{side, side}, 0, {side, 1}, 0, {1, side}, 0};
      const Transfer un{{urows, 16383}, 1, {16383, 1}, 1, {1, urows}, 0};
      std::int64_t wrows = 4096;
      while (wrows * 65536 * es > payload) wrows /= 2;
      const Transfer wide{{wrows, 65536}, 0, {65536, 1}, 0, {1, wrows}, 0};
      using codegen::TransposeAccess;
      struct Sweep { Transfer t; TransposeAccess access; bool b_first; };
      std::vector<Sweep> sweeps_of;
      if (sweeps == Sweeps::all) {
        for (bool b_first : {false, true}) {
          sweeps_of.push_back({sq, TransposeAccess::vectors, b_first});
          sweeps_of.push_back({wide, TransposeAccess::vectors, b_first});
        }
      }
      if (sweeps != Sweeps::none) {
        for (auto access : {TransposeAccess::realigned, TransposeAccess::scalar})
          for (bool b_first : {false, true}) sweeps_of.push_back({un, access, b_first});
      }
      for (const Sweep& w : sweeps_of) {
        const Transfer& t = w.t;
        const std::int64_t bytes = t.extents[0] * t.extents[1] * es;
        const double mc = memcpy_ms(bytes);
        for (codegen::TransposeTile tile : t.src_offset ? uneven_tiles : w.b_first ? aligned_b_first_tiles : tiles) {
          tile.b_first = w.b_first;
          const auto access = w.access;
          const std::string name = "transpose " + std::string(to_string(dt)) +
                                   (t.src_offset ? " uneven" : t.extents[1] == 65536 ? " wide" : "") +
                                   " generated " + std::to_string(tile.b) + "x" + std::to_string(tile.a) + " w" +
                                   std::to_string(tile.warps) + (access == TransposeAccess::scalar ? " scalar" : "") +
                                   (tile.b_first ? " b-first" : "") +
                                   (tile.vector_bytes != 16 ? " v" + std::to_string(tile.vector_bytes) : "") +
                                   (tile.packed ? " packed" : "");
          try {  // compiles the kernel, or says why the tile cannot be taken (too small for its
                 // warps, too wide to realign, more shared memory than the device has)
            transform_generated(t, dt, a, b, s, &tile, access);
          } catch (const Error& e) {
            std::fprintf(stderr, "kernel_bench: %s skipped: %s\n", name.c_str(), e.what());
            continue;
          }
          rows.push_back({name, double(bytes),
                          median_ms([&] { transform_generated(t, dt, a, b, s, &tile, access); }, s), mc});
        }
      }
    }
    // Uneven transposes: 4096 x 65536, an uneven shard (3001 x 5003, offset 1: 14-115 MiB, within
    // or near the H100's 50 MiB L2) and a large one (R x 16383 at offset 1, R the largest odd
    // count within the payload: every row of both sides at its own shift, DRAM-bound), per dtype,
    // both kernels.
    for (DType dt : {DType::F32, DType::F16, DType::F64, DType::U8}) {
      if (!wanted(dt)) continue;
      const std::int64_t es = size_of(dt);
      struct Box { std::int64_t rows, cols, off; };
      const std::int64_t large = (payload / (16383 * es) - 1) | 1;
      for (Box bx : {Box{4096, 65536, 0}, Box{3001, 5003, 1}, Box{large, 16383, 1}}) {
        std::int64_t rows_ = bx.rows, cols = bx.cols;
        while (rows_ * cols * es > payload) rows_ /= 2;  // stays within the buffers
        Transfer t{{rows_, cols}, bx.off, {cols, 1}, bx.off, {1, rows_}, 0};
        const std::int64_t bytes = rows_ * cols * es;
        const double mc = memcpy_ms(bytes);
        const std::string n = "transpose " + std::string(to_string(dt)) + " " + std::to_string(rows_) + "x" + std::to_string(cols) + (bx.off ? "+1" : "");
        rows.push_back({n, double(bytes), median_ms([&] { transform(t, dt, a, b, s); }, s), mc});
        rows.push_back({n + " generated", double(bytes), median_ms([&] { transform_generated(t, dt, a, b, s); }, s), mc});
        if (bx.off) {  // realigned words, the other access (default tile: along b first)
          const auto realigned = codegen::TransposeAccess::realigned;
          rows.push_back({n + " realigned", double(bytes),
                          median_ms([&] { transform_generated(t, dt, a, b, s, nullptr, realigned); }, s), mc});
        }
      }
    }

  }
  std::printf("device: %s, %d SMs\n", prop.name, prop.multiProcessorCount);
  std::printf("%-34s %10s %10s %10s %10s %7s\n", "kernel", "MiB", "ms", "GB/s", "memcpyGB/s", "ratio");
  for (const auto& r : rows) {
    const double gbs = 2 * r.bytes / r.ms / 1e6, mgbs = 2 * r.bytes / r.memcpy_ms / 1e6;
    std::printf("%-34s %10.1f %10.4f %10.1f %10.1f %6.1f%%\n", r.name.c_str(), r.bytes / (1 << 20), r.ms, gbs,
                mgbs, 100 * r.memcpy_ms / r.ms);
  }
  if (!json.empty()) {
    FILE* f = std::fopen(json.c_str(), "w");
    if (f) {
      std::fprintf(f, "{\"device\": \"%s\", \"results\": [\n", prop.name);
      for (std::size_t i = 0; i < rows.size(); ++i) {
        const auto& r = rows[i];
        std::fprintf(f,
                     "  {\"kernel\": \"%s\", \"bytes\": %.0f, \"ms\": %.5f, \"memcpy_ms\": %.5f, "
                     "\"gbps\": %.1f, \"memcpy_gbps\": %.1f, \"ratio\": %.4f}%s\n",
                     r.name.c_str(), r.bytes, r.ms, r.memcpy_ms, 2 * r.bytes / r.ms / 1e6,
                     2 * r.bytes / r.memcpy_ms / 1e6, r.memcpy_ms / r.ms, i + 1 < rows.size() ? "," : "");
      }
      std::fprintf(f, "]}\n");
      std::fclose(f);
    }
  }
  cudaFree(a);
  cudaFree(b);
  return 0;
}
