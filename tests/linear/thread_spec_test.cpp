// parse_thread_layout: the text form of thread layouts (blocked:, mma:, wgmma:, slice:, linear:,
// or an Axe layout). Exact examples derived by hand from the hardware bits; each Triton form
// equals the direct call of thread_layouts.hpp; linear:{...} round-trips the bases to_linear
// gives; errors name the spec and what is wrong; random blocked specs against blocked_layout.
#include "axe/linear/thread_spec.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>

#include "axe/core/error.hpp"
#include "axe/linear/bridge.hpp"
#include "axe/linear/thread_layouts.hpp"
#include "linear_test_util.hpp"

namespace axe::test::linear {
namespace {

using namespace axe::linear;
using Shape = std::vector<std::int64_t>;

std::string spec_text(const AxeLayout& l) {
  return to_string(l);
}

// The bases of in-dim `name`, none when `l` lacks it (to_linear leaves out an unused axis).
std::vector<LinearLayout::Basis> bases_of(const LinearLayout& l, const std::string& name) {
  return l.has_in_dim(name) ? l.bases(name) : std::vector<LinearLayout::Basis>{};
}

// The law of parse_thread_layout for a Triton form: to_linear of the result is the direct
// call's layout, bit by bit per hardware axis (the order of the input dims aside).
void expect_same_layout(const AxeLayout& parsed, const Shape& shape, const LinearLayout& direct) {
  auto back = to_linear(parsed, shape).layout;
  EXPECT_EQ(back.out_dims(), direct.out_dims()) << spec_text(parsed);
  for (const char* in : {"m", "lane", "warp"}) {
    EXPECT_EQ(bases_of(back, in), bases_of(direct, in)) << in << " of " << spec_text(parsed);
  }
  EXPECT_EQ(parsed, from_linear(direct).layout);
}

// The "in" object of `axe linear --json` for `l`: per axis its bases as logical coordinates
// [dim0, dim1, ...], here under the spec's key "reg" for m.
std::string linear_spec(const LinearLayout& l) {
  std::string s = "linear:{";
  bool first = true;
  for (const auto& d : l.in_dims()) {
    s += std::string(first ? "" : ",") + "\"" + (d.name == "m" ? "reg" : d.name) + "\":[";
    first = false;
    for (int i = 0; i < d.bits; ++i) {
      auto b = l.basis(d.name, i);
      s += i ? ",[" : "[";
      for (std::size_t k = b.size(); k-- > 0;) s += std::to_string(b[k]) + (k ? "," : "");
      s += "]";
    }
    s += "]";
  }
  return s + "}";
}

// blocked:1,4/8,4/4,1/1,0 on (32,32): m -> columns 1,2; lanes -> columns 4,8 then rows 1,2,4;
// warps -> rows 8,16; the CTA tile is 32x16, so m bit 2 -> column 16. Bits of 32 row + col, low
// first: m m lane lane m lane lane lane warp warp.
TEST(ThreadSpec, Blocked_ExactExamples) {
  EXPECT_EQ(spec_text(parse_thread_layout("blocked:1,4/8,4/4,1/1,0", Shape{32, 32})),
            "S[(4,8,2,4,4):(1@warp,4@lane,4,1@lane,1)]");
  // The order defaults to row-major: the same layout without it.
  EXPECT_EQ(parse_thread_layout("blocked:1,4/8,4/4,1", Shape{32, 32}),
            parse_thread_layout("blocked:1,4/8,4/4,1/1,0", Shape{32, 32}));
  // On (64,64) m grows along columns first (16, 32), then rows (32): bits of 64 row + col:
  // m m lane lane m m lane lane lane warp warp m.
  EXPECT_EQ(spec_text(parse_thread_layout("blocked:1,4/8,4/4,1/1,0", Shape{64, 64})),
            "S[(2,4,8,4,4,4):(16,1@warp,4@lane,4,1@lane,1)]");
  // 1-D: 4 per thread, 32 lanes, 4 warps cover 512 exactly.
  EXPECT_EQ(spec_text(parse_thread_layout("blocked:4/32/4/0", Shape{512})),
            "S[(4,32,4):(1@warp,1@lane,1)]");
  // Column-major order: lanes down the 32 rows, warps along the 4 columns.
  EXPECT_EQ(spec_text(parse_thread_layout("blocked:1,1/32,1/1,4/0,1", Shape{32, 4})),
            "S[(32,4):(1@lane,1@warp)]");
}

// mma:2,2 on (32,16): m -> column 1, row 8; lanes -> columns 2,4, rows 1,2,4; warps -> column 8
// (the column dim fastest), row 16. Bits of 16 row + col: m lane lane warp lane lane lane m warp.
// wgmma:128/4,1 on (64,128): m -> column 1, row 8, columns 8..64; lanes as mma; warps rows 16, 32.
TEST(ThreadSpec, Accumulators_ExactExamples) {
  EXPECT_EQ(spec_text(parse_thread_layout("mma:2,2", Shape{32, 16})),
            "S[(2,2,8,2,4,2):(2@warp,2,4@lane,1@warp,1@lane,1)]");
  EXPECT_EQ(spec_text(parse_thread_layout("wgmma:128/4,1", Shape{64, 128})),
            "S[(4,2,8,16,4,2):(1@warp,2,4@lane,4,1@lane,1)]");
}

// slice:1:blocked:1,1/32,1/4,1/0,1 on (128): the parent on (128,1) puts lanes on rows 1..16 and
// warps on rows 32, 64; dropping dim 1 leaves them on the 128 elements.
TEST(ThreadSpec, Slice_ExactExample) {
  EXPECT_EQ(spec_text(parse_thread_layout("slice:1:blocked:1,1/32,1/4,1/0,1", Shape{128})),
            "S[(4,32):(1@warp,1@lane)]");
  // Slicing dim 0 of a (1,64) parent whose lanes span 4 rows: lane bits 3, 4 broadcast.
  EXPECT_EQ(spec_text(parse_thread_layout("slice:0:blocked:1,2/4,8/1,1", Shape{16})),
            "S[(8,2):(1@lane,1)] + R[4:8@lane]");
}

// The tensor-core tile of the README: m -> column 1, lanes -> columns 2,4, rows 1,2,4; warp bit
// 0 -> column 8, bits 1, 2 broadcast (one replica run R[4:2@warp]).
TEST(ThreadSpec, Linear_ExactExample) {
  EXPECT_EQ(spec_text(parse_thread_layout(
                R"(linear:{"reg":[[0,1]],"lane":[[0,2],[0,4],[1,0],[2,0],[4,0]],"warp":[[0,8]]})",
                Shape{8, 16})),
            "S[(8,2,4,2):(4@lane,1@warp,1@lane,1)]");
  EXPECT_EQ(spec_text(parse_thread_layout(
                R"(linear:{ "lane": [[0,2],[0,4],[1,0],[2,0],[4,0]], "reg": [[0,1]],
                            "warp": [[0,8],[0,0],[0,0]] })",
                Shape{8, 16})),
            "S[(8,2,4,2):(4@lane,1@warp,1@lane,1)] + R[4:2@warp]");
  // Keys may be left out; "register" (Triton) and "m" (axe linear) name the registers too;
  // an empty "block" (one CTA) is accepted.
  EXPECT_EQ(spec_text(parse_thread_layout(R"(linear:{"lane":[[1],[2],[4],[8],[16]]})", Shape{32})),
            "S[32:1@lane]");
  EXPECT_EQ(
      parse_thread_layout(R"(linear:{"register":[[1]],"lane":[[2],[4]],"block":[]})", Shape{8}),
      parse_thread_layout(R"(linear:{"m":[[1]],"lane":[[2],[4]]})", Shape{8}));
}

