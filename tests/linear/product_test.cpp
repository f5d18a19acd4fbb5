// product(inner, outer): the direct sum, inner minor (Triton's operator*).
#include <gtest/gtest.h>

#include "axe/core/error.hpp"
#include "linear_test_util.hpp"

namespace axe::test::linear {
namespace {

using axe::linear::product;

TEST(Product, TV4_Examples) {
  auto id = [](std::int64_t n, const char* in, const char* out) {
    return LinearLayout::identity_1d(n, in, out);
  };
  EXPECT_EQ(id(16, "in", "out") * id(32, "in", "out"), id(512, "in", "out"));
  EXPECT_EQ(id(4, "in", "o1") * id(8, "in", "o2"),
            LL("{in: [(1,0),(2,0),(0,1),(0,2),(0,4)]} -> [o1:4, o2:8]"));
  EXPECT_EQ(id(8, "in", "out") * LinearLayout::zeros_1d(16, "in", "out"),
            LL("{in: [1,2,4,0,0,0,0]} -> [out:8]"));
  EXPECT_EQ(id(32, "in1", "out1") * id(16, "in2", "out2"),
            LL("{in1: [(1,0),(2,0),(4,0),(8,0),(16,0)], in2: [(0,1),(0,2),(0,4),(0,8)]} -> "
               "[out1:32, out2:16]"));
  // TV-8: l2 * l3 == l1.
  auto l1 = LL("{in1: [(1,1),(2,2),(0,8),(0,4)], in2: [(0,2),(0,1)]} -> [out1:4, out2:16]");
  auto l2 = LL("{in1: [(1,1),(2,2)], in2: [(0,2),(0,1)]} -> [out1:4, out2:4]");
  auto l3 = LL("{in1: [(0,2),(0,1)], in2: []} -> [out1:1, out2:4]");
  EXPECT_EQ(l2 * l3, l1);
}

TEST(Product, EmptyIsTheIdentity) {
  auto l = LL("{in: [(1,0),(0,1)]} -> [a:2, b:2]");
  EXPECT_EQ(LinearLayout() * l, l);
  EXPECT_EQ(l * LinearLayout(), l);
}

TEST(Product, ConflictingOrders_AreAnError) {
  auto a = LL("{x: [1], y: [2]} -> [o:4]");
  auto b = LL("{y: [1], x: [2]} -> [o:4]");
  try {
    (void)(a * b);
    ADD_FAILURE();
  } catch (const axe::Error& e) {
    EXPECT_NE(std::string(e.what()).find("input dim orders [x, y] and [y, x] conflict"),
              std::string::npos)
        << e.what();
  }
}

TEST(Product, DimOrder_IsTheSupremumBiasedToTheFirst) {
  // LINEAR_LAYOUTS.md §6: ([r,l]*[r,w])*[l] has inputs [r,l,w]; [r,l]*([r,w]*[l]) has [r,w,l].
  auto rl = LL("{r: [(1)], l: [(2)]} -> [o:4]");
  auto rw = LL("{r: [(1)], w: [(2)]} -> [o:4]");
  auto l = LL("{l: [(1)]} -> [o:2]");
  EXPECT_EQ(((rl * rw) * l).in_names(), (std::vector<std::string>{"r", "l", "w"}));
  EXPECT_EQ((rl * (rw * l)).in_names(), (std::vector<std::string>{"r", "w", "l"}));
}

// Law: (a*b)*c == a*(b*c) up to dim order; and product agrees with its definition by brute force:
// (a*b)(x_a, x_b) = a(x_a) + b(x_b) << bits(a) per output dim.
TEST(Product, Associative_UpToDimOrder) {
  auto rng = make_rng(0x9d);
  int checked = 0;
  for (int trial = 0; trial < 300; ++trial) {
    // Every dim present (random subsets could meet conflicting orders, [w]*[r,l] = [w,r,l]
    // against [r,l,w], which product rejects).
    auto a = random_layout(rng, trial % 3, {"r", "l", "w"}, {"d1", "d0"}, 2, true);
    auto b = random_layout(rng, (trial + 1) % 3, {"r", "l", "w"}, {"d1", "d0"}, 2, true);
    auto c = random_layout(rng, (trial + 2) % 3, {"r", "l", "w"}, {"d1", "d0"}, 2, true);
    auto left = (a * b) * c;
    auto right = a * (b * c);
    right = axe::linear::transpose_outs(axe::linear::transpose_ins(right, left.in_names()),
                                        left.out_names());
    ASSERT_EQ(left, right) << to_string(a) << " * " << to_string(b) << " * " << to_string(c);
    ++checked;
  }
  EXPECT_EQ(checked, 300);
}

TEST(Product, AgreesWithDefinition_BruteForce) {
  auto rng = make_rng(0x9e);
  for (int trial = 0; trial < 150; ++trial) {
    auto a = random_layout(rng, trial % 3, {"r", "l"}, {"d1", "d0"}, 2);
    auto b = random_layout(rng, (trial + 1) % 3, {"r", "l"}, {"d1", "d0"}, 2);
    auto p = a * b;
    for (const auto& in : all_inputs(p)) {
      // Split each of p's input values into a's low bits and b's high bits.
      std::vector<std::int64_t> ia, ib;
      for (const auto& d : a.in_dims()) {
        std::size_t k = 0;
        while (p.in_dims()[k].name != d.name) ++k;
        ia.push_back(in[k] & (d.size() - 1));
      }
      for (const auto& d : b.in_dims()) {
        std::size_t k = 0;
        while (p.in_dims()[k].name != d.name) ++k;
        int low = a.has_in_dim(d.name) ? a.in_bits(d.name) : 0;
        ib.push_back(in[k] >> low);
      }
      auto va = brute_apply(a, ia), vb = brute_apply(b, ib), vp = brute_apply(p, in);
      for (const auto& d : p.out_dims()) {
        int low = a.has_out_dim(d.name) ? a.out_bits(d.name) : 0;
        std::int64_t want = out_of(a, va, d.name) | (out_of(b, vb, d.name) << low);
        ASSERT_EQ(out_of(p, vp, d.name), want) << to_string(a) << " * " << to_string(b);
      }
    }
  }
}

}  // namespace
}  // namespace axe::test::linear
