// `axe eval LAYOUT --shape S [--at C]`: forward evaluation of Axe layouts (DESIGN.md §2.2).
// Expected values are the paper vectors (testdata/axe_paper_vectors.md), derived by hand there.
#include <gtest/gtest.h>

#include "cli_test_util.hpp"

namespace axe::test::cli {
namespace {

constexpr const char* kTensorCore = "S[(8,2,4,2):(4@lane,1@warp,1@lane,1)] + R[2:4@warp] + 5@warp";
constexpr const char* kMesh = "S[(2,32,2,64):(1@gpu,64,2@gpu,1)]";

TEST(EvalCli, At_ListsEveryReplica) {
  // (2,9) -> x = 41 -> digits (2,1,0,1) -> lane 8, warp 1 + 5 (+ 4 for replica 1), m 1.
  auto r = axe({"eval", kTensorCore, "--shape", "8,16", "--at", "2,9"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out,
            "{lane 8, warp 6, m 1}  replica 0\n"
            "{lane 8, warp 10, m 1}  replica 1\n");
}

TEST(EvalCli, At_Json) {
  auto r = axe({"eval", kTensorCore, "--shape", "8,16", "--at", "2,9", "--json"});
  ASSERT_EQ(r.status, 0) << r.err;
  Json j = parse_json(r.out);
  ASSERT_TRUE(j.is_object());
  EXPECT_EQ(j["index"].integer(), 41);
  EXPECT_EQ(j["at"].ints(), (std::vector<std::int64_t>{2, 9}));
  ASSERT_EQ(j["coords"].array().size(), 2u);
  EXPECT_EQ(j["coords"][0]["lane"].integer(), 8);
  EXPECT_EQ(j["coords"][0]["warp"].integer(), 6);
  EXPECT_EQ(j["coords"][0]["m"].integer(), 1);
  EXPECT_EQ(j["coords"][1]["lane"].integer(), 8);
  EXPECT_EQ(j["coords"][1]["warp"].integer(), 10);
  EXPECT_EQ(j["coords"][1]["m"].integer(), 1);
  EXPECT_EQ(j["coords"][0].object().size(), 3u);
  EXPECT_EQ(j["replica"].ints(), (std::vector<std::int64_t>{0, 1}));
  EXPECT_EQ(j["term"].ints(), (std::vector<std::int64_t>{0, 0}));
}

TEST(EvalCli, At_MeshLayout) {
  // x = 40*128 + 70 = 5190 -> digits (1,8,1,6) -> gpu 1 + 2 = 3, m 8*64 + 6 = 518.
  auto r = axe({"eval", kMesh, "--shape", "64,128", "--at", "40,70"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, "{gpu 3, m 518}\n");
  r = axe({"eval", kMesh, "--shape", "64,128", "--at", "63,127"});
  EXPECT_EQ(r.out, "{gpu 3, m 2047}\n");
}

TEST(EvalCli, At_DefaultShapeIsFlat) {
  // Without --shape the logical shape is (size): index 41 of the tensor-core tile.
  auto r = axe({"eval", kTensorCore, "--at", "41"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out,
            "{lane 8, warp 6, m 1}  replica 0\n"
            "{lane 8, warp 10, m 1}  replica 1\n");
}

TEST(EvalCli, At_PartialTermsAreAnnotated) {
  // P[2:1@gpu]: each element has 2 terms, on gpu 0 and gpu 1.
  auto r = axe({"eval", "S[4:1] + P[2:1@gpu]", "--at", "3"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, "{gpu 0, m 3}  term 0\n{gpu 1, m 3}  term 1\n");
}

TEST(EvalCli, Table_Rank2LikePrintLayout) {
  // Row-major 2x3: cell (i,j) holds m = 3i + j. The grid is CuTe's print_layout format.
  auto r = axe({"eval", "S[(2,3):(3,1)]", "--shape", "2,3"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out,
            "S[(2,3):(3,1)] on (2,3), cells (m)\n"
            "      0   1   2 \n"
            "    +---+---+---+\n"
            " 0  | 0 | 1 | 2 |\n"
            "    +---+---+---+\n"
            " 1  | 3 | 4 | 5 |\n"
            "    +---+---+---+\n");
}

TEST(EvalCli, Table_CellsListEveryPlacement) {
  // Two replicas on gpu 0 and gpu 4; cells are "gpu,m" per placement, space separated.
  auto r = axe({"eval", "S[2:1] + R[2:4@gpu]", "--shape", "1,2"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out,
            "S[2:1] + R[2:4@gpu] on (1,2), cells (gpu,m)\n"
            "            0         1 \n"
            "    +---------+---------+\n"
            " 0  | 0,0 4,0 | 0,1 4,1 |\n"
            "    +---------+---------+\n");
}

TEST(EvalCli, Lines_OtherRanks) {
  auto r = axe({"eval", "S[4:2]"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, "(0) -> {m 0}\n(1) -> {m 2}\n(2) -> {m 4}\n(3) -> {m 6}\n");
  // Rank 3: (1,2,3) of (2,4,8) -> x = 1*32 + 2*8 + 3 = 51 -> gy 1, m 19 (paper vector).
  r = axe({"eval", "S[(2,4,8):(1@gy,8,1)]", "--shape", "2,4,8"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("\n(1,2,3) -> {gy 1, m 19}\n"), std::string::npos) << r.out;
}

TEST(EvalCli, All_Json) {
  auto r = axe({"eval", "S[(2,2):(1,2)] + R[2:1@gpu]", "--shape", "2,2", "--json"});
  ASSERT_EQ(r.status, 0) << r.err;
  Json j = parse_json(r.out);
  EXPECT_EQ(j["shape"].ints(), (std::vector<std::int64_t>{2, 2}));
  ASSERT_EQ(j["axes"].array().size(), 2u);
  EXPECT_EQ(j["axes"][0].str(), "gpu");
  EXPECT_EQ(j["axes"][1].str(), "m");
  ASSERT_EQ(j["elements"].array().size(), 4u);
  // (0,1) -> x = 1 -> digits (0,1) -> m 2, on gpu 0 and gpu 1.
  const Json& e = j["elements"][1];
  EXPECT_EQ(e["at"].ints(), (std::vector<std::int64_t>{0, 1}));
  ASSERT_EQ(e["coords"].array().size(), 2u);
  EXPECT_EQ(e["coords"][0]["m"].integer(), 2);
  EXPECT_EQ(e["coords"][1]["gpu"].integer(), 1);
}

TEST(EvalCli, Errors) {
  expect_error({"eval", kTensorCore, "--shape", "8,8"}, "has 64 elements");
  expect_error({"eval", kTensorCore, "--shape", "8,0,16"}, "must be positive");
  expect_error({"eval", kTensorCore, "--shape", "-8,-16"}, "must be positive");
  expect_error({"eval", kTensorCore, "--shape", "8,16", "--at", "8,0"}, "out of range");
  expect_error({"eval", kTensorCore, "--shape", "8,16", "--at", "2,-1"}, "out of range");
  expect_error({"eval", kTensorCore, "--shape", "8,16", "--at", "2"}, "rank 2");
  expect_error({"eval", kTensorCore, "--shape", "8,16", "--at", "2,x"}, "expected an integer");
  expect_error({"eval", kTensorCore, "--shape", "8,,16"}, "expected an integer");
  expect_error({"eval", kTensorCore, "--at", "99999999999999999999"}, "64-bit");
  expect_error({"eval", kTensorCore, "--shape", "4294967296,4294967296"}, "overflow");
  expect_error({"eval", "S[(4294967296,4294967296):(1,1)]", "--at", "0"}, "overflow");
  expect_error({"eval", "S[(0,2):(1,1)]"}, "");
  expect_error({"eval"}, "usage: axe eval");
  expect_error({"eval", kTensorCore, "--shap", "8,16"}, "unknown option --shap");
  expect_error({"eval", "S[131072:1]"}, "too many");
  expect_error({"eval", "S[4:1] + P[(512,512):(1@gpu,512@gpu)]", "--at", "0"}, "too many");
  expect_error({"eval", "S[1024:1] + R[128:1@gpu]"}, "too many");
}

TEST(EvalCli, ParseError_ReportsPosition) {
  // The D list is not closed: the parser reports where it stopped and what it expected.
  auto r = axe({"eval", "S[(8,2):(4,1)"});
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("position"), std::string::npos) << r.err;
  expect_error({"eval", "S[(8,2):(4,1)"}, "expected");
  expect_error({"eval", "S[(8,2):(4@,1)]"}, "position");
}

}  // namespace
}  // namespace axe::test::cli
