// The host backend runs the executor's collectives as native MPI collectives (mpi_transport.hpp):
// every collective step of a native dtype is counted as one native call of its kind, the result
// equals the global tensor element by element, and equals what the exchange()-based defaults
// produce (native collectives switched off).
#include <gtest/gtest.h>

#include <set>

#include "axe/core/error.hpp"
#include "axe/runtime/mpi_transport.hpp"
#include "runtime_test_util.hpp"

namespace axe {
namespace {

using test::rt;

struct Case {
  std::string name;
  DistLayout from, to;
};

DistLayout placed(const std::vector<std::int64_t>& shape, const Mesh& m, const char* p) {
  auto pl = parse_placements(p);
  return shard(std::span<const std::int64_t>(shape), m, std::span<const AxisPlacement>(pl));
}

// One case of every collective kind (equal and uneven blocks), on the world and on sub-groups.
std::vector<Case> cases() {
  const int n = rt().size();
  Mesh w = parse_mesh("gpu=" + std::to_string(n));
  std::vector<Case> v = {
      {"all-gather", placed({8, 6}, w, "S(0)"), placed({8, 6}, w, "R")},
      {"all-gather uneven", placed({7, 5}, w, "S(0)"), placed({7, 5}, w, "R")},
      {"all-to-all", placed({8, 8}, w, "S(0)"), placed({8, 8}, w, "S(1)")},
      {"all-to-all uneven", placed({7, 5}, w, "S(0)"), placed({7, 5}, w, "S(1)")},
      {"reduce-scatter", placed({8, 6}, w, "P"), placed({8, 6}, w, "S(0)")},
      {"reduce-scatter uneven", placed({7, 5}, w, "P"), placed({7, 5}, w, "S(0)")},
      {"all-reduce", placed({8, 6}, w, "P"), placed({8, 6}, w, "R")},
      {"all-reduce max", placed({8, 6}, w, "P(max)"), placed({8, 6}, w, "R")},
      {"broadcast", DistLayout({4, 8}, parse_axe_layout("S[(4,8):(8,1)] + 1@gpu"), w),
       DistLayout({4, 8}, parse_axe_layout("S[(4,8):(8,1)] + R[" + std::to_string(n) + ":1@gpu]"),
                  w)},
  };
  if (n >= 4) {
    Mesh m = parse_mesh("x=2,y=" + std::to_string(n / 2));
    v.push_back({"2-D all-gather", placed({8, 8}, m, "S(0),S(1)"), placed({8, 8}, m, "R,R")});
    v.push_back({"2-D partial", placed({8, 8}, m, "P,S(1)"), placed({8, 8}, m, "R,S(1)")});
    v.push_back({"2-D transpose", placed({8, 8}, m, "S(0),S(1)"), placed({8, 8}, m, "S(1),S(0)")});
  }
  return v;
}

bool reduces(StepKind k) {
  return k == StepKind::ReduceScatter || k == StepKind::AllReduce;
}
bool native_dtype(DType t) {
  return t != DType::F16 && t != DType::BF16;
}

// Expected counts for this rank's plan of (from -> to, dt).
CollectiveCounts expected(const DistLayout& from, const DistLayout& to, DType dt, bool native) {
  CollectiveCounts c;
  auto plan = cached_plan_rank(PlanRequest{from, to, dt}, rt().rank());
  if (plan->buffers.empty()) return c;
  for (const Step& s : plan->steps) {
    if (!is_collective(s.kind) || s.group.size() < 2) continue;
    if (!native || (reduces(s.kind) && !native_dtype(dt))) {
      ++c.fallback;
      continue;
    }
    switch (s.kind) {
      case StepKind::AllGather:
        ++c.all_gather;
        break;
      case StepKind::AllToAll:
        ++c.all_to_all;
        break;
      case StepKind::ReduceScatter:
        ++c.reduce_scatter;
        break;
      case StepKind::AllReduce:
        ++c.all_reduce;
        break;
      case StepKind::Broadcast:
        ++c.broadcast;
        break;
      default:
        break;
    }
  }
  return c;
}

CollectiveCounts minus(const CollectiveCounts& a, const CollectiveCounts& b) {
  CollectiveCounts d;
  d.all_gather = a.all_gather - b.all_gather;
  d.all_to_all = a.all_to_all - b.all_to_all;
  d.reduce_scatter = a.reduce_scatter - b.reduce_scatter;
  d.all_reduce = a.all_reduce - b.all_reduce;
  d.broadcast = a.broadcast - b.broadcast;
  d.fallback = a.fallback - b.fallback;
  return d;
}

std::string text(const CollectiveCounts& c) {
  return "ag " + std::to_string(c.all_gather) + " a2a " + std::to_string(c.all_to_all) + " rs " +
         std::to_string(c.reduce_scatter) + " ar " + std::to_string(c.all_reduce) + " bc " +
         std::to_string(c.broadcast) + " fallback " + std::to_string(c.fallback);
}

class NativeCollectives : public ::testing::TestWithParam<DType> {
 protected:
  void TearDown() override { rt().transport().set_native_collectives(true); }
};

// Law: with native collectives on, every collective step of a native dtype/op is one native MPI
// call of its kind (f16/bf16 reductions use the exchange defaults), and the destination equals
// the global tensor; with them off, the same bytes come from the defaults.
TEST_P(NativeCollectives, EveryCollectiveStepRunsNativelyAndMatches) {
  AXE_SKIP_IF_WORLD_SMALLER(2);
  AXE_SKIP_UNLESS_HOST_BACKEND("counts the MPI transport's native collectives");
  const DType dt = GetParam();
  MpiTransport& tr = rt().transport();
  std::set<StepKind> seen;
  for (bool native : {true, false}) {
    tr.set_native_collectives(native);
    for (const auto& c : cases()) {
      // u8 sums wrap (MPI modulo 256, the defaults saturate): only max reductions for u8.
      if (dt == DType::U8 && c.from.layout().terms() > 1 &&
          c.from.layout().reduce_op() != ReduceOp::Max)
        continue;
      const CollectiveCounts before = tr.collective_counts();
      EXPECT_EQ(test::check_redistribute(c.from, c.to, dt), "")
          << c.name << (native ? " native" : " exchange");
      const CollectiveCounts want = expected(c.from, c.to, dt, native);
      EXPECT_EQ(text(minus(tr.collective_counts(), before)), text(want))
          << c.name << (native ? " native" : " exchange") << ": " << to_string(c.from) << " -> "
          << to_string(c.to);
      auto plan = cached_plan_rank(PlanRequest{c.from, c.to, dt}, rt().rank());
      for (const Step& s : plan->steps)
        if (is_collective(s.kind) && s.group.size() > 1) seen.insert(s.kind);
    }
  }
  // The cases cover every collective kind (on rank 0, which takes part in all of them; u8 has no
  // reduce-scatter case).
  if (rt().rank() == 0 && dt != DType::U8) {
    for (StepKind k : {StepKind::AllGather, StepKind::AllToAll, StepKind::ReduceScatter,
                       StepKind::AllReduce, StepKind::Broadcast})
      EXPECT_TRUE(seen.count(k)) << "no case planned a " << to_string(k);
  }
}

INSTANTIATE_TEST_SUITE_P(Dtypes, NativeCollectives,
                         ::testing::Values(DType::F32, DType::F64, DType::I32, DType::I64,
                                           DType::U8, DType::BF16, DType::F16),
                         [](const auto& i) { return std::string(to_string(i.param)); });

// Sub-communicators are created once per group and reused.
TEST(NativeCollectives, SubCommunicatorsAreCached) {
  AXE_SKIP_UNLESS_HOST_BACKEND("counts the MPI transport's sub-communicators");
  AXE_SKIP_IF_WORLD_SMALLER(4);
  MpiTransport& tr = rt().transport();
  Mesh m = parse_mesh("x=2,y=" + std::to_string(rt().size() / 2));
  DistLayout from = placed({8, 8}, m, "S(0),S(1)"), to = placed({8, 8}, m, "S(0),R");
  EXPECT_EQ(test::check_redistribute(from, to, DType::F32), "");
  const auto made = tr.collective_counts().communicators;
  for (int i = 0; i < 3; ++i) EXPECT_EQ(test::check_redistribute(from, to, DType::F32), "");
  EXPECT_EQ(tr.collective_counts().communicators, made);
  EXPECT_GT(tr.collective_counts().communicators, 0);
}

}  // namespace
}  // namespace axe
