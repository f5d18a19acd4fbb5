// `axe tunables`: its table is the README's "Environment variables" table, row for row.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>

#include "cli_test_util.hpp"

namespace {

std::string readme_table() {
  std::ifstream f(std::string(AXE_SOURCE_DIR) + "/README.md");
  std::stringstream ss;
  ss << f.rdbuf();
  const std::string s = ss.str();
  const auto section = s.find("\n## Environment variables\n");
  if (section == std::string::npos) return "";
  const auto begin = s.find("\n| variable |", section);
  if (begin == std::string::npos) return "";
  auto end = begin + 1;
  while (end < s.size() && s[end] == '|') end = s.find('\n', end) + 1;
  return s.substr(begin + 1, end - begin - 1);
}

TEST(TunablesCommand, ReadmeTableIsTheDeclaredTable) {
  const auto r = axe::test::run_command(axe::test::cli_binary() + " tunables");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(readme_table(), r.out) << "regenerate the README's table with `build/bin/axe tunables`";
}

TEST(TunablesCommand, JsonListsEveryDeclaration) {
  const auto r = axe::test::run_command("AXE_OVERLAP_MIN=4M " + axe::test::cli_binary() + " tunables --json");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("{\"name\": \"AXE_OVERLAP_MIN\", \"kind\": \"bytes\", \"default\": \"2M\""), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("\"value\": \"4M\""), std::string::npos) << r.out;
}

TEST(TunablesCommand, ArgumentsAreErrors) {
  const auto r = axe::test::run_command(axe::test::cli_binary() + " tunables extra");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("tunables takes no arguments"), std::string::npos) << r.err;
}

}  // namespace
