// Every vector of ../shared/testdata/axe_paper_vectors.md as an exact test (numbers derived by
// hand from the definitions, as in that file).
#include <gtest/gtest.h>

#include "layout/layout_test_util.hpp"
#include "support/test_support.hpp"

namespace axe {
namespace {

using test::L;
using test::pc;

std::set<test::Coord> at(const AxeLayout& l, std::vector<std::int64_t> coord,
                         std::vector<std::int64_t> shape) {
  std::set<test::Coord> s;
  for (const Placement& p : l.forward(coord, shape)) s.insert(test::to_map(p.coord));
  return s;
}

std::set<test::Coord> set_of(std::initializer_list<PhysCoord> cs) {
  std::set<test::Coord> s;
  for (const PhysCoord& c : cs) s.insert(test::to_map(c));
  return s;
}

TEST(PaperVectors, TensorCoreTileForward) {
  AxeLayout l = L("S[(8,2,4,2):(4@lane,1@warp,1@lane,1)] + R[2:4@warp] + 5@warp");
  std::vector<std::int64_t> shape{8, 16};
  struct Row {
    std::int64_t i, j, lane, warp, m;
  };
  for (Row r : {Row{0, 0, 0, 5, 0}, Row{0, 1, 0, 5, 1}, Row{0, 2, 1, 5, 0}, Row{1, 0, 4, 5, 0},
                Row{0, 8, 0, 6, 0}, Row{2, 9, 8, 6, 1}, Row{7, 15, 31, 6, 1}}) {
    EXPECT_EQ(at(l, {r.i, r.j}, shape),
              set_of({pc({{"lane", r.lane}, {"warp", r.warp}, {"m", r.m}}),
                      pc({{"lane", r.lane}, {"warp", r.warp + 4}, {"m", r.m}})}))
        << r.i << "," << r.j;
  }
  // flat index of (2,9) is 41; either copy maps back to it.
  EXPECT_EQ(l.backward(pc({{"lane", 8}, {"warp", 6}, {"m", 1}})), (Preimage{41, 0, 0}));
  EXPECT_EQ(l.backward(pc({{"lane", 8}, {"warp", 10}, {"m", 1}})), (Preimage{41, 1, 0}));
  EXPECT_EQ(l.span(Axis("warp")), 6);
  EXPECT_EQ(to_string(l.forward(41)[0].coord), "{lane 8, warp 6, m 1}");
}

TEST(PaperVectors, FullySharded2x2Mesh) {
  AxeLayout l = L("S[(2,32,2,64):(1@gpu,64,2@gpu,1)]");
  std::vector<std::int64_t> shape{64, 128};
  struct Row {
    std::int64_t i, j, gpu, m;
  };
  for (Row r : {Row{0, 0, 0, 0}, Row{31, 63, 0, 2047}, Row{32, 0, 1, 0}, Row{0, 64, 2, 0},
                Row{63, 127, 3, 2047}, Row{40, 70, 3, 518}}) {
    EXPECT_EQ(at(l, {r.i, r.j}, shape), set_of({pc({{"gpu", r.gpu}, {"m", r.m}})}));
  }
}

TEST(PaperVectors, RowsShardedAndReplicated) {
  AxeLayout l = L("S[(2,32,128):(1@gpu,128,1)] + R[2:2@gpu]");
  std::vector<std::int64_t> shape{64, 128};
  struct Row {
    std::int64_t i, j, gpu, m;
  };
  for (Row r : {Row{0, 0, 0, 0}, Row{31, 127, 0, 4095}, Row{32, 0, 1, 0}, Row{40, 70, 1, 1094},
                Row{63, 127, 1, 4095}}) {
    EXPECT_EQ(at(l, {r.i, r.j}, shape),
              set_of({pc({{"gpu", r.gpu}, {"m", r.m}}), pc({{"gpu", r.gpu + 2}, {"m", r.m}})}));
  }
}

TEST(PaperVectors, TwoDeviceAxes) {
  EXPECT_EQ(at(L("S[(2,4,8):(1@gy,8,1)]"), {1, 2, 3}, {2, 4, 8}),
            set_of({pc({{"gy", 1}, {"m", 19}})}));
  EXPECT_EQ(at(L("S[(2,4,8):(1@gy,8,1)] + R[2:1@gx]"), {1, 2, 3}, {2, 4, 8}),
            set_of({pc({{"gx", 0}, {"gy", 1}, {"m", 19}}), pc({{"gx", 1}, {"gy", 1}, {"m", 19}})}));
  EXPECT_EQ(at(L("S[(2,4,8):(1@gy,8,1)] + 1@gx"), {1, 2, 3}, {2, 4, 8}),
            set_of({pc({{"gx", 1}, {"gy", 1}, {"m", 19}})}));
  EXPECT_EQ(at(L("S[(2,4,2,4):(1@gy,4,1@gx,1)]"), {5, 6}, {8, 8}),
            set_of({pc({{"gy", 1}, {"gx", 1}, {"m", 6}})}));
}

TEST(PaperVectors, ReduceScatterSignature) {
  EXPECT_EQ(at(L("S[(4,64,64):(1@gpu,64,1)]"), {3, 10, 5}, {4, 64, 64}),
            set_of({pc({{"gpu", 3}, {"m", 645}})}));
  EXPECT_EQ(at(L("S[(4,16,64):(1@gpu,64,1)]"), {37, 5}, {64, 64}),
            set_of({pc({{"gpu", 2}, {"m", 325}})}));
}

TEST(PaperVectors, TrainiumAndTmem) {
  EXPECT_EQ(at(L("S[(2,128,512):(512@F,1@P,1@F)]"), {200, 300}, {256, 512}),
            set_of({pc({{"P", 72}, {"F", 812}})}));
  AxeLayout tmem = L("S[(2,128,112):(112@TCol,1@TLane,1@TCol)]");
  std::vector<std::int64_t> shape{2, 128, 112};
  EXPECT_EQ(at(tmem, {0, 5, 3}, shape), set_of({pc({{"TLane", 5}, {"TCol", 3}})}));
  EXPECT_EQ(at(tmem, {1, 0, 0}, shape), set_of({pc({{"TLane", 0}, {"TCol", 112}})}));
  EXPECT_EQ(at(tmem, {1, 127, 111}, shape), set_of({pc({{"TLane", 127}, {"TCol", 223}})}));
}

TEST(PaperVectors, Canonicalize) {
  const char* cases[][2] = {
      {"S[(8,8,8,4,2):(512,64,8,2,1)]", "S[4096:1]"},
      {"S[(8,8,1,8,4,2):(512,64,160,8,2,1)]", "S[4096:1]"},
      {"S[(8,8,8,4,1,1):(512,64,8,2,1,1)]", "S[2048:2]"},
      {"S[(8,2,3,6):(6,24,6,1)]", "S[(8,2,18):(6,24,1)]"},
      {"S[(3,4,5,2):(20,5,1,60)]", "S[(60,2):(1,60)]"},
      {"S[(8,4,8):(4@lane,1@lane,4)]", "S[(32,8):(1@lane,4)]"},
      {"S[(8,4,4,8,8,8):(4@lane,1@lane,16,2,8,8)]", "S[(32,32,8,8):(1@lane,2,8,8)]"},
  };
  for (auto& c : cases) {
    EXPECT_EQ(to_string(canonicalize(L(c[0]))), c[1]);
    EXPECT_TRUE(test::SameFunction(L(c[0]), L(c[1])));
  }
  EXPECT_EQ(canonicalize(L("S[():()] + R[(8,4):(4@lane,1@lane)]")),
            canonicalize(L("S[():()] + R[(4,8):(1@lane,4@lane)]")));
}

TEST(PaperVectors, Group) {
  std::vector<std::int64_t> s1{64, 64}, s2{2, 12};
  auto g = group(L("S[(8,8,8,8):(512,8,64,1)]"), s1);
  ASSERT_TRUE(g);
  EXPECT_EQ(g->layout, L("S[(8,8,8,8):(512,8,64,1)]"));
  EXPECT_EQ(g->boundaries, (std::vector<std::size_t>{0, 2, 4}));
  g = group(L("S[(4,6):(6,1)]"), s2);
  ASSERT_TRUE(g);
  EXPECT_EQ(g->layout, L("S[(2,2,6):(12,6,1)]"));
  EXPECT_EQ(g->boundaries, (std::vector<std::size_t>{0, 1, 3}));
}

TEST(PaperVectors, Tile) {
  auto t = [](const char* o, std::vector<std::int64_t> os, const char* i,
              std::vector<std::int64_t> is) { return tile(L(o), os, L(i), is); };
  EXPECT_EQ(canonicalize(t("S[8:1]", {8}, "S[8:1]", {8})), L("S[64:1]"));
  EXPECT_EQ(t("S[(8,8):(8,1)]", {8, 8}, "S[(8,8):(8,1)]", {8, 8}), L("S[(8,8,8,8):(512,8,64,1)]"));
  EXPECT_EQ(canonicalize(t("S[(8,8):(8,1)]", {8, 8}, "S[(2,4):(1,2)]", {2, 4})),
            L("S[(8,2,32):(64,1,2)]"));
  EXPECT_EQ(t("S[(8,8):(8,1)]", {8, 8}, "S[(2,3):(3,1)]", {2, 3}), L("S[(8,2,8,3):(48,3,6,1)]"));
  EXPECT_EQ(t("S[(8,8):(8,1)]", {8, 8}, "S[(8,4):(4@lane,1@lane)]", {8, 4}),
            L("S[(8,8,8,4):(8,4@lane,1,1@lane)]"));
  EXPECT_EQ(canonicalize(t("S[(8,4):(4@lane,1@lane)]", {8, 4}, "S[(1,2):(2,1)]", {1, 2})),
            L("S[(32,2):(1@lane,1)]"));
  // 16x24 stored as an 8x8 grid of 2x3 tiles: element (i,j) at 48*(i/2) + 6*(j/3) + 3*(i%2) + j%3.
  AxeLayout g = t("S[(8,8):(8,1)]", {8, 8}, "S[(2,3):(3,1)]", {2, 3});
  for (std::int64_t i = 0; i < 16; ++i) {
    for (std::int64_t j = 0; j < 24; ++j) {
      EXPECT_EQ(at(g, {i, j}, {16, 24}),
                set_of({pc({{"m", 48 * (i / 2) + 6 * (j / 3) + 3 * (i % 2) + j % 3}})}));
    }
  }
}

TEST(PaperVectors, Slice) {
  AxeLayout l = L("S[(2,8,3,8):(192,8,64,1)]");
  std::vector<std::int64_t> shape{16, 24};
  std::vector<Range> region{{0, 8}, {8, 24}};
  auto s = slice(l, shape, region);
  ASSERT_TRUE(s);
  EXPECT_EQ(*s, L("S[(8,2,8):(8,64,1)] + 64"));
  for (std::int64_t i = 0; i < 8; ++i) {
    for (std::int64_t j = 0; j < 16; ++j) {
      EXPECT_EQ(at(*s, {i, j}, {8, 16}), at(l, {i, j + 8}, shape));
    }
  }
}

TEST(PaperVectors, DirectSum) {
  std::vector<std::int64_t> s{2, 2};
  AxeLayout d = direct_sum(L("S[(2,2):(8,2)]"), s, L("S[(2,2):(4,1)]"), s);
  EXPECT_EQ(d, L("S[(2,2,2,2):(8,4,2,1)]"));
  EXPECT_EQ(canonicalize(d), L("S[16:1]"));
}

TEST(PaperVectors, SwizzleOnAxeLayoutColumnZero) {
  // addr(i, 0) = 64i + 8(0 xor i) = 72i; 32-bit banks of fp16 column 0: (72i*2/4) mod 32.
  AxeLayout l = L("S[(8,64):(64,1)]");
  std::set<std::int64_t> banks;
  for (std::int64_t i = 0; i < 8; ++i) {
    std::int64_t addr = l.forward_first(i * 64)[Axis()] + 8 * ((0 / 8) ^ i) + 0 % 8;
    EXPECT_EQ(addr, 72 * i);
    banks.insert((addr * 2 / 4) % 32);
  }
  EXPECT_EQ(banks, (std::set<std::int64_t>{0, 4, 8, 12, 16, 20, 24, 28}));
}

}  // namespace
}  // namespace axe
