// The `axe` command-line calculator: a registry of subcommands sharing one argument parser and
// one error convention (errors on stderr, or {"error": MESSAGE} on stdout with --json; exit 2).
#pragma once

#include <map>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

namespace axe::cli {

// A parsed command line after the subcommand name(s): positional arguments and `--key value`
// options. `--json` and `--simulate` (kept as option "simulate", empty value) are the only
// flags without a value.
struct Args {
  std::vector<std::string> positional;
  std::map<std::string, std::string, std::less<>> options;
  bool json = false;

  bool has(std::string_view key) const { return options.find(key) != options.end(); }
  // The value of --key; throws axe::Error("missing --key") when absent.
  const std::string& get(std::string_view key) const;
  // Throws axe::Error naming the first option not in `allowed`.
  void allow_only(std::initializer_list<std::string_view> allowed) const;
};

// Splits argv into Args. Throws axe::Error on an option with no value.
Args parse_args(const std::vector<std::string>& argv);

// A subcommand: `axe NAME ...`. `run` writes the result to `out` and returns the exit status;
// user errors are thrown as axe::Error and reported by main.
using CommandFn = int (*)(const Args& args, std::ostream& out);
struct Command {
  const char* name;
  const char* usage;  // one or more lines shown by `axe --help`
  CommandFn run;
};

// Registers a subcommand; call from a file-scope initializer:
//   static const bool registered = axe::cli::register_command({"eval", "...", &run_eval});
bool register_command(const Command& command);
const std::vector<Command>& commands();

// JSON helpers for --json output.
std::string json_string(std::string_view s);  // quoted and escaped

}  // namespace axe::cli
