// `axe simulate` between partial layouts: a correct plan verifies (issue 15 item 3: it printed
// MISMATCH because the checker wanted each partial term to keep its index).
#include <gtest/gtest.h>

#include "cli_test_util.hpp"

namespace axe {
namespace {

TEST(SimulateCli, PartialToPartialVerifies) {
  const char* cases[][2] = {{"P,R", "R,P"}, {"P,S(0)", "S(1),P"}, {"P,S(0)", "R,P"}, {"S(0),P", "P,S(1)"}};
  for (auto& c : cases) {
    auto r = test::cli::axe({"simulate", "--shape", "3,2", "--mesh", "x=2,y=2", "--from", c[0], "--to", c[1]});
    EXPECT_EQ(r.status, 0) << c[0] << " -> " << c[1] << ": " << r.out << r.err;
    EXPECT_EQ(r.out.rfind("ok: 4 ranks", 0), 0u) << r.out;
  }
}

}  // namespace
}  // namespace axe
