// CostModel::parse: lines "KIND [AXIS,AXIS...] ALPHA_US GBPS", '#' comments; errors name the line.
#include <gtest/gtest.h>

#include "axe/core/error.hpp"
#include "axe/plan/plan.hpp"

namespace axe {
namespace {

TEST(CostModelParse, GoodLinesSetPerKindAndPerAxes) {
  CostModel m = CostModel::parse(
      "# measured on 8xH200\n"
      "all-gather 5 100\n"
      "\n"
      "all-reduce tp 2.5 400   # NVLink group\n"
      "send-recv x,y 20 10\n");
  // 5 us, 100 GB/s -> beta = 1e-11 s/byte.
  EXPECT_DOUBLE_EQ(m.coeffs(StepKind::AllGather, {}).alpha, 5e-6);
  EXPECT_DOUBLE_EQ(m.coeffs(StepKind::AllGather, {}).beta, 1.0 / 100e9);
  EXPECT_DOUBLE_EQ(m.coeffs(StepKind::AllGather, {Axis("dp")}).alpha, 5e-6);  // falls back to the kind
  EXPECT_DOUBLE_EQ(m.coeffs(StepKind::AllReduce, {Axis("tp")}).alpha, 2.5e-6);
  EXPECT_DOUBLE_EQ(m.coeffs(StepKind::AllReduce, {Axis("tp")}).beta, 1.0 / 400e9);
  EXPECT_DOUBLE_EQ(m.coeffs(StepKind::AllReduce, {}).alpha, 10e-6);  // default untouched
  // Axis sets are unordered.
  EXPECT_DOUBLE_EQ(m.coeffs(StepKind::SendRecv, {Axis("y"), Axis("x")}).alpha, 20e-6);
}

TEST(CostModelParse, EmptyTextIsTheDefaultModel) {
  CostModel m = CostModel::parse("# nothing\n\n");
  EXPECT_DOUBLE_EQ(m.coeffs(StepKind::AllToAll, {}).alpha, 10e-6);
  EXPECT_DOUBLE_EQ(m.coeffs(StepKind::AllToAll, {}).beta, 1.0 / 20e9);
}

// A "local" line prices local copies (local_beta) as well as LocalCopy steps; without one both
// keep the default 200 GB/s.
TEST(CostModelParse, LocalLineSetsLocalBeta) {
  CostModel m = CostModel::parse("local 0 2\n");
  EXPECT_DOUBLE_EQ(m.local_beta, 1.0 / 2e9);
  EXPECT_DOUBLE_EQ(m.coeffs(StepKind::LocalCopy, {}).beta, 1.0 / 2e9);
  EXPECT_DOUBLE_EQ(CostModel::parse("all-gather 5 100\n").local_beta, 1.0 / 200e9);
  EXPECT_NE(m.fingerprint(), CostModel().fingerprint());
}

void expect_error(const std::string& text, const std::string& line_no, const std::string& part) {
  try {
    CostModel::parse(text);
    ADD_FAILURE() << "no error for: " << text;
  } catch (const Error& e) {
    std::string w = e.what();
    EXPECT_NE(w.find("line " + line_no), std::string::npos) << w;
    EXPECT_NE(w.find(part), std::string::npos) << w;
  }
}

TEST(CostModelParse, ErrorsNameTheLine) {
  expect_error("all-gather 5 100\nbogus 1 2\n", "2", "unknown kind 'bogus'");
  expect_error("# c\nall-gather 5\n", "2", "wrong number of fields");
  expect_error("all-gather a b c d e\n", "1", "wrong number of fields");
  expect_error("all-gather five 100\n", "1", "must be numbers");
  expect_error("\n\nall-gather 5 0\n", "3", "GBPS > 0");
  expect_error("all-gather -1 10\n", "1", "ALPHA_US must be >= 0");
}

TEST(CostModelLoad, MissingFileIsAClearError) {
  try {
    CostModel::load("/nonexistent/axe-cost.txt");
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/axe-cost.txt"), std::string::npos);
  }
}

}  // namespace
}  // namespace axe
