// The one MPI-aware test main (STYLE §11): one Runtime for the whole run, gtest output from
// rank 0 (other ranks print only their failures, prefixed by rank), and the failure count
// reduced so every rank exits with the same status.
#include <gtest/gtest.h>
#include <mpi.h>

#include <cstdio>

#include "axe/runtime/runtime.hpp"

namespace {
class RankFailurePrinter : public ::testing::EmptyTestEventListener {
 public:
  explicit RankFailurePrinter(int rank) : rank_(rank) {}
  void OnTestPartResult(const ::testing::TestPartResult& r) override {
    if (r.failed())
      std::fprintf(stderr, "[rank %d] %s:%d: failure\n%s\n", rank_, r.file_name() ? r.file_name() : "?",
                   r.line_number(), r.summary());
  }

 private:
  int rank_;
};
}  // namespace

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  int status = 0;
  {
    axe::Runtime rt(&argc, &argv);
    if (rt.rank() != 0) {
      auto& listeners = ::testing::UnitTest::GetInstance()->listeners();
      delete listeners.Release(listeners.default_result_printer());
      listeners.Append(new RankFailurePrinter(rt.rank()));
    }
    int failed = RUN_ALL_TESTS() != 0 ? 1 : 0;
    if (rt.failed()) {
      std::fprintf(stderr, "[rank %d] the runtime failed (timeout); exiting without MPI_Finalize\n", rt.rank());
      return 1;
    }
    int any = 0;
    MPI_Allreduce(&failed, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    status = any ? 1 : 0;
    if (rt.rank() == 0 && any && !failed) std::fprintf(stderr, "tests failed on another rank\n");
  }
  return status;
}
