// Bridges: Axe layout <-> linear layout (exact examples, refusals naming the iter, brute force
// against forward), CuTe layouts (TV-12), Swizzle<B,M,S> (TV-13) and composed layouts (TV-14).
#include "axe/linear/bridge.hpp"

#include <gtest/gtest.h>

#include <map>
#include <set>

#include "axe/core/error.hpp"
#include "axe/cute/layout.hpp"
#include "axe/cute/swizzle.hpp"
#include "layout/layout_test_util.hpp"
#include "linear_test_util.hpp"

namespace axe::test::linear {
namespace {

using namespace axe::linear;
using Shape = std::vector<std::int64_t>;

constexpr const char* kTensorCore = "S[(8,2,4,2):(4@lane,1@warp,1@lane,1)] + R[2:4@warp] + 5@warp";

TEST(ToLinear, TensorCoreTile_Bases) {
  auto al = to_linear(parse_axe_layout(kTensorCore), Shape{8, 16});
  EXPECT_EQ(al.layout, LL("{m: [(1,0)], lane: [(2,0),(4,0),(0,1),(0,2),(0,4)], "
                          "warp: [(8,0),(0,0),(0,0)]} -> [dim1:16, dim0:8]"));
  ASSERT_EQ(al.offset.size(), 1u);
  EXPECT_EQ(al.offset[0], (std::pair<std::string, std::int64_t>{"warp", 5}));
  EXPECT_EQ(broadcast_masks(al.layout)[2].second, 0b110u);
  EXPECT_TRUE(is_surjective(al.layout));
  EXPECT_FALSE(is_injective(al.layout));
}

TEST(ToLinear, Refusals_NameTheIter) {
  auto why = [](const char* l, Shape shape) { return linear_refusal(parse_axe_layout(l), shape); };
  EXPECT_EQ(why("S[(4,2):(2,1)]", Shape{8}), "");
  EXPECT_EQ(why("S[(2,2):(1,1)]", Shape{4}),
            "iters 2:1 of S and 2:1 of S overlap on axis m (bit 0): their sum carries, it is not an XOR");
  EXPECT_EQ(why("S[(3,2):(2,1)]", Shape{6}), "logical extent 6 of dim 0 in (6) is not a power of two");
  EXPECT_EQ(why("S[(4,2):(3@lane,1)]", Shape{8}), "iter 4:3@lane of S: stride 3 is not a positive power of two");
  EXPECT_EQ(why("S[(4,2):(0,1)]", Shape{8}), "iter 4:0 of S: stride 0 puts 4 elements on one location");
  EXPECT_EQ(why("S[(4,2):(-2,1)]", Shape{8}), "iter 4:-2 of S: stride -2 is not a positive power of two");
  EXPECT_EQ(why("S[4:1] + R[2:2]", Shape{4}),
            "iters 4:1 of S and 2:2 of R overlap on axis m (bit 1): their sum carries, it is not an XOR");
  EXPECT_NE(why("S[4:1] + P[2:1@gpu]", Shape{4}).find("partial iters P"), std::string::npos);
  EXPECT_EQ(why("S[4:1]", Shape{2, 4}), "the shape (2,4) has 8 elements but S[4:1] has 4");
  try {
    (void)to_linear(parse_axe_layout("S[(2,2):(1,1)]"), Shape{4});
    ADD_FAILURE();
  } catch (const axe::Error& e) {
    EXPECT_NE(std::string(e.what()).find("no linear layout: iters 2:1 of S and 2:1 of S"), std::string::npos);
  }
}

TEST(FromLinear, PrintsAsAxe) {
  auto a = from_linear(LL("{m: [(1,0)], lane: [(2,0),(0,1)]} -> [dim1:4, dim0:2]"));
  // Logical bits (row, col1, col0) <- (lane 1, lane 0, m 0): lane's two bits merge.
  EXPECT_EQ(to_string(a.layout), "S[(4,2):(1@lane,1)]");
  EXPECT_EQ(a.shape, (Shape{2, 4}));
  auto tc = to_linear(parse_axe_layout(kTensorCore), Shape{8, 16});
  auto back = from_linear(tc.layout, tc.offset);
  // The gap bit 1 of warp becomes a replica too (every location maps to an element), merged
  // with the replica bit 2.
  EXPECT_EQ(to_string(back.layout), "S[(8,2,4,2):(4@lane,1@warp,1@lane,1)] + R[4:2@warp] + 5@warp");
  try {
    (void)from_linear(LL("{m: [(1,1)]} -> [dim1:2, dim0:2]"));
    ADD_FAILURE();
  } catch (const axe::Error& e) {
    EXPECT_NE(std::string(e.what()).find("bit 0 of 'm' maps to (1,1), a combination of 2 logical bits"),
              std::string::npos) << e.what();
  }
}

// A random Axe layout with power-of-two iters on disjoint fields of m, lane, warp; with
// `gap_free` each axis' fields fill its low bits.
AxeLayout random_pow2_layout(std::mt19937_64& rng, int logical_bits, bool gap_free,
                             std::vector<std::int64_t>& shape) {
  const char* names[] = {"m", "lane", "warp"};
  std::map<int, std::uint32_t> used;  // axis -> used bit mask
  auto place = [&](int axis, int bits) -> int {
    for (int tries = 0; tries < 50; ++tries) {
      int low = gap_free ? std::popcount(used[axis]) : uniform(rng, 0, 6);
      std::uint32_t f = ((1u << bits) - 1) << low;
      if (!(used[axis] & f)) {
        used[axis] |= f;
        return low;
      }
    }
    return -1;
  };
  std::vector<Iter> d, r;
  int left = logical_bits;
  while (left > 0) {
    int bits = uniform(rng, 1, left);
    int axis = uniform(rng, 0, 2);
    int low = place(axis, bits);
    if (low < 0) continue;
    d.push_back({std::int64_t{1} << bits, std::int64_t{1} << low, Axis(names[axis])});
    left -= bits;
  }
  std::shuffle(d.begin(), d.end(), rng);
  for (int k = uniform(rng, 0, 2); k > 0; --k) {
    int axis = uniform(rng, 0, 2), bits = uniform(rng, 1, 2);
    int low = place(axis, bits);
    if (low >= 0) r.push_back({std::int64_t{1} << bits, std::int64_t{1} << low, Axis(names[axis])});
  }
  std::vector<std::pair<Axis, std::int64_t>> off;
  if (uniform(rng, 0, 1)) off.emplace_back(Axis(names[uniform(rng, 0, 2)]), uniform(rng, 0, 9));
  // Split the logical bits into 1..3 dims.
  shape.clear();
  int rest = logical_bits;
  while (rest > 0 && shape.size() < 2) {
    int b = uniform(rng, 0, rest);
    shape.push_back(std::int64_t{1} << b);
    rest -= b;
  }
  shape.push_back(std::int64_t{1} << rest);
  return AxeLayout(d, r, {}, off);
}

// Law (brute force): every placement p of x has layout(p - O) == x; without gaps the hardware
// locations of x are exactly its placements; from_linear inverts to_linear on gap-free layouts.
TEST(ToLinear, AgreesWithForward_BruteForce) {
  auto rng = make_rng(0xb1);
  for (int trial = 0; trial < 200; ++trial) {
    bool gap_free = trial % 2 == 0;
    Shape shape;
    auto l = random_pow2_layout(rng, uniform(rng, 0, 6), gap_free, shape);
    SCOPED_TRACE(to_string(l));
    auto al = to_linear(l, shape);
    const auto& ll = al.layout;
    ASSERT_TRUE(is_surjective(ll));
    std::map<std::string, std::int64_t> o(al.offset.begin(), al.offset.end());
    std::map<std::int64_t, std::set<Coord>> holders;  // x -> hardware coords (+O) holding it
    for (const auto& in : all_inputs(ll)) {
      std::uint64_t flat = 0;
      Coord c;
      for (std::size_t k = 0; k < in.size(); ++k) {
        flat |= static_cast<std::uint64_t>(in[k]) << ll.in_shift(ll.in_dims()[k].name);
        std::int64_t v = in[k] + o[ll.in_dims()[k].name];
        if (v != 0) c[ll.in_dims()[k].name] = v;
      }
      for (const auto& [axis, v] : o) {
        if (!ll.has_in_dim(axis) && v != 0) c[axis] = v;
      }
      holders[static_cast<std::int64_t>(ll.apply_flat(flat))].insert(c);
    }
    for (std::int64_t x = 0; x < l.size(); ++x) {
      auto img = image(l, x);
      for (const auto& c : img) {
        ASSERT_TRUE(holders[x].count(c)) << "x=" << x << " at " << coord_string(c);
      }
      if (gap_free) {
        ASSERT_EQ(holders[x], img) << "x=" << x;
      }
    }
    if (gap_free) {
      auto back = from_linear(ll, al.offset);
      EXPECT_TRUE(SameFunction(back.layout, l)) << to_string(back.layout);
      EXPECT_EQ(to_linear(back.layout, back.shape).layout, ll);
    }
  }
}

TEST(FromCute, TV12_Vectors) {
  using cute::parse_layout;
  EXPECT_EQ(from_cute(parse_layout("(2,2,2):(2,4,1)")), LL("{in: [2,4,1]} -> [out:8]"));
  EXPECT_EQ(from_cute(cute::complement(parse_layout("(2,2):(2,1)"), 8)).columns(),
            (std::vector<std::uint64_t>{4}));
  EXPECT_EQ(from_cute(cute::complement(parse_layout("4:2"), 32)).columns(),
            (std::vector<std::uint64_t>{1, 8, 16}));
  EXPECT_EQ(from_cute(cute::logical_divide(parse_layout("32:1"), cute::Tiler(parse_layout("4:2")))).columns(),
            (std::vector<std::uint64_t>{2, 4, 1, 8, 16}));
  EXPECT_EQ(from_cute(cute::logical_product(parse_layout("4:2"), cute::Tiler(parse_layout("2:1")))).columns(),
            (std::vector<std::uint64_t>{2, 4, 1}));
  // CuTe A o B == LL compose(B, A).
  auto a = parse_layout("(4,8):(8,1)"), b = parse_layout("(8,4):(4,1)");
  auto lb = from_cute(b, "i", "x"), la = from_cute(a, "x", "y");
  EXPECT_EQ(from_cute(cute::composition(a, b), "i", "y"), compose(lb, la));
  EXPECT_EQ(compose(lb, la).columns(), (std::vector<std::uint64_t>{1, 2, 4, 8, 16}));
  // right_inverse == pseudo_invert.
  EXPECT_EQ(from_cute(cute::right_inverse(a), "y", "x"), pseudo_invert(la));
  try {
    (void)from_cute(parse_layout("(2,2):(1,1)"));
    ADD_FAILURE();
  } catch (const axe::Error& e) {
    EXPECT_NE(std::string(e.what()).find("mode 1 2:1 of (2,2):(1,1) overlaps"), std::string::npos) << e.what();
  }
}

TEST(FromSwizzle, TV13_Vectors) {
  auto s = from_swizzle(cute::Swizzle(2, 3, 3), 8);
  EXPECT_EQ(s.columns(), (std::vector<std::uint64_t>{1, 2, 4, 8, 16, 32, 72, 144}));
  EXPECT_EQ(s.apply_flat(255), 231u);
  auto t = from_swizzle(cute::Swizzle(3, 4, 3), 10);
  EXPECT_EQ(t.columns(), (std::vector<std::uint64_t>{1, 2, 4, 8, 16, 32, 64, 144, 288, 576}));
  EXPECT_EQ(t.apply_flat(1023), 911u);
}

// Laws: the swizzle's linear layout agrees with Swizzle::operator() on every offset, and it is an
// involution (compose(s, s) == identity) when |S| >= B.
TEST(FromSwizzle, AgreesWithSwizzle_AndIsAnInvolution) {
  for (int b = 0; b <= 3; ++b) {
    for (int m = 0; m <= 3; ++m) {
      for (int sh = -4; sh <= 4; ++sh) {
        if (std::abs(sh) < b) continue;
        cute::Swizzle sw(b, m, sh);
        int bits = b + m + std::abs(sh);
        auto l = from_swizzle(sw, bits);
        for (std::int64_t x = 0; x < (std::int64_t{1} << bits); ++x) {
          ASSERT_EQ(static_cast<std::int64_t>(l.apply_flat(static_cast<std::uint64_t>(x))), sw(x))
              << cute::to_string(sw) << " at " << x;
        }
        std::vector<std::uint64_t> id;
        for (int i = 0; i < bits; ++i) id.push_back(std::uint64_t{1} << i);
        EXPECT_EQ(compose(l, l).columns(), id) << cute::to_string(sw);
      }
    }
  }
}

TEST(FromCute, TV14_ComposedIsTheInverseOfTritonsSwizzledShared) {
  auto c = cute::parse_composed_layout("Sw<3,3,3> o 0 o (8,64):(64,1)");
  // CuTe: row 1, cols 0..15 -> offsets 72..79, 64..71.
  for (std::int64_t col = 0; col < 16; ++col) {
    EXPECT_EQ(c(cute::IntTuple::tuple({1, col})), col < 8 ? 72 + col : 56 + col);
  }
  auto l = from_cute(c, "in", "offset");
  for (std::int64_t i = 0; i < 512; ++i) {
    ASSERT_EQ(static_cast<std::int64_t>(l.apply_flat(static_cast<std::uint64_t>(i))), c(i));
  }
  using Sizes = std::vector<std::pair<std::string, std::int64_t>>;
  auto inv = reshape_outs(invert(l), Sizes{{"r", 8}, {"c", 64}});
  EXPECT_EQ(inv, LL("{offset: [(0,1),(0,2),(0,4),(0,8),(0,16),(0,32),(1,8),(2,16),(4,32)]} -> [r:8, c:64]"));
  try {
    (void)from_cute(cute::parse_composed_layout("Sw<3,3,3> o 8 o (8,64):(64,1)"));
    ADD_FAILURE();
  } catch (const axe::Error& e) {
    EXPECT_NE(std::string(e.what()).find("makes it affine"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace axe::test::linear
