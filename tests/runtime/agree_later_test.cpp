// A cached redistribute does not wait for the other ranks (Runtime::agree_later): the first call
// of a request agrees (one blocking agreement), later calls of the same request add none and
// still give the right shards; AXE_AGREE_EACH_CALL=1 agrees on every call. (A disagreement on a
// cached request is a fault test: runtime_mpi_fault_ranks_disagree_on_a_cached_request.)
#include <gtest/gtest.h>

#include "runtime_test_util.hpp"

namespace axe {
namespace {

using test::rt;

TEST(AgreeLater, CachedRedistributeAddsNoBlockingAgreement_HandDerived) {
  const std::int64_t n = rt().size();
  const Mesh m = parse_mesh("gpu=" + std::to_string(n));
  HostTensor x({4 * n, 3}, DType::F64);
  for (std::int64_t i = 0; i < x.elements(); ++i) x.set(i, static_cast<double>(i));
  const DistTensor t = DistTensor::from_global(x, m, {Shard(0)});
  // A request of this test alone (dtype f64, shape 4n x 3, S(0) -> S(1)): new to the memo.
  const DistLayout to = shard({4 * n, 3}, m, {Shard(1)});
  std::uint64_t before = rt().agreements();
  DistTensor a = t.redistribute(to);
  EXPECT_EQ(rt().agreements(), before + 1);  // the first call agrees
  for (int i = 0; i < 3; ++i) {
    before = rt().agreements();
    DistTensor b = t.redistribute(to);
    EXPECT_EQ(rt().agreements(), before);  // cached: checked in the background
    const HostTensor g = b.gather_all();
    for (std::int64_t e = 0; e < x.elements(); ++e)
      ASSERT_EQ(g.get(e), x.get(e)) << "element " << e;
  }
  {
    test::ScopedEnv each("AXE_AGREE_EACH_CALL", "1");
    before = rt().agreements();
    DistTensor c = t.redistribute(to);
    EXPECT_EQ(rt().agreements(), before + 1);
    c.synchronize();
  }
  rt().barrier();  // finishes the last background check first
}

}  // namespace
}  // namespace axe
