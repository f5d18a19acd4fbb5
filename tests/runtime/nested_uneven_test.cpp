// Uneven dims sharded over several mesh axes chunk nested, as DTensor does (10 rows over dp=2 then
// tp=2: 5,5 then 3,2 each, so shards of 3,2,3,2 rows starting at rows 0,3,5,8). from_global must
// place padding inside the dim, not only at its end.
#include <gtest/gtest.h>

#include "runtime_test_util.hpp"

namespace axe {
namespace {

using test::rt;

HostTensor iota(std::vector<std::int64_t> shape) {
  HostTensor h(std::move(shape), DType::F64);
  for (std::int64_t i = 0; i < h.elements(); ++i) h.set(i, static_cast<double>(i));
  return h;
}

TEST(NestedUneven, FromGlobalHoldsDTensorShards) {
  AXE_SKIP_IF_WORLD_SMALLER(4);
  HostTensor x = iota({10, 3});
  Mesh m = parse_mesh("dp=2,tp=2");
  auto t = DistTensor::from_global(x, m, {Shard(0), Shard(0)});
  if (m.contains(rt().rank())) {
    // Hand-derived: device (dp,tp) holds rows [first, first+count) with
    // (0,0): 0..3, (0,1): 3..5, (1,0): 5..8, (1,1): 8..10; buffers padded to 3 rows.
    const std::int64_t first[4] = {0, 3, 5, 8}, count[4] = {3, 2, 3, 2};
    const auto idx = m.index_of(rt().rank());
    auto d = t.to_host_as<double>();
    ASSERT_EQ(d.size(), 9u);
    for (std::int64_t i = 0; i < 3; ++i)
      for (std::int64_t j = 0; j < 3; ++j) {
        const double got = d[static_cast<std::size_t>(i * 3 + j)];
        if (i < count[idx]) {
          EXPECT_EQ(got, static_cast<double>((first[idx] + i) * 3 + j));
        } else {
          EXPECT_TRUE(std::isnan(got)) << "padding row " << i << " on device " << idx;
        }
      }
  }
  EXPECT_EQ(t.gather_all().data, x.data);
}

TEST(NestedUneven, RedistributeToReplicateAndBack) {
  AXE_SKIP_IF_WORLD_SMALLER(4);
  HostTensor x = iota({7, 5});
  Mesh m = parse_mesh("dp=2,tp=2");
  auto t = DistTensor::from_global(x, m, {Shard(0), Shard(0)});
  auto r = t.redistribute({Replicate(), Replicate()});
  EXPECT_EQ(r.gather_all().data, x.data);
  auto back = r.redistribute({Shard(0), Shard(0)});
  EXPECT_EQ(test::compare_local(back, m.contains(rt().rank()) ? fill_source(back.layout(), rt().rank())
                                                               : std::vector<double>{}),
            "");
}

}  // namespace
}  // namespace axe
