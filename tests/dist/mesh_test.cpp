// Mesh: rank <-> coordinate, groups, text form.
#include <gtest/gtest.h>

#include <initializer_list>
#include <limits>
#include <string>

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

// Throws axe::Error whose message contains every one of `parts`.
void expect_mesh_error(const std::string& text, std::initializer_list<const char*> parts) {
  try {
    parse_mesh(text);
    ADD_FAILURE() << text << " parsed";
  } catch (const Error& e) {
    for (const char* p : parts) EXPECT_NE(std::string(e.what()).find(p), std::string::npos) << e.what();
  }
}

// Found by the mesh fuzzer: "gpu=2147483648" (2^31 devices) allocated 8 bytes per device up
// front, 16 GiB from 15 characters. The limit is 2^20 = 1048576 devices, checked per axis.
TEST(Mesh, DeviceCountIsBounded) {
  expect_mesh_error("gpu=2147483648", {"gpu", "2147483648", "1048576"});
  expect_mesh_error("gpu=1048577", {"1048577", "1048576"});
  // 1024 * 1024 = 2^20 is the limit; the third axis of 2 makes 2^21.
  expect_mesh_error("a=1024,b=1024,c=2", {"'c'", "1048576"});
  // 2^32 * 2^32 overflows int64: reported as too many, not as an overflow.
  expect_mesh_error("a=4294967296,b=4294967296", {"'a'", "4294967296"});
  EXPECT_THROW(Mesh({{"gpu", std::int64_t{1} << 31}}), Error);
  Mesh m = parse_mesh("a=1024,b=1024");
  EXPECT_EQ(m.size(), 1048576);
  EXPECT_EQ(m.coord(1048575), (std::vector<std::int64_t>{1023, 1023}));
}

// A rank range is bounded and non-negative before its ranks are built: "0..2^63-1" would have
// been a loop of 2^63 push_backs.
TEST(Mesh, RankRangeIsBoundedBeforeItIsBuilt) {
  expect_mesh_error("gpu=2:0..9223372036854775807", {"0..9223372036854775807", "1048576"});
  expect_mesh_error("gpu=2:3..1048579", {"3..1048579"});  // 1048577 ranks
  expect_mesh_error("gpu=2:-9223372036854775807..9223372036854775807", {"negative rank"});
  expect_mesh_error("gpu=2:-1..0", {"negative rank -1"});
  // Exactly the limit is a well-formed range; it is then the wrong length for 2 devices.
  expect_mesh_error("gpu=2:0..1048575", {"1048576 ranks given for 2 devices"});
  EXPECT_EQ(parse_mesh("gpu=2:7..8").ranks(), (std::vector<std::int64_t>{7, 8}));
}

// Found by the mesh fuzzer (UBSan: signed overflow): ranks near INT64_MAX. find_index computed
// first + size(), the constructor first + i, to_string r[0] + i and the range loop ran r <= b
// past INT64_MAX.
TEST(Mesh, RanksNearInt64MaxDoNotOverflow) {
  const std::int64_t max = std::numeric_limits<std::int64_t>::max();
  Mesh one = parse_mesh(":9223372036854775807");  // no axes: one device, that rank
  EXPECT_TRUE(one.contains(max));
  EXPECT_FALSE(one.contains(0));
  EXPECT_EQ(one.index_of(max), 0);
  EXPECT_EQ(to_string(one), ":9223372036854775807");

  Mesh range = parse_mesh("gpu=2:9223372036854775806..9223372036854775807");
  EXPECT_EQ(range.ranks(), (std::vector<std::int64_t>{max - 1, max}));
  EXPECT_EQ(range.coord(max), (std::vector<std::int64_t>{1}));
  EXPECT_EQ(to_string(range), "gpu=2:9223372036854775806..9223372036854775807");

  Mesh wrap = parse_mesh("gpu=2:9223372036854775807,0");  // not contiguous
  EXPECT_EQ(wrap.coord(0), (std::vector<std::int64_t>{1}));
  EXPECT_FALSE(wrap.contains(1));
  EXPECT_EQ(parse_mesh(to_string(wrap)), wrap);
}

}  // namespace
}  // namespace axe
