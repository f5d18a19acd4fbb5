// The same mistake reads the same in every command: a shape that overflows, a shape that is not
// a number, an empty mesh; `axe --help` lists usages without a stray program name.
#include <gtest/gtest.h>

#include <string>

#include "support/test_support.hpp"

namespace {

std::string err_of(const std::string& args) {
  const auto r = axe::test::run_command(axe::test::cli_binary() + " " + args);
  EXPECT_EQ(r.status, 2) << args << "\n" << r.out << r.err;
  return r.err;
}

TEST(CliMessages, SameMistakeSameWordingInEveryCommand) {
  const std::string big = "99999999999999999999";
  for (const std::string cmd :
       {"plan --mesh gpu=2 --from 'S(0)' --to R --shape ", "simulate --mesh gpu=2 --from 'S(0)' --to R --shape ",
        "eval 'S[4:1]' --shape ", "group 'S[4:1]' --shape "}) {
    EXPECT_NE(err_of(cmd + big).find("--shape: '" + big + "' does not fit in a 64-bit integer"), std::string::npos)
        << cmd;
    EXPECT_NE(err_of(cmd + "abc").find("--shape: expected an integer, got 'abc'"), std::string::npos) << cmd;
    EXPECT_NE(err_of(cmd + "4,-2").find("--shape: extent -2 of dim 1 in '4,-2' must be positive"), std::string::npos)
        << cmd;
  }
  for (const std::string cmd : {"plan", "simulate"}) {
    const std::string e = err_of(cmd + " --shape 4,4 --mesh '' --from 'S(0)' --to R");
    EXPECT_NE(e.find("--mesh: expected NAME=SIZE,... (e.g. gpu=4), got ''"), std::string::npos) << e;
    const std::string t = err_of(cmd + " --shape 4,4 --mesh gpu=2 --to-mesh x --from 'S(0)' --to R");
    EXPECT_NE(t.find("--to-mesh: mesh 'x': expected NAME=SIZE"), std::string::npos) << t;
  }
}

TEST(CliMessages, HelpListsEachUsageOnceWithoutTheProgramName) {
  const auto r = axe::test::run_command(axe::test::cli_binary() + " --help");
  ASSERT_EQ(r.status, 0);
  std::size_t lines = 0;
  for (std::size_t at = 0; (at = r.out.find("\n  axe ", at)) != std::string::npos; ++at) ++lines;
  EXPECT_EQ(lines, 0u) << r.out;
  EXPECT_NE(r.out.find("\n  convert --to-cute"), std::string::npos) << r.out;
}

}  // namespace
