// Entry point of the `axe` calculator: dispatches to registered subcommands.
#include <cstdio>
#include <exception>
#include <iostream>
#include <sstream>

#include "axe/core/error.hpp"
#include "cli/cli.hpp"

namespace {

void print_usage(std::ostream& os) {
  os << "usage: axe COMMAND ARGS... [--json]\n\ncommands:\n";
  for (const auto& c : axe::cli::commands()) os << "  " << c.usage << "\n";
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> words(argv + 1, argv + argc);
  bool json = false;
  for (const auto& w : words) json = json || w == "--json";
  if (words.empty() || words[0] == "--help" || words[0] == "-h" || words[0] == "help") {
    print_usage(words.empty() ? std::cerr : std::cout);
    return words.empty() ? 2 : 0;
  }
  try {
    const axe::cli::Command* found = nullptr;
    for (const auto& c : axe::cli::commands()) {
      if (words[0] == c.name) found = &c;
    }
    if (!found) throw axe::Error("unknown command '" + words[0] + "' (try axe --help)");
    std::vector<std::string> rest(words.begin() + 1, words.end());
    for (const auto& w : rest) {
      if (w == "--help" || w == "-h") {
        std::cout << "usage: axe " << found->usage << "\n";
        return 0;
      }
    }
    auto args = axe::cli::parse_args(rest);
    std::ostringstream out;
    int status = found->run(args, out);
    std::cout << out.str();
    return status;
  } catch (const std::exception& e) {
    if (json) {
      std::cout << "{\"error\": " << axe::cli::json_string(e.what()) << "}\n";
    }
    std::cerr << "axe: error: " << e.what() << "\n";
    return 2;
  }
}
