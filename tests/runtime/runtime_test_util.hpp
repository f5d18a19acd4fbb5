// Helpers of the MPI runtime tests: the global tensor (element x holds x), source shards from the
// simulator's oracle, and element-by-element checks against reference_destination.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "axe/runtime/dist_tensor.hpp"
#include "axe/core/error.hpp"
#include "axe/runtime/runtime.hpp"
#include "axe/exec/simulate.hpp"
#include "support/test_support.hpp"

namespace axe::test {

inline Runtime& rt() { return Runtime::current(); }

// A mesh that needs more ranks than the world is skipped on every rank alike.
#define AXE_SKIP_IF_WORLD_SMALLER(n)                                                               \
  do {                                                                                             \
    if (::axe::Runtime::current().size() < (n))                                                    \
      GTEST_SKIP() << "needs " << (n) << " ranks, the world has " << ::axe::Runtime::current().size(); \
  } while (0)

// A test of the host backend's own machinery (its MPI collectives) is skipped on other backends.
#define AXE_SKIP_UNLESS_HOST_BACKEND(why)                                                          \
  do {                                                                                             \
    if (::axe::Runtime::current().backend().name() != "host")                                      \
      GTEST_SKIP() << "host backend only (" << (why) << "); this run uses the "                    \
                   << ::axe::Runtime::current().backend().name() << " backend";                    \
  } while (0)

// A backend over host memory for tests that build their own Runtime around a misbehaving backend
// (a failed one, one out of memory); execute() is not used by those tests.
class HostMemoryTestBackend : public Backend {
 public:
  std::shared_ptr<Buffer> allocate(std::size_t bytes) override { return std::make_shared<HostBuffer>(bytes); }
  void copy_from_host(std::span<const std::byte> src, Buffer& dst) override {
    if (!src.empty()) std::memcpy(dst.host_data(), src.data(), src.size());
  }
  void copy_to_host(const Buffer& src, std::span<std::byte> dst) override {
    if (!dst.empty()) std::memcpy(dst.data(), src.host_data(), dst.size());
  }
  void execute(const RankPlan&, const Buffer&, Buffer&) override {
    throw Error(std::string(name()) + ": execute is not used by this test");
  }
};

inline std::int64_t max_rank(const DistLayout& l) {
  std::int64_t m = 0;
  for (auto r : l.mesh().ranks()) m = std::max(m, r);
  return m;
}

// This rank's source shard of `l` for the global tensor x -> x (partial terms per simulate.hpp).
inline DistTensor source_tensor(const DistLayout& l, DType dt) {
  std::vector<double> v = fill_source(l, rt().rank());
  std::vector<std::byte> b(v.size() * static_cast<std::size_t>(size_of(dt)));
  for (std::size_t i = 0; i < v.size(); ++i) store_element(dt, b.data() + i * static_cast<std::size_t>(size_of(dt)), v[i]);
  return DistTensor::wrap(l, dt, std::move(b));
}

// "" when the local buffer equals `want` (NaN = padding: NaN for floats, 0 for integers). Reads
// through to_host(), so it works on every backend.
inline std::string compare_local(const DistTensor& t, const std::vector<double>& want) {
  const std::vector<std::byte> bytes = t.to_host();
  const std::int64_t es = size_of(t.dtype());
  if (static_cast<std::int64_t>(bytes.size()) != static_cast<std::int64_t>(want.size()) * es)
    return "rank " + std::to_string(rt().rank()) + ": buffer has " + std::to_string(bytes.size() / es) +
           " elements, expected " + std::to_string(want.size());
  for (std::size_t i = 0; i < want.size(); ++i) {
    double got = load_element(t.dtype(), bytes.data() + i * static_cast<std::size_t>(es));
    double w = want[i];
    if (std::isnan(w) && !is_floating(t.dtype())) w = 0;
    bool same = (std::isnan(w) && std::isnan(got)) || w == got;
    if (!same)
      return "rank " + std::to_string(rt().rank()) + " slot " + std::to_string(i) + ": expected " +
             std::to_string(w) + ", got " + std::to_string(got);
  }
  return "";
}

// Redistributes from -> to on the world; checks the destination element by element against the
// reference, and that the source is unchanged. Returns "" or the first mismatch.
inline std::string check_redistribute(const DistLayout& from, const DistLayout& to, DType dt) {
  DistTensor src = source_tensor(from, dt);
  const std::vector<std::byte> before = src.to_host();
  DistTensor dst = src.redistribute(to);
  std::vector<double> want;
  if (to.mesh().contains(rt().rank())) want = reference_destination(from, to).at(rt().rank());
  std::string err = compare_local(dst, want);
  if (err.empty() && before != src.to_host())
    err = "rank " + std::to_string(rt().rank()) + ": the source buffer changed";
  return err.empty() ? "" : err + "\n  request: " + dst.last_plan();
}

}  // namespace axe::test
