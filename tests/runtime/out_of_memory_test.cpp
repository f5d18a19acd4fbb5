// Out of memory on one rank is a clear axe::Error on every rank, raised by the agreement that
// precedes each operation (never a rank left waiting for the failed one), and the source tensor
// is unchanged.
#include <gtest/gtest.h>

#include <cstring>
#include <new>

#include "axe/core/error.hpp"
#include "runtime_test_util.hpp"

namespace axe {
namespace {

// Host memory, except that allocate() throws std::bad_alloc on the ranks told to starve.
class StarvedBackend : public test::HostMemoryTestBackend {
 public:
  std::string_view name() const override { return "starved"; }
  std::shared_ptr<Buffer> allocate(std::size_t bytes) override {
    if (starve && bytes > 0) throw std::bad_alloc();
    return HostMemoryTestBackend::allocate(bytes);
  }
  bool starve = false;
};

class OutOfMemory : public ::testing::Test {
 protected:
  void SetUp() override {
    register_backend({"starved", [] { return true; },
                      [](Runtime&) { return std::make_unique<StarvedBackend>(); }});
    RuntimeOptions o;
    o.backend = "starved";
    rt_ = std::make_unique<Runtime>(o);  // MPI already initialised: never aborts or finalizes
    be_ = dynamic_cast<StarvedBackend*>(&rt_->backend());
    ASSERT_NE(be_, nullptr);
  }
  void TearDown() override { rt_.reset(); }
  std::unique_ptr<Runtime> rt_;
  StarvedBackend* be_ = nullptr;
};

TEST_F(OutOfMemory, EmptyFailsOnEveryRankNamingTheStarvedRank) {
  const int last = rt_->size() - 1;
  Mesh m = parse_mesh("gpu=" + std::to_string(rt_->size()));
  DistLayout l = shard({8 * rt_->size(), 4}, m, {Shard(0)});
  be_->starve = rt_->rank() == last;
  std::string what;
  try {
    DistTensor::empty(l, DType::F32, *rt_);
  } catch (const Error& e) {
    what = e.what();
  }
  EXPECT_NE(what.find("cannot allocate 128 bytes"), std::string::npos) << what;  // 8x4 f32
  EXPECT_NE(what.find("rank " + std::to_string(last)), std::string::npos) << what;
}

TEST_F(OutOfMemory, RedistributeFailsOnEveryRankAndLeavesTheSource) {
  const int last = rt_->size() - 1;
  Mesh m = parse_mesh("gpu=" + std::to_string(rt_->size()));
  HostTensor x({4 * rt_->size(), 3}, DType::F64);
  for (std::int64_t i = 0; i < x.elements(); ++i) x.set(i, static_cast<double>(i));
  DistTensor src = DistTensor::from_global(x, m, {Shard(0)}, *rt_);
  const std::vector<std::byte> before = src.to_host();
  be_->starve = rt_->rank() == last;
  std::string what;
  try {
    src.redistribute({Replicate()});
  } catch (const Error& e) {
    what = e.what();
  }
  be_->starve = false;
  EXPECT_NE(what.find("cannot allocate"), std::string::npos) << what;
  EXPECT_NE(what.find("rank " + std::to_string(last)), std::string::npos) << what;
  EXPECT_EQ(src.to_host(), before);
}

}  // namespace
}  // namespace axe
