// coalesce, coalesce by profile, filter.
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
IntTuple T(std::string_view s) {
  return parse_int_tuple(s);
}

// A random layout, sometimes with one negative stride.
Layout random_signed_layout(std::mt19937_64& rng) {
  Layout l = testing::random_layout(rng, testing::random_kind(rng));
  if (testing::uniform(rng, 0, 4) != 0) return l;
  std::vector<std::int64_t> d;
  for (const IntTuple& e : flatten_leaves(l.stride())) d.push_back(e.value());
  d[static_cast<std::size_t>(testing::uniform(rng, 0, static_cast<std::int64_t>(d.size()) - 1))] *=
      -1;
  std::size_t k = 0;
  return Layout(l.shape(), testing::unflatten_like(l.shape(), d, k));
}

TEST(Coalesce, Examples) {
  EXPECT_EQ(coalesce(L("(2,(1,6)):(1,(6,2))")), L("12:1"));
  EXPECT_EQ(coalesce(L("((2,3),4):((1,2),6)")), L("24:1"));
  EXPECT_EQ(coalesce(L("(2,4):(4,1)")), L("(2,4):(4,1)"));
  EXPECT_EQ(coalesce(L("(4,1):(1,0)")), L("4:1"));
  EXPECT_EQ(coalesce(L("(3,1,4):(4,7,1)")), L("(3,4):(4,1)"));
  EXPECT_EQ(coalesce(L("(1,1):(3,5)")), L("1:0"));  // nothing left: 1:0 as in C++
  EXPECT_EQ(coalesce(L("(4):(-1)")), L("4:-1"));
  EXPECT_EQ(coalesce(L("(2,2):(-1,-2)")), L("4:-1"));  // 2*(-1) == -2 merges
}

TEST(Coalesce, ByProfileExamples) {
  EXPECT_EQ(coalesce(L("(2,(1,6)):(1,(6,2))"), T("(1,1)")), L("(2,6):(1,2)"));
  EXPECT_EQ(coalesce(L("(3,(2,3)):(3,(12,1))"), T("(1,(1,1))")), L("(3,(2,3)):(3,(12,1))"));
  // Modes beyond the profile are kept untouched.
  EXPECT_EQ(coalesce(L("((2,4),(3,5)):((1,2),(8,24))"), T("(1)")), L("(8,(3,5)):(1,(8,24))"));
  // An integer profile coalesces the whole layout.
  EXPECT_EQ(coalesce(L("((2,4),(3,5)):((1,2),(8,24))"), T("7")), L("120:1"));
  EXPECT_THROW(coalesce(L("(2,3):(1,2)"), T("(1,1,1)")), Error);
}

TEST(Filter, Examples) {
  EXPECT_EQ(filter(L("(2,4,3):(1,0,2)")), L("6:1"));
  EXPECT_EQ(filter(L("(2,4,3):(1,0,4)")), L("(2,3):(1,4)"));
  EXPECT_EQ(filter(L("(1,4):(5,0)")), L("1:0"));
  EXPECT_EQ(filter(L("(2,4):(1,2)")), L("8:1"));
}

// @post size(R) == size(L), depth(R) <= 1, R(i) == L(i) for i < size(L); coalesce is idempotent.
TEST(Coalesce, PreservesFunction) {
  auto rng = axe::test::make_rng(101);
  for (int t = 0; t < 3000; ++t) {
    Layout l = random_signed_layout(rng);
    Layout c = coalesce(l);
    ASSERT_EQ(size(c), size(l)) << to_string(l);
    ASSERT_LE(depth(c), 1) << to_string(l);
    for (std::int64_t i = 0; i < size(l); ++i) ASSERT_EQ(c(i), l(i)) << to_string(l) << " " << i;
    ASSERT_EQ(coalesce(c), c) << to_string(l);
    // No two adjacent modes of the result could still be merged, and none has extent 1.
    if (c.shape().is_tuple()) {
      for (std::size_t k = 0; k < rank(c); ++k) ASSERT_NE(c.shape()[k].value(), 1);
      for (std::size_t k = 0; k + 1 < rank(c); ++k) {
        ASSERT_NE(c.shape()[k].value() * c.stride()[k].value(), c.stride()[k + 1].value())
            << to_string(c);
      }
    }
  }
}

// By-mode coalesce preserves the function and keeps the profile's structure at the top.
TEST(Coalesce, ByProfilePreservesFunction) {
  auto rng = axe::test::make_rng(102);
  for (int t = 0; t < 2000; ++t) {
    Layout l = random_signed_layout(rng);
    if (!l.shape().is_tuple()) continue;
    std::size_t r =
        static_cast<std::size_t>(testing::uniform(rng, 1, static_cast<std::int64_t>(rank(l))));
    std::vector<IntTuple> prof(r, IntTuple(1));
    Layout c = coalesce(l, IntTuple::tuple(prof));
    ASSERT_EQ(rank(c), rank(l));
    for (std::int64_t i = 0; i < size(l); ++i) ASSERT_EQ(c(i), l(i)) << to_string(l);
    for (std::size_t k = 0; k < r; ++k) ASSERT_EQ(size(c.mode(k)), size(l.mode(k)));
  }
}

// filter keeps the image (as a set) and removes every stride-0 and extent-1 mode.
TEST(Filter, KeepsImageDropsBroadcast) {
  auto rng = axe::test::make_rng(103);
  for (int t = 0; t < 2000; ++t) {
    Layout l = testing::random_layout(rng, testing::random_kind(rng));
    Layout f = filter(l);
    ASSERT_EQ(testing::image(f), testing::image(l)) << to_string(l);
    if (f == Layout(1, 0)) continue;
    for (const IntTuple& d : flatten_leaves(f.stride())) ASSERT_NE(d.value(), 0) << to_string(l);
    for (const IntTuple& s : flatten_leaves(f.shape())) ASSERT_NE(s.value(), 1) << to_string(l);
  }
}

}  // namespace
}  // namespace axe::cute
