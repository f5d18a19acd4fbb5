// Bad input and disagreement: a clear axe::Error on every rank, the source unchanged, and the
// runtime still usable afterwards.
#include <gtest/gtest.h>

#include "axe/core/error.hpp"
#include "runtime_test_util.hpp"

namespace axe {
namespace {

using test::rt;

using test::error_of;

DistLayout s0(const Mesh& m) { return shard({8, 4}, m, {Shard(0)}); }
Mesh world() { return parse_mesh("gpu=" + std::to_string(rt().size())); }

TEST(Errors, FingerprintMismatchFailsOnEveryRank) {
  AXE_SKIP_IF_WORLD_SMALLER(2);
  Mesh m = world();
  DistTensor t = test::source_tensor(s0(m), DType::F64);
  const std::vector<std::byte> before = t.to_host();
  // Rank 0 asks for a different destination than the others.
  DistLayout to = rt().rank() == 0 ? shard({8, 4}, m, {Shard(1)}) : shard({8, 4}, m, {Replicate()});
  std::string e = error_of([&] { (void)t.redistribute(to); });
  EXPECT_NE(e.find("disagree"), std::string::npos) << e;
  EXPECT_NE(e.find("S[("), std::string::npos) << "names this rank's request: " << e;
  EXPECT_EQ(t.to_host(), before);
  // Still usable.
  EXPECT_EQ(test::check_redistribute(s0(m), shard({8, 4}, m, {Replicate()}), DType::F64), "");
}

TEST(Errors, DtypeMismatchAcrossRanksFails) {
  AXE_SKIP_IF_WORLD_SMALLER(2);
  Mesh m = world();
  DType dt = rt().rank() == rt().size() - 1 ? DType::F32 : DType::F64;
  std::string e = error_of([&] { (void)DistTensor::empty(s0(m), dt); });
  EXPECT_NE(e.find("disagree"), std::string::npos) << e;
}

TEST(Errors, WrongLocalBufferSizeFailsOnEveryRank) {
  AXE_SKIP_IF_WORLD_SMALLER(2);
  Mesh m = world();
  std::int64_t n = s0(m).local_elements();
  if (rt().rank() == 1) ++n;  // one rank is wrong
  std::vector<double> local(static_cast<std::size_t>(n), 1.0);
  std::string e = error_of([&] { (void)DistTensor::wrap(s0(m), std::span<const double>(local)); });
  EXPECT_NE(e.find("rank 1 passed a local buffer"), std::string::npos) << e;
}

TEST(Errors, MeshLargerThanWorldFails) {
  Mesh big = parse_mesh("gpu=" + std::to_string(rt().size() + 1));
  std::string e = error_of([&] { (void)DistTensor::empty(s0(big), DType::F32); });
  EXPECT_NE(e.find("the world has " + std::to_string(rt().size()) + " ranks"), std::string::npos) << e;
  Mesh m = world();
  DistTensor t = test::source_tensor(s0(m), DType::F32);
  e = error_of([&] { (void)t.redistribute(shard({8, 4}, big, {Replicate()})); });
  EXPECT_NE(e.find("the world has"), std::string::npos) << e;
}

TEST(Errors, ImpossiblePartialDestinationFails) {
  AXE_SKIP_IF_WORLD_SMALLER(2);
  Mesh m = world();
  DistTensor t = test::source_tensor(shard({8, 4}, m, {Partial(ReduceOp::Max)}), DType::F64);
  const std::vector<std::byte> before = t.to_host();
  std::string e = error_of([&] { (void)t.redistribute({Partial(ReduceOp::Sum)}); });
  EXPECT_FALSE(e.empty());
  EXPECT_EQ(t.to_host(), before);
}

TEST(Errors, ShapeMismatchFails) {
  Mesh m = world();
  DistTensor t = test::source_tensor(s0(m), DType::F64);
  std::string e = error_of([&] { (void)t.redistribute(shard({4, 8}, m, {Replicate()})); });
  EXPECT_NE(e.find("global shape"), std::string::npos) << e;
}

TEST(Errors, BadScatterInputFailsOnEveryRank) {
  Mesh m = world();
  HostTensor g({8, 4}, DType::F32);
  if (rt().rank() == 0) g.data.resize(3);  // the root's data is too short
  std::string e = error_of([&] { (void)DistTensor::scatter(g, s0(m), 0); });
  EXPECT_NE(e.find("scatter root 0"), std::string::npos) << e;
  e = error_of([&] { (void)DistTensor::scatter(HostTensor({8, 4}, DType::F32), s0(m), rt().size()); });
  EXPECT_NE(e.find("outside the world"), std::string::npos) << e;
}

// Ranks that pass different scatter requests (another root, shape or dtype) get the scatter's
// own agreement error, naming DistTensor::scatter and this rank's request, not the wrap inside it.
TEST(Errors, ScatterDisagreementNamesScatter) {
  AXE_SKIP_IF_WORLD_SMALLER(2);
  Mesh m = world();
  const int root = rt().rank() == 1 ? 1 : 0;
  std::string e = error_of([&] { (void)DistTensor::scatter(HostTensor({8, 4}, DType::F32), s0(m), root); });
  EXPECT_NE(e.find("DistTensor::scatter: the ranks disagree"), std::string::npos) << e;
  EXPECT_NE(e.find("scatter from root " + std::to_string(root) + " of (8,4) f32"), std::string::npos) << e;
  EXPECT_EQ(e.find("DistTensor::wrap"), std::string::npos) << e;
  const DType dt = rt().rank() == 1 ? DType::F64 : DType::F32;
  e = error_of([&] { (void)DistTensor::scatter(HostTensor({8, 4}, dt), s0(m), 0); });
  EXPECT_NE(e.find("DistTensor::scatter: the ranks disagree"), std::string::npos) << e;
  // A global shape that is not the layout's: named on every rank.
  e = error_of([&] { (void)DistTensor::scatter(HostTensor({4, 8}, DType::F32), s0(m), 0); });
  EXPECT_NE(e.find("DistTensor::scatter: global tensor of shape (4,8)"), std::string::npos) << e;
  // Still usable.
  EXPECT_EQ(test::check_redistribute(s0(m), shard({8, 4}, m, {Replicate()}), DType::F64), "");
}

// The CUDA backend registers itself (a static initializer that axe::runtime keeps in the link):
// a program that links axe::runtime sees "cuda" exactly when the backend was built.
TEST(Runtime, BackendsBuiltInAreRegistered) {
  const auto names = registered_backends();
  const bool cuda = std::find(names.begin(), names.end(), "cuda") != names.end();
  EXPECT_EQ(cuda, AXE_TEST_CUDA_BACKEND != 0);
  EXPECT_NE(std::find(names.begin(), names.end(), "host"), names.end());
}

TEST(Errors, CudaBackendWithoutCudaIsAClearError) {
  auto names = registered_backends();
  if (std::find(names.begin(), names.end(), "cuda") != names.end()) GTEST_SKIP() << "the CUDA backend is built in";
  RuntimeOptions o;
  o.backend = "cuda";
  std::string e = error_of([&] { Runtime second(o); });
  EXPECT_NE(e.find("AXE_BACKEND=cuda"), std::string::npos) << e;
  EXPECT_EQ(&Runtime::current(), &rt());
}

}  // namespace
}  // namespace axe
