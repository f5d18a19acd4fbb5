#include "axe/cute/int_tuple.hpp"

#include <gtest/gtest.h>

#include "axe/core/error.hpp"
#include "random_layout.hpp"
#include "support/test_support.hpp"

namespace axe::cute {
namespace {

IntTuple T(std::string_view s) {
  return parse_int_tuple(s);
}

TEST(IntTuple, LeafAndTupleAreDistinct) {
  IntTuple four = 4;
  IntTuple wrapped = IntTuple::tuple({4});
  EXPECT_TRUE(four.is_int());
  EXPECT_EQ(four.value(), 4);
  EXPECT_EQ(four.rank(), 1u);
  EXPECT_EQ(four[0], four);  // an int's mode 0 is itself
  EXPECT_FALSE(wrapped.is_int());
  EXPECT_EQ(wrapped.rank(), 1u);
  EXPECT_NE(four, wrapped);
  EXPECT_EQ(to_string(wrapped), "(4)");
  EXPECT_EQ(to_string(IntTuple::tuple({})), "()");
  EXPECT_THROW((void)wrapped.value(), Error);
  EXPECT_THROW((void)four.elems(), Error);
  EXPECT_THROW((void)four[1], Error);
}

TEST(IntTuple, ProductDepthRank) {
  EXPECT_EQ(product(T("((2,3),4)")), 24);
  EXPECT_EQ(product(T("()")), 1);
  EXPECT_EQ(product(T("(0,5)")), 0);
  EXPECT_EQ(depth(T("4")), 0);
  EXPECT_EQ(depth(T("(4)")), 1);
  EXPECT_EQ(depth(T("((2,3),4)")), 2);
  EXPECT_EQ(depth(T("(1,(2,(3)))")), 3);
  EXPECT_EQ(T("((2,3),4)").rank(), 2u);
}

TEST(IntTuple, ProductOverflowIsAnError) {
  EXPECT_THROW(product(T("(4294967296,4294967296)")), Error);
  EXPECT_EQ(product(T("(4294967296,2147483647)")), 4294967296LL * 2147483647LL);
}

TEST(IntTuple, CongruentAndCompatible) {
  EXPECT_TRUE(congruent(T("(2,(3,4))"), T("(1,(2,6))")));
  EXPECT_FALSE(congruent(T("4"), T("(4)")));
  EXPECT_FALSE(congruent(T("(2,3)"), T("(2,3,4)")));
  EXPECT_TRUE(compatible(T("24"), T("(4,6)")));
  EXPECT_TRUE(compatible(T("(4,6)"), T("(4,(2,3))")));
  EXPECT_FALSE(compatible(T("(4,6)"), T("24")));
  EXPECT_FALSE(compatible(T("(4,6)"), T("(6,4)")));
}

TEST(IntTuple, FlattenUnwrapProductEach) {
  EXPECT_EQ(flatten(T("((2,3),4)")), T("(2,3,4)"));
  EXPECT_EQ(flatten(T("7")), T("7"));
  EXPECT_EQ(unwrap(T("((4))")), T("4"));
  EXPECT_EQ(unwrap(T("(4,5)")), T("(4,5)"));
  EXPECT_EQ(product_each(T("((2,3),4)")), T("(6,4)"));
}

TEST(IntTuple, CeilDivFollowsCuTe) {
  EXPECT_EQ(ceil_div(T("7"), T("2")), T("4"));
  EXPECT_EQ(ceil_div(T("(6,16)"), T("4")), T("(2,16)"));  // 4 eats the 6 first: ceil(6/4)=2
  EXPECT_EQ(ceil_div(T("(8,6)"), T("(2,4)")), T("(4,2)"));
  EXPECT_EQ(ceil_div(T("(8,6)"), T("(2)")), T("(4,6)"));  // missing modes of b are 1
  EXPECT_EQ(ceil_div(T("24"), T("(2,3)")), T("4"));
  EXPECT_THROW(ceil_div(T("4"), T("0")), Error);
}

TEST(IntTuple, CompactColMajorZeroesUnitModes) {
  EXPECT_EQ(compact_col_major(T("(2,1,(3,4))")), T("(1,0,(2,6))"));
  EXPECT_EQ(compact_col_major(T("4")), T("1"));
  EXPECT_EQ(compact_col_major(T("1")), T("0"));
}

TEST(IntTuple, Idx2crdIsColexicographic) {
  IntTuple shape = T("(2,(2,2))");
  EXPECT_EQ(idx2crd(0, shape), T("(0,(0,0))"));
  EXPECT_EQ(idx2crd(1, shape), T("(1,(0,0))"));
  EXPECT_EQ(idx2crd(2, shape), T("(0,(1,0))"));
  EXPECT_EQ(idx2crd(7, shape), T("(1,(1,1))"));
  // Per-mode 1-D indices: mode 1 index 3 of (2,2) is (1,1).
  EXPECT_EQ(idx2crd(T("(1,3)"), shape), T("(1,(1,1))"));
  EXPECT_EQ(idx2crd(T("(0,2)"), shape), T("(0,(0,1))"));
  EXPECT_THROW(idx2crd(8, shape), Error);
  EXPECT_THROW(idx2crd(-1, shape), Error);
  EXPECT_THROW(idx2crd(T("(1,2,3)"), shape), Error);
}

TEST(IntTuple, Crd2idxAcceptsEveryCoordinateForm) {
  IntTuple shape = T("(2,(2,2))");
  IntTuple stride = T("(1,(2,4))");
  EXPECT_EQ(crd2idx(T("5"), shape, stride), 5);
  EXPECT_EQ(crd2idx(T("(1,2)"), shape, stride), 5);
  EXPECT_EQ(crd2idx(T("(1,(0,1))"), shape, stride), 5);
  // The last mode absorbs the excess of a 1-D index: 9 -> (1, 4); index 4 of the (2,2) mode is
  // (0, 2), the last leaf absorbing, so the offset is 1 + 2*4 = 9.
  EXPECT_EQ(crd2idx(T("9"), shape, stride), 9);
  EXPECT_EQ(crd2idx(T("(1,(0,1))"), shape), 5);
  EXPECT_THROW(crd2idx(T("(1,2,3)"), shape, stride), Error);
  EXPECT_THROW(crd2idx(T("((1,0),2)"), shape, stride), Error);  // tuple against an int mode
  EXPECT_THROW(crd2idx(T("-1"), shape, stride), Error);
  EXPECT_THROW(crd2idx(T("1"), shape, T("(1,2)")), Error);  // not congruent
}

TEST(IntTuple, Crd2idxOverflowIsAnError) {
  EXPECT_THROW(crd2idx(T("(1,1)"), T("(2,2)"), T("(9223372036854775807,1)")), Error);
  EXPECT_THROW(crd2idx(T("3"), T("4"), T("4611686018427387904")), Error);
}

// Brute force: idx2crd and crd2idx are inverse on [0, size) for the compact strides, and a natural
// coordinate, its per-mode 1-D form and its 1-D index all give the same offset.
TEST(IntTuple, Idx2crdInvertsCrd2idx_BruteForce) {
  auto rng = axe::test::make_rng(11);
  for (int t = 0; t < 300; ++t) {
    IntTuple shape = testing::random_shape(rng, 3, 6, 600);
    IntTuple stride = compact_col_major(shape);
    std::int64_t n = product(shape);
    for (std::int64_t i = 0; i < n; ++i) {
      IntTuple crd = idx2crd(i, shape);
      ASSERT_TRUE(congruent(crd, shape)) << to_string(shape);
      ASSERT_EQ(crd2idx(crd, shape), i) << to_string(shape) << " " << to_string(crd);
      ASSERT_EQ(crd2idx(crd, shape, stride), crd2idx(IntTuple(i), shape, stride));
      if (shape.is_tuple()) {
        std::vector<IntTuple> per_mode;
        for (std::size_t m = 0; m < shape.rank(); ++m) {
          per_mode.emplace_back(crd2idx(crd[m], shape[m]));
        }
        IntTuple pm = IntTuple::tuple(per_mode);
        ASSERT_EQ(idx2crd(pm, shape), crd);
        ASSERT_EQ(crd2idx(pm, shape, stride), i);
      }
    }
  }
}

TEST(IntTuple, UnderscoreIsADistinctLeaf) {
  IntTuple c = parse_coord("(1,_,(0,_))");
  EXPECT_TRUE(has_underscore(c));
  EXPECT_TRUE(is_underscore(c[1]));
  EXPECT_FALSE(c[1].is_int());
  EXPECT_FALSE(c[1].is_tuple());
  EXPECT_EQ(to_string(c), "(1,_,(0,_))");
  EXPECT_NE(underscore(), IntTuple(0));
  EXPECT_FALSE(has_underscore(T("(1,2)")));
  EXPECT_THROW(product(c), Error);
}

TEST(IntTuple, HashAgreesWithEquality) {
  std::hash<IntTuple> h;
  EXPECT_EQ(h(T("((2,3),4)")), h(T("((2,3),4)")));
  EXPECT_NE(h(T("4")), h(T("(4)")));
}

}  // namespace
}  // namespace axe::cute
