// DistTensor::wrap over caller memory: the tensor aliases it (no copy), every operation leaves it
// unchanged, and a bad size is an error on every rank. The by-value wrap copies.
#include <gtest/gtest.h>

#include <cstring>

#include "axe/error.hpp"
#include "runtime_test_util.hpp"

namespace axe {
namespace {

using test::rt;

Mesh world() {
  return parse_mesh("gpu=" + std::to_string(rt().size()));
}

DistLayout placed(const std::vector<std::int64_t>& shape, const Mesh& m, const char* p) {
  auto pl = parse_placements(p);
  return shard(std::span<const std::int64_t>(shape), m, std::span<const AxisPlacement>(pl));
}

// This rank's source values of `l` (global tensor x -> x), as doubles.
std::vector<double> source_values(const DistLayout& l) {
  return l.mesh().contains(rt().rank()) ? fill_source(l, rt().rank()) : std::vector<double>{};
}

TEST(Wrap, PointerAliasesCallerMemory) {
  DistLayout l = placed({8, 6}, world(), "S(0)");
  std::vector<double> mine = source_values(l);
  auto t = DistTensor::wrap(l, mine.data(), mine.size());
  ASSERT_EQ(t.local_bytes().size(), mine.size() * sizeof(double));
  EXPECT_EQ(static_cast<const void*>(t.local_bytes().data()),
            static_cast<const void*>(mine.data()));
  // Writes go both ways.
  mine[0] = -7;
  EXPECT_EQ(t.local_as<double>()[0], -7.0);
  t.local_as<double>()[1] = -9;
  EXPECT_EQ(mine[1], -9.0);
}

TEST(Wrap, ByValueCopies) {
  DistLayout l = placed({8, 6}, world(), "S(0)");
  std::vector<double> mine = source_values(l);
  auto t = DistTensor::wrap(l, std::span<const double>(mine));
  EXPECT_NE(static_cast<const void*>(t.local_bytes().data()),
            static_cast<const void*>(mine.data()));
  mine[0] = -7;
  EXPECT_NE(t.local_as<double>()[0], -7.0);
}

// Law: redistributing (and gathering) a tensor over caller memory gives the global tensor and
// never writes the caller's memory, for every collective kind and dtypes.
TEST(Wrap, RedistributeNeverModifiesCallerMemory) {
  const Mesh m = world();
  const std::vector<std::pair<const char*, const char*>> moves = {
      {"S(0)", "R"}, {"S(0)", "S(1)"}, {"P", "S(0)"}, {"P", "R"}, {"R", "S(1)"}, {"S(1)", "S(0)"}};
  for (DType dt : {DType::F64, DType::F32, DType::I32}) {
    for (const auto& [a, b] : moves) {
      DistLayout from = placed({8, 8}, m, a), to = placed({8, 8}, m, b);
      std::vector<double> v = source_values(from);
      const std::size_t es = static_cast<std::size_t>(size_of(dt));
      std::vector<std::byte> mem(v.size() * es);
      for (std::size_t i = 0; i < v.size(); ++i) store_element(dt, mem.data() + i * es, v[i]);
      const std::vector<std::byte> before = mem;
      auto t = DistTensor::wrap(from, dt, mem.data(), mem.size());
      auto r = t.redistribute(to);
      std::vector<double> want = reference_destination(from, to).at(rt().rank());
      EXPECT_EQ(test::compare_local(r, want), "") << a << " -> " << b << " " << to_string(dt);
      HostTensor g = t.gather_all();
      for (std::int64_t i = 0; i < g.elements(); ++i)
        ASSERT_EQ(g.get(i), static_cast<double>(i)) << a;
      EXPECT_EQ(mem, before) << "caller memory changed: " << a << " -> " << b << " "
                             << to_string(dt);
      EXPECT_EQ(static_cast<const void*>(t.local_bytes().data()),
                static_cast<const void*>(mem.data()));
    }
  }
}

TEST(Wrap, WrongSizeFailsOnEveryRank) {
  DistLayout l = placed({8, 4}, world(), "S(0)");
  std::vector<float> mine(static_cast<std::size_t>(l.local_elements()) +
                          (rt().rank() == 1 ? 1 : 0));
  std::string e;
  try {
    (void)DistTensor::wrap(l, mine.data(), mine.size());
  } catch (const Error& x) {
    e = x.what();
  }
  EXPECT_NE(e.find("rank 1 passed caller memory of"), std::string::npos) << e;
  // A null pointer with bytes.
  e.clear();
  try {
    (void)DistTensor::wrap(l, DType::F32,
                           rt().rank() == 0 ? nullptr : static_cast<void*>(mine.data()),
                           static_cast<std::size_t>(l.local_elements()) * 4);
  } catch (const Error& x) {
    e = x.what();
  }
  EXPECT_NE(e.find("rank 0 passed a null pointer"), std::string::npos) << e;
}

// Ranks outside the mesh wrap nothing (a null pointer of 0 bytes).
TEST(Wrap, RanksOutsideTheMeshPassNothing) {
  Mesh m({{"g", 1}}, {0});
  DistLayout l = placed({3, 2}, m, "R");
  std::vector<double> x{0, 1, 2, 3, 4, 5};
  auto t = rt().rank() == 0 ? DistTensor::wrap(l, x.data(), x.size())
                            : DistTensor::wrap(l, DType::F64, nullptr, 0);
  HostTensor g = t.gather_all();
  EXPECT_EQ(g.as<double>()[5], 5.0);
}

}  // namespace
}  // namespace axe
