// Backend::failed() (backend.hpp) joins Runtime::failed() and the agreement: once a backend has
// failed (the CUDA backend after an NCCL error or timeout), the runtime reports failed() (so
// ~Runtime ends the job with MPI_Abort, not MPI_Finalize) and every later collective agreement
// raises axe::Error on every rank, naming the failed rank, even where the backend is healthy.
#include <gtest/gtest.h>

#include <cstring>

#include "axe/core/error.hpp"
#include "runtime_test_util.hpp"

namespace axe {
namespace {

// Host memory; failed() is what the test sets.
class BreakableBackend : public test::HostMemoryTestBackend {
 public:
  std::string_view name() const override { return "breakable"; }
  bool failed() const override { return broken; }
  bool broken = false;
};

class FailedBackend : public ::testing::Test {
 protected:
  void SetUp() override {
    register_backend({"breakable", [] { return true; },
                      [](Runtime&) { return std::make_unique<BreakableBackend>(); }});
    RuntimeOptions o;
    o.backend = "breakable";
    rt_ = std::make_unique<Runtime>(o);  // MPI already initialised: never aborts or finalizes
    be_ = dynamic_cast<BreakableBackend*>(&rt_->backend());
    ASSERT_NE(be_, nullptr);
  }
  void TearDown() override {
    be_->broken = false;
    rt_.reset();
  }
  std::string agree_error() {
    try {
      rt_->agree("test agreement", "");
    } catch (const Error& e) {
      return e.what();
    }
    return "";
  }
  std::unique_ptr<Runtime> rt_;
  BreakableBackend* be_ = nullptr;
};

TEST_F(FailedBackend, HealthyBackendKeepsTheRuntimeUsable) {
  EXPECT_FALSE(rt_->failed());
  EXPECT_EQ(agree_error(), "");
}

TEST_F(FailedBackend, RuntimeFailedIncludesTheBackend) {
  be_->broken = true;
  EXPECT_TRUE(rt_->failed());
  be_->broken = false;
  EXPECT_FALSE(rt_->failed());
}

// Only the last rank's backend failed: the agreement fails on every rank and names it.
TEST_F(FailedBackend, OneFailedBackendFailsTheAgreementOnEveryRank) {
  const int last = rt_->size() - 1;
  be_->broken = rt_->rank() == last;
  const std::string e = agree_error();
  EXPECT_NE(e.find("backend failed earlier"), std::string::npos) << e;
  EXPECT_NE(e.find("rank " + std::to_string(last)), std::string::npos) << e;
  EXPECT_EQ(rt_->failed(), rt_->rank() == last);
}

}  // namespace
}  // namespace axe