TEST(ThreadSpec, AxeText_PassesThroughUnchanged) {
  for (const char* text :
       {"S[(4,4):(1@lane,1)]", "S[(8,2,4,2):(4@lane,1@warp,1@lane,1)] + R[2:4@warp] + 5@warp",
        "S[(16,32):(1,1@lane)]"}) {
    EXPECT_EQ(parse_thread_layout(text, Shape{4, 4}), parse_axe_layout(text)) << text;
  }
}

TEST(ThreadSpec, TritonForms_EqualTheDirectCalls) {
  struct Case {
    const char* spec;
    Shape shape;
    LinearLayout direct;
  };
  std::vector<Case> cases{
      {"blocked:1,4/8,4/4,1/1,0",
       {32, 32},
       blocked_layout(Shape{32, 32}, Shape{1, 4}, Shape{8, 4}, Shape{4, 1})},
      {"blocked:1,4/4,8/4,1",
       {32, 32},
       blocked_layout(Shape{32, 32}, Shape{1, 4}, Shape{4, 8}, Shape{4, 1})},
      {"blocked:2,1/4,8/2,2/0,1",
       {64, 16},
       blocked_layout(Shape{64, 16}, Shape{2, 1}, Shape{4, 8}, Shape{2, 2}, Shape{0, 1})},
      {"blocked:1,1/4,8/1,1",
       {4, 4},
       blocked_layout(Shape{4, 4}, Shape{1, 1}, Shape{4, 8}, Shape{1, 1})},
      {"blocked:4/32/4/0", {512}, blocked_layout(Shape{512}, Shape{4}, Shape{32}, Shape{4})},
      {"blocked:1,2,2/2,4,4/2,1,1/2,1,0",
       {8, 8, 8},
       blocked_layout(Shape{8, 8, 8}, Shape{1, 2, 2}, Shape{2, 4, 4}, Shape{2, 1, 1},
                      Shape{2, 1, 0})},
      {"mma:2,2", {32, 16}, mma_accumulator(Shape{32, 16}, Shape{2, 2})},
      {"mma:4,1", {128, 64}, mma_accumulator(Shape{128, 64}, Shape{4, 1})},
      {"wgmma:128/4,1", {64, 128}, wgmma_accumulator(Shape{64, 128}, 128, Shape{4, 1})},
      {"wgmma:64/4,1", {64, 64}, wgmma_accumulator(Shape{64, 64}, 64, Shape{4, 1})},
      {"slice:1:blocked:1,1/32,1/4,1/0,1",
       {128},
       slice_layout(
           blocked_layout(Shape{128, 1}, Shape{1, 1}, Shape{32, 1}, Shape{4, 1}, Shape{0, 1}), 1)},
      {"slice:1:blocked:2,1/4,8/2,1",
       {64},
       slice_layout(blocked_layout(Shape{64, 1}, Shape{2, 1}, Shape{4, 8}, Shape{2, 1}), 1)},
      {"slice:0:mma:2,2", {32}, slice_layout(mma_accumulator(Shape{1, 32}, Shape{2, 2}), 0)},
      {"slice:1:wgmma:64/4,1",
       {64},
       slice_layout(wgmma_accumulator(Shape{64, 1}, 64, Shape{4, 1}), 1)},
      {"slice:0:slice:2:blocked:1,1,4/2,2,8/4,1,1",
       {8},
       slice_layout(
           slice_layout(
               blocked_layout(Shape{1, 8, 1}, Shape{1, 1, 4}, Shape{2, 2, 8}, Shape{4, 1, 1}), 2),
           0)},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.spec);
    expect_same_layout(parse_thread_layout(c.spec, c.shape), c.shape, c.direct);
  }
}

