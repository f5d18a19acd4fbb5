// The cost model at runtime start-up (runtime.hpp: AXE_CALIBRATE, AXE_COST_MODEL), run as
// runtime_calibrate_np2 (its own executable: it calibrates, which the other runtime suites need
// not pay for on every rank count). Each test starts Runtimes of its own inside the test main's
// (MPI stays initialised; RuntimeOptions stand in for the environment variables).
#include <gtest/gtest.h>
#include <mpi.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "axe/runtime/calibrate.hpp"
#include "axe/core/error.hpp"
#include "runtime_test_util.hpp"

namespace axe {
namespace {

std::string read_file(const std::string& path) {
  std::ifstream f(path);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

// Every rank holds the same value (max == min over the world).
bool same_on_every_rank(std::uint64_t v) {
  std::uint64_t hi = 0, lo = 0;
  MPI_Allreduce(&v, &hi, 1, MPI_UINT64_T, MPI_MAX, MPI_COMM_WORLD);
  MPI_Allreduce(&v, &lo, 1, MPI_UINT64_T, MPI_MIN, MPI_COMM_WORLD);
  return hi == lo;
}

class CalibrateStart : public ::testing::Test {
 protected:
  void SetUp() override {
    long id = static_cast<long>(::getpid());
    MPI_Bcast(&id, 1, MPI_LONG, 0, MPI_COMM_WORLD);  // one path for the job
    path_ = (std::filesystem::temp_directory_path() /
             ("axe_calibrate_test_" + std::to_string(id) + ".model"))
                .string();
    remove_file();
    opts_.calibrate_file = path_;
    opts_.calibration.sizes = {4096, 65536};
    opts_.calibration.iterations = 3;
  }
  void TearDown() override { remove_file(); }
  void remove_file() {
    MPI_Barrier(MPI_COMM_WORLD);
    if (test::rt().rank() == 0) std::filesystem::remove(path_);
    MPI_Barrier(MPI_COMM_WORLD);
  }
  void write_file(const std::string& text) {
    if (test::rt().rank() == 0) std::ofstream(path_) << text;
    MPI_Barrier(MPI_COMM_WORLD);
  }
  // The axe::Error of starting a Runtime with `o` ("" when it starts).
  std::string start_error(const RuntimeOptions& o) {
    try {
      Runtime r(o);
    } catch (const Error& e) {
      return e.what();
    }
    return "";
  }
  std::string path_;
  RuntimeOptions opts_;
};

TEST_F(CalibrateStart, FirstStartMeasuresAndWrites_SecondStartLoadsTheSameModel) {
  std::string fp, key, written;
  {
    Runtime a(opts_);
    EXPECT_EQ(a.cost_model_origin().rfind("measured", 0), 0u) << a.cost_model_origin();
    EXPECT_NE(a.cost_model_origin().find(path_), std::string::npos) << a.cost_model_origin();
    fp = a.cost_model().fingerprint();
    key = calibration_key(a, opts_.calibration);
    EXPECT_TRUE(same_on_every_rank(fingerprint(fp))) << "the ranks measured different models";
    ASSERT_TRUE(std::filesystem::exists(path_));
    written = read_file(path_);
    EXPECT_EQ(calibration_key_of(written), key);
    EXPECT_EQ(parse_cost_model_file(written, path_).fingerprint(), fp);
    // Every kind was measured on the world group: one model line each, none left at the default.
    for (auto k : {StepKind::AllGather, StepKind::ReduceScatter, StepKind::AllReduce,
                   StepKind::AllToAll, StepKind::Broadcast, StepKind::Permute, StepKind::SendRecv})
      EXPECT_NE(written.find("\n" + std::string(to_string(k)) + " "), std::string::npos)
          << to_string(k) << "\n"
          << written;
    EXPECT_NE(written.find("\nlocal 0 "), std::string::npos) << written;
    EXPECT_NE(fp, CostModel().fingerprint());
    // DistTensor plans with it: the plan cache keys on the runtime's model.
    const std::int64_t n = a.size();
    Mesh w = parse_mesh("gpu=" + std::to_string(n));
    EXPECT_EQ(test::check_redistribute(shard({4 * n, 8}, w, {Partial()}),
                                       shard({4 * n, 8}, w, {Replicate()}), DType::F32),
              "");
  }
  {
    Runtime b(opts_);
    EXPECT_EQ(b.cost_model_origin(), "loaded " + path_);
    EXPECT_EQ(b.cost_model().fingerprint(), fp);
    EXPECT_TRUE(same_on_every_rank(fingerprint(b.cost_model().fingerprint())));
  }
  EXPECT_EQ(read_file(path_), written) << "the second start rewrote the file";
}

TEST_F(CalibrateStart, FileOfAnotherWorld_IsMeasuredAgain) {
  write_file(
      "# axe-calibration format=1 backend=host world=99 ranks_per_node=99 mesh=- sizes=4096,65536\n"
      "all-gather 1 1\n");
  Runtime a(opts_);
  EXPECT_NE(a.cost_model_origin().find("calibrated for 'format=1 backend=host world=99"),
            std::string::npos)
      << a.cost_model_origin();
  EXPECT_EQ(calibration_key_of(read_file(path_)), calibration_key(a, opts_.calibration));
}

TEST_F(CalibrateStart, NotACalibrationFile_IsAnErrorOnEveryRank_AndKept) {
  write_file("all-gather 1 1\n");
  const std::string e = start_error(opts_);
  EXPECT_NE(e.find(path_), std::string::npos) << e;
  EXPECT_NE(e.find("not an axe calibration file"), std::string::npos) << e;
  EXPECT_EQ(read_file(path_), "all-gather 1 1\n");
}

TEST_F(CalibrateStart, MalformedCalibration_IsAnErrorNamingFileAndLine) {
  std::string key;
  {
    RuntimeOptions plain;
    Runtime probe(plain);
    key = calibration_key(probe, opts_.calibration);
  }
  write_file("# axe-calibration " + key + "\nall-gather 10\n");
  const std::string e = start_error(opts_);
  EXPECT_NE(e.find("'" + path_ + "'"), std::string::npos) << e;
  EXPECT_NE(e.find("line 2"), std::string::npos) << e;
}

// AXE_COST_MODEL: a hand-written model is loaded as is; the planner follows it.
TEST_F(CalibrateStart, CostModelFile_SteersThePlan) {
  write_file("# all-reduce made very expensive\nall-reduce 1000000 0.001\n");
  RuntimeOptions o;
  o.cost_model_file = path_;
  Runtime r(o);
  EXPECT_EQ(r.cost_model_origin(), "file " + path_);
  const std::int64_t n = r.size();
  Mesh w = parse_mesh("gpu=" + std::to_string(n));
  DistLayout from = shard({4 * n, 6}, w, {Partial()}), to = shard({4 * n, 6}, w, {Replicate()});
  auto plan = cached_plan_rank(PlanRequest{from, to, DType::F32}, r.rank(), r.cost_model());
  ASSERT_EQ(plan->steps.size(), 2u);
  EXPECT_EQ(plan->steps[0].kind, StepKind::ReduceScatter);
  EXPECT_EQ(plan->steps[1].kind, StepKind::AllGather);
  EXPECT_EQ(test::check_redistribute(from, to, DType::F32), "");
}

TEST_F(CalibrateStart, CostModelFileOfAnotherWorld_IsAnError) {
  write_file(
      "# axe-calibration format=1 backend=host world=99 ranks_per_node=1 mesh=- sizes=4096,65536\n"
      "all-gather 1 1\n");
  RuntimeOptions o;
  o.cost_model_file = path_;
  const std::string e = start_error(o);
  EXPECT_NE(e.find(path_), std::string::npos) << e;
  EXPECT_NE(e.find("world=99"), std::string::npos) << e;
}

TEST_F(CalibrateStart, MissingCostModelFile_AndBothSettings_AreErrors) {
  RuntimeOptions o;
  o.cost_model_file = path_;
  EXPECT_NE(start_error(o).find("does not exist"), std::string::npos);
  o.calibrate_file = path_ + ".cal";
  EXPECT_NE(start_error(o).find("both set"), std::string::npos);
}

// A directory is not a model: it opened as an empty stream and loaded an empty model silently.
TEST_F(CalibrateStart, DirectoryAsCostModelOrCalibration_IsAnErrorNamingIt) {
  const std::string dir = std::filesystem::temp_directory_path().string();
  RuntimeOptions o;
  o.cost_model_file = dir;
  std::string e = start_error(o);
  EXPECT_NE(e.find("cost model file '" + dir + "' is a directory"), std::string::npos) << e;
  RuntimeOptions c = opts_;
  c.calibrate_file = dir;
  e = start_error(c);
  EXPECT_NE(e.find("AXE_CALIBRATE: cost model file '" + dir + "' is a directory"), std::string::npos) << e;
}

}  // namespace
}  // namespace axe
