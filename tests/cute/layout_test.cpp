// Layout construction, evaluation, size/cosize/rank/depth, modes and make_layout.
#include "axe/cute/layout.hpp"

#include <gtest/gtest.h>

#include "axe/core/error.hpp"
#include "random_layout.hpp"
#include "support/test_support.hpp"

namespace axe::cute {
namespace {

Layout L(std::string_view s) {
  return parse_layout(s);
}
IntTuple T(std::string_view s) {
  return parse_int_tuple(s);
}

TEST(Layout, EvaluatesColexicographically) {
  Layout l = L("(2,(2,2)):(1,(2,4))");
  for (std::int64_t i = 0; i < 8; ++i) EXPECT_EQ(l(i), i);
  Layout r = L("(2,3):(3,1)");  // row-major 2x3
  std::vector<std::int64_t> want{0, 3, 1, 4, 2, 5};
  for (std::int64_t i = 0; i < 6; ++i) EXPECT_EQ(r(i), want[i]);
  EXPECT_EQ(r(T("(1,2)")), 5);
  EXPECT_EQ(l(T("(1,2)")), 5);      // per-mode 1-D
  EXPECT_EQ(l(T("(1,(0,1))")), 5);  // natural
}

TEST(Layout, LastModeAbsorbsExcess) {
  Layout l = L("(2,2):(1,10)");
  EXPECT_EQ(l(5), 1 + 2 * 10);
  EXPECT_EQ(L("4:3")(9), 27);
}

TEST(Layout, SizeCosizeRankDepth) {
  Layout l = L("((2,3),4):((1,2),6)");
  EXPECT_EQ(size(l), 24);
  EXPECT_EQ(cosize(l), 24);
  EXPECT_EQ(rank(l), 2u);
  EXPECT_EQ(depth(l), 2);
  EXPECT_EQ(cosize(L("(4,2):(2,1)")), 8);
  EXPECT_EQ(cosize(L("(4,3):(0,5)")), 11);
  EXPECT_EQ(cosize(L("8:-1")), 8);  // C++: 1 + (8-1)*|-1|
  EXPECT_EQ(cosize(L("(2,0):(1,1)")), 0);
  EXPECT_EQ(rank(L("4:1")), 1u);
  EXPECT_EQ(depth(L("4:1")), 0);
  EXPECT_EQ(depth(L("(4):(1)")), 1);
}

TEST(Layout, ModesAreSublayouts) {
  Layout l = L("((2,3),4):((1,2),6)");
  EXPECT_EQ(l.mode(0), L("(2,3):(1,2)"));
  EXPECT_EQ(l.mode(1), L("4:6"));
  EXPECT_EQ(L("4:1").mode(0), L("4:1"));
  EXPECT_THROW(l.mode(2), Error);
}

TEST(Layout, MakeLayoutIsCompactColumnMajor) {
  EXPECT_EQ(make_layout(T("(2,1,3)")), L("(2,1,3):(1,0,2)"));
  EXPECT_EQ(make_layout(T("4")), L("4:1"));
  EXPECT_EQ(make_layout(T("1")), L("1:0"));
  EXPECT_EQ(make_layout(T("((2,3),4)")), L("((2,3),4):((1,2),6)"));
  EXPECT_EQ(make_layout({L("4:1"), L("(2,3):(4,8)")}), L("(4,(2,3)):(1,(4,8))"));
  EXPECT_EQ(make_layout({L("8:1")}), L("(8):(1)"));
  EXPECT_EQ(Layout(), L("1:0"));
}

TEST(Layout, EqualityIsStructural) {
  EXPECT_EQ(L("(2,2):(1,2)"), L("(2,2):(1,2)"));
  EXPECT_NE(L("(2,2):(1,2)"), L("4:1"));  // same function, different layout
  EXPECT_NE(L("4:1"), L("(4):(1)"));
  EXPECT_EQ(std::hash<Layout>{}(L("(2,2):(1,2)")), std::hash<Layout>{}(L("(2,2):(1,2)")));
}

TEST(Layout, RejectsInvalidConstruction) {
  EXPECT_THROW(Layout(T("(2,3)"), T("(1,2,3)")), Error);
  EXPECT_THROW(Layout(T("(2,3)"), T("1")), Error);
  EXPECT_THROW(Layout(T("((2,3),4)"), T("(1,2)")), Error);
  EXPECT_THROW(Layout(T("(2,-3)"), T("(1,2)")), Error);
  EXPECT_THROW(Layout(parse_coord("(2,_)"), T("(1,2)")), Error);
  EXPECT_NO_THROW(Layout(T("(2,0)"), T("(1,2)")));  // a zero extent is an empty layout
  try {
    Layout(T("(2,3)"), T("(1,2,3)"));
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("not congruent"), std::string::npos) << e.what();
  }
}

TEST(Layout, RejectsOutOfRangeCoordinates) {
  Layout l = L("(2,(2,2)):(1,(2,4))");
  EXPECT_THROW(l(-1), Error);
  EXPECT_THROW(l(T("(2,0)")), Error);  // mode 0 has extent 2
  EXPECT_THROW(l(T("(0,4)")), Error);  // mode 1 has size 4
  EXPECT_THROW(l(T("(0,(0,2))")), Error);
  EXPECT_THROW(l(T("(0,1,1)")), Error);  // wrong rank
  EXPECT_THROW(l(parse_coord("(0,_)")), Error);
  EXPECT_THROW(L("(0,2):(1,1)")(1), Error);  // splitting an index over a zero-size mode
}

TEST(Layout, OverflowIsAnError) {
  EXPECT_THROW(Layout(T("(4294967296,4294967296)"), T("(1,0)")), Error);  // size
  Layout big = L("(2,2305843009213693952):(4611686018427387904,4)");      // size 2^62 fits
  EXPECT_EQ(size(big), 4611686018427387904LL);
  EXPECT_THROW(cosize(big), Error);
  EXPECT_THROW(big(T("(1,2305843009213693951)")), Error);  // offset
  EXPECT_THROW(L("2:9223372036854775807")(5), Error);
}

// Property: L(i) == crd2idx(idx2crd(i, shape), shape, stride) for every i, i.e. the 1-D index,
// the natural coordinate and the per-mode index all name the same element.
TEST(Layout, CoordinateFormsAgree_BruteForce) {
  auto rng = axe::test::make_rng(21);
  for (int t = 0; t < 400; ++t) {
    Layout l = testing::random_layout(rng, testing::random_kind(rng), 3, 512);
    for (std::int64_t i = 0; i < size(l); ++i) {
      IntTuple crd = idx2crd(i, l.shape());
      ASSERT_EQ(l(crd), l(i)) << to_string(l) << " at " << i;
    }
    ASSERT_EQ(parse_layout(to_string(l)), l);
  }
}

}  // namespace
}  // namespace axe::cute
