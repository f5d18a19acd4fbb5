// DistTensor::wrap over caller memory: the tensor aliases it (no copy), every operation leaves it
// unchanged, and a bad size is an error on every rank. The by-value wrap copies.
#include <gtest/gtest.h>

#include <cstring>

#include "axe/core/error.hpp"
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

// Caller memory holding `init`, of the kind the backend's wrap_memory accepts: a host vector on
// the host backend; device memory elsewhere (taken from a backend buffer's device_data(),
// standing in for the caller's cudaMalloc). read()/write() copy it from/to the host.
class CallerMemory {
 public:
  explicit CallerMemory(std::vector<std::byte> init) {
    Backend& be = rt().backend();
    if (be.name() == "host") {
      host_ = std::move(init);
      data_ = host_.data();
      bytes_ = host_.size();
    } else {
      owner_ = be.allocate(init.size());
      be.copy_from_host(init, *owner_);
      data_ = owner_->device_data();
      bytes_ = init.size();
    }
  }
  void* data() const { return data_; }
  std::size_t bytes() const { return bytes_; }
  std::vector<std::byte> read() const {
    if (!owner_) return host_;
    std::vector<std::byte> h(bytes_);
    rt().backend().copy_to_host(*owner_, h);
    return h;
  }
  void write(std::span<const std::byte> b) {
    if (!owner_)
      std::memcpy(host_.data(), b.data(), b.size());
    else
      rt().backend().copy_from_host(b, *owner_);
  }

 private:
  std::vector<std::byte> host_;
  std::shared_ptr<Buffer> owner_;
  void* data_ = nullptr;
  std::size_t bytes_ = 0;
};

std::vector<std::byte> bytes_of(const std::vector<double>& v) {
  std::vector<std::byte> b(v.size() * sizeof(double));
  if (!b.empty()) std::memcpy(b.data(), v.data(), b.size());
  return b;
}

// Where the tensor's local buffer lives (host or device address).
const void* address(const DistTensor& t) {
  Buffer& b = const_cast<Buffer&>(t.buffer());
  return b.host_data() ? static_cast<const void*>(b.host_data()) : b.device_data();
}

TEST(Wrap, PointerAliasesCallerMemory) {
  DistLayout l = placed({8, 6}, world(), "S(0)");
  std::vector<double> mine = source_values(l);
  CallerMemory mem(bytes_of(mine));
  auto t = DistTensor::wrap(l, DType::F64, mem.data(), mem.bytes());
  ASSERT_EQ(t.buffer().bytes(), mine.size() * sizeof(double));
  EXPECT_EQ(address(t), mem.data());
  // Writes go both ways.
  mine[0] = -7;
  mem.write(bytes_of(mine));
  EXPECT_EQ(t.to_host_as<double>()[0], -7.0);
  mine[1] = -9;
  t.from_host(std::span<const double>(mine));
  std::vector<std::byte> now = mem.read();
  double second = 0;
  std::memcpy(&second, now.data() + sizeof(double), sizeof(double));
  EXPECT_EQ(second, -9.0);
}

// Host backend: local_bytes / local_as are the caller's memory itself.
TEST(Wrap, HostPointerIsTheLocalBytes) {
  AXE_SKIP_UNLESS_HOST_BACKEND("in-place host access to caller host memory");
  DistLayout l = placed({8, 6}, world(), "S(0)");
  std::vector<double> mine = source_values(l);
  auto t = DistTensor::wrap(l, mine.data(), mine.size());
  EXPECT_EQ(static_cast<const void*>(t.local_bytes().data()),
            static_cast<const void*>(mine.data()));
  mine[0] = -7;
  EXPECT_EQ(t.local_as<double>()[0], -7.0);
  t.local_as<double>()[1] = -9;
  EXPECT_EQ(mine[1], -9.0);
}