// linear:{...} written from the bases to_linear gives (the "in" of `axe linear --json`) parses
// back to a layout with those bases.
TEST(ThreadSpec, Linear_RoundTripsToLinearBases) {
  struct Case {
    const char* layout;
    Shape shape;
  };
  for (const auto& c :
       std::vector<Case>{{"S[(8,2,4,2):(4@lane,1@warp,1@lane,1)] + R[2:4@warp]", {8, 16}},
                         {"S[(4,2,8,8,4,2):(1@warp,2,4@lane,4,1@lane,1)]", {64, 64}},
                         {"S[(4,4):(8@lane,1@lane)] + R[2:4@lane]", {4, 4}},
                         {"S[(2,2,8,2,4,2):(2@warp,2,4@lane,1@warp,1@lane,1)]", {32, 16}},
                         {"S[(16,32):(1,1@lane)]", {16, 32}}}) {
    auto l = to_linear(parse_axe_layout(c.layout), c.shape).layout;
    std::string spec = linear_spec(l);
    SCOPED_TRACE(spec);
    auto parsed = parse_thread_layout(spec, c.shape);
    auto back = to_linear(parsed, c.shape).layout;
    for (const char* in : {"m", "lane", "warp"})
      EXPECT_EQ(bases_of(back, in), bases_of(l, in)) << in;
    EXPECT_EQ(parsed, from_linear(l).layout);
  }
}

