#include "support/test_support.hpp"

#include <execinfo.h>
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <csignal>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <sstream>
#include <unistd.h>

#include "axe/core/tunables.hpp"

namespace axe::test {

namespace {

// A test that crashes (SIGSEGV, SIGBUS, or SIGABRT from a failed assert or glibc's heap checks)
// prints its backtrace to stderr before it dies by the same signal, so an intermittent crash leaves
// where it happened in the log (resolve the "(+0x...)" offsets with addr2line -f -C -e BINARY).
// Installed only over the default action: a sanitizer's own handlers stay.
void print_backtrace(int sig) {
  void* frames[64];
  const int n = backtrace(frames, 64);
  char head[64];
  const int len = std::snprintf(head, sizeof head, "\naxe test: signal %d; backtrace:\n", sig);
  if (len > 0 && write(2, head, static_cast<std::size_t>(len)) < 0) {
  }
  backtrace_symbols_fd(frames, n, 2);
  std::signal(sig, SIG_DFL);
  std::raise(sig);
}

const bool backtrace_on_crash = [] {
  void* warm[1];
  backtrace(warm, 1);  // loads the unwinder now: the handler must not allocate
  for (int sig : {SIGSEGV, SIGBUS, SIGABRT}) {
    struct sigaction old {};
    if (sigaction(sig, nullptr, &old) == 0 && old.sa_handler == SIG_DFL) std::signal(sig, print_backtrace);
  }
  return true;
}();

}  // namespace

std::uint64_t test_seed() {
  const auto seed = static_cast<std::uint64_t>(tunable_int("AXE_TEST_SEED"));
  if (const auto* info = ::testing::UnitTest::GetInstance()->current_test_info()) {
    ::testing::Test::RecordProperty("seed", std::to_string(seed));
    std::cout << "[ seed     ] " << info->test_suite_name() << "." << info->name()
              << " AXE_TEST_SEED=" << seed << "\n";
  }
  return seed;
}

std::mt19937_64 make_rng(std::uint64_t salt) {
  std::seed_seq seq{test_seed(), salt};
  return std::mt19937_64(seq);
}

std::string testdata_dir() {
  const std::string dir = tunable("AXE_TESTDATA_DIR");
  return dir.empty() ? AXE_SHARED_TESTDATA : dir;
}

std::string cli_binary() { return AXE_CLI_BINARY; }

int count_of(const std::string& text, const std::string& needle) {
  int n = 0;
  for (auto p = text.find(needle); p != std::string::npos; p = text.find(needle, p + 1)) ++n;
  return n;
}

CommandResult run_command(const std::string& command) {
  char err_path[] = "/tmp/axe_test_stderr_XXXXXX";
  int fd = mkstemp(err_path);
  if (fd >= 0) close(fd);
  CommandResult result;
  std::string full = command + " 2>" + err_path;
  FILE* pipe = popen(full.c_str(), "r");
  if (!pipe) return result;
  char buf[4096];
  std::size_t n;
  while ((n = fread(buf, 1, sizeof buf, pipe)) > 0) result.out.append(buf, n);
  int status = pclose(pipe);
  result.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  std::ifstream in(err_path);
  std::stringstream ss;
  ss << in.rdbuf();
  result.err = ss.str();
  std::remove(err_path);
  return result;
}

}  // namespace axe::test
