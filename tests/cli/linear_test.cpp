// `axe linear LAYOUT --shape S`, `axe thread-layout KIND ...` and `axe thread-layout SPEC`, and
// `axe banks` (src/cli/linear_commands.cpp).
#include <gtest/gtest.h>

#include "axe/layout/layout.hpp"
#include "cli_test_util.hpp"

namespace axe::test::cli {
namespace {

constexpr const char* kTensorCore = "S[(8,2,4,2):(4@lane,1@warp,1@lane,1)] + R[2:4@warp] + 5@warp";

using Ints = std::vector<std::int64_t>;

TEST(LinearCli, TensorCoreTile_Text) {
  auto r = axe({"linear", kTensorCore, "--shape", "8,16"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out,
            "S[(8,2,4,2):(4@lane,1@warp,1@lane,1)] + R[2:4@warp] + 5@warp on (8,16): hardware bit "
            "-> logical coordinate\n"
            "  m:    [(0,1)]\n"
            "  lane: [(0,2), (0,4), (1,0), (2,0), (4,0)]\n"
            "  warp: [(0,8), (0,0), (0,0)]\n"
            "offset: warp 5\n"
            "broadcast: warp bits 1,2\n"
            "injective: no, surjective: yes\n"
            "duplicate-free: S[(8,2,4,2):(4@lane,1@warp,1@lane,1)] + 5@warp\n");
}

TEST(LinearCli, TensorCoreTile_JsonKeys) {
  auto r = axe({"linear", kTensorCore, "--shape", "8,16", "--json"});
  ASSERT_EQ(r.status, 0) << r.err;
  Json j = parse_json(r.out);
  ASSERT_TRUE(j.is_object());
  EXPECT_EQ(j["out"].ints(), (Ints{8, 16}));
  EXPECT_FALSE(j["injective"].boolean());
  EXPECT_TRUE(j["surjective"].boolean());
  ASSERT_EQ(j["in"]["lane"].array().size(), 5u);
  EXPECT_EQ(j["in"]["lane"][2].ints(), (Ints{1, 0}));
  EXPECT_EQ(j["in"]["lane"][0].ints(), (Ints{0, 2}));
  EXPECT_EQ(j["in"]["m"][0].ints(), (Ints{0, 1}));
  EXPECT_EQ(j["in"]["warp"][1].ints(), (Ints{0, 0}));
  EXPECT_EQ(j["offset"]["warp"].integer(), 5);
  EXPECT_EQ(j["broadcast"]["warp"].ints(), (Ints{1, 2}));
}

// Independent check against forward: the element at each basis' coordinate is placed at
// 2^bit on that axis (plus the offset), and every placement decomposes over the bases.
TEST(LinearCli, BasesAgreeWithForward) {
  for (const char* text : {kTensorCore, "S[(4,8):(8@lane,1@lane)]", "S[(2,4,4):(1@warp,1,4)] + R[2:2@warp]",
                           "S[(8,4):(1,8)]"}) {
    AxeLayout l = parse_axe_layout(text);
    std::string shape = std::to_string(l.size());
    auto r = axe({"linear", text, "--json"});
    ASSERT_EQ(r.status, 0) << r.err;
    Json j = parse_json(r.out);
    for (const auto& [axis, bases] : j["in"].object()) {
      for (std::size_t b = 0; b < bases.array().size(); ++b) {
        auto c = bases[b].ints();
        ASSERT_EQ(c.size(), 1u);
        if (c[0] == 0) continue;  // broadcast bit
        bool found = false;
        for (const auto& p : l.forward(c[0])) {
          std::int64_t off = 0;
          for (const auto& [a, v] : l.offset()) {
            if (a.name() == axis) off = v;
          }
          found = found || p.coord[Axis(axis)] - off == (std::int64_t{1} << b);
        }
        EXPECT_TRUE(found) << text << " " << axis << " bit " << b;
      }
    }
  }
}

TEST(ThreadLayoutCli, PrintsAxeText) {
  auto r = axe({"thread-layout", "blocked", "--shape", "32,32", "--size-per-thread", "1,4",
                "--threads-per-warp", "4,8", "--warps-per-cta", "4,1"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, "S[(2,4,32,4):(4,1@warp,1@lane,1)]\n");
  r = axe({"thread-layout", "wgmma", "--shape", "64,64", "--n", "64", "--warps-per-cta", "4,1"});
  EXPECT_EQ(r.out, "S[(4,2,8,8,4,2):(1@warp,2,4@lane,4,1@lane,1)]\n");
  r = axe({"thread-layout", "mma", "--shape", "16,8", "--warps-per-cta", "1,1"});
  EXPECT_EQ(r.out, "S[(2,32,2):(2,1@lane,1)]\n");
  r = axe({"thread-layout", "blocked", "--shape", "64", "--size-per-thread", "2,1",
           "--threads-per-warp", "4,8", "--warps-per-cta", "2,1", "--slice", "1"});
  EXPECT_EQ(r.out, "S[(4,2,4,2):(2,1@warp,8@lane,1)] + R[8:1@lane]\n");
  // The printed text is a layout the other commands take.
  r = axe({"linear", "S[(2,32,2):(2,1@lane,1)]", "--shape", "16,8", "--json"});
  ASSERT_EQ(r.status, 0) << r.err;
  Json j = parse_json(r.out);
  EXPECT_TRUE(j["injective"].boolean());
  EXPECT_EQ(j["in"]["m"][1].ints(), (Ints{8, 0}));
}

TEST(ThreadLayoutCli, Json) {
  auto r = axe({"thread-layout", "mma", "--shape", "16,8", "--warps-per-cta", "1,1", "--json"});
  ASSERT_EQ(r.status, 0) << r.err;
  Json j = parse_json(r.out);
  EXPECT_EQ(j["layout"].str(), "S[(2,32,2):(2,1@lane,1)]");
  EXPECT_EQ(j["out"].ints(), (Ints{16, 8}));
}

// Both outputs of two command lines, which must succeed and print the same.
void expect_same_output(std::initializer_list<std::string_view> a,
                        std::initializer_list<std::string_view> b) {
  auto ra = axe(a), rb = axe(b);
  EXPECT_EQ(ra.status, 0) << ra.err;
  EXPECT_EQ(rb.status, 0) << rb.err;
  EXPECT_EQ(ra.out, rb.out);
}

// `axe thread-layout SPEC --shape S`: the spec forms print what the flag forms print.
// blocked:1,4/8,4/4,1/1,0 on (64,64), by hand: m -> columns 1,2 then (the tile being 32x16)
// columns 16,32 and row 32; lanes -> columns 4,8, rows 1,2,4; warps -> rows 8,16.
TEST(ThreadLayoutCli, Spec_EqualsFlagForms) {
  auto r = axe({"thread-layout", "blocked:1,4/8,4/4,1/1,0", "--shape", "64,64"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, "S[(2,4,8,4,4,4):(16,1@warp,4@lane,4,1@lane,1)]\n");
  expect_same_output({"thread-layout", "blocked:1,4/8,4/4,1/1,0", "--shape", "64,64"},
                     {"thread-layout", "blocked", "--shape", "64,64", "--size-per-thread", "1,4",
                      "--threads-per-warp", "8,4", "--warps-per-cta", "4,1", "--order", "1,0"});
  expect_same_output({"thread-layout", "mma:2,2", "--shape", "32,16"},
                     {"thread-layout", "mma", "--shape", "32,16", "--warps-per-cta", "2,2"});
  expect_same_output({"thread-layout", "wgmma:64/4,1", "--shape", "64,64"},
                     {"thread-layout", "wgmma", "--shape", "64,64", "--n", "64", "--warps-per-cta", "4,1"});
  expect_same_output({"thread-layout", "slice:1:blocked:2,1/4,8/2,1", "--shape", "64"},
                     {"thread-layout", "blocked", "--shape", "64", "--size-per-thread", "2,1",
                      "--threads-per-warp", "4,8", "--warps-per-cta", "2,1", "--slice", "1"});
  expect_same_output({"thread-layout", "mma:1,1", "--shape", "16,8", "--json"},
                     {"thread-layout", "mma", "--shape", "16,8", "--warps-per-cta", "1,1", "--json"});
  // An Axe layout is printed as it is.
  r = axe({"thread-layout", kTensorCore, "--shape", "8,16"});
  EXPECT_EQ(r.out, std::string(kTensorCore) + "\n");
}

// linear:{...} written from the "in" of `axe linear --json` (m under "reg") is that layout again.
TEST(ThreadLayoutCli, LinearSpec_RoundTripsAxeLinearJson) {
  struct Case {
    const char* layout;
    const char* shape;
  };
  for (auto [layout, shape] : {Case{"S[(8,2,4,2):(4@lane,1@warp,1@lane,1)]", "8,16"},
                               Case{"S[(4,2,8,8,4,2):(1@warp,2,4@lane,4,1@lane,1)]", "64,64"},
                               Case{"S[(4,4):(8@lane,1@lane)] + R[2:4@lane]", "4,4"}}) {
    auto r = axe({"linear", layout, "--shape", shape, "--json"});
    ASSERT_EQ(r.status, 0) << r.err;
    Json in = parse_json(r.out)["in"];
    std::string spec = "linear:{";
    bool first = true;
    for (const auto& [axis, bases] : in.object()) {
      spec += std::string(first ? "" : ",") + "\"" + (axis == "m" ? "reg" : axis) + "\":[";
      first = false;
      for (std::size_t i = 0; i < bases.array().size(); ++i) {
        Ints b = bases[i].ints();
        spec += i ? ",[" : "[";
        for (std::size_t k = 0; k < b.size(); ++k) spec += (k ? "," : "") + std::to_string(b[k]);
        spec += "]";
      }
      spec += "]";
    }
    spec += "}";
    SCOPED_TRACE(spec);
    auto s = axe({"thread-layout", spec, "--shape", shape, "--json"});
    ASSERT_EQ(s.status, 0) << s.err;
    Json j = parse_json(s.out);
    EXPECT_EQ(j["layout"].str(), layout);
    for (const auto& [axis, bases] : in.object()) {
      for (std::size_t i = 0; i < bases.array().size(); ++i) {
        EXPECT_EQ(j["in"][axis][i].ints(), bases[i].ints()) << axis << " bit " << i;
      }
    }
  }
}

TEST(ThreadLayoutCli, HelpShowsTheGrammar) {
  auto r = axe({"thread-layout", "--help"});
  ASSERT_EQ(r.status, 0) << r.err;
  for (const char* form : {"blocked:SPT/TPW/WPC[/ORDER]", "mma:WPC", "wgmma:N/WPC", "slice:D:PARENT",
                           "linear:{\"reg\":[[..]],\"lane\":[[..]],\"warp\":[[..]]}",
                           "thread-layout blocked --shape S"}) {
    EXPECT_NE(r.out.find(form), std::string::npos) << form << "\n" << r.out;
  }
  for (const char* cmd : {"convert-layout", "swizzle", "banks"}) {
    r = axe({cmd, "--help"});
    EXPECT_NE(r.out.find("THREADS: an Axe layout, or blocked:SPT/TPW/WPC[/ORDER], mma:WPC"),
              std::string::npos) << cmd << "\n" << r.out;
  }
}

TEST(ThreadLayoutCli, SpecErrors) {
  expect_error({"thread-layout", "blocked:1,4/8,8/4,1", "--shape", "32,32"},
               "thread layout 'blocked:1,4/8,8/4,1' on (32,32): threads per warp (8,8) multiply to 64, not 32");
  expect_error({"thread-layout", "blocked:1,4/8,4", "--shape", "32,32"},
               "parse error at position 15: expected '/' and the warps per CTA");
  expect_error({"thread-layout", "mma:2,2", "--shape", "32,16", "--slice", "1"}, "unknown option --slice");
  expect_error({"thread-layout", "mma:2,2"}, "missing --shape");
  expect_error({"thread-layout", "tile:2,2", "--shape", "32,16"}, "unknown kind 'tile'");
  expect_error({"thread-layout", R"(linear:{"lane":[[0,1],[0,1]]})", "--shape", "2,2"},
               "bit 1 of 'lane'");
}

TEST(LinearCli, Errors) {
  expect_error({"linear", "S[(2,2):(1,1)]"}, "iters 2:1 of S and 2:1 of S overlap on axis m");
  expect_error({"linear", "S[(4,2):(3@lane,1)]"}, "iter 4:3@lane of S: stride 3 is not a positive power of two");
  expect_error({"linear", "S[8:1]", "--shape", "2,2"}, "the shape (2,2) has 4 elements but S[8:1] has 8");
  expect_error({"linear", "S[6:1]"}, "logical extent 6 of dim 0 in (6) is not a power of two");
  expect_error({"linear", "S[4:1] + P[2:1@gpu]"}, "partial iters P");
  expect_error({"linear", "S[4:1", "--shape", "4"}, "parse error");
  expect_error({"linear"}, "usage: axe linear LAYOUT");
  expect_error({"thread-layout", "foo", "--shape", "4"},
               "unknown thread layout 'foo' (expected blocked, mma or wgmma with flags, or a spec such "
               "as blocked:1,4/8,4/4,1 or mma:2,2; see axe thread-layout --help)");
  expect_error({"thread-layout", "blocked", "--shape", "32,32", "--size-per-thread", "1,4",
                "--threads-per-warp", "8,8", "--warps-per-cta", "4,1"},
               "threads per warp (8,8) multiply to 64, not 32");
  expect_error({"thread-layout", "mma", "--shape", "16,8"}, "missing --warps-per-cta");
  expect_error({"thread-layout", "wgmma", "--shape", "64,64", "--n", "24", "--warps-per-cta", "4,1"},
               "wgmma instruction N 24 is not a power of two");
  expect_error({"thread-layout", "mma", "--shape", "16,8", "--warps-per-cta", "1,1", "--slice", "5"},
               "--slice 5 is not a dim in 0..2");
  expect_error({"thread-layout", "mma", "--shape", "16,8", "--warps-per-cta", "1,1", "--n", "8"},
               "unknown option --n");
}

}  // namespace
}  // namespace axe::test::cli

namespace axe::test::cli {
namespace {

// `axe banks`: TV-15 (16x32 f32 transpose through shared memory).
TEST(BanksCli, TV15_RowMajorAndSwizzled) {
  const char* smem = "S[(16,32):(32,1)]";
  const char* load = "S[(16,16,2):(1@lane,1,16@lane)]";
  auto r = axe({"banks", smem, "--access", load, "--shape", "16,32", "--dtype", "f32", "--json"});
  ASSERT_EQ(r.status, 0) << r.err;
  Json j = parse_json(r.out);
  EXPECT_EQ(j["vector_bytes"].integer(), 4);
  EXPECT_EQ(j["instructions"].integer(), 16);
  EXPECT_EQ(j["wavefronts"].integer(), 256);
  EXPECT_EQ(j["ideal"].integer(), 16);
  EXPECT_EQ(j["f2_wavefronts"].integer(), 16);
  r = axe({"banks", smem, "--access", load, "--shape", "16,32", "--dtype", "f32", "--swizzle", "4,1,4", "--json"});
  j = parse_json(r.out);
  EXPECT_EQ(j["wavefronts"].integer(), 16);
  r = axe({"banks", smem, "--access", "S[(16,32):(1,1@lane)]", "--shape", "16,32", "--dtype", "f32"});
  EXPECT_EQ(r.out,
            "1 warp(s) x 16 instruction(s) of 4 bytes per lane\n"
            "wavefronts per instruction: (1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1)\n"
            "total 16 wavefronts, ideal 16\n"
            "F2 formula: 1 per instruction\n");
}

// --access as a spec: the row-major store of TV-15 is blocked:16,1/1,32/1,1 (lanes along the 32
// columns, the 16 rows in registers), its column load the linear form of its bases.
TEST(BanksCli, AccessSpec_EqualsAxeText) {
  const char* smem = "S[(16,32):(32,1)]";
  expect_same_output({"banks", smem, "--access", "blocked:16,1/1,32/1,1", "--shape", "16,32", "--dtype", "f32"},
                     {"banks", smem, "--access", "S[(16,32):(1,1@lane)]", "--shape", "16,32", "--dtype", "f32"});
  expect_same_output(
      {"banks", smem, "--access",
       R"(linear:{"reg":[[0,2],[0,4],[0,8],[0,16]],"lane":[[1,0],[2,0],[4,0],[8,0],[0,1]]})", "--shape",
       "16,32", "--dtype", "f32", "--json"},
      {"banks", smem, "--access", "S[(16,16,2):(1@lane,1,16@lane)]", "--shape", "16,32", "--dtype", "f32",
       "--json"});
}

TEST(BanksCli, Errors) {
  expect_error({"banks", "S[(16,32):(32,1)]", "--access", "S[(16,32):(1,1@lane)]", "--shape", "16,32",
                "--dtype", "f9"},
               "unknown dtype 'f9' (expected f32, f16, bf16, f64, i32, i64 or u8)");
  expect_error({"banks", "S[(16,32):(32,1)]", "--access", "S[(16,32):(1,1@lane)]", "--shape", "16,32",
                "--dtype", "f32", "--swizzle", "4,1"},
               "--swizzle: expected B,M,S");
  expect_error({"banks", "S[(16,32):(32,1)]", "--access", "S[(8,64):(1,1@lane)]", "--shape", "16,32",
                "--dtype", "f32"},
               "reaches lane 63");
  expect_error({"banks", "S[(16,32):(32,1)]", "--shape", "16,32", "--dtype", "f32"}, "missing --access");
  expect_error({"banks", "S[(16,32):(32,1)]", "--access", "blocked:1,1/1,16/2,1", "--shape", "16,32",
                "--dtype", "f32"},
               "--access: thread layout 'blocked:1,1/1,16/2,1' on (16,32): threads per warp (1,16) "
               "multiply to 16, not 32");
  expect_error({"banks", "S[(16,32):(32,1)]", "--access", "S[(16,32", "--shape", "16,32", "--dtype", "f32"},
               "--access 'S[(16,32': parse error");
}

}  // namespace
}  // namespace axe::test::cli
