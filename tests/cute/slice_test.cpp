// slice and slice_offset.
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
IntTuple C(std::string_view s) {
  return parse_coord(s);
}

TEST(Slice, Examples) {
  EXPECT_EQ(slice(C("(_,1)"), L("(2,4):(1,2)")), L("(2):(1)"));
  EXPECT_EQ(slice_offset(C("(_,1)"), L("(2,4):(1,2)")), 2);
  EXPECT_EQ(slice(C("(1,_)"), L("(2,(2,2)):(4,(2,1))")), L("((2,2)):((2,1))"));
  EXPECT_EQ(slice_offset(C("(1,_)"), L("(2,(2,2)):(4,(2,1))")), 4);
  // Nested "_" are flattened into the result.
  EXPECT_EQ(slice(C("(_,(1,_))"), L("(3,(2,4)):(1,(3,6))")), L("(3,4):(1,6)"));
  EXPECT_EQ(slice_offset(C("(_,(1,_))"), L("(3,(2,4)):(1,(3,6))")), 3);
  // An integer coordinate for a nested mode is a 1-D index into it: 5 of (2,4) is (1,2).
  EXPECT_EQ(slice(C("(_,5)"), L("(3,(2,4)):(1,(3,6))")), L("(3):(1)"));
  EXPECT_EQ(slice_offset(C("(_,5)"), L("(3,(2,4)):(1,(3,6))")), 3 + 12);
  EXPECT_EQ(slice(C("_"), L("(2,4):(1,2)")), L("(2,4):(1,2)"));
  EXPECT_EQ(slice_offset(C("_"), L("(2,4):(1,2)")), 0);
  EXPECT_EQ(slice(C("(_,_)"), L("((2,3),(5,7)):((1,2),(6,30))")),
            L("((2,3),(5,7)):((1,2),(6,30))"));
  EXPECT_EQ(slice_offset(C("(1,3)"), L("(2,4):(1,2)")), 7);
}

TEST(Slice, RejectsBadCoordinates) {
  EXPECT_THROW(slice(C("(_,4)"), L("(2,4):(1,2)")), Error);  // out of range
  EXPECT_THROW(slice(C("(_,-1)"), L("(2,4):(1,2)")), Error);
  EXPECT_THROW(slice(C("(_,1,1)"), L("(2,4):(1,2)")), Error);  // rank mismatch
  EXPECT_THROW(slice(C("((_,1),1)"), L("(2,4):(1,2)")), Error);
  EXPECT_THROW(slice(C("3"), L("(2,4):(1,2)")), Error);  // no "_"
  EXPECT_THROW(slice_offset(C("(_,9)"), L("(2,4):(1,2)")), Error);
}

// A random coordinate with "_" for the shape `s`: each mode is "_", a 1-D index, or (for a tuple)
// recursively such a coordinate.
IntTuple random_coord(std::mt19937_64& rng, const IntTuple& s, int level) {
  std::int64_t pick = testing::uniform(rng, 0, 2);
  if (pick == 0 || (level > 0 && pick == 1 && !s.is_tuple())) return underscore();
  if (pick == 2 && s.is_tuple()) {
    std::vector<IntTuple> e;
    for (const IntTuple& m : s.elems()) e.push_back(random_coord(rng, m, level + 1));
    return IntTuple::tuple(std::move(e));
  }
  return testing::uniform(rng, 0, product(s) - 1);
}

// Replaces the k-th "_" of `coord` by subs[k].
IntTuple fill(const IntTuple& coord, const IntTuple& subs, std::size_t& k) {
  if (is_underscore(coord)) return subs[k++];
  if (!coord.is_tuple()) return coord;
  std::vector<IntTuple> e;
  for (const IntTuple& c : coord.elems()) e.push_back(fill(c, subs, k));
  return IntTuple::tuple(std::move(e));
}

// Brute force: for every coordinate c of the slice S, L(coord with c in place of the "_") ==
// offset + S(c).
TEST(Slice, SliceTimesOffsetReconstructsLayout_BruteForce) {
  auto rng = axe::test::make_rng(701);
  for (int t = 0; t < 1500; ++t) {
    Layout l = testing::random_layout(rng, testing::random_kind(rng), 3, 512);
    if (!l.shape().is_tuple()) continue;
    std::vector<IntTuple> top;
    for (const IntTuple& m : l.shape().elems()) top.push_back(random_coord(rng, m, 0));
    IntTuple coord = IntTuple::tuple(top);
    if (!has_underscore(coord)) continue;
    Layout s = slice(coord, l);
    std::int64_t off = slice_offset(coord, l);
    SCOPED_TRACE(to_string(coord) + " of " + to_string(l) + " = " + to_string(s));
    for (std::int64_t i = 0; i < size(s); ++i) {
      IntTuple sub = idx2crd(i, s.shape());
      std::size_t k = 0;
      IntTuple full = fill(coord, sub, k);
      ASSERT_EQ(l(full), off + s(i)) << to_string(full);
    }
  }
}

}  // namespace
}  // namespace axe::cute