// A device backend: host memory is not wrapped (a clear error on every rank), and local_bytes on
// a device buffer names to_host.
TEST(Wrap, HostMemoryOnADeviceBackendIsAClearError) {
  if (rt().backend().name() == "host") GTEST_SKIP() << "needs a device backend (AXE_BACKEND=cuda)";
  DistLayout l = placed({8, 6}, world(), "S(0)");
  std::vector<double> mine = source_values(l);
  std::string e;
  try {
    (void)DistTensor::wrap(l, mine.data(), mine.size());
  } catch (const Error& x) {
    e = x.what();
  }
  if (!mine.empty())
    EXPECT_NE(e.find("not device memory"), std::string::npos) << e;
  else
    EXPECT_FALSE(e.empty()) << "another rank's host memory fails the agreement";
  auto t = DistTensor::wrap(l, std::span<const double>(mine));
  e.clear();
  try {
    (void)t.local_bytes();
  } catch (const Error& x) {
    e = x.what();
  }
  if (!mine.empty()) {
    EXPECT_NE(e.find("to_host"), std::string::npos) << e;
  }
}

TEST(Wrap, ByValueCopies) {
  DistLayout l = placed({8, 6}, world(), "S(0)");
  std::vector<double> mine = source_values(l);
  auto t = DistTensor::wrap(l, std::span<const double>(mine));
  EXPECT_NE(address(t), static_cast<const void*>(mine.data()));
  mine[0] = -7;
  EXPECT_NE(t.to_host_as<double>()[0], -7.0);
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
      std::vector<std::byte> init(v.size() * es);
      for (std::size_t i = 0; i < v.size(); ++i) store_element(dt, init.data() + i * es, v[i]);
      CallerMemory mem(init);
      auto t = DistTensor::wrap(from, dt, mem.data(), mem.bytes());
      auto r = t.redistribute(to);
      std::vector<double> want = reference_destination(from, to).at(rt().rank());
      EXPECT_EQ(test::compare_local(r, want), "") << a << " -> " << b << " " << to_string(dt);
      HostTensor g = t.gather_all();
      for (std::int64_t i = 0; i < g.elements(); ++i)
        ASSERT_EQ(g.get(i), static_cast<double>(i)) << a;
      EXPECT_EQ(mem.read(), init) << "caller memory changed: " << a << " -> " << b << " "
                                  << to_string(dt);
      EXPECT_EQ(address(t), mem.data());
    }
  }
}

TEST(Wrap, WrongSizeFailsOnEveryRank) {
  AXE_SKIP_IF_WORLD_SMALLER(2);
  // Caller memory of the backend's kind (host or device), so that only the broken rank fails.
  DistLayout l = placed({8, 4}, world(), "S(0)");
  const std::size_t right = static_cast<std::size_t>(l.local_elements()) * sizeof(float);
  CallerMemory mem(std::vector<std::byte>(right + (rt().rank() == 1 ? sizeof(float) : 0)));
  std::string e;
  try {
    (void)DistTensor::wrap(l, DType::F32, mem.data(), mem.bytes());
  } catch (const Error& x) {
    e = x.what();
  }
  EXPECT_NE(e.find("rank 1 passed caller memory of"), std::string::npos) << e;
  // A null pointer with bytes.
  e.clear();
  try {
    (void)DistTensor::wrap(l, DType::F32, rt().rank() == 0 ? nullptr : mem.data(), right);
  } catch (const Error& x) {
    e = x.what();
  }
  EXPECT_NE(e.find("rank 0 passed a null pointer"), std::string::npos) << e;
}

// Ranks outside the mesh wrap nothing (a null pointer of 0 bytes).
TEST(Wrap, RanksOutsideTheMeshPassNothing) {
  Mesh m({{"g", 1}}, {0});
  DistLayout l = placed({3, 2}, m, "R");
  CallerMemory x(rt().rank() == 0 ? bytes_of({0, 1, 2, 3, 4, 5}) : std::vector<std::byte>{});
  auto t = DistTensor::wrap(l, DType::F64, rt().rank() == 0 ? x.data() : nullptr, x.bytes());
  HostTensor g = t.gather_all();
  EXPECT_EQ(g.as<double>()[5], 5.0);
}

}  // namespace
}  // namespace axe
