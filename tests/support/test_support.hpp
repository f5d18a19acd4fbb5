// Helpers shared by the tests: seeds for property tests, paths to the shared test data.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <optional>
#include <random>
#include <string>

#include "axe/core/error.hpp"

namespace axe::test {

// The seed for seeded random property tests: AXE_TEST_SEED if set, else a fixed default.
// Printed once per test (as a gtest property and on stdout) so a failure can be replayed.
std::uint64_t test_seed();

// A generator seeded with test_seed() mixed with `salt` (use a different salt per test).
std::mt19937_64 make_rng(std::uint64_t salt);

// ../shared/testdata (compiled in), or $AXE_TESTDATA_DIR when set.
std::string testdata_dir();

// Path of the `axe` CLI binary under test.
std::string cli_binary();

// Runs a shell command; returns its exit status and captures stdout and stderr separately.
struct CommandResult {
  int status = -1;
  std::string out;
  std::string err;
};
CommandResult run_command(const std::string& command);

// How many times `needle` occurs in `text`, overlaps counted (generated source checks).
int count_of(const std::string& text, const std::string& needle);

// Runs f, returns the axe::Error message ("" if none was thrown).
template <class F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

// Sets an environment variable (unsets it for nullptr) for the scope of one test and restores
// what was there.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    if (value) setenv(name, value, 1);
    else unsetenv(name);
  }
  ~ScopedEnv() {
    if (old_) setenv(name_, old_->c_str(), 1);
    else unsetenv(name_);
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  const char* name_;
  std::optional<std::string> old_;
};

}  // namespace axe::test
