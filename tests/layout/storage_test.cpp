// storage() (per-owner memory layout) and project() onto axes.
#include <gtest/gtest.h>

#include "layout/layout_test_util.hpp"
#include "support/test_support.hpp"

namespace axe {
namespace {

using test::L;

TEST(Storage, DropsEveryNonMemoryIter) {
  EXPECT_EQ(to_string(storage(L("S[(2,32,2,64):(1@gpu,64,2@gpu,1)]"))), "S[(32,64):(64,1)]");
  EXPECT_EQ(to_string(storage(L("S[(2,32,128):(1@gpu,128,1)] + R[2:2@gpu] + 3@gpu + 5"))),
            "S[(32,128):(128,1)] + 5");
  EXPECT_EQ(to_string(storage(L("S[(8,2,4,2):(4@lane,1@warp,1@lane,1)] + R[2:4@warp] + 5@warp"))),
            "S[2:1]");
  EXPECT_EQ(storage(L("S[4:1@gpu]")).size(), 1);
}

TEST(Storage, ProjectKeepsExtentsAndZeroesOtherAxes) {
  Axis gpu("gpu");
  EXPECT_EQ(to_string(project(L("S[(2,32,128):(1@gpu,128,1)]"), std::span<const Axis>(&gpu, 1))),
            "S[(2,32,128):(1@gpu,0,0)]");
  Axis both[] = {Axis("gpu"), Axis()};
  EXPECT_EQ(to_string(project(L("S[(2,4):(1@gpu,1@x)] + R[2:1@x] + P[2:2@gpu] + 1@x + 2"), both)),
            "S[(2,4):(1@gpu,0)] + P[2:2@gpu] + 2");
}

// Law: l(x) restricted to `m` equals storage(l) at the local index (the m-digits of x).
TEST(Storage, StorageIsTheMemoryPartOfEachPlacement) {
  auto rng = test::make_rng(1001);
  for (int i = 0; i < 2000; ++i) {
    AxeLayout l = test::random_layout(rng);
    AxeLayout s = storage(l);
    for (std::int64_t x = 0; x < l.size(); ++x) {
      std::int64_t y = 0, idx = x;
      std::vector<std::int64_t> digits(l.shard().size());
      for (std::size_t k = l.shard().size(); k-- > 0;) {
        digits[k] = idx % l.shard()[k].extent;
        idx /= l.shard()[k].extent;
      }
      for (std::size_t k = 0; k < digits.size(); ++k) {
        if (l.shard()[k].axis.is_memory()) y = y * l.shard()[k].extent + digits[k];
      }
      // Only the memory coordinates, as a set; R/P iters on other axes only add copies.
      std::set<std::int64_t> want, got;
      for (const Placement& p : l.forward(x)) want.insert(p.coord[Axis()]);
      for (const Placement& p : s.forward(y)) got.insert(p.coord[Axis()]);
      ASSERT_EQ(got, want) << to_string(l) << " x=" << x;
    }
  }
}

TEST(Storage, ProjectIsTheRestrictionToTheAxes) {
  auto rng = test::make_rng(1002);
  std::vector<std::string> names = {"m", "lane", "warp", "gpu"};
  for (int i = 0; i < 2000; ++i) {
    AxeLayout l = test::random_layout(rng);
    std::vector<Axis> axes;
    std::set<std::string> keep;
    for (const auto& n : names) {
      if (test::pick(rng, 0, 1)) {
        axes.push_back(Axis(n));
        keep.insert(n);
      }
    }
    AxeLayout p = project(l, axes);
    ASSERT_EQ(p.size(), l.size());
    for (std::int64_t x = 0; x < l.size(); ++x) {
      std::set<test::Coord> want;
      for (test::Coord c : test::image(l, x)) {
        std::erase_if(c, [&](const auto& e) { return !keep.count(e.first); });
        want.insert(c);
      }
      ASSERT_EQ(test::image(p, x), want) << to_string(l);
    }
  }
}

}  // namespace
}  // namespace axe
