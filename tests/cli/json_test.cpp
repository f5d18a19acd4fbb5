// The output conventions shared by every subcommand: --json prints exactly one valid JSON object
// on stdout (exit 0, or 1 for a "no" answer of backward/validate); errors print
// {"error": MESSAGE} with --json and "axe: error: MESSAGE" on stderr, exit status 2.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "cli_test_util.hpp"

namespace axe::test::cli {
namespace {

constexpr const char* kTensorCore = "S[(8,2,4,2):(4@lane,1@warp,1@lane,1)] + R[2:4@warp] + 5@warp";

struct JsonCase {
  std::vector<std::string> args;
  std::vector<std::string> keys;  // keys the object must have
  int status = 0;
};

void PrintTo(const JsonCase& c, std::ostream* os) {
  for (const auto& a : c.args) *os << a << " ";
}

class JsonOutput : public ::testing::TestWithParam<JsonCase> {};

TEST_P(JsonOutput, IsOneValidObjectWithTheDocumentedKeys) {
  std::string cmd = shell_quote(cli_binary());
  for (const auto& a : GetParam().args) cmd += " " + shell_quote(a);
  cmd += " --json";
  auto r = run_command(cmd);
  EXPECT_EQ(r.status, GetParam().status) << cmd << "\n" << r.err;
  Json j = parse_json(r.out);
  ASSERT_TRUE(j.is_object()) << cmd << "\n" << r.out;
  for (const auto& k : GetParam().keys) EXPECT_TRUE(j.has(k)) << cmd << " lacks \"" << k << "\"";
  EXPECT_FALSE(j.has("error")) << r.out;
  // One line, newline-terminated.
  EXPECT_EQ(r.out.find('\n'), r.out.size() - 1) << r.out;
}

const std::vector<JsonCase> kCases = {
    {{"eval", kTensorCore, "--shape", "8,16", "--at", "2,9"},
     {"at", "index", "coords", "replica", "term"}},
    {{"eval", kTensorCore, "--shape", "8,16"}, {"layout", "shape", "axes", "elements"}},
    {{"eval", "S[(2,4,8):(1@gy,8,1)]", "--shape", "2,4,8"}, {"elements"}},
    {{"backward", kTensorCore, "--shape", "8,16", "--at", "lane=8,warp=6,m=1"},
     {"held", "at", "index", "replica", "term"}},
    {{"backward", kTensorCore, "--at", "lane=31,warp=31"}, {"held"}, 1},
    {{"canon", kTensorCore}, {"result"}},
    {{"span", kTensorCore}, {"span", "size", "replicas", "terms"}},
    {{"group", "S[(4,6):(6,1)]", "--shape", "2,12"}, {"result", "boundaries"}},
    {{"tile", "S[8:1]", "S[8:1]", "--outer-shape", "8", "--inner-shape", "8"},
     {"result", "canonical", "shape"}},
    {{"slice", "S[(2,8,3,8):(192,8,64,1)]", "--shape", "16,24", "--region", "0:8,8:24"},
     {"result", "shape"}},
    {{"storage", "S[(2,32,2,64):(1@gpu,64,2@gpu,1)]"}, {"result"}},
    {{"validate", "S[(2,32,2,64):(1@gpu,64,2@gpu,1)]", "--mesh", "gpu=4"}, {"valid"}},
    {{"validate", "S[(2,2):(1,1)]"}, {"valid", "reason"}, 1},
    {{"cute", "composition", "(8,8):(8,1)", "3:3"}, {"result", "size", "values"}},
    {{"cute", "complement", "4:2"}, {"result", "size", "values"}},
    {{"cute", "complement", "4:1", "(6,16)"}, {"result", "size", "values"}},
    {{"cute", "coalesce", "((2,3),4):((1,2),6)"},
     {"result", "size", "cosize", "rank", "depth", "values", "values_complete"}},
    {{"cute", "coalesce", "(2,(1,6)):(1,(6,2))", "(1,1)"}, {"result", "values"}},
    {{"cute", "filter", "(2,4,3):(1,0,2)"}, {"result", "values"}},
    {{"cute", "flatten", "((2,3),4):((1,2),6)"}, {"result", "values"}},
    {{"cute", "logical_divide", "(8,8):(1,8)", "<4:1,_>"}, {"result", "values"}},
    {{"cute", "zipped_divide", "(4,6):(1,4)", "<2:1,3:1>"}, {"result", "values"}},
    {{"cute", "tiled_divide", "(4,6):(1,4)", "<2:1,3:1>"}, {"result", "values"}},
    {{"cute", "logical_product", "2:1", "3:1"}, {"result", "values"}},
    {{"cute", "zipped_product", "(2,2):(1,2)", "<2:1,2:1>"}, {"result", "values"}},
    {{"cute", "tiled_product", "(2,2):(1,2)", "<2:1,2:1>"}, {"result", "values"}},
    {{"cute", "blocked_product", "(2,2):(1,2)", "(2,3):(1,2)"}, {"result", "values"}},
    {{"cute", "raked_product", "(2,2):(1,2)", "(2,3):(1,2)"}, {"result", "values"}},
    {{"cute", "right_inverse", "(2,(2,2)):(4,(2,1))"}, {"result", "values"}},
    {{"cute", "left_inverse", "8:2"}, {"result", "values"}},
    {{"cute", "tile_to_shape", "(2,2):(1,2)", "(4,6)"}, {"result", "values"}},
    {{"cute", "slice", "(2,(2,2)):(4,(2,1))", "(1,_)"}, {"result", "values", "offset"}},
    {{"cute", "eval", "((2,3),4):((1,2),6)"}, {"result", "size", "values"}},
    {{"cute", "eval", "Sw<3,3,3> o 0 o (8,64):(64,1)"}, {"result", "size", "values"}},
    {{"cute", "swizzle", "3", "4", "3"}, {"result", "size", "offsets", "values"}},
    {{"cute", "swizzle", "3", "3", "3", "(8,64):(64,1)"}, {"result", "size", "values"}},
    {{"convert", "--from-cute", "(8,16):(16,1)"}, {"result"}},
    {{"convert", "--to-cute", "S[(8,16):(16,1)]", "--order", "linear"}, {"result"}},
};

INSTANTIATE_TEST_SUITE_P(EverySubcommand, JsonOutput, ::testing::ValuesIn(kCases));

TEST(ErrorConvention, EveryCommandReportsBadInput) {
  // One malformed operand per subcommand: exit 2, stderr message, {"error": ...} with --json.
  expect_error({"eval", "S[(8,16:(16,1)]", "--shape", "8,16"}, "position");
  expect_error({"backward", "S[8:1]", "--at", "m=-"}, "expected an integer");
  expect_error({"canon", "T[8:1]"}, "position 0");
  expect_error({"span", ""}, "position 0");
  expect_error({"group", "S[8:1]", "--shape", "3,3"}, "9 elements");
  expect_error({"tile", "S[8:1]", "S[8:1]", "--outer-shape", "8", "--inner-shape", "x"},
               "--inner-shape");
  expect_error({"slice", "S[8:1]", "--region", "0:9"}, "<= 8");
  expect_error({"storage", "S[8:1] + "}, "position");
  expect_error({"validate", "S[8:1]", "--mesh", "gpu=two"}, "expected an integer");
  expect_error({"cute", "eval", "(2,3):(1,2"}, "position");
  expect_error({"convert", "--to-cute", "S[8:1"}, "position");
  expect_error({"nonsense"}, "unknown command 'nonsense'");
}

TEST(ErrorConvention, MessagesAreEscapedInJson) {
  // The parse error message spans lines (text and caret); --json must still be valid JSON.
  auto r = axe({"cute", "eval", "(2,\"3):(1,2)", "--json"});
  EXPECT_EQ(r.status, 2);
  Json j = parse_json(r.out);
  ASSERT_TRUE(j.has("error"));
  EXPECT_NE(j["error"].str().find("(2,\"3)"), std::string::npos) << j["error"].str();
}

TEST(Help, ListsEverySubcommand) {
  auto r = axe({"help"});
  EXPECT_EQ(r.status, 0);
  for (const char* c : {"eval", "backward", "canon", "span", "group", "tile", "slice", "storage",
                        "validate", "cute OP", "composition", "swizzle", "convert"}) {
    EXPECT_NE(r.out.find(c), std::string::npos) << "help lacks " << c << "\n" << r.out;
  }
  auto none = axe({});
  EXPECT_EQ(none.status, 2);
  EXPECT_NE(none.err.find("usage: axe"), std::string::npos);
}

}  // namespace
}  // namespace axe::test::cli
