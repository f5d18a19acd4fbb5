// Placements -> Axe layouts, and local shard queries (torch.chunk rule for uneven dims).
#include <gtest/gtest.h>

#include "axe/core/dtype.hpp"
#include "axe/core/error.hpp"
#include "axe/dist/placement.hpp"

namespace axe {
namespace {

TEST(Placement, DTensorStyleLayouts) {
  Mesh m = parse_mesh("dp=2,tp=2");
  EXPECT_EQ(to_string(shard({64, 128}, m, {Shard(0), Shard(1)}).layout()), "S[(2,32,2,64):(1@dp,64,1@tp,1)]");
  EXPECT_EQ(to_string(shard({64, 128}, m, {Shard(0), Replicate()}).layout()), "S[(2,32,128):(1@dp,128,1)] + R[2:1@tp]");
  auto p = shard({64, 128}, m, {Replicate(), Partial(ReduceOp::Max)});
  EXPECT_EQ(p.layout().reduce_op(), ReduceOp::Max);
  EXPECT_EQ(p.layout().terms(), 2);
  EXPECT_EQ(p.layout().replicas(), 2);
}

TEST(Placement, SeveralAxesOnOneDim) {
  Mesh m = parse_mesh("dp=2,tp=2");
  // DTensor style: mesh order, dp major.
  auto a = shard({8, 4}, m, {Shard(0), Shard(0)});
  EXPECT_EQ(local_shard(a, m.rank_at(std::vector<std::int64_t>{1, 0})).regions[0].begin,
            (std::vector<std::int64_t>{4, 0}));
  // JAX style: tp major.
  auto b = shard({8, 4}, m, {Shard(0, {"tp", "dp"})});
  EXPECT_EQ(local_shard(b, m.rank_at(std::vector<std::int64_t>{1, 0})).regions[0].begin,
            (std::vector<std::int64_t>{2, 0}));
}

TEST(Placement, UnevenFollowsTorchChunk) {
  // torch.chunk(5 rows, 4) -> 2,2,1 and an empty 4th shard.
  Mesh m = parse_mesh("gpu=4");
  auto l = shard({5, 4}, m, {Shard(0)});
  EXPECT_EQ(l.padded_shape(), (std::vector<std::int64_t>{8, 4}));
  EXPECT_EQ(l.local_elements(), 8);
  std::vector<std::vector<std::int64_t>> shapes{{2, 4}, {2, 4}, {1, 4}, {0, 4}};
  std::vector<std::int64_t> begins{0, 2, 4};
  for (std::int64_t r = 0; r < 4; ++r) {
    LocalShard s = local_shard(l, r);
    EXPECT_EQ(s.shape, shapes[static_cast<std::size_t>(r)]) << r;
    if (r < 3) {
      ASSERT_EQ(s.regions.size(), 1u);
      EXPECT_EQ(s.regions[0].begin[0], begins[static_cast<std::size_t>(r)]);
      EXPECT_EQ(s.regions[0].elements(), shapes[static_cast<std::size_t>(r)][0] * 4);
    } else {
      EXPECT_TRUE(s.regions.empty());
    }
    EXPECT_EQ(to_string(s.storage), "S[(2,4):(4,1)]");
  }
  // 7 over 3 -> 3,3,1 ; 6 over 4 -> 2,2,2,0.
  auto l7 = shard({7}, parse_mesh("g=3"), {Shard(0)});
  EXPECT_EQ(local_shard(l7, 2).shape, (std::vector<std::int64_t>{1}));
  auto l6 = shard({6}, parse_mesh("g=4"), {Shard(0)});
  EXPECT_EQ(local_shard(l6, 2).shape, (std::vector<std::int64_t>{2}));
  EXPECT_EQ(local_shard(l6, 3).shape, (std::vector<std::int64_t>{0}));
}

TEST(Placement, LocalShardOfInterleavedLayout) {
  // Cyclic rows: row i on gpu i % 2, at local row i / 2.
  Mesh m = parse_mesh("gpu=2");
  DistLayout l({8, 3}, parse_axe_layout("S[(4,2,3):(3,1@gpu,1)]"), m);
  LocalShard s = local_shard(l, 1);
  ASSERT_EQ(s.regions.size(), 1u);
  EXPECT_EQ(s.regions[0].begin, (std::vector<std::int64_t>{1, 0}));
  EXPECT_EQ(s.regions[0].elements(), 12);
  EXPECT_EQ(s.shape, (std::vector<std::int64_t>{4, 3}));
  EXPECT_EQ(s.regions[0].modes[0].step, 2);
}

TEST(Placement, ParseAndPrint) {
  auto ps = parse_placements("S(0),R,P(max),P,S(1,{dp,tp})");
  ASSERT_EQ(ps.size(), 5u);
  EXPECT_EQ(ps[0], Shard(0));
  EXPECT_EQ(ps[1], Replicate());
  EXPECT_EQ(ps[2], Partial(ReduceOp::Max));
  EXPECT_EQ(ps[3], Partial());
  EXPECT_EQ(ps[4], Shard(1, {"dp", "tp"}));
  for (const auto& p : ps) EXPECT_EQ(parse_placements(to_string(p))[0], p);
  EXPECT_THROW(parse_placements("S(x)"), ParseError);
  EXPECT_THROW(parse_placements("Q"), ParseError);
  EXPECT_THROW(parse_placements("P(foo)"), ParseError);
}

TEST(Placement, BadInputNamesTheProblem) {
  Mesh m = parse_mesh("dp=2,tp=2");
  auto msg = [](auto&& f) {
    try {
      f();
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(msg([&] { shard({8, 8}, m, {Shard(0)}); }).find("one per axis"), std::string::npos);
  EXPECT_NE(msg([&] { shard({8, 8}, m, {Shard(2), Replicate()}); }).find("dim 2"), std::string::npos);
  EXPECT_NE(msg([&] { shard({8, 8}, m, {Partial(ReduceOp::Max), Partial(ReduceOp::Sum)}); }).find("two different"),
            std::string::npos);
  EXPECT_NE(msg([&] { shard({8, 8}, m, {Shard(0, {"pp"})}); }).find("pp"), std::string::npos);
  // Layout that does not fit the mesh, unknown axis, wrong shape.
  EXPECT_NE(msg([&] { DistLayout({8}, parse_axe_layout("S[(4,2):(1@dp,1)]"), m); }).find("axis 'dp' of size 2"),
            std::string::npos);
  EXPECT_NE(msg([&] { DistLayout({8}, parse_axe_layout("S[(2,4):(1@gpu,1)]"), m); }).find("not an axis of mesh"),
            std::string::npos);
  EXPECT_NE(msg([&] { DistLayout({9}, parse_axe_layout("S[(2,4):(1@dp,1)]"), m); }).find("does not admit"),
            std::string::npos);
  EXPECT_NE(msg([&] { DistLayout({8}, parse_axe_layout("S[(2,4):(1@dp,0)]"), m); }).find("one slot"),
            std::string::npos);
}

TEST(DType, NamesAndSizes) {
  for (auto t : {DType::F32, DType::F16, DType::BF16, DType::F64, DType::I32, DType::I64, DType::U8})
    EXPECT_EQ(parse_dtype(to_string(t)), t);
  EXPECT_EQ(size_of(DType::BF16), 2);
  EXPECT_EQ(size_of(DType::I64), 8);
  EXPECT_THROW(parse_dtype("f8"), Error);
}

}  // namespace
}  // namespace axe