TEST(ThreadSpec, Errors_NameTheSpecAndTheProblem) {
  auto err = [](const char* spec, Shape shape, const std::string& needle) {
    SCOPED_TRACE(spec);
    expect_error([&] { (void)parse_thread_layout(spec, shape); }, needle);
  };
  err("foo:1,2", {32, 32},
      "thread layout 'foo:1,2' on (32,32): unknown kind 'foo' (expected blocked, mma, wgmma, slice "
      "or linear, or an Axe layout S[...])");
  err("blocked:1,4,1/8,4,1/4,1,1", {32, 32},
      "thread layout 'blocked:1,4,1/8,4,1/4,1,1' on (32,32): size per thread (1,4,1) has 3 entries "
      "but the shape has rank 2");
  err("blocked:1,3/8,4/4,1", {32, 32},
      "size per thread (1,3): entry 3 of dim 1 is not a power of two");
  err("blocked:1,4/8,8/4,1", {32, 32},
      "thread layout 'blocked:1,4/8,8/4,1' on (32,32): threads per warp (8,8) multiply to 64, not "
      "32");
  err("blocked:1,4/8,4/4,1/1,1", {32, 32}, "order (1,1) is not a permutation of 0..1");
  err("blocked:1,4/8,4/4,1", {32, 24},
      "logical extent 24 of dim 1 in (32,24) is not a power of two");
  err("mma:1,1", {64},
      "thread layout 'mma:1,1' on (64): mma accumulator: the shape (64) has rank 1 (expected 2)");
  err("wgmma:24/4,1", {64, 64}, "wgmma instruction N 24 is not a power of two in [8, 256]");
  err("slice:3:mma:1,1", {16},
      "thread layout 'slice:3:mma:1,1' on (16): slice dim 3 is not in 0..1");
  err("slice:1:blocked:1/32/4", {128},
      "slice dim 1, the parent on (128,1): size per thread (1) has 1 entries but the shape has "
      "rank 2");
  err(R"(linear:{"regs":[]})", {8},
      "unknown key 'regs' at position 8 (expected reg, lane or warp)");
  err(R"(linear:{"lane":[[1],[2]],"lane":[]})", {4}, "the lane bases are given twice");
  err(R"(linear:{"block":[[1]]})", {2}, "one CTA only");
  err(R"(linear:{"lane":[[0,2],[1]]})", {2, 4},
      "lane basis 1 [1] has 1 coordinates but the shape (2,4) has rank 2");
  err(R"(linear:{"lane":[[0,4]]})", {2, 4},
      "lane basis 0 [0,4]: coordinate 4 of dim 1 is outside 0..3");
  err(R"(linear:{"reg":[[1,1]]})", {2, 2},
      "bit 0 of 'm' maps to (1,1), a combination of 2 logical bits");
  err(R"(linear:{"lane":[[1]]})", {4},
      "thread layout 'linear:{\"lane\":[[1]]}' on (4): no Axe layout for {m: [], lane: [1], warp: "
      "[]} "
      "-> [dim0:4]: logical bit 1 is held by no hardware bit");
  err(R"(linear:{"lane":[[1]]})", {6}, "logical extent 6 of dim 0 in (6) is not a power of two");
}

