// Direct sum: (A + B)(x, y) = A(x) + B(y) on the interleaved domain.
#include <gtest/gtest.h>

#include "layout/tile_laws.hpp"
#include "support/test_support.hpp"

namespace axe {
namespace {

using test::L;

TEST(DirectSum, PaperVector) {
  std::int64_t s[] = {2, 2};
  AxeLayout a = L("S[(2,2):(8,2)]"), b = L("S[(2,2):(4,1)]");
  AxeLayout d = direct_sum(a, s, b, s);
  EXPECT_EQ(to_string(d), "S[(2,2,2,2):(8,4,2,1)]");
  EXPECT_EQ(to_string(canonicalize(d)), "S[16:1]");
  // Value at (p,q,i,j) of the interleaved domain is (8p+2i) + (4q+j).
  for (int p = 0; p < 2; ++p)
    for (int q = 0; q < 2; ++q)
      for (int i = 0; i < 2; ++i)
        for (int j = 0; j < 2; ++j) {
          std::int64_t c[] = {p * 2 + q, i * 2 + j}, shape[] = {4, 4};
          EXPECT_EQ(d.forward(c, shape)[0].coord, test::pc({{"m", 8 * p + 2 * i + 4 * q + j}}));
        }
}

TEST(DirectSum, UnionsReplicasAndAddsOffsets) {
  std::int64_t s[] = {2};
  EXPECT_EQ(to_string(direct_sum(L("S[2:1] + R[2:1@x] + 3 + 1@y"), s,
                                 L("S[2:4] + R[3:1@z] + P<max>[2:1@g] + 2@y + 4"), s)),
            "S[(2,2):(1,4)] + R[(2,3):(1@x,1@z)] + P<max>[2:1@g] + 7 + 3@y");
}

TEST(DirectSum, BadInputIsAnError) {
  std::int64_t s1[] = {4}, s2[] = {2, 2};
  EXPECT_THROW(direct_sum(L("S[4:1]"), s1, L("S[4:1]"), s2), Error);
  EXPECT_THROW(direct_sum(L("S[4:1]"), s2, L("S[4:1]"), s1), Error);
  EXPECT_THROW(direct_sum(L("S[4:1] + P[2:1@g]"), s1, L("S[4:1] + P<min>[2:1@g]"), s1), Error);
}

TEST(DirectSum, SatisfiesSumLaw) {
  auto rng = test::make_rng(801);
  test::RandomOptions o;
  o.max_d = 2;
  o.max_r = 1;
  int done = 0;
  for (int i = 0; i < 1500; ++i) {
    AxeLayout a = test::random_layout(rng, o), b = test::random_layout(rng, o);
    int rank = static_cast<int>(test::pick(rng, 1, 3));
    auto as = test::random_shape(rng, a.size(), rank);
    auto bs = test::random_shape(rng, b.size(), rank);
    if (!group(a, as) || !group(b, bs) ||
        (!a.partial().empty() && !b.partial().empty() && a.reduce_op() != b.reduce_op())) {
      continue;
    }
    ++done;
    ASSERT_TRUE(test::SumLaw(direct_sum(a, as, b, bs), a, as, b, bs,
                             [](const std::string&) { return std::int64_t{1}; }));
  }
  EXPECT_GT(done, 500);
}

}  // namespace
}  // namespace axe
