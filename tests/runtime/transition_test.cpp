// Every DTensor transition over real MPI ranks, checked element by element against the global
// tensor: 1-D meshes of 2/4/8, 2-D meshes 2x2 and 2x4, even and uneven shapes, several dtypes.
#include <gtest/gtest.h>

#include "axe/core/error.hpp"
#include "runtime_test_util.hpp"

namespace axe {
namespace {

using test::check_redistribute;

struct Case {
  const char* mesh;
  const char* from;
  const char* to;
  std::vector<std::int64_t> shape;
};

std::string name_of(const Case& c, DType t) {
  std::string s = std::string(c.mesh) + "_" + c.from + "_to_" + c.to + "_" + std::string(to_string(t));
  for (auto e : c.shape) s += "_" + std::to_string(e);
  for (auto& ch : s)
    if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
  return s;
}

bool has_partial(const Case& c) { return std::string(c.from).find('P') != std::string::npos; }

class Transition : public ::testing::TestWithParam<std::tuple<Case, DType>> {};

TEST_P(Transition, MatchesGlobalTensor) {
  const auto& [c, dt] = GetParam();
  Mesh m = parse_mesh(c.mesh);
  AXE_SKIP_IF_WORLD_SMALLER(m.size());
  auto pf = parse_placements(c.from), pt = parse_placements(c.to);
  DistLayout from = shard(std::span<const std::int64_t>(c.shape), m, std::span<const AxisPlacement>(pf));
  DistLayout to = shard(std::span<const std::int64_t>(c.shape), m, std::span<const AxisPlacement>(pt));
  EXPECT_EQ(check_redistribute(from, to, dt), "") << to_string(from) << " -> " << to_string(to);
}

const std::vector<Case> kOneD = {
    {"gpu=2", "S(0)", "R", {8, 6}},       {"gpu=4", "S(0)", "R", {8, 6}},     {"gpu=8", "S(1)", "R", {4, 16}},
    {"gpu=2", "P", "R", {8, 6}},          {"gpu=4", "P", "R", {8, 6}},        {"gpu=8", "P", "R", {4, 8}},
    {"gpu=2", "P", "S(0)", {8, 6}},       {"gpu=4", "P(max)", "S(1)", {6, 8}}, {"gpu=8", "P", "S(0)", {16, 2}},
    {"gpu=2", "S(0)", "S(1)", {8, 6}},    {"gpu=4", "S(1)", "S(0)", {8, 8}},  {"gpu=8", "S(0)", "S(1)", {8, 8}},
    {"gpu=2", "R", "S(0)", {8, 6}},       {"gpu=4", "R", "S(1)", {8, 8}},     {"gpu=8", "R", "S(0)", {16, 2}},
    {"gpu=2", "R", "P", {8, 6}},          {"gpu=4", "R", "P", {8, 8}},        {"gpu=4", "P(avg)", "R", {4, 4}},
    {"gpu=4", "S(0)", "R", {7, 5}},       {"gpu=4", "S(0)", "S(1)", {7, 5}},  {"gpu=4", "P", "S(0)", {7, 5}},
    {"gpu=2", "P(min)", "P(min)", {3, 3}}, {"gpu=4", "S(0)", "S(0)", {5, 3}},
};

const std::vector<Case> kTwoD = {
    {"x=2,y=2", "S(0),S(1)", "R,R", {8, 8}},       {"x=2,y=2", "S(0),S(1)", "S(1),S(0)", {8, 8}},
    {"x=2,y=2", "S(0),R", "R,S(1)", {8, 8}},       {"x=2,y=2", "P,S(0)", "R,S(0)", {8, 8}},
    {"x=2,y=2", "P,P", "R,R", {4, 8}},             {"x=2,y=2", "S(0),S(0)", "R,R", {8, 4}},
    {"x=2,y=2", "R,R", "S(0),S(1)", {8, 8}},       {"x=2,y=2", "R,R", "P,R", {4, 4}},
    {"x=2,y=2", "P,S(1)", "S(0),S(1)", {8, 8}},    {"x=2,y=2", "S(0),S(1)", "S(0),R", {7, 5}},
    {"x=2,y=4", "S(0),S(1)", "R,R", {8, 8}},       {"x=2,y=4", "S(0),S(1)", "S(1),S(0)", {8, 8}},
    {"x=2,y=4", "R,P", "S(0),S(1)", {8, 8}},       {"x=2,y=4", "S(1),R", "R,S(0)", {6, 10}},
    {"x=2,y=4", "P,P", "S(0),R", {8, 4}},          {"x=2,y=4", "S(0),S(0)", "S(1),S(1)", {8, 8}},
};

INSTANTIATE_TEST_SUITE_P(OneD, Transition, ::testing::Combine(::testing::ValuesIn(kOneD), ::testing::Values(DType::F64)),
                         [](const auto& i) { return name_of(std::get<0>(i.param), std::get<1>(i.param)); });
INSTANTIATE_TEST_SUITE_P(TwoD, Transition, ::testing::Combine(::testing::ValuesIn(kTwoD), ::testing::Values(DType::F64)),
                         [](const auto& i) { return name_of(std::get<0>(i.param), std::get<1>(i.param)); });

// Every dtype on a few transitions (values are small integers, exact in every type; partial
// sources only for signed types).
const std::vector<Case> kTyped = {
    {"gpu=2", "S(0)", "R", {4, 6}},
    {"x=2,y=2", "S(0),S(1)", "S(1),S(0)", {4, 6}},
    {"gpu=4", "P", "S(0)", {4, 6}},
};
std::vector<std::tuple<Case, DType>> typed_cases() {
  std::vector<std::tuple<Case, DType>> v;
  for (DType t : {DType::F32, DType::F16, DType::BF16, DType::I32, DType::I64, DType::U8})
    for (const auto& c : kTyped)
      if (!(t == DType::U8 && has_partial(c))) v.emplace_back(c, t);
  return v;
}
INSTANTIATE_TEST_SUITE_P(Typed, Transition, ::testing::ValuesIn(typed_cases()),
                         [](const auto& i) { return name_of(std::get<0>(i.param), std::get<1>(i.param)); });

}  // namespace
}  // namespace axe
