// Swizzle<B,M,S> and ComposedLayout.
#include "axe/cute/swizzle.hpp"

#include <gtest/gtest.h>

#include <set>

#include "axe/core/error.hpp"
#include "support/test_support.hpp"

namespace axe::cute {
namespace {

TEST(Swizzle, MasksAndValues) {
  Swizzle s(3, 4, 3);
  EXPECT_EQ(s.yyy_mask(), 896);  // 0b111 << 7
  EXPECT_EQ(s.zzz_mask(), 112);  // 0b111 << 4
  EXPECT_EQ(s.size(), 1024);
  EXPECT_EQ(s(128), 144);  // bit 7 -> bit 4
  EXPECT_EQ(s(15), 15);    // below the base: untouched
  EXPECT_EQ(to_string(s), "Sw<3,4,3>");
  EXPECT_EQ(to_pycute_string(s), "SW_3_4_3");
  Swizzle left(2, 1, -3);  // a negative shift moves YYY left
  EXPECT_EQ(left.yyy_mask(), 6);
  EXPECT_EQ(left.zzz_mask(), 48);
  EXPECT_EQ(left(2), 2 ^ 16);
  EXPECT_EQ(Swizzle()(12345), 12345);
}

TEST(Swizzle, RejectsInvalidParameters) {
  EXPECT_THROW(Swizzle(3, 0, 2), Error);  // |S| < B
  EXPECT_THROW(Swizzle(-1, 4, 3), Error);
  EXPECT_THROW(Swizzle(1, -1, 1), Error);
  EXPECT_THROW(Swizzle(30, 30, 30), Error);  // masks beyond 62 bits
  EXPECT_THROW(Swizzle(3, 4, 3)(-1), Error);
  try {
    Swizzle(3, 0, 2);
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("abs(SShift)"), std::string::npos) << e.what();
  }
}

// A valid swizzle is an involution and a bijection of [0, size).
TEST(Swizzle, IsAnInvolutiveBijection) {
  for (int b = 0; b <= 4; ++b) {
    for (int m = 0; m <= 4; ++m) {
      for (int sh = -6; sh <= 6; ++sh) {
        if (std::abs(sh) < b) continue;
        Swizzle s(b, m, sh);
        std::set<std::int64_t> seen;
        for (std::int64_t x = 0; x < s.size(); ++x) {
          ASSERT_EQ(s(s(x)), x) << to_string(s);
          ASSERT_LT(s(x), s.size());
          seen.insert(s(x));
        }
        ASSERT_EQ(static_cast<std::int64_t>(seen.size()), s.size()) << to_string(s);
      }
    }
  }
}

TEST(ComposedLayout, EvaluatesSwizzleOfOffsetPlusLayout) {
  ComposedLayout c(Swizzle(3, 3, 3), 0, parse_layout("(8,64):(64,1)"));
  EXPECT_EQ(c(0), 0);
  EXPECT_EQ(c(1), 72);  // swizzle(64) = 64 ^ 8
  EXPECT_EQ(c(parse_int_tuple("(1,0)")), 72);
  EXPECT_EQ(size(c), 512);
  EXPECT_EQ(to_string(c), "Sw<3,3,3> o 0 o (8,64):(64,1)");
  ComposedLayout shifted(Swizzle(3, 3, 3), 64, parse_layout("(8,64):(64,1)"));
  EXPECT_EQ(shifted(0), 72);
  EXPECT_THROW(c(parse_int_tuple("(8,0)")), Error);
}

}  // namespace
}  // namespace axe::cute