TEST(ThreadSpec, SyntaxErrors_AreParseErrorsAtThePosition) {
  auto at = [](const char* spec, std::size_t position, const std::string& expected) {
    SCOPED_TRACE(spec);
    try {
      (void)parse_thread_layout(spec, Shape{32, 32});
      ADD_FAILURE() << "no error";
    } catch (const axe::ParseError& e) {
      EXPECT_EQ(e.position(), position) << e.what();
      EXPECT_NE(std::string(e.what()).find(expected), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find(spec), std::string::npos) << e.what();
    }
  };
  at("blocked:1,4/8,4", 15, "'/' and the warps per CTA (blocked:SPT/TPW/WPC[/ORDER])");
  at("blocked:", 8, "an integer (size per thread)");
  at("blocked:1,,4/8,4/4,1", 10, "an integer (size per thread)");
  at("mma:2,2x", 7, "the end of the spec (mma:WPC)");
  at("wgmma:64", 8, "'/' and the warps per CTA (wgmma:N/WPC)");
  at("slice:1:S[4:1]", 8, "a kind (blocked:, mma:, wgmma:, slice: or linear:)");
  at("slice:1:blocked:1,1/32,x", 23, "an integer (threads per warp)");
  at(R"(linear:{"reg":[[0,1]})", 20, "',' and another basis, or ']' closing the list of bases");
  at(R"(linear:{"reg":[[0.5,1]]})", 17, "',' and another coordinate, or ']' closing the basis");
  at("linear:[]", 7, "'{' opening the bases");
  at("S[(4,4):(1@lane,1)", 18, "']'");  // an Axe layout: its own parse error
}

// Random blocked specs on random power-of-two shapes: the parsed layout is the direct call's.
TEST(ThreadSpec, RandomBlocked_EqualsBlockedLayout) {
  auto rng = make_rng(0x5bec);
  auto pick_bits = [&](std::size_t rank, int bits) {
    Shape v(rank, 1);
    for (int b = 0; b < bits; ++b)
      v[static_cast<std::size_t>(uniform(rng, 0, static_cast<int>(rank) - 1))] *= 2;
    return v;
  };
  auto list = [](const Shape& v) {
    std::string s;
    for (std::size_t k = 0; k < v.size(); ++k) s += (k ? "," : "") + std::to_string(v[k]);
    return s;
  };
  for (int iter = 0; iter < 300; ++iter) {
    auto rank = static_cast<std::size_t>(uniform(rng, 1, 3));
    Shape shape = pick_bits(rank, uniform(rng, 0, 12));
    Shape spt(rank);
    for (auto& e : spt) e = std::int64_t{1} << uniform(rng, 0, 2);
    Shape tpw = pick_bits(rank, 5);
    Shape wpc = pick_bits(rank, uniform(rng, 0, 3));
    Shape order;
    std::string spec = "blocked:" + list(spt) + "/" + list(tpw) + "/" + list(wpc);
    if (uniform(rng, 0, 1)) {
      order.resize(rank);
      std::iota(order.begin(), order.end(), 0);
      std::shuffle(order.begin(), order.end(), rng);
      spec += "/" + list(order);
    }
    SCOPED_TRACE(spec + " on " + list(shape));
    auto parsed = parse_thread_layout(spec, shape);
    expect_same_layout(parsed, shape, blocked_layout(shape, spt, tpw, wpc, order));
    // Its bases written as linear:{...} give it back.
    EXPECT_EQ(parse_thread_layout(linear_spec(to_linear(parsed, shape).layout), shape), parsed);
    if (HasFailure()) return;
  }
}

}  // namespace
}  // namespace axe::test::linear
