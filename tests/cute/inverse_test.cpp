// right_inverse and left_inverse.
#include <gtest/gtest.h>

#include "axe/core/error.hpp"
#include "axe/cute/layout.hpp"
#include "random_layout.hpp"
#include "support/test_support.hpp"

namespace axe::cute {
namespace {

Layout L(std::string_view s) {
  return parse_layout(s);
}

TEST(RightInverse, Examples) {
  EXPECT_EQ(right_inverse(L("(2,(2,2)):(4,(2,1))")), L("(2,2,2):(4,2,1)"));
  EXPECT_EQ(right_inverse(L("8:1")), L("8:1"));
  EXPECT_EQ(right_inverse(L("(4,2):(2,1)")), L("(2,4):(4,1)"));
  EXPECT_EQ(right_inverse(L("4:2")), L("1:0"));  // nothing maps to 1
  // Repeated strides: C++ sorts the strides and follows the chain, giving the larger 12:1.
  EXPECT_EQ(right_inverse(L("(3,4,(3,4)):(1,3,(1,3))")), L("12:1"));
  EXPECT_EQ(right_inverse(L("4:-1")), L("1:0"));  // negative strides are not followed
  EXPECT_EQ(right_inverse(L("(2,3):(3,1)")), L("(3,2):(2,1)"));
}

TEST(LeftInverse, Examples) {
  EXPECT_EQ(left_inverse(L("8:1")), L("8:1"));
  EXPECT_EQ(left_inverse(L("8:2")), L("(2,8):(0,1)"));
  EXPECT_EQ(left_inverse(L("(4,2):(2,1)")), L("(2,4):(4,1)"));
  EXPECT_EQ(left_inverse(L("(2,2):(0,1)")), L("2:2"));
  try {
    left_inverse(L("(12,(4,8)):(59,(13,1))"));
    ADD_FAILURE() << "expected the divisibility condition";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("Left inverse divisibility"), std::string::npos);
  }
  EXPECT_THROW(left_inverse(L("4:-1")), Error);  // C++ would build the extent -1
}

// @post L(R(i)) == i for i < size(R); for a compact layout R has the full size and is also a
// left inverse.
TEST(RightInverse, IsARightInverse) {
  auto rng = axe::test::make_rng(601);
  for (int t = 0; t < 3000; ++t) {
    auto kind = testing::random_kind(rng);
    Layout l = testing::random_layout(rng, kind);
    Layout r = right_inverse(l);
    SCOPED_TRACE(to_string(l) + " -> " + to_string(r));
    for (std::int64_t i = 0; i < size(r); ++i) ASSERT_EQ(l(r(i)), i) << i;
    if (kind == testing::StrideKind::kColMajor || kind == testing::StrideKind::kPermuted) {
      ASSERT_EQ(size(r), size(l));
      for (std::int64_t i = 0; i < size(l); ++i) ASSERT_EQ(r(l(i)), i) << i;
    }
  }
}

// @post R(L(i)) == i for injective L; L(R(L(i))) == L(i) when L is injective up to stride-0
// modes (filter(L) injective). For other non-injective layouts C++'s algorithm (which we follow)
// gives no such guarantee: (6,4,5):(23,23,1) yields (23,4):(24,6).
TEST(LeftInverse, IsALeftInverse) {
  auto rng = axe::test::make_rng(602);
  int injective = 0;
  for (int t = 0; t < 3000; ++t) {
    Layout l = testing::random_layout(rng, testing::random_kind(rng));
    Layout r;
    try {
      r = left_inverse(l);
    } catch (const Error& e) {
      ASSERT_NE(std::string(e.what()).find("divisibility"), std::string::npos) << e.what();
      continue;
    }
    SCOPED_TRACE(to_string(l) + " -> " + to_string(r));
    bool inj = testing::is_injective(l);
    injective += inj;
    if (!testing::is_injective(filter(l))) continue;
    for (std::int64_t i = 0; i < size(l); ++i) {
      ASSERT_EQ(l(r(l(i))), l(i)) << i;
      if (inj) {
        ASSERT_EQ(r(l(i)), i) << i;
      }
    }
  }
  EXPECT_GT(injective, 1000);
}

}  // namespace
}  // namespace axe::cute
