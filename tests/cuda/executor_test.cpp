// The device executor on real plans: every destination shard equals the destination layout
// applied to the global tensor (axe::verify, the same law the host executor is held to).
// One GPU: single-rank plans (local copies, fills, transposes). Two GPUs: both ranks as threads
// of this process, NCCL bootstrapped from a shared unique id (no MPI needed).
#include <gtest/gtest.h>

#include <chrono>
#include <random>
#include <cmath>
#include <thread>

#include "axe/core/tunables.hpp"
#include "axe/cuda/executor.hpp"
#include "axe/cuda/kernels.hpp"
#include "axe/cuda/nccl_comm.hpp"
#include "axe/exec/executor.hpp"
#include "axe/exec/simulate.hpp"
#include "cuda/cuda_test_util.hpp"

namespace axe::cuda {
namespace {

using test::DeviceBuffer;

struct Counts {
  std::int64_t launches = -1, nccl_calls = -1;
  std::vector<std::int64_t> chunks;  // pipeline chunks per plan step
  std::int64_t staging = -1;         // executor staging bytes
  bool graphed = false;              // the last execute() launched a CUDA graph
};

// CudaExecutor::set_pipeline arguments (max_chunks 0: the executor's defaults).
struct Pipeline {
  std::int64_t max_chunks = 0, min_bytes = 1, chunk_bytes = 1;
  std::int64_t overlap_min = -1;  // CudaExecutor::set_overlap_min (-1: the default)
  int graphs = -1;                 // CudaExecutor::set_graphs (-1: AXE_CUDA_GRAPHS)
};

// Runs plan_rank(r, rank) on GPU `rank` for each rank (threads), returns the destinations. The
// destination starts as garbage (bytes 0x5A), so padding the executor fails to write shows up.
// `counts` (optional): per rank, the launches and NCCL calls of the last execute().
SimulationResult run_on_gpus(const PlanRequest& req, int nranks, double timeout_s = 60,
                             std::vector<Counts>* counts = nullptr, Pipeline pipeline = {}) {
  PlanRequest r = req;
  r.dtype = DType::F64;
  if (counts) counts->assign(static_cast<std::size_t>(nranks), Counts{});
  SimulationResult res;
  std::vector<std::vector<double>> out(static_cast<std::size_t>(nranks));
  std::vector<std::string> errors(static_cast<std::size_t>(nranks));
  const ncclUniqueId id = NcclComm::unique_id();
  auto body = [&](int rank) {
    try {
      AXE_CUDA_CHECK(cudaSetDevice(rank));
      NcclComm comm(id, rank, nranks, rank, timeout_s);
      CudaExecutor ex(&comm);
      if (pipeline.max_chunks > 0) ex.set_pipeline(pipeline.max_chunks, pipeline.min_bytes, pipeline.chunk_bytes);
      if (pipeline.overlap_min >= 0) ex.set_overlap_min(pipeline.overlap_min);
      if (pipeline.graphs >= 0) ex.set_graphs(pipeline.graphs != 0);
      RankPlan plan = plan_rank(r, rank);
      std::vector<double> src = fill_source(r.from, rank);
      ASSERT_EQ(static_cast<std::int64_t>(src.size()), plan.buffers.front());
      DeviceBuffer ds(src.size() * 8), dd(static_cast<std::size_t>(plan.buffers.back()) * 8);
      ds.upload(src.data(), src.size() * 8);
      // The second run uses the cached preparation and captures a CUDA graph (AXE_CUDA_GRAPHS=1,
      // the default), the third replays it; the destination is garbage again before each.
      for (int rep = 0; rep < 3; ++rep) {
        AXE_CUDA_CHECK(cudaMemset(dd.p, 0x5A, dd.bytes));
        ex.execute(plan, ds.p, dd.p);
        ex.synchronize();
      }
      // the source is never written
      EXPECT_EQ(ds.download(), std::vector<unsigned char>(reinterpret_cast<const unsigned char*>(src.data()),
                                                          reinterpret_cast<const unsigned char*>(src.data()) + src.size() * 8))
          << "rank " << rank << ": the source buffer changed";
      if (counts)
        (*counts)[static_cast<std::size_t>(rank)] = {ex.launches(), ex.nccl_calls(), ex.pipeline_chunks(plan),
                                                     ex.staging_bytes(plan), ex.graphed()};
      auto bytes = dd.download();
      out[static_cast<std::size_t>(rank)].resize(bytes.size() / 8);
      std::memcpy(out[static_cast<std::size_t>(rank)].data(), bytes.data(), bytes.size());
    } catch (const std::exception& e) {
      errors[static_cast<std::size_t>(rank)] = e.what();
    }
  };
  std::vector<std::thread> ts;
  for (int k = 0; k < nranks; ++k) ts.emplace_back(body, k);
  for (auto& t : ts) t.join();
  for (int k = 0; k < nranks; ++k) {
    EXPECT_EQ(errors[static_cast<std::size_t>(k)], "") << "rank " << k;
    res.destination[k] = out[static_cast<std::size_t>(k)];
  }
  return res;
}

struct Transition {
  const char* name;
  const char* mesh;
  std::vector<AxisPlacement> from, to;
  std::vector<std::int64_t> shape;
};

void PrintTo(const Transition& t, std::ostream* os) { *os << t.name; }

PlanRequest request_of(const Transition& t) {
  Mesh m = parse_mesh(t.mesh);
  return PlanRequest{shard(std::span<const std::int64_t>(t.shape), m, std::span<const AxisPlacement>(t.from)),
                     shard(std::span<const std::int64_t>(t.shape), m, std::span<const AxisPlacement>(t.to)),
                     DType::F64};
}

class TwoGpus : public ::testing::TestWithParam<Transition> {};

// The executor's settings come from the tunables table, whose ranges are the executor's own.
TEST(CudaExecutorSettings, TunablesRangesAreTheExecutors) {
  EXPECT_EQ(tunable_info("AXE_PIPELINE_CHUNKS").max, CudaExecutor::kMaxPipelineChunks);
  EXPECT_EQ(tunable_info("AXE_PIPELINE_CHUNKS").min, 1);
  EXPECT_EQ(tunable_info("AXE_PIPELINE_MIN_BYTES").min, 1);
  EXPECT_EQ(tunable_info("AXE_OVERLAP_MIN").min, 0);
  EXPECT_EQ(tunable_info("AXE_PEER_CHUNK_BYTES").min, 0);
}

TEST_P(TwoGpus, Redistribute_MatchesDestinationLayout) {
  AXE_REQUIRE_GPUS(2);
  const auto& t = GetParam();
  const PlanRequest r = request_of(t);
  std::vector<Counts> counts;
  auto res = run_on_gpus(r, 2, 60, &counts);
  EXPECT_EQ(verify(r, res), "") << to_string(plan_all(r));
  // The destination verified is the graph's (the third run replays what the second captured).
  for (int k = 0; k < 2; ++k)
    EXPECT_EQ(counts[static_cast<std::size_t>(k)].graphed, tunable_int("AXE_CUDA_GRAPHS") == 1) << "rank " << k;
}

// The same transitions with pipelining forced on every step it applies to (3 chunks): chunked
// steps on three streams must give the same destinations.
class TwoGpusPipelined : public ::testing::TestWithParam<Transition> {};

TEST_P(TwoGpusPipelined, Redistribute_MatchesDestinationLayout) {
  AXE_REQUIRE_GPUS(2);
  const auto& t = GetParam();
  const PlanRequest r = request_of(t);
  std::vector<Counts> counts;
  auto res = run_on_gpus(r, 2, 60, &counts, Pipeline{3, 1, 1});
  EXPECT_EQ(verify(r, res), "") << to_string(plan_all(r));
  EXPECT_EQ(counts[0].chunks, counts[1].chunks) << "the ranks disagree on the chunks";
  EXPECT_EQ(counts[0].graphed, tunable_int("AXE_CUDA_GRAPHS") == 1);
}

const auto kTwoGpuTransitions = ::testing::Values(
        Transition{"S0_to_R_allgather", "gpu=2", {Shard(0)}, {Replicate()}, {64, 128}},
        Transition{"S0_to_R_uneven", "gpu=2", {Shard(0)}, {Replicate()}, {63, 130}},
        Transition{"P_to_R_allreduce", "gpu=2", {Partial()}, {Replicate()}, {64, 128}},
        Transition{"Pavg_to_R", "gpu=2", {Partial(ReduceOp::Avg)}, {Replicate()}, {64, 128}},
        Transition{"Pmax_to_S0_reducescatter", "gpu=2", {Partial(ReduceOp::Max)}, {Shard(0)}, {64, 128}},
        Transition{"Pmin_to_S1", "gpu=2", {Partial(ReduceOp::Min)}, {Shard(1)}, {33, 70}},
        Transition{"Pprod_to_R", "gpu=2", {Partial(ReduceOp::Prod)}, {Replicate()}, {16, 24}},
        Transition{"S0_to_S1_alltoall", "gpu=2", {Shard(0)}, {Shard(1)}, {64, 128}},
        Transition{"S1_to_S0_3d", "gpu=2", {Shard(1)}, {Shard(0)}, {6, 10, 14}},
        Transition{"R_to_S0_local", "gpu=2", {Replicate()}, {Shard(0)}, {64, 128}},
        Transition{"P_to_S0", "gpu=2", {Partial()}, {Shard(0)}, {31, 17}},
        Transition{"S0_to_P", "gpu=2", {Shard(0)}, {Partial()}, {64, 128}},
        Transition{"S1_to_R_allgather_unpack", "gpu=2", {Shard(1)}, {Replicate()}, {64, 128}},
        Transition{"P_to_S1_reducescatter_pack", "gpu=2", {Partial()}, {Shard(1)}, {64, 128}},
        Transition{"S1_to_R_uneven", "gpu=2", {Shard(1)}, {Replicate()}, {33, 131}});
INSTANTIATE_TEST_SUITE_P(Transitions, TwoGpus, kTwoGpuTransitions,
                         [](const auto& info) { return std::string(info.param.name); });
INSTANTIATE_TEST_SUITE_P(Transitions, TwoGpusPipelined, kTwoGpuTransitions,
                         [](const auto& info) { return std::string(info.param.name); });

// Four GPUs (four threads): the 1-D transitions on gpu=4, even and uneven (blocks of 17, 17, 17
// and 16 rows or columns; a rank with no rows), and the 2x2-mesh transitions of reshard_bench,
// with pipelining off and forced on.
class FourGpus : public ::testing::TestWithParam<Transition> {};

TEST_P(FourGpus, Redistribute_MatchesDestinationLayout) {
  AXE_REQUIRE_GPUS(4);
  const auto& t = GetParam();
  const PlanRequest r = request_of(t);
  auto res = run_on_gpus(r, 4);
  EXPECT_EQ(verify(r, res), "") << to_string(plan_all(r));
  std::vector<Counts> counts;
  res = run_on_gpus(r, 4, 60, &counts, Pipeline{3, 1, 1});
  EXPECT_EQ(verify(r, res), "") << "pipelined\n" << to_string(plan_all(r));
  for (int k = 1; k < 4; ++k) EXPECT_EQ(counts[0].chunks, counts[static_cast<std::size_t>(k)].chunks) << "rank " << k;
}

INSTANTIATE_TEST_SUITE_P(
    Transitions, FourGpus,
    ::testing::Values(Transition{"S0_to_R", "gpu=4", {Shard(0)}, {Replicate()}, {64, 128}},
                      Transition{"S0_to_R_uneven", "gpu=4", {Shard(0)}, {Replicate()}, {67, 130}},
                      Transition{"S0_to_R_empty_rank", "gpu=4", {Shard(0)}, {Replicate()}, {3, 130}},
                      Transition{"S1_to_R_uneven", "gpu=4", {Shard(1)}, {Replicate()}, {9, 131}},
                      Transition{"S0_to_S1_uneven", "gpu=4", {Shard(0)}, {Shard(1)}, {67, 131}},
                      Transition{"S1_to_S0", "gpu=4", {Shard(1)}, {Shard(0)}, {64, 128}},
                      Transition{"P_to_S1", "gpu=4", {Partial()}, {Shard(1)}, {64, 128}},
                      Transition{"P_to_R_uneven", "gpu=4", {Partial()}, {Replicate()}, {33, 67}},
                      Transition{"S0S1_to_RR", "x=2,y=2", {Shard(0), Shard(1)}, {Replicate(), Replicate()}, {64, 128}},
                      Transition{"S0S1_to_RR_uneven", "x=2,y=2", {Shard(0), Shard(1)}, {Replicate(), Replicate()},
                                 {65, 131}},
                      Transition{"S0S1_to_S1S0", "x=2,y=2", {Shard(0), Shard(1)}, {Shard(1), Shard(0)}, {64, 128}},
                      Transition{"S0R_to_RS0", "x=2,y=2", {Shard(0), Replicate()}, {Replicate(), Shard(0)}, {64, 128}},
                      Transition{"S0S0_to_S1S1", "x=2,y=2", {Shard(0), Shard(0)}, {Shard(1), Shard(1)}, {64, 128}},
                      Transition{"RP_to_S0S1", "x=2,y=2", {Replicate(), Partial()}, {Shard(0), Shard(1)}, {64, 128}},
                      Transition{"RP_to_S0S1_uneven", "x=2,y=2", {Replicate(), Partial()}, {Shard(0), Shard(1)},
                                 {33, 67}}),
    [](const auto& info) { return std::string(info.param.name); });

// Copy engines and overlap forced on (thresholds 1 byte, any kernel unit): every local copy of a
// step with a transfer runs on the side stream during it, and with CUDA graphs off every box with
// rows of >= 1 KiB goes through cudaMemcpy(2D)Async. With graphs on the same plans copy every box
// with the kernels (the executor's policy for plans that run as graphs). Shapes with rows of
// 2 KiB and more (f64), even and uneven.
class TwoGpusCopyEngines : public ::testing::TestWithParam<Transition> {};

TEST_P(TwoGpusCopyEngines, Redistribute_MatchesDestinationLayout) {
  AXE_REQUIRE_GPUS(2);
  const CopyEnginePolicy old = set_copy_engine_policy({1, 17});
  const auto& t = GetParam();
  const PlanRequest r = request_of(t);
  for (int graphs : {0, 1}) {
    auto res = run_on_gpus(r, 2, 60, nullptr, Pipeline{0, 1, 1, 1, graphs});
    EXPECT_EQ(verify(r, res), "") << "graphs " << graphs << "\n" << to_string(plan_all(r));
  }
  set_copy_engine_policy(old);
}

TEST(OneGpu, SetOverlapMin_RejectsNegative) {
  AXE_REQUIRE_GPUS(1);
  CudaExecutor ex(nullptr);
  EXPECT_EQ(ex.overlap_min(), std::int64_t{2} << 20);
  EXPECT_THROW(ex.set_overlap_min(-1), Error);
  ex.set_overlap_min(0);
  EXPECT_EQ(ex.overlap_min(), 0);
}

INSTANTIATE_TEST_SUITE_P(
    Transitions, TwoGpusCopyEngines,
    ::testing::Values(Transition{"S1_to_R", "gpu=2", {Shard(1)}, {Replicate()}, {64, 512}},
                      Transition{"S1_to_R_uneven", "gpu=2", {Shard(1)}, {Replicate()}, {33, 517}},
                      Transition{"S0_to_R_uneven", "gpu=2", {Shard(0)}, {Replicate()}, {63, 515}},
                      Transition{"S0_to_S1", "gpu=2", {Shard(0)}, {Shard(1)}, {64, 512}},
                      Transition{"S0_to_S1_uneven", "gpu=2", {Shard(0)}, {Shard(1)}, {65, 515}},
                      Transition{"S1_to_S0", "gpu=2", {Shard(1)}, {Shard(0)}, {64, 512}},
                      Transition{"S1_to_S0_3d", "gpu=2", {Shard(1)}, {Shard(0)}, {6, 10, 300}},
                      Transition{"R_to_S1", "gpu=2", {Replicate()}, {Shard(1)}, {64, 512}},
                      Transition{"P_to_S1", "gpu=2", {Partial()}, {Shard(1)}, {64, 512}},
                      Transition{"P_to_R_uneven", "gpu=2", {Partial()}, {Replicate()}, {33, 517}}),
    [](const auto& info) { return std::string(info.param.name); });

// Pipelining, hand-derived for S(1) -> R of 64x128 f64 on gpu=2 with chunk_bytes 16 KiB, at
// most 4 chunks: each rank unpacks the peer's 64x64 block and copies its own 64x64 block, 8192
// elements = 64 KiB of kernel work -> 4 chunks. The own block is contiguous in the source, so
// each chunk is one zero-copy ncclAllGather of 1024 elements plus one unpack kernel: 4 NCCL
// calls, 4 launches. Staging: two slots of 2 x 1024 received elements = 2 x 16 KiB (unchunked:
// one 64 KiB receive region). S(0) -> R is zero-copy (no kernel work): never chunked.
TEST(TwoGpusPipeline, AllGatherInFourChunks_HandDerived) {
  AXE_REQUIRE_GPUS(2);
  Mesh m = parse_mesh("gpu=2");
  PlanRequest r{shard({64, 128}, m, {Shard(1)}), shard({64, 128}, m, {Replicate()}), DType::F64};
  std::vector<Counts> counts;
  auto res = run_on_gpus(r, 2, 60, &counts, Pipeline{4, 1, 16384});
  EXPECT_EQ(verify(r, res), "") << to_string(plan_all(r));
  for (int k = 0; k < 2; ++k) {
    const Counts& c = counts[static_cast<std::size_t>(k)];
    EXPECT_EQ(c.chunks, std::vector<std::int64_t>{4}) << "rank " << k;
    EXPECT_EQ(c.nccl_calls, 4) << "rank " << k;
    EXPECT_EQ(c.launches, 4) << "rank " << k;
    EXPECT_EQ(c.staging, 2 * 16384) << "rank " << k;
  }
  counts.clear();
  res = run_on_gpus(r, 2, 60, &counts, Pipeline{1, 1, 16384});  // pipelining off
  EXPECT_EQ(verify(r, res), "");
  EXPECT_EQ(counts[0].chunks, std::vector<std::int64_t>{1});
  EXPECT_EQ(counts[0].nccl_calls, 1);
  EXPECT_EQ(counts[0].staging, 65536);
  PlanRequest s0{shard({64, 128}, m, {Shard(0)}), shard({64, 128}, m, {Replicate()}), DType::F64};
  counts.clear();
  res = run_on_gpus(s0, 2, 60, &counts, Pipeline{4, 1, 16384});
  EXPECT_EQ(verify(s0, res), "");
  EXPECT_EQ(counts[0].chunks, std::vector<std::int64_t>{1});
  EXPECT_EQ(counts[0].nccl_calls, 1);
  EXPECT_EQ(counts[0].staging, 0);
}

// Unequal blocks, hand-derived. S(0) -> R of 63x130 f64 on gpu=2: rank 0 holds 32 rows (4160
// elements), rank 1 31 rows (4030). Slots are the largest block rounded up to 256 bytes (32 f64):
// 4160 already is, so both ranks receive into two slots of 4160 with one ncclAllGather (rank 1's
// slot carries 130 elements of padding): staging 2 x 4160 x 8 = 66560 bytes. S(0) -> R of 3x130:
// blocks of 260 and 130 elements, slots of 288: 576 > 390 + 390 / 8, too much padding, so one
// grouped send/recv straight between the buffers (rows are contiguous): no staging.
TEST(TwoGpus, UnequalAllGather_PaddedSlotsOrSendRecv_HandDerived) {
  AXE_REQUIRE_GPUS(2);
  Mesh m = parse_mesh("gpu=2");
  PlanRequest r{shard({63, 130}, m, {Shard(0)}), shard({63, 130}, m, {Replicate()}), DType::F64};
  std::vector<Counts> counts;
  auto res = run_on_gpus(r, 2, 60, &counts);
  EXPECT_EQ(verify(r, res), "") << to_string(plan_all(r));
  for (int k = 0; k < 2; ++k) {
    EXPECT_EQ(counts[static_cast<std::size_t>(k)].nccl_calls, 1) << "rank " << k;
    EXPECT_EQ(counts[static_cast<std::size_t>(k)].staging, 66560) << "rank " << k;
  }
  PlanRequest q{shard({3, 130}, m, {Shard(0)}), shard({3, 130}, m, {Replicate()}), DType::F64};
  counts.clear();
  res = run_on_gpus(q, 2, 60, &counts);
  EXPECT_EQ(verify(q, res), "") << to_string(plan_all(q));
  for (int k = 0; k < 2; ++k) {
    EXPECT_EQ(counts[static_cast<std::size_t>(k)].nccl_calls, 1) << "rank " << k;
    EXPECT_EQ(counts[static_cast<std::size_t>(k)].staging, 0) << "rank " << k;
  }
}

// Folded slice on two GPUs, hand-derived: (R,P) -> (S0,S1) of 64x128 f64 on x=1,y=2. Each rank
// holds a whole 8192-element term; the plan copies it into an intermediate (x has one rank, so
// the "slice" is everything), then reduce-scatters column blocks over y. Folded, the pack reads
// the source: one pack launch, one reduce-scatter, the result in place in the 64x64 destination,
// and staging is the packed send region alone, 8192 x 8 = 65536 bytes (131072 with the
// intermediate).
TEST(TwoGpus, FoldedSliceReduceScatter_HandDerived) {
  AXE_REQUIRE_GPUS(2);
  Mesh m = parse_mesh("x=1,y=2");
  PlanRequest r{shard({64, 128}, m, {Replicate(), Partial()}), shard({64, 128}, m, {Shard(0), Shard(1)}), DType::F64};
  std::vector<Counts> counts;
  auto res = run_on_gpus(r, 2, 60, &counts);
  EXPECT_EQ(verify(r, res), "") << to_string(plan_all(r));
  for (int k = 0; k < 2; ++k) {
    EXPECT_EQ(counts[static_cast<std::size_t>(k)].launches, 1) << "rank " << k;
    EXPECT_EQ(counts[static_cast<std::size_t>(k)].nccl_calls, 1) << "rank " << k;
    EXPECT_EQ(counts[static_cast<std::size_t>(k)].staging, 65536) << "rank " << k;
  }
}

// Staging bound, hand-derived: P -> S(1) of 4096x4096 f64 on gpu=2. Each rank holds a whole
// 128 MiB term and packs both 4096x2048 column blocks for the reduce-scatter (128 MiB of staging,
// at least kStagingBoundMin = 64 MiB), while its destination shard is 64 MiB (the result lands
// there in place). 128 MiB > 64 MiB, so the step runs in 2 * ceil(128 / 64) = 4 chunks even with
// pipelining off: two staging slots of 32 MiB, 64 MiB in all (= the destination), 4
// reduce-scatters. At 2048x2048 (32 MiB of staging, under kStagingBoundMin) it runs unchunked.
TEST(TwoGpusPipeline, StagingBoundChunksReduceScatter_HandDerived) {
  AXE_REQUIRE_GPUS(2);
  Mesh m = parse_mesh("gpu=2");
  PlanRequest r{shard({4096, 4096}, m, {Partial()}), shard({4096, 4096}, m, {Shard(1)}), DType::F64};
  std::vector<Counts> counts;
  auto res = run_on_gpus(r, 2, 60, &counts, Pipeline{1, 1, 1});
  EXPECT_EQ(verify(r, res), "");
  for (int k = 0; k < 2; ++k) {
    const Counts& c = counts[static_cast<std::size_t>(k)];
    EXPECT_EQ(c.chunks, std::vector<std::int64_t>{4}) << "rank " << k;
    EXPECT_EQ(c.nccl_calls, 4) << "rank " << k;
    EXPECT_EQ(c.staging, 64 << 20) << "rank " << k;
  }
  PlanRequest small{shard({2048, 2048}, m, {Partial()}), shard({2048, 2048}, m, {Shard(1)}), DType::F64};
  counts.clear();
  res = run_on_gpus(small, 2, 60, &counts, Pipeline{1, 1, 1});
  EXPECT_EQ(verify(small, res), "");
  EXPECT_EQ(counts[0].chunks, std::vector<std::int64_t>{1});
  EXPECT_EQ(counts[0].nccl_calls, 1);
  EXPECT_EQ(counts[0].staging, 32 << 20);
}

// A step the planner split for its staging limit runs chunk after chunk on the executor's stream,
// however many chunks there are (more than the 16 a pipelined step may have): S(1) -> R of 64x128
// f64 on gpu=2 with a 4 KiB staging limit is many all-gathers, one NCCL call each, and the
// executor pipelines none of them.
TEST(TwoGpusPipeline, PlannerChunkedStepRunsInOrder) {
  AXE_REQUIRE_GPUS(2);
  Mesh m = parse_mesh("gpu=2");
  PlanRequest r{shard({64, 128}, m, {Shard(1)}), shard({64, 128}, m, {Replicate()}), DType::F64};
  r.staging_limit = 4096;
  const std::size_t steps = plan_all(r).kinds.size();
  ASSERT_GT(steps, static_cast<std::size_t>(CudaExecutor::kMaxPipelineChunks));
  std::vector<Counts> counts;
  auto res = run_on_gpus(r, 2, 60, &counts);
  EXPECT_EQ(verify(r, res), "");
  for (int k = 0; k < 2; ++k) {
    EXPECT_EQ(counts[static_cast<std::size_t>(k)].chunks, std::vector<std::int64_t>(steps, 1)) << "rank " << k;
    EXPECT_EQ(counts[static_cast<std::size_t>(k)].nccl_calls, static_cast<std::int64_t>(steps)) << "rank " << k;
  }
}

TEST(OneGpu, SetPipeline_RejectsValuesOutOfRange) {
  AXE_REQUIRE_GPUS(1);
  CudaExecutor ex(nullptr);
  EXPECT_THROW(ex.set_pipeline(0, 1), Error);
  EXPECT_THROW(ex.set_pipeline(17, 1), Error);
  EXPECT_THROW(ex.set_pipeline(2, 0), Error);
  EXPECT_THROW(ex.set_pipeline(2, 1, 0), Error);
  EXPECT_NO_THROW(ex.set_pipeline(16, 1, 1));
}

// Single-collective transitions whose blocks are contiguous run as exactly one NCCL call and no
// kernel: no padding (the copies and received blocks cover the destination), no pack (the send
// block is one range of the source), no unpack (NCCL writes the destination). Hand-derived for
// 64x128 on gpu=2, rank r:
//   S0->R: block = rows 32r..32r+31 = source [0, 4096), lands at destination [4096 r, +4096) in
//          group order: ncclAllGather(source, destination, 4096).
//   P->R:  the whole term, source [0, 8192) -> destination [0, 8192): ncclAllReduce.
//   P->S0: member i's block = source [4096 i, +4096), in group order; the result is the whole
//          destination [0, 4096): ncclReduceScatter(source, destination, 4096).
//   avg P->R: the same all-reduce plus one kernel dividing the destination by 2 in place.
TEST(TwoGpusZeroCopy, OneCollectiveTransitions_OneNcclCallNoKernel) {
  AXE_REQUIRE_GPUS(2);
  struct Case {
    AxisPlacement from, to;
    std::int64_t kernels;
  };
  for (const Case& c : {Case{Shard(0), Replicate(), 0}, Case{Partial(), Replicate(), 0},
                        Case{Partial(), Shard(0), 0}, Case{Partial(ReduceOp::Avg), Replicate(), 1},
                        Case{Partial(ReduceOp::Max), Shard(0), 0}}) {
    Mesh m = parse_mesh("gpu=2");
    PlanRequest r{shard({64, 128}, m, {c.from}), shard({64, 128}, m, {c.to}), DType::F64};
    std::vector<Counts> counts;
    auto res = run_on_gpus(r, 2, 60, &counts);
    EXPECT_EQ(verify(r, res), "") << to_string(plan_all(r));
    for (int k = 0; k < 2; ++k) {
      EXPECT_EQ(counts[static_cast<std::size_t>(k)].launches, c.kernels) << to_string(plan_all(r)) << "rank " << k;
      EXPECT_EQ(counts[static_cast<std::size_t>(k)].nccl_calls, 1) << to_string(plan_all(r)) << "rank " << k;
    }
  }
}

// All-to-all S0->S1 of 64x128 on gpu=2: rank r keeps columns 64r..64r+63; the block it receives
// (the peer's 32 rows of those columns) is contiguous in the destination (rows 32p..32p+31 of a
// 64x64 shard), so it is received in place; the strided send is packed (1 kernel) and the local
// copy is 1 kernel: 2 kernels, 1 grouped call, no padding.
TEST(TwoGpusZeroCopy, AllToAll_ReceivesInPlace) {
  AXE_REQUIRE_GPUS(2);
  Mesh m = parse_mesh("gpu=2");
  PlanRequest r{shard({64, 128}, m, {Shard(0)}), shard({64, 128}, m, {Shard(1)}), DType::F64};
  std::vector<Counts> counts;
  auto res = run_on_gpus(r, 2, 60, &counts);
  EXPECT_EQ(verify(r, res), "") << to_string(plan_all(r));
  for (int k = 0; k < 2; ++k) {
    EXPECT_EQ(counts[static_cast<std::size_t>(k)].launches, 2) << to_string(plan_all(r)) << "rank " << k;
    EXPECT_EQ(counts[static_cast<std::size_t>(k)].nccl_calls, 1) << "rank " << k;
  }
}

TEST(OneGpu, Redistribute_SingleRankPlansMatchDestinationLayout) {
  AXE_REQUIRE_GPUS(1);
  for (auto [from, to] : {std::pair{Shard(0), Replicate()}, std::pair{Replicate(), Shard(1)},
                          std::pair{Partial(), Replicate()}}) {
    Mesh m = parse_mesh("gpu=1");
    PlanRequest r{shard({37, 21}, m, {from}), shard({37, 21}, m, {to}), DType::F64};
    auto res = run_on_gpus(r, 1);
    EXPECT_EQ(verify(r, res), "") << to_string(plan_all(r));
  }
}

// A hand-written single-rank plan with fills and a transposing local copy: no communicator.
TEST(OneGpu, Execute_LocalTransposeAndFillsWithoutCommunicator) {
  AXE_REQUIRE_GPUS(1);
  RankPlan p;
  p.rank = 0;
  p.dtype = DType::F32;
  p.buffers = {40 * 50, 50 * 52};
  Step s;
  s.kind = StepKind::LocalCopy;
  s.in = 0;
  s.out = 1;
  s.copies.push_back(Transfer{{40, 50}, 0, {50, 1}, 0, {1, 52}, 0});  // transpose into 50x(52) rows
  s.fills.push_back(Transfer{{50, 2}, 40, {52, 1}, 40, {52, 1}, 0});  // columns 40..41 of each row
  s.reduce = false;
  s.op = ReduceOp::Max;
  p.steps.push_back(s);
  std::vector<float> src(40 * 50);
  for (std::size_t i = 0; i < src.size(); ++i) src[i] = static_cast<float>(i);
  DeviceBuffer ds(src.size() * 4), dd(static_cast<std::size_t>(p.buffers[1]) * 4);
  ds.upload(src.data(), src.size() * 4);
  CudaExecutor ex(nullptr);
  ex.execute(p, ds.p, dd.p);
  ex.synchronize();
  auto b = dd.download();
  std::vector<float> got(b.size() / 4);
  std::memcpy(got.data(), b.data(), b.size());
  // host executor on the same plan
  std::vector<float> want(got.size());
  InMemoryNetwork net;
  InMemoryTransport tr(net, 0);
  execute(p, tr, std::as_bytes(std::span(src)), std::as_writable_bytes(std::span(want)));
  for (std::size_t i = 0; i < got.size(); ++i) {
    if (std::isnan(want[i])) {
      EXPECT_TRUE(std::isnan(got[i])) << i;
    } else {
      EXPECT_EQ(got[i], want[i]) << i;
    }
  }
  EXPECT_GE(ex.launches(), 3);  // pad, fill, transpose
}

// CUDA graphs, one GPU, a local transposing copy: the first call of a (source, destination) pair
// runs eagerly, the second captures and launches a graph, later ones replay it, each writing the
// transpose (the destination is cleared before every call); another destination starts over;
// set_graphs(false) runs eagerly again. Launch counts are those of the captured call.
TEST(OneGpu, Graphs_CapturedOnTheSecondCallOfAPointerPairAndReplayed) {
  AXE_REQUIRE_GPUS(1);
  RankPlan p;
  p.rank = 0;
  p.dtype = DType::F32;
  p.buffers = {40 * 50, 50 * 40};
  Step s;
  s.kind = StepKind::LocalCopy;
  s.copies.push_back(Transfer{{40, 50}, 0, {50, 1}, 0, {1, 40}, 0});  // 40x50 -> 50x40
  p.steps.push_back(s);
  std::vector<float> src(40 * 50);
  for (std::size_t i = 0; i < src.size(); ++i) src[i] = static_cast<float>(i);
  DeviceBuffer ds(src.size() * 4), d1(src.size() * 4), d2(src.size() * 4);
  ds.upload(src.data(), src.size() * 4);
  CudaExecutor ex(nullptr);
  ex.set_graphs(true);
  auto run = [&](DeviceBuffer& dd) {
    AXE_CUDA_CHECK(cudaMemset(dd.p, 0, dd.bytes));
    ex.execute(p, ds.p, dd.p);
    ex.synchronize();
    auto b = dd.download();
    std::vector<float> got(b.size() / 4);
    std::memcpy(got.data(), b.data(), b.size());
    for (int i = 0; i < 40; ++i)
      for (int j = 0; j < 50; ++j)
        if (got[static_cast<std::size_t>(j * 40 + i)] != src[static_cast<std::size_t>(i * 50 + j)]) return false;
    return true;
  };
  const bool want[] = {false, true, true, true};
  for (int call = 0; call < 4; ++call) {
    EXPECT_TRUE(run(d1)) << "call " << call;
    EXPECT_EQ(ex.graphed(), want[call]) << "call " << call;
    EXPECT_EQ(ex.launches(), 1) << "call " << call;
  }
  EXPECT_TRUE(run(d2));
  EXPECT_FALSE(ex.graphed()) << "a new pair runs eagerly first";
  EXPECT_TRUE(run(d2));
  EXPECT_TRUE(ex.graphed());
  ex.set_graphs(false);
  EXPECT_TRUE(run(d1));
  EXPECT_FALSE(ex.graphed());
}

// Steps run as their recorded kind: a rank whose messages do not have the declared collective's
// shape is an axe::Error naming the rank and the step, raised before anything is enqueued (the
// host executor's rule), never a silent per-rank fallback to send/recv.
TEST(OneGpu, Execute_RejectsMessagesThatDoNotMatchTheDeclaredCollective) {
  AXE_REQUIRE_GPUS(1);
  auto plan_with = [](StepKind kind, bool equal_blocks, std::vector<Message> sends, std::vector<Message> recvs) {
    RankPlan p;
    p.rank = 0;
    p.dtype = DType::F32;
    p.buffers = {64, 128};
    Step s;
    s.kind = kind;
    s.group = {0, 1, 2};
    s.equal_blocks = equal_blocks;
    s.sends = std::move(sends);
    s.recvs = std::move(recvs);
    p.steps.push_back(s);
    return p;
  };
  const Transfer a{{32}, 0, {1}, 0, {1}, 0}, b{{32}, 32, {1}, 0, {1}, 0}, small{{16}, 0, {1}, 64, {1}, 0};
  struct Bad {
    const char* why;
    RankPlan plan;
  };
  const Bad cases[] = {
      {"different blocks", plan_with(StepKind::AllGather, true, {{1, {a}}, {2, {b}}}, {})},
      {"outside the group", plan_with(StepKind::AllToAll, true, {{5, {a}}}, {})},
      {"equal_blocks", plan_with(StepKind::AllGather, true, {{1, {a}}, {2, {a}}}, {{1, {small}}, {2, {small}}})},
      {"every member", plan_with(StepKind::AllGather, false, {{1, {a}}}, {})},
  };
  for (const Bad& c : cases) {
    CudaExecutor ex(nullptr);
    DeviceBuffer ds(64 * 4), dd(128 * 4);
    try {
      ex.execute(c.plan, ds.p, dd.p);
      ADD_FAILURE() << "no error for: " << c.why;
    } catch (const Error& e) {
      const std::string m = e.what();
      EXPECT_NE(m.find("rank 0 step 0"), std::string::npos) << m;
      EXPECT_NE(m.find(c.why), std::string::npos) << m;
    }
    EXPECT_EQ(ex.launches(), 0);
  }
}

// Failure detection: rank 1 never joins the exchange; rank 0 must raise within its timeout, and
// rank 1, joining after rank 0 aborted, must raise as well.
TEST(TwoGpusFailure, Timeout_AbortsAndEveryRankRaises) {
  AXE_REQUIRE_GPUS(2);
  Mesh m = parse_mesh("gpu=2");
  PlanRequest r{shard({64, 128}, m, {Shard(0)}), shard({64, 128}, m, {Shard(1)}), DType::F64};
  const ncclUniqueId id = NcclComm::unique_id();
  std::string err[2];
  double seconds[2] = {0, 0};
  std::atomic<bool> rank0_done{false};
  auto body = [&](int rank) {
    auto t0 = std::chrono::steady_clock::now();
    try {
      AXE_CUDA_CHECK(cudaSetDevice(rank));
      NcclComm comm(id, rank, 2, rank, 3.0);
      CudaExecutor ex(&comm);
      RankPlan plan = plan_rank(r, rank);
      DeviceBuffer ds(static_cast<std::size_t>(plan.buffers.front()) * 8),
          dd(static_cast<std::size_t>(plan.buffers.back()) * 8);
      if (rank == 1)
        while (!rank0_done) std::this_thread::sleep_for(std::chrono::milliseconds(10));
      t0 = std::chrono::steady_clock::now();
      ex.execute(plan, ds.p, dd.p);
      ex.synchronize();
    } catch (const std::exception& e) {
      err[rank] = e.what();
    }
    seconds[rank] = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (rank == 0) rank0_done = true;
  };
  std::thread a(body, 0), b(body, 1);
  a.join();
  b.join();
  EXPECT_NE(err[0], "") << "rank 0 did not raise";
  EXPECT_LT(seconds[0], 30.0);
  EXPECT_NE(err[0].find("rank 0"), std::string::npos) << err[0];
  // rank 1: its peer's communicator is gone; it must raise too (timeout or remote error)
  EXPECT_NE(err[1], "") << "rank 1 did not raise";
  std::cout << "rank 0: " << err[0] << " (" << seconds[0] << " s)\nrank 1: " << err[1] << " ("
            << seconds[1] << " s)\n";
}

}  // namespace
}  // namespace axe::cuda
