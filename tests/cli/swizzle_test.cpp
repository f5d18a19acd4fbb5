// `axe swizzle --from THREADS --to THREADS --shape S --dtype T` (src/cli/linear_commands.cpp):
// TV-15, the JSON checked by an independent enumeration of the accesses, and bad input.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>

#include "axe/layout/layout.hpp"
#include "axe/linear/thread_spec.hpp"
#include "cli_test_util.hpp"

namespace axe::test::cli {
namespace {

using Ints = std::vector<std::int64_t>;

const char* kStore = "S[(16,32):(1,1@lane)]";
const char* kLoad = "S[(16,16,2):(1@lane,1,16@lane)]";

struct Enumerated {
  std::int64_t wavefronts = 0, instructions = 0;
};

// Wavefronts of `threads` accessing shared offsets `off` (element x at off[x]) with `vbytes`-byte
// vectors, written from the hardware description: a warp issues one instruction per group of V
// registers; 32 / 16 / 8 lanes per phase for <= 4 / 8 / 16 bytes; per phase a bank serves one
// 4-byte word per wavefront. Also checks that the vector width is legal (V consecutive aligned
// offsets in every register group).
Enumerated enumerate(const AxeLayout& threads, const Ints& off, std::int64_t ebytes,
                     std::int64_t vbytes) {
  const Axis m, lane("lane"), warp("warp");
  std::int64_t v = vbytes / ebytes;
  std::map<std::tuple<std::int64_t, std::int64_t, std::int64_t>, std::int64_t> at;  // (w,l,r)
  for (std::int64_t x = 0; x < static_cast<std::int64_t>(off.size()); ++x) {
    for (const auto& p : threads.forward(x)) at[{p.coord[warp], p.coord[lane], p.coord[m]}] = off[static_cast<std::size_t>(x)];
  }
  std::int64_t regs = std::max<std::int64_t>(1, threads.span(m));
  std::int64_t warps = std::max<std::int64_t>(1, threads.span(warp));
  Enumerated e;
  e.instructions = regs / v;
  std::int64_t per_phase = vbytes <= 4 ? 32 : 32 / (vbytes / 4);
  for (std::int64_t w = 0; w < warps; ++w) {
    for (std::int64_t g = 0; g < regs; g += v) {
      for (std::int64_t l0 = 0; l0 < 32; l0 += per_phase) {
        std::map<std::int64_t, std::set<std::int64_t>> bank;
        for (std::int64_t l = l0; l < l0 + per_phase; ++l) {
          auto it = at.find({w, l, g});
          if (it == at.end()) continue;
          EXPECT_EQ(it->second % v, 0) << "unaligned vector";
          for (std::int64_t i = 1; i < v; ++i) EXPECT_EQ(at.at({w, l, g + i}), it->second + i);
          for (std::int64_t b = it->second * ebytes; b < it->second * ebytes + vbytes; b += 4) {
            bank[(b / 4) % 32].insert(b / 4);
          }
        }
        std::size_t most = 0;
        for (const auto& [b, words] : bank) most = std::max(most, words.size());
        e.wavefronts += static_cast<std::int64_t>(most);
      }
    }
  }
  return e;
}

// The offsets from "offset_bases" (offset o holds XOR of the bases of its set bits), checked to be
// a bijection onto the tile.
Ints offsets_from_json(const Json& bases, const Ints& shape) {
  std::int64_t n = 1;
  for (auto e : shape) n *= e;
  EXPECT_EQ(std::int64_t{1} << bases.array().size(), n);
  Ints off(static_cast<std::size_t>(n), -1);
  for (std::int64_t o = 0; o < n; ++o) {
    Ints c(shape.size(), 0);
    for (std::size_t i = 0; i < bases.array().size(); ++i) {
      if (!(o >> i & 1)) continue;
      auto b = bases[i].ints();
      for (std::size_t k = 0; k < c.size(); ++k) c[k] ^= b[k];
    }
    std::int64_t x = 0;
    for (std::size_t k = 0; k < c.size(); ++k) x = x * shape[k] + c[k];
    EXPECT_EQ(off[static_cast<std::size_t>(x)], -1) << "two offsets hold element " << x;
    off[static_cast<std::size_t>(x)] = o;
  }
  return off;
}

void check_json(const char* from, const char* to, const std::string& shape_text, const Ints& shape,
                const char* dtype, std::int64_t ebytes) {
  SCOPED_TRACE(std::string(from) + " -> " + to + " " + dtype);
  auto r = axe({"swizzle", "--from", from, "--to", to, "--shape", shape_text, "--dtype", dtype, "--json"});
  ASSERT_EQ(r.status, 0) << r.err;
  Json j = parse_json(r.out);
  auto off = offsets_from_json(j["offset_bases"], shape);
  // THREADS may be specs (blocked:..., linear:...): read them as the command does.
  auto st = enumerate(linear::parse_thread_layout(from, shape), off, ebytes, j["store_vector_bytes"].integer());
  auto ld = enumerate(linear::parse_thread_layout(to, shape), off, ebytes, j["load_vector_bytes"].integer());
  EXPECT_EQ(j["store_wavefronts"].integer(), st.wavefronts);
  EXPECT_EQ(j["load_wavefronts"].integer(), ld.wavefronts);
  EXPECT_EQ(j["store_instructions"].integer(), st.instructions);
  EXPECT_EQ(j["load_instructions"].integer(), ld.instructions);
  // Never worse than the row-major tile and the best Swizzle<B,M,S>.
  auto total = [](const Json& o) { return o["store_wavefronts"].integer() + o["load_wavefronts"].integer(); };
  EXPECT_LE(total(j), total(j["row_major"]));
  if (!j["best_swizzle"].is_null()) {
    EXPECT_LE(total(j), total(j["best_swizzle"]));
  }
}

TEST(SwizzleCli, TV15_Json) {
  auto r = axe({"swizzle", "--from", kStore, "--to", kLoad, "--shape", "16,32", "--dtype", "f32", "--json"});
  ASSERT_EQ(r.status, 0) << r.err;
  Json j = parse_json(r.out);
  EXPECT_EQ(j["store_wavefronts"].integer(), 16);
  EXPECT_EQ(j["load_wavefronts"].integer(), 16);
  EXPECT_EQ(j["store_vector_bytes"].integer(), 16);
  EXPECT_EQ(j["load_vector_bytes"].integer(), 4);
  EXPECT_EQ(j["offset_bases"][std::size_t{0}].ints(), (Ints{1, 0}));
  EXPECT_EQ(j["offset_bases"][2].ints(), (Ints{0, 1}));
  EXPECT_EQ(j["row_major"]["store_wavefronts"].integer(), 16);
  EXPECT_EQ(j["row_major"]["load_wavefronts"].integer(), 256);
  EXPECT_EQ(j["best_swizzle"]["load_wavefronts"].integer(), 16);
  EXPECT_EQ(j["swizzle"].str(), "Sw<2,3,4>");
}

TEST(SwizzleCli, TV15_Text) {
  auto r = axe({"swizzle", "--from", kStore, "--to", kLoad, "--shape", "16,32", "--dtype", "f32"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out,
            "shared layout (generic): offset bit -> logical coordinate\n"
            "  m: [(1,0), (2,0), (0,1), (4,0), (8,0), (0,8), (0,16), (4,2), (8,4)]\n"
            "as Swizzle o Axe layout: Sw<2,3,4> o S[(4,4,4,4,2):(8,1,32,128,4)]\n"
            "chosen:    store 4 x 16 B, 16 wavefronts; load 16 x 4 B, 16 wavefronts; total 32 "
            "wavefronts, 20 instructions per warp\n"
            "row-major: store 16 x 4 B, 16 wavefronts; load 16 x 4 B, 256 wavefronts; total 272 "
            "wavefronts, 32 instructions per warp\n"
            "best Sw<4,1,4> over row-major: store 16 x 4 B, 16 wavefronts; load 16 x 4 B, 16 "
            "wavefronts; total 32 wavefronts, 32 instructions per warp\n");
}

TEST(SwizzleCli, JsonAgreesWithIndependentEnumeration) {
  check_json(kStore, kLoad, "16,32", {16, 32}, "f32", 4);
  check_json(kLoad, kStore, "16,32", {16, 32}, "f32", 4);
  check_json(kStore, kLoad, "16,32", {16, 32}, "f16", 2);
  check_json(kStore, kLoad, "16,32", {16, 32}, "f64", 8);
  // Blocked 32x32: 4 consecutive columns per thread, 4x8 lanes, 4 warps -> its transpose.
  check_json("S[(2,4,32,4):(4,1@warp,1@lane,1)]", "S[(4,32,2,4):(1,1@lane,4,1@warp)]", "32,32",
             {32, 32}, "f16", 2);
  check_json("S[(8,2,4,2):(4@lane,1@warp,1@lane,1)]", "S[(8,2,8):(1@lane,1@warp,1)]", "8,16", {8, 16}, "u8", 1);
  // Kernel layouts (`axe thread-layout`): wgmma 16x64 accumulator, 4 warps -> blocked (1,8);
  // mma.sync accumulator, 2x2 warps -> blocked along rows; slices whose lanes and warps broadcast.
  check_json("S[(4,2,8,8,4,2):(1@warp,2,4@lane,4,1@lane,1)]", "S[(4,4,32,8):(8,1@warp,1@lane,1)]",
             "64,64", {64, 64}, "f16", 2);
  check_json("S[(2,2,8,2,2,4,2):(2@warp,2,4@lane,4,1@warp,1@lane,1)]",
             "S[(8,4,2,4,4):(1@lane,1,4,1@warp,8@lane)]", "32,32", {32, 32}, "f32", 4);
  check_json("S[(8,2,4):(1,2@warp,8@lane)] + R[(8,2):(1@lane,1@warp)]", "S[(32,2):(1@lane,1)] + R[4:1@warp]",
             "64", {64}, "f32", 4);
}

// A random pair of 8x16 thread layouts whose best shared layout no Sw<B,M,S> o Axe layout writes
// (8 wavefronts, the best plain swizzle 12): said so in the text, null in the JSON.
TEST(SwizzleCli, NotExpressibleAsSwizzle) {
  const char* from = "S[(2,2,2,2,2,2,2):(1,16@lane,4@lane,2,1@lane,2@lane,8@lane)]";
  const char* to = "S[(2,2,2,2,2,2,2):(16@lane,8@lane,1@lane,4@lane,1,2,2@lane)]";
  auto r = axe({"swizzle", "--from", from, "--to", to, "--shape", "8,16", "--dtype", "f32"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("as Swizzle o Axe layout: not expressible"), std::string::npos) << r.out;
  r = axe({"swizzle", "--from", from, "--to", to, "--shape", "8,16", "--dtype", "f32", "--json"});
  Json j = parse_json(r.out);
  EXPECT_TRUE(j["swizzle"].is_null());
  EXPECT_TRUE(j["axe_layout"].is_null());
  EXPECT_EQ(j["store_wavefronts"].integer() + j["load_wavefronts"].integer(), 8);
  EXPECT_LT(8, j["best_swizzle"]["store_wavefronts"].integer() + j["best_swizzle"]["load_wavefronts"].integer());
  check_json(from, to, "8,16", {8, 16}, "f32", 4);
}

// --from/--to as specs: TV-15's row-major store is blocked:16,1/1,32/1,1; its column load, whose
// registers hold columns 2..16 and lanes rows 1..8 and column 1, a linear:{...} of those bases.
TEST(SwizzleCli, ThreadSpecs_EqualAxeTexts) {
  const char* load = R"(linear:{"reg":[[0,2],[0,4],[0,8],[0,16]],"lane":[[1,0],[2,0],[4,0],[8,0],[0,1]]})";
  auto spec = axe({"swizzle", "--from", "blocked:16,1/1,32/1,1", "--to", load, "--shape", "16,32", "--dtype",
                   "f32", "--json"});
  auto text = axe({"swizzle", "--from", kStore, "--to", kLoad, "--shape", "16,32", "--dtype", "f32", "--json"});
  ASSERT_EQ(spec.status, 0) << spec.err;
  EXPECT_EQ(spec.out, text.out);
  check_json("blocked:16,1/1,32/1,1", load, "16,32", {16, 32}, "f32", 4);
}

TEST(SwizzleCli, HelpListsJsonKeys) {
  auto r = axe({"swizzle", "--help"});
  ASSERT_EQ(r.status, 0) << r.err;
  for (const char* k : {"offset_bases", "store_wavefronts", "load_wavefronts", "store_vector_bytes",
                        "load_vector_bytes", "row_major", "best_swizzle"}) {
    EXPECT_NE(r.out.find(k), std::string::npos) << k;
  }
}

TEST(SwizzleCli, Errors) {
  expect_error({"swizzle", "--from", kStore, "--to", kLoad, "--shape", "16,32", "--dtype", "f9"},
               "unknown dtype 'f9'");
  expect_error({"swizzle", "--to", kLoad, "--shape", "16,32", "--dtype", "f32"}, "missing --from");
  expect_error({"swizzle", "--from", kStore, "--to", "S[(16,32):(3,1@lane)]", "--shape", "16,32", "--dtype", "f32"},
               "the destination thread layout S[(16,32):(3,1@lane)]");
  expect_error({"swizzle", "--from", kStore, "--to", kLoad, "--shape", "16,16", "--dtype", "f32"},
               "the source thread layout");
  expect_error({"swizzle", "--from", kStore, "--to", kLoad, "--shape", "16,32", "--dtype", "f32", "--swizzle", "1,2,3"},
               "unknown option --swizzle");
  expect_error({"swizzle", "--from", "S[(16,32", "--to", kLoad, "--shape", "16,32", "--dtype", "f32"}, "");
  expect_error({"swizzle", "--from", kStore, "--to", "wgmma:64/4", "--shape", "16,32", "--dtype", "f32"},
               "--to: thread layout 'wgmma:64/4' on (16,32): warps per CTA (4) has 1 entries but the "
               "shape has rank 2");
}

}  // namespace
}  // namespace axe::test::cli
