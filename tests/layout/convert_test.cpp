// CuTe <-> Axe conversions under both index orders.
#include <gtest/gtest.h>

#include "axe/layout/convert.hpp"
#include "layout/tile_laws.hpp"
#include "support/test_support.hpp"

namespace axe {
namespace {

using test::L;

std::int64_t axe_at(const AxeLayout& l, std::int64_t x, Axis a = Axis()) {
  return l.forward_first(x)[a];
}

TEST(Convert, RowMajorExample) {
  cute::Layout c = cute::parse_layout("(8,16):(16,1)");
  EXPECT_EQ(from_cute(c, IndexOrder::Coordinate), L("S[(8,16):(16,1)]"));
  EXPECT_EQ(from_cute(c, IndexOrder::Linear), L("S[(16,8):(1,16)]"));
  EXPECT_EQ(to_cute(L("S[(8,16):(16,1)]"), IndexOrder::Coordinate), c);
  EXPECT_EQ(to_cute(L("S[(16,8):(1,16)]"), IndexOrder::Linear), c);
}

TEST(Convert, NestedModesAreReversedInsideEachMode) {
  cute::Layout c = cute::parse_layout("((2,3),4):((1,2),6)");
  AxeLayout a = from_cute(c, IndexOrder::Coordinate, Axis("lane"));
  EXPECT_EQ(a, L("S[(3,2,4):(2@lane,1@lane,6@lane)]"));
  // Mode 0 has 1-D index i in [0,6): CuTe (i0 + 2*i1) -> i0*1 + i1*2.
  for (std::int64_t i = 0; i < 6; ++i) {
    for (std::int64_t j = 0; j < 4; ++j) {
      std::int64_t coord[] = {i, j}, shape[] = {6, 4};
      EXPECT_EQ(a.forward(coord, shape)[0].coord[Axis("lane")],
                c(cute::IntTuple::tuple({cute::IntTuple(i), cute::IntTuple(j)})));
    }
  }
  std::int64_t shape[] = {6, 4};
  EXPECT_EQ(to_cute(from_cute(c, IndexOrder::Coordinate), shape), c);
  EXPECT_EQ(from_cute(c, IndexOrder::Linear), L("S[(4,3,2):(6,2,1)]"));
}

TEST(Convert, NoCounterpartIsAnError) {
  for (const char* s : {"S[4:1] + R[2:1@gpu]", "S[4:1] + P[2:1@gpu]", "S[4:1] + 3",
                        "S[(2,4):(1@gpu,1)]"}) {
    try {
      to_cute(L(s), IndexOrder::Linear);
      ADD_FAILURE() << s;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("no CuTe counterpart"), std::string::npos) << e.what();
    }
  }
  // One axis other than m is fine; stride-0 iters belong to no axis.
  EXPECT_EQ(to_cute(L("S[(2,4):(0@gpu,1@lane)]"), IndexOrder::Linear),
            cute::parse_layout("(4,2):(1,0)"));
  std::int64_t bad[] = {3, 2};
  EXPECT_THROW(to_cute(L("S[(2,3):(1@x,1@x)]"), bad), Error);  // does not group, can't merge
  EXPECT_THROW(from_cute(cute::parse_layout("(2,0):(1,2)"), IndexOrder::Linear), Error);
}

cute::IntTuple random_tuple(std::mt19937_64& rng, int depth, std::vector<std::int64_t>& leaves_out,
                            bool stride) {
  if (depth == 0 || test::pick(rng, 0, 2) == 0) {
    std::int64_t v = stride ? test::pick(rng, -5, 12) : test::pick(rng, 1, 5);
    leaves_out.push_back(v);
    return cute::IntTuple(v);
  }
  std::vector<cute::IntTuple> e;
  for (int n = static_cast<int>(test::pick(rng, 1, 3)); n-- > 0;) {
    e.push_back(random_tuple(rng, depth - 1, leaves_out, stride));
  }
  return cute::IntTuple::tuple(std::move(e));
}

// A random stride congruent to `shape`.
cute::IntTuple refill(const cute::IntTuple& shape, std::mt19937_64& rng) {
  if (shape.is_int()) return cute::IntTuple(test::pick(rng, -5, 12));
  std::vector<cute::IntTuple> e;
  for (const auto& s : shape.elems()) e.push_back(refill(s, rng));
  return cute::IntTuple::tuple(std::move(e));
}

cute::Layout random_cute(std::mt19937_64& rng) {
  std::vector<std::int64_t> leaves;
  cute::IntTuple shape = random_tuple(rng, 2, leaves, false);
  return cute::Layout(shape, refill(shape, rng));
}

TEST(Convert, LinearOrderKeepsTheOneDimensionalMap) {
  auto rng = test::make_rng(1201);
  for (int i = 0; i < 2000; ++i) {
    cute::Layout c = random_cute(rng);
    AxeLayout a = from_cute(c, IndexOrder::Linear, Axis("x"));
    ASSERT_EQ(a.size(), cute::size(c));
    for (std::int64_t x = 0; x < a.size(); ++x) {
      ASSERT_EQ(axe_at(a, x, Axis("x")), c(x)) << cute::to_string(c) << " -> " << to_string(a);
    }
    cute::Layout back = to_cute(a, IndexOrder::Linear);
    for (std::int64_t x = 0; x < a.size(); ++x) ASSERT_EQ(back(x), c(x));
  }
}

TEST(Convert, CoordinateOrderKeepsTheCoordinateMap) {
  auto rng = test::make_rng(1202);
  for (int i = 0; i < 2000; ++i) {
    cute::Layout c = random_cute(rng);
    AxeLayout a = from_cute(c, IndexOrder::Coordinate);
    std::vector<std::int64_t> shape;
    std::size_t r = c.shape().is_int() ? 1 : c.shape().elems().size();
    for (std::size_t k = 0; k < r; ++k) shape.push_back(cute::size(c.mode(k)));
    std::int64_t n = cute::size(c);
    for (std::int64_t x = 0; x < n; ++x) {
      auto coord = test::coord_of_index(x, shape);
      std::vector<cute::IntTuple> ct;
      for (auto v : coord) ct.emplace_back(v);
      std::int64_t want = r == 1 && c.shape().is_int() ? c(coord[0]) : c(cute::IntTuple::tuple(ct));
      ASSERT_EQ(a.forward(coord, shape)[0].coord[Axis()], want) << cute::to_string(c);
    }
    // Back with the logical shape: the same coordinate map.
    cute::Layout back = to_cute(a, shape);
    for (std::int64_t x = 0; x < n; ++x) {
      auto coord = test::coord_of_index(x, shape);
      std::vector<cute::IntTuple> ct;
      for (auto v : coord) ct.emplace_back(v);
      cute::IntTuple arg = back.shape().is_int() ? cute::IntTuple(coord[0]) : cute::IntTuple::tuple(ct);
      ASSERT_EQ(back(arg), a.forward_first(x)[Axis()]) << cute::to_string(back);
    }
    // Without a shape every iter is a mode: the map of D's own coordinates.
    cute::Layout flat = to_cute(a, IndexOrder::Coordinate);
    ASSERT_EQ(from_cute(flat, IndexOrder::Coordinate), a);
  }
}

}  // namespace
}  // namespace axe
