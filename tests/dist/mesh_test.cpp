// Mesh: rank <-> coordinate, groups, text form.
#include <gtest/gtest.h>

#include "axe/core/error.hpp"
#include "axe/dist/mesh.hpp"

namespace axe {
namespace {

TEST(Mesh, RowMajorCoordinates) {
  Mesh m = parse_mesh("dp=2,tp=4");
  EXPECT_EQ(m.size(), 8);
  EXPECT_EQ(m.coord(6), (std::vector<std::int64_t>{1, 2}));
  std::vector<std::int64_t> c{1, 2};
  EXPECT_EQ(m.rank_at(c), 6);
  EXPECT_EQ(to_string(m), "dp=2,tp=4");
}

TEST(Mesh, RankAtInvertsCoord) {
  for (const char* text : {"gpu=6", "a=2,b=3,c=2", "x=2,y=2:5,4,7,6", "g=4:8..11"}) {
    Mesh m = parse_mesh(text);
    for (auto r : m.ranks()) EXPECT_EQ(m.rank_at(m.coord(r)), r) << text;
    EXPECT_EQ(parse_mesh(to_string(m)), m) << text;
  }
}

TEST(Mesh, Groups) {
  Mesh m = parse_mesh("dp=2,tp=4");
  Axis dp("dp"), tp("tp");
  std::vector<Axis> t{tp}, d{dp}, td{tp, dp};
  EXPECT_EQ(m.group(6, t), (std::vector<std::int64_t>{4, 5, 6, 7}));
  EXPECT_EQ(m.group(6, d), (std::vector<std::int64_t>{2, 6}));
  EXPECT_EQ(m.group(6, td), (std::vector<std::int64_t>{0, 4, 1, 5, 2, 6, 3, 7}));
}

TEST(Mesh, PermutedRanks) {
  Mesh m = parse_mesh("x=2,y=2:3,2,1,0");
  EXPECT_EQ(m.coord(3), (std::vector<std::int64_t>{0, 0}));
  EXPECT_EQ(m.coord(1), (std::vector<std::int64_t>{1, 0}));
  EXPECT_FALSE(m.contains(4));
  EXPECT_EQ(to_string(m), "x=2,y=2:3,2,1,0");
}

TEST(Mesh, BadInputThrows) {
  EXPECT_THROW(parse_mesh("gpu=0"), Error);
  EXPECT_THROW(parse_mesh("gpu=4,gpu=2"), Error);
  EXPECT_THROW(parse_mesh("m=4"), Error);
  EXPECT_THROW(parse_mesh("gpu=4:0,1,2"), Error);
  EXPECT_THROW(parse_mesh("gpu=2:1,1"), Error);
  EXPECT_THROW(parse_mesh("gpu"), Error);
  Mesh m = parse_mesh("gpu=4");
  EXPECT_THROW(m.coord(9), Error);
  try {
    m.axis_size(Axis("tp"));
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("tp"), std::string::npos);
  }
}

}  // namespace
}  // namespace axe
