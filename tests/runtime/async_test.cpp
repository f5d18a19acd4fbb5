// The asynchronous redistribute contract (dist_tensor.hpp "Asynchrony", backend.hpp
// execute_async/synchronize), checked with a backend that defers every plan until synchronize():
// redistribute only enqueues, every host-visible read synchronizes first, plans run in order,
// and the result keeps the source alive while its work is pending.
#include <gtest/gtest.h>

#include <cstring>
#include <deque>

#include "axe/core/error.hpp"
#include "axe/runtime/mpi_transport.hpp"
#include "runtime_test_util.hpp"

namespace axe {
namespace {

// Host memory; execute_async queues (a copy of the plan and the buffers), synchronize runs the
// queue in order over the runtime's MPI transport.
class DeferredBackend : public Backend {
 public:
  explicit DeferredBackend(Runtime& rt) : rt_(rt) {}
  std::string_view name() const override { return "deferred"; }
  std::shared_ptr<Buffer> allocate(std::size_t bytes) override {
    return std::make_shared<HostBuffer>(bytes);
  }
  void copy_from_host(std::span<const std::byte> src, Buffer& dst) override {
    ASSERT_EQ(src.size(), dst.bytes());
    if (!src.empty()) std::memcpy(dst.host_data(), src.data(), src.size());
  }
  void copy_to_host(const Buffer& src, std::span<std::byte> dst) override {
    ASSERT_EQ(pending(), 0u) << "copy_to_host before synchronize";
    if (!dst.empty()) std::memcpy(dst.data(), src.host_data(), dst.size());
  }
  void execute(const RankPlan& plan, const Buffer& src, Buffer& dst) override {
    axe::execute(plan, rt_.transport(), std::span<const std::byte>(src.host_data(), src.bytes()),
                 std::span<std::byte>(dst.host_data(), dst.bytes()));
  }
  void execute_async(const RankPlan& plan, const Buffer& src, Buffer& dst) override {
    queue_.push_back({plan, &src, &dst});
    ++enqueued;
  }
  void synchronize() override {
    ++syncs;
    while (!queue_.empty()) {
      Work w = std::move(queue_.front());
      queue_.pop_front();
      execute(w.plan, *w.src, *w.dst);
      ++executed;
    }
  }
  std::size_t pending() const { return queue_.size(); }
  int enqueued = 0, executed = 0, syncs = 0;

 private:
  struct Work {
    RankPlan plan;
    const Buffer* src;
    Buffer* dst;
  };
  Runtime& rt_;
  std::deque<Work> queue_;
};

HostTensor iota(std::vector<std::int64_t> shape) {
  HostTensor h(std::move(shape), DType::F64);
  for (std::int64_t i = 0; i < h.elements(); ++i) h.set(i, static_cast<double>(i));
  return h;
}

class Async : public ::testing::Test {
 protected:
  void SetUp() override {
    register_backend({"deferred", [] { return true; },
                      [](Runtime& r) { return std::make_unique<DeferredBackend>(r); }});
    RuntimeOptions o;
    o.backend = "deferred";
    rt_ = std::make_unique<Runtime>(o);  // becomes Runtime::current() until destroyed
    be_ = dynamic_cast<DeferredBackend*>(&rt_->backend());
    ASSERT_NE(be_, nullptr);
  }
  void TearDown() override { rt_.reset(); }
  std::unique_ptr<Runtime> rt_;
  DeferredBackend* be_ = nullptr;
};

TEST_F(Async, RedistributeEnqueuesAndReadsSynchronize) {
  Mesh m = parse_mesh("gpu=" + std::to_string(rt_->size()));
  HostTensor x = iota({8, 4});
  auto t = DistTensor::from_global(x, m, {Shard(0)});
  auto r = t.redistribute({Replicate()});
  auto s = r.redistribute({Shard(1)});  // reads r's buffer: in order, no synchronization needed
  EXPECT_EQ(be_->enqueued, 2);
  EXPECT_EQ(be_->executed, 0);
  EXPECT_EQ(be_->pending(), 2u);
  // local_as synchronizes: both plans ran, in order.
  auto v = r.local_as<double>();
  EXPECT_EQ(be_->executed, 2);
  EXPECT_EQ(be_->pending(), 0u);
  ASSERT_EQ(v.size(), 32u);
  for (std::size_t i = 0; i < v.size(); ++i) EXPECT_EQ(v[i], static_cast<double>(i));
  EXPECT_EQ(s.gather_all().data, x.data);
}

TEST_F(Async, EveryHostReadSynchronizes) {
  Mesh m = parse_mesh("gpu=" + std::to_string(rt_->size()));
  HostTensor x = iota({4, 6});
  auto t = DistTensor::from_global(x, m, {Shard(1)});
  auto read = [&](const char* what, auto&& f) {
    auto r = t.redistribute({Replicate()});
    ASSERT_EQ(be_->pending(), 1u) << what;
    f(r);
    EXPECT_EQ(be_->pending(), 0u) << what << " did not synchronize";
  };
  read("local_as", [](DistTensor& r) { (void)r.local_as<double>(); });
  read("local_bytes", [](DistTensor& r) { (void)r.local_bytes(); });
  read("local", [](DistTensor& r) { (void)r.local(); });
  read("to_host", [](DistTensor& r) { (void)r.to_host(); });
  read("to_host_as", [](DistTensor& r) { (void)r.to_host_as<double>(); });
  read("from_host", [](DistTensor& r) {
    const std::vector<std::byte> zeros(r.buffer().bytes());  // buffer() does not synchronize
    r.from_host(std::span<const std::byte>(zeros));
  });
  read("visualize", [](DistTensor& r) { (void)r.visualize(); });
  read("synchronize", [](DistTensor& r) { r.synchronize(); });
  read("gather", [&](DistTensor& r) {
    EXPECT_EQ(r.gather(0).data, rt_->rank() == 0 ? x.data : std::vector<std::byte>{});
  });
  read("gather_all", [&](DistTensor& r) { EXPECT_EQ(r.gather_all().data, x.data); });
}

// The source may be dropped right after redistribute: the pending work still reads it.
TEST_F(Async, ResultKeepsTheSourceAlive) {
  Mesh m = parse_mesh("gpu=" + std::to_string(rt_->size()));
  HostTensor x = iota({8, 6});
  DistTensor r;
  {
    auto t = DistTensor::from_global(x, m, {Shard(0)});
    r = t.redistribute({Shard(1)});
  }
  EXPECT_EQ(be_->pending(), 1u);
  EXPECT_EQ(r.gather_all().data, x.data);
}

}  // namespace
}  // namespace axe
