// CostModel::parse: lines "KIND [AXIS,AXIS...] ALPHA_US GBPS", '#' comments; errors name the line.
#include <gtest/gtest.h>

#include <string>

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

// "peer KIND [AXES] ALPHA_US GBPS" prices the peer transport; the network entries stay as they
// were, and a kind without a peer line has no peer price.
TEST(CostModelParse, PeerLinesPriceThePeerTransport) {
  CostModel m = CostModel::parse(
      "all-gather 5 100\n"
      "peer all-gather 2 50\n"
      "peer all-to-all tp 1 400\n");
  EXPECT_TRUE(m.has_peer());
  EXPECT_FALSE(CostModel().has_peer());
  EXPECT_DOUBLE_EQ(m.coeffs(StepKind::AllGather, {}).alpha, 5e-6);
  ASSERT_TRUE(m.peer_coeffs(StepKind::AllGather, {Axis("dp")}));  // falls back to the kind's line
  EXPECT_DOUBLE_EQ(m.peer_coeffs(StepKind::AllGather, {Axis("dp")})->alpha, 2e-6);
  EXPECT_DOUBLE_EQ(m.peer_coeffs(StepKind::AllGather, {})->beta, 1.0 / 50e9);
  EXPECT_DOUBLE_EQ(m.peer_coeffs(StepKind::AllToAll, {Axis("tp")})->beta, 1.0 / 400e9);
  EXPECT_FALSE(m.peer_coeffs(StepKind::AllToAll, {}));  // only tp has one
  EXPECT_FALSE(m.peer_coeffs(StepKind::AllReduce, {}));
  // Peer lines are part of the fingerprint (plans are cached by it).
  EXPECT_NE(m.fingerprint(), CostModel::parse("all-gather 5 100\n").fingerprint());
  EXPECT_FALSE(m == CostModel::parse("all-gather 5 100\n"));
}

TEST(CostModelParse, PeerLineErrorsNameTheLine) {
  expect_error("peer local 0 2\n", "1", "no peer price");
  expect_error("\npeer bogus 1 2\n", "2", "unknown kind 'bogus'");
  expect_error("peer all-gather 5\n", "1", "wrong number of fields");
  expect_error("peer\n", "1", "wrong number of fields");
}

// step_transport_cost: alpha + beta * step_model_bytes on each transport.
TEST(CostModelStep, TransportCostsOfAnAllGather) {
  // An all-gather on 4 ranks of 1024-element f32 blocks: this rank sends its block to 3 peers and
  // receives 3 blocks, 12288 bytes each way.
  Step st;
  st.kind = StepKind::AllGather;
  st.group = {0, 1, 2, 3};
  const Transfer box{{1024}, 0, {1}, 0, {1}, 0};
  for (std::int64_t q : {1, 2, 3}) {
    st.sends.push_back({q, {box}});
    st.recvs.push_back({q, {box}});
  }
  EXPECT_DOUBLE_EQ(step_model_bytes(st, DType::F32), 12288.0);
  const CostModel m = CostModel::parse("all-gather 5 100\npeer all-gather 2 50\n");
  const TransportCost c = step_transport_cost(m, st, DType::F32);
  EXPECT_DOUBLE_EQ(c.network, 5e-6 + 12288 / 100e9);
  ASSERT_TRUE(c.peer);
  EXPECT_DOUBLE_EQ(*c.peer, 2e-6 + 12288 / 50e9);
  EXPECT_FALSE(step_transport_cost(CostModel(), st, DType::F32).peer);  // no peer line
  // Send-recv pays alpha per peer it sends to: 3 * 10 us + 12288 B / 20 GB/s by default.
  st.kind = StepKind::SendRecv;
  EXPECT_DOUBLE_EQ(step_transport_cost(CostModel(), st, DType::F32).network, 3 * 10e-6 + 12288 / 20e9);
  // An all-reduce counts its ring share of the term (its local copy): 2 (g-1)/g of 4096 bytes.
  st.kind = StepKind::AllReduce;
  st.copies = {box};
  EXPECT_DOUBLE_EQ(step_model_bytes(st, DType::F32), 2.0 * 3 / 4 * 4096);
  // A step without messages costs nothing on either transport.
  Step none;
  none.kind = StepKind::AllToAll;
  const TransportCost z = step_transport_cost(m, none, DType::F32);
  EXPECT_EQ(z.network, 0);
  EXPECT_EQ(z.peer, 0.0);
}

TEST(CostModelLoad, MissingFileIsAClearError) {
  try {
    CostModel::load("/nonexistent/axe-cost.txt");
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/axe-cost.txt"), std::string::npos);
  }
}

// Throws axe::Error naming the line number, the line and `part`.
void expect_cost_error(const std::string& text, const std::string& part) {
  try {
    CostModel::parse(text);
    ADD_FAILURE() << "'" << text << "' parsed";
  } catch (const Error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("line 1"), std::string::npos) << what;
    EXPECT_NE(what.find(part), std::string::npos) << what;
  }
}

// Found by the cost-model fuzzer: "nan" passed both `alpha < 0` and `gbps <= 0` (comparisons with
// NaN are false), so every cost of that kind was NaN and the planner's choice arbitrary.
// Infinities and numbers followed by junk ("5x": std::stod stops at the x) were accepted too.
TEST(CostModelParse, NumbersAreWholeAndFinite) {
  expect_cost_error("all-reduce nan 2", "ALPHA_US 'nan' is not a finite, representable number");
  expect_cost_error("all-reduce 5 nan", "GBPS 'nan' is not a finite, representable number");
  expect_cost_error("all-reduce inf 2", "ALPHA_US 'inf' is not a finite, representable number");
  expect_cost_error("local 0 -inf", "GBPS '-inf' is not a finite, representable number");
  expect_cost_error("all-gather 5x 100", "ALPHA_US '5x' is not a finite, representable number");
  expect_cost_error("all-gather 5 100GB", "GBPS '100GB' is not a finite, representable number");
  expect_cost_error("all-gather 1e999 100", "ALPHA_US '1e999' is not a finite, representable number");  // out of range
}

// GBPS is finite and > 0, but beta = 1 / (GBPS * 1e9) must be too: 1e300 GB/s is a beta of 0
// (free traffic). 1e-320 (a denormal, whose beta would be infinite) is not representable.
TEST(CostModelParse, BetaIsFiniteAndPositive) {
  expect_cost_error("all-gather 5 1e300", "GBPS 1e300 is out of range");
  expect_cost_error("all-gather 5 1e-320", "GBPS '1e-320' is not a finite, representable number");
  // The extremes that still work: 1e-300 GB/s -> beta 1e291 s/B; 1e290 GB/s -> beta 1e-299.
  EXPECT_DOUBLE_EQ(CostModel::parse("all-gather 5 1e-300").coeffs(StepKind::AllGather, {}).beta, 1e291);
  EXPECT_DOUBLE_EQ(CostModel::parse("all-gather 5 1e290").coeffs(StepKind::AllGather, {}).beta, 1e-299);
}

// An axis that is not an identifier ("x,,y", "1x") is the file's error, naming its line.
TEST(CostModelParse, BadAxisNamesTheLine) {
  expect_cost_error("send-recv x,,y 20 10", "axis name '' is not an identifier");
  expect_cost_error("send-recv 1x 20 10", "axis name '1x'");
}

}  // namespace
}  // namespace axe
