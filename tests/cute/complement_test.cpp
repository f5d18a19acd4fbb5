// complement(L, cotarget): ordered, disjoint from L, and together with L covering the cotarget.
#include <gtest/gtest.h>

#include <set>

#include "axe/core/error.hpp"
#include "axe/cute/layout.hpp"
#include "random_layout.hpp"
#include "support/test_support.hpp"

namespace axe::cute {
namespace {

Layout L(std::string_view s) {
  return parse_layout(s);
}

// CuTe's test_complement: the post-conditions of complement(a, cotarget).
void test_complement(const Layout& a, std::int64_t cotarget) {
  Layout r = complement(a, cotarget);
  SCOPED_TRACE("complement(" + to_string(a) + ", " + std::to_string(cotarget) +
               ") = " + to_string(r));
  ASSERT_GT(size(r), 0);
  for (const IntTuple& e : flatten_leaves(r.shape())) ASSERT_NE(e.value(), 0);
  ASSERT_GE(cosize(make_layout({a, r})), cotarget);
  std::set<std::int64_t> image = testing::image(a);
  for (std::int64_t i = 1; i < size(r); ++i) {
    ASSERT_LT(r(i - 1), r(i)) << "ordered at " << i;
    ASSERT_EQ(image.count(r(i)), 0u) << "disjoint at " << i;
  }
}

TEST(Complement, Examples) {
  EXPECT_EQ(complement(L("4:2"), 24), L("(2,3):(1,8)"));
  EXPECT_EQ(complement(L("(2,2):(1,6)"), 24), L("(3,2):(2,12)"));
  EXPECT_EQ(complement(L("4:1"), 32), L("8:4"));
  EXPECT_EQ(complement(L("(4,4):(1,0)"), 32), L("8:4"));  // stride-0 modes are filtered first
  EXPECT_EQ(complement(L("1:0"), 5), L("5:1"));
  EXPECT_EQ(complement(L("1:0"), 1), L("1:0"));
  // The gap 2..5 between the modes is filled by 3:2; 24 is already covered by (2,4):(1,6).
  EXPECT_EQ(complement(L("(2,4):(1,6)"), 24), L("3:2"));
}

TEST(Complement, DefaultCotargetIsCosizeOfFilter) {
  EXPECT_EQ(complement(L("4:2")), L("2:1"));          // cosize 7: only the gaps
  EXPECT_EQ(complement(L("(2,2):(1,6)")), L("3:2"));  // cosize 8
  EXPECT_EQ(complement(L("(3,4):(1,3)")), L("1:0"));  // nothing missing
  EXPECT_EQ(complement(L("(2,3):(0,2)")), complement(L("3:2"), 5));
}

TEST(Complement, ShapeCotargetCoversEachModeCeiling) {
  // C++'s logical_divide uses complement(tiler, shape(coalesce(A))): 4 over (6,16) leaves 2*16.
  EXPECT_EQ(complement(L("4:1"), parse_int_tuple("(6,16)")), L("32:4"));
  EXPECT_EQ(complement(L("4:1"), parse_int_tuple("96")), L("24:4"));
}

TEST(Complement, RejectsNonInjectiveAndNegative) {
  try {
    complement(L("(2,2):(1,1)"), 8);
    ADD_FAILURE() << "expected rejection";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("Non-injective"), std::string::npos) << e.what();
  }
  EXPECT_THROW(complement(L("(4,3):(3,2)"), 24), Error);  // 2 / 3 == 0 in C++: non-injective
  EXPECT_THROW(complement(L("4:-1"), 8), Error);
  EXPECT_THROW(complement(L("4:1"), -1), Error);
  EXPECT_THROW(complement(L("4:4611686018427387904"), 8), Error);  // overflow of 4 * 2^62
}

// Property over random injective layouts (compact, permuted, gapped, broadcast) and cotargets.
TEST(Complement, IsOrderedDisjointAndCovers) {
  auto rng = axe::test::make_rng(301);
  for (int t = 0; t < 3000; ++t) {
    auto kind = static_cast<testing::StrideKind>(testing::uniform(rng, 0, 3));
    Layout a = testing::random_layout(rng, kind, 3, 512);
    std::int64_t cotarget = testing::uniform(rng, 1, 2 * cosize(a) + 8);
    ASSERT_NO_FATAL_FAILURE(test_complement(a, cotarget));
    ASSERT_NO_FATAL_FAILURE(test_complement(a, cosize(filter(a))));
  }
}

// For a compact layout L of size n, (L, complement(L, k*n)) is a bijection onto [0, k*n).
TEST(Complement, CompletesCompactLayoutsToBijections_BruteForce) {
  auto rng = axe::test::make_rng(302);
  for (int t = 0; t < 1000; ++t) {
    auto kind = testing::uniform(rng, 0, 1) ? testing::StrideKind::kPermuted
                                            : testing::StrideKind::kColMajor;
    Layout a = testing::random_layout(rng, kind, 3, 256);
    std::int64_t k = testing::uniform(rng, 1, 5);
    Layout full = make_layout({a, complement(a, k * size(a))});
    ASSERT_EQ(size(full), k * size(a)) << to_string(full);
    std::set<std::int64_t> img = testing::image(full);
    ASSERT_EQ(static_cast<std::int64_t>(img.size()), k * size(a)) << to_string(full);
    ASSERT_EQ(*img.rbegin(), k * size(a) - 1) << to_string(full);
  }
}

}  // namespace
}  // namespace axe::cute
