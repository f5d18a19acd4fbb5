// DistTensor basics over real ranks: runtime identity, from_global with placement sugar,
// scatter / gather / gather_all, local views and the sharding picture.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <numeric>

#include "axe/core/error.hpp"
#include "runtime_test_util.hpp"

namespace axe {
namespace {

using test::rt;

HostTensor iota(std::vector<std::int64_t> shape, DType dt = DType::F64) {
  HostTensor h(std::move(shape), dt);
  for (std::int64_t i = 0; i < h.elements(); ++i) h.set(i, static_cast<double>(i));
  return h;
}

TEST(Runtime, KnowsRankSizeAndBackend) {
  EXPECT_GE(rt().rank(), 0);
  EXPECT_LT(rt().rank(), rt().size());
  // AXE_BACKEND names the backend; without it, a registered one (cuda when built in and a GPU is
  // visible, else host).
  const char* env = std::getenv("AXE_BACKEND");
  const auto names = registered_backends();
  if (env && *env) {
    EXPECT_EQ(rt().backend().name(), env);
  } else {
    EXPECT_NE(std::find(names.begin(), names.end(), std::string(rt().backend().name())), names.end());
  }
  EXPECT_GE(rt().local_rank(), 0);
  EXPECT_LE(rt().local_size(), rt().size());
  EXPECT_EQ(tunable("AXE_BACKEND"), std::getenv("AXE_BACKEND") ? std::getenv("AXE_BACKEND") : "");
  bool found = false;
  for (const auto& t : tunables()) found = found || (t.name == "AXE_TIMEOUT_S" && t.default_value == "300");
  EXPECT_TRUE(found);
}

TEST(DistTensor, FromGlobalWithPlacementsHoldsTheShard) {
  AXE_SKIP_IF_WORLD_SMALLER(4);
  HostTensor x = iota({4, 6});
  Mesh m = parse_mesh("dp=2,tp=2");
  auto t = DistTensor::from_global(x, m, {Shard(0), Shard(1)});
  if (m.contains(rt().rank())) {
    auto c = m.coord(rt().rank());
    LocalView v = t.local();
    EXPECT_EQ(v.shape, (std::vector<std::int64_t>{2, 3}));
    auto d = t.to_host_as<double>();
    ASSERT_EQ(d.size(), 6u);
    for (std::int64_t i = 0; i < 2; ++i)
      for (std::int64_t j = 0; j < 3; ++j)
        EXPECT_EQ(d[static_cast<std::size_t>(i * 3 + j)], static_cast<double>((c[0] * 2 + i) * 6 + c[1] * 3 + j));
  } else {
    EXPECT_TRUE(t.to_host().empty());
  }
  EXPECT_EQ(test::compare_local(t, test::rt().rank() < 4 ? fill_source(t.layout(), rt().rank()) : std::vector<double>{}),
            "");
}

TEST(DistTensor, FromGlobalPartialReducesToTheValue) {
  Mesh m = parse_mesh("gpu=" + std::to_string(rt().size()));
  HostTensor x = iota({5, 3});
  for (ReduceOp op : {ReduceOp::Sum, ReduceOp::Avg, ReduceOp::Max, ReduceOp::Prod}) {
    auto t = DistTensor::from_global(x, m, {Partial(op)});
    HostTensor y = t.gather_all();
    EXPECT_EQ(y.data, x.data) << to_string(op);
  }
}

TEST(DistTensor, ScatterThenGatherIsIdentity) {
  const int n = rt().size();
  Mesh m = parse_mesh("gpu=" + std::to_string(n));
  for (DType dt : {DType::F64, DType::F32, DType::I32, DType::BF16, DType::U8}) {
    HostTensor x = iota({7, 3}, dt);
    HostTensor in = rt().rank() == n - 1 ? x : HostTensor();
    in.shape = x.shape;
    in.dtype = dt;
    auto t = DistTensor::scatter(in, shard({7, 3}, m, {Shard(0)}), n - 1);
    EXPECT_EQ(test::compare_local(t, fill_source(t.layout(), rt().rank())), "");
    HostTensor y = t.gather(0);
    if (rt().rank() == 0) {
      EXPECT_EQ(y.data, x.data) << to_string(dt);
    } else {
      EXPECT_TRUE(y.data.empty());
    }
    EXPECT_EQ(t.gather_all().data, x.data);
  }
}

TEST(DistTensor, RedistributeAcrossMeshes) {
  AXE_SKIP_IF_WORLD_SMALLER(4);
  // From ranks {0,1} to the 2x2 mesh, and to a reordered mesh.
  HostTensor x = iota({6, 4});
  auto a = DistTensor::from_global(x, Mesh({{"g", 2}}, {0, 1}), {Shard(1)});
  auto b = a.redistribute(parse_mesh("x=2,y=2"), {Shard(0), Replicate()});
  EXPECT_EQ(b.gather_all().data, x.data);
  auto c = b.redistribute(Mesh({{"x", 2}, {"y", 2}}, {3, 1, 2, 0}), {Shard(1), Shard(0)});
  EXPECT_EQ(c.gather(2).data, rt().rank() == 2 ? x.data : std::vector<std::byte>{});
}

TEST(DistTensor, EmptyIsZeroAndSized) {
  Mesh m = parse_mesh("gpu=" + std::to_string(rt().size()));
  auto t = DistTensor::empty(shard({5, 2}, m, {Shard(0)}), DType::I64);
  const std::vector<std::byte> b = t.to_host();
  EXPECT_EQ(b.size(), static_cast<std::size_t>(t.layout().local_elements() * 8));
  for (auto x : b) EXPECT_EQ(x, std::byte{0});
}

TEST(DistTensor, VisualizeNamesTheHolders) {
  Mesh m = parse_mesh("dp=2,tp=2");
  std::string s = DistTensor::visualize(shard({4, 6}, m, {Shard(0), Shard(1)}));
  EXPECT_NE(s.find("rows 0:2"), std::string::npos) << s;
  EXPECT_NE(s.find("cols 3:6"), std::string::npos) << s;
  s = DistTensor::visualize(shard({4, 6}, m, {Shard(0), Replicate()}));
  EXPECT_NE(s.find("2,3"), std::string::npos) << s;
  s = DistTensor::visualize(shard({4, 6}, m, {Replicate(), Partial()}));
  EXPECT_NE(s.find("1:t1"), std::string::npos) << s;
}

// ---- views: R -> S(0) moves nothing --------------------------------------------------------

// The first byte of a tensor's local storage, host or device.
const std::byte* storage(const DistTensor& t) {
  auto& b = const_cast<Buffer&>(t.buffer());
  if (const std::byte* h = b.host_data()) return h;
  return static_cast<const std::byte*>(b.device_data());
}

// R -> S(0) of 8x6 f64 on gpu=2: rank r's shard is rows 4r..4r+3, i.e. elements [24 r, 24 r + 24)
// of its replicated buffer, one contiguous range on both ranks: the result is a view at byte
// 192 r of the source, holding rows 4r.., and (host backend) a write through it shows in the source.
TEST(DistTensor, ReplicateToShard0IsAViewOfTheSource) {
  AXE_SKIP_IF_WORLD_SMALLER(2);
  Mesh m = parse_mesh("gpu=2");
  auto t = DistTensor::from_global(iota({8, 6}), m, {Replicate()});
  auto y = t.redistribute({Shard(0)});
  if (!m.contains(rt().rank())) return;
  const std::int64_t r = rt().rank();
  EXPECT_EQ(storage(y), storage(t) + 192 * r);
  EXPECT_EQ(y.buffer().bytes(), 192u);
  EXPECT_NE(y.last_plan().find("a view of the source"), std::string::npos) << y.last_plan();
  auto d = y.to_host_as<double>();
  ASSERT_EQ(d.size(), 24u);
  for (std::int64_t i = 0; i < 24; ++i) EXPECT_EQ(d[static_cast<std::size_t>(i)], static_cast<double>(24 * r + i));
  if (rt().backend().name() == "host") {
    y.local_as<double>()[0] = -1.0;
    EXPECT_EQ(t.local_as<double>()[static_cast<std::size_t>(24 * r)], -1.0);
  }
}

// Where a view does not suffice the result is a copy: R -> S(1) (rank r's columns are strided in
// the source) and uneven R -> S(0) of 5x3 (rank 1's shard is rows 3..4 plus a padding row, which a
// view of the source cannot hold, so no rank views: the ranks decide together).
TEST(DistTensor, StridedOrPaddedShardsAreCopies) {
  AXE_SKIP_IF_WORLD_SMALLER(2);
  Mesh m = parse_mesh("gpu=2");
  for (auto [shape, to] : {std::pair{std::vector<std::int64_t>{8, 6}, Shard(1)},
                           std::pair{std::vector<std::int64_t>{5, 3}, Shard(0)}}) {
    auto t = DistTensor::from_global(iota(shape), m, {Replicate()});
    auto y = t.redistribute({to});
    if (!m.contains(rt().rank())) continue;
    const std::byte* b = storage(t);
    EXPECT_TRUE(storage(y) < b || storage(y) >= b + t.buffer().bytes()) << "rank " << rt().rank() << ": " << y.last_plan();
    EXPECT_EQ(y.last_plan().find("a view of the source"), std::string::npos) << y.last_plan();
    EXPECT_EQ(test::compare_local(y, fill_source(y.layout(), rt().rank())), "");
  }
}

}  // namespace
}  // namespace axe
