// Validity: distinct (element, partial term) pairs on distinct slots; coordinates in extents.
#include <gtest/gtest.h>

#include "layout/layout_test_util.hpp"
#include "support/test_support.hpp"

namespace axe {
namespace {

using test::L;

using Extents = std::vector<std::pair<Axis, std::int64_t>>;

TEST(Validity, PaperLayoutsAreValidOnTheirMesh) {
  Extents mesh{{Axis("gpu"), 4}};
  EXPECT_EQ(check_valid(L("S[(2,32,2,64):(1@gpu,64,2@gpu,1)]"), mesh), "");
  EXPECT_TRUE(is_valid(L("S[(2,32,128):(1@gpu,128,1)] + R[2:2@gpu]"), mesh));
  EXPECT_TRUE(is_valid(L("S[(64,128):(128,1)] + P[4:1@gpu]"), mesh));
  EXPECT_TRUE(is_valid(L("S[(8,2,4,2):(4@lane,1@warp,1@lane,1)] + R[2:4@warp] + 5@warp"),
                       Extents{{Axis("lane"), 32}, {Axis("warp"), 16}}));
}

TEST(Validity, CoordinatesOutsideExtents) {
  std::string msg = check_valid(L("S[(2,32,2,64):(1@gpu,64,2@gpu,1)]"), Extents{{Axis("gpu"), 3}});
  EXPECT_NE(msg.find("[0, 3]"), std::string::npos) << msg;
  EXPECT_NE(msg.find("gpu"), std::string::npos) << msg;
  EXPECT_FALSE(is_valid(L("S[4:1@gpu] + -1@gpu"), Extents{{Axis("gpu"), 4}}));
  EXPECT_FALSE(is_valid(L("S[4:-1@gpu]"), Extents{{Axis("gpu"), 4}}));
  EXPECT_TRUE(is_valid(L("S[4:-1@gpu] + 3@gpu"), Extents{{Axis("gpu"), 4}}));
  EXPECT_THROW(check_valid(L("S[4:1]"), Extents{{Axis("gpu"), 0}}), Error);
}

TEST(Validity, ClashesAreNamed) {
  // Element 0's replica 1 and element 1's replica 0 share m = 1.
  std::string msg = check_valid(L("S[2:1] + R[2:1]"));
  EXPECT_NE(msg.find("both land on"), std::string::npos) << msg;
  EXPECT_FALSE(is_valid(L("S[4:0]")));
  EXPECT_FALSE(is_valid(L("S[4:1] + P[2:2]")));       // term 1 of 0 on 2, term 0 of 2 on 2
  EXPECT_TRUE(is_valid(L("S[4:1] + P[2:4]")));
  EXPECT_TRUE(is_valid(L("S[4:1] + R[3:0@gpu]")));   // copies of one element on one slot
  EXPECT_TRUE(is_valid(L("S[4:1] + R[(2,2):(1@gpu,1@gpu)]")));  // ditto, via two replica digits
  EXPECT_FALSE(is_valid(L("S[(2,2):(1@gpu,1@gpu)]")));
}

// Oracle: enumerate every placement and look for a slot with two (element, term) pairs.
TEST(Validity, MatchesBruteForceEnumeration) {
  auto rng = test::make_rng(1101);
  test::RandomOptions o;
  o.max_d = 3;
  int valid = 0, invalid = 0;
  for (int i = 0; i < 4000; ++i) {
    AxeLayout l = test::random_layout(rng, o);
    Extents ext;
    if (test::pick(rng, 0, 1)) ext.emplace_back(Axis("gpu"), test::pick(rng, 1, 40));
    std::map<test::Coord, std::set<std::pair<std::int64_t, std::int64_t>>> slots;
    bool inside = true;
    for (std::int64_t x = 0; x < l.size(); ++x) {
      for (const Placement& p : l.forward(x)) {
        slots[test::to_map(p.coord)].insert({x, p.term});
        for (const auto& [a, n] : ext) inside = inside && p.coord[a] >= 0 && p.coord[a] < n;
      }
    }
    bool want = inside;
    for (const auto& [c, pairs] : slots) want = want && pairs.size() == 1;
    std::string msg = check_valid(l, ext);
    ASSERT_EQ(msg.empty(), want) << to_string(l) << ": " << msg;
    (want ? valid : invalid)++;
  }
  EXPECT_GT(valid, 400);
  EXPECT_GT(invalid, 400);
}

}  // namespace
}  // namespace axe
