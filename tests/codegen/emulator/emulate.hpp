// Compiling and running a generated kernel's source on the host emulator (cuda_shim.hpp) for the
// tests in tests/codegen/emulated_*_test.cpp.
#pragma once

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <string>

namespace axe::test::emulator {

// A fresh directory under the system's temporary one, removed with everything in it at the end.
struct TempDir {
  std::filesystem::path path =
      std::filesystem::temp_directory_path() / ("axe_emulated_" + std::to_string(std::random_device{}()));
  TempDir() { std::filesystem::create_directories(path); }
  ~TempDir() { std::filesystem::remove_all(path); }
};

inline std::string slurp(const std::filesystem::path& p) {
  std::ifstream f(p);
  return std::string(std::istreambuf_iterator<char>(f), {});
}

// A log's first 3000 characters (a sanitizer's report is longer).
inline std::string log_head(const std::filesystem::path& p) { return slurp(p).substr(0, 3000); }

// The host compiler's AddressSanitizer flags, or none where it cannot link them.
inline const std::string& sanitizer_flags(const std::filesystem::path& dir) {
  static const std::string flags = [&] {
    const auto src = dir / "probe.cpp", bin = dir / "probe";
    std::ofstream(src) << "int main() { return 0; }\n";
    const std::string cmd = std::string("\"") + AXE_HOST_CXX + "\" -fsanitize=address \"" + src.string() + "\" -o \"" +
                            bin.string() + "\" > /dev/null 2>&1 && \"" + bin.string() + "\" > /dev/null 2>&1";
    return std::system(cmd.c_str()) == 0 ? std::string("-fsanitize=address -fno-omit-frame-pointer") : std::string();
  }();
  return flags;
}

// Writes `source` to DIR/NAME.cu, compiles it with the host compiler into the main `main_file`
// (a file of tests/codegen/emulator, which includes KERNEL) with element size `es` and the compiler
// flags `flags`, and runs it with `args`. "" when both succeed; else what failed, with the
// compiler's or the program's output.
inline std::string compile_and_run(const std::filesystem::path& dir, const std::string& name, const std::string& source,
                                   const char* main_file, std::int64_t es, const std::string& args,
                                   const std::string& flags = "") {
  const std::string emulator = std::string(AXE_SOURCE_DIR) + "/tests/codegen/emulator";
  const auto src = dir / (name + ".cu"), bin = dir / name, log = dir / (name + ".log");
  std::ofstream(src) << source;
  const std::string compile = std::string("\"") + AXE_HOST_CXX + "\" -std=c++20 -O1 -w -pthread " + flags + " -I\"" + emulator +
                              "\" -DES=" + std::to_string(es) + " '-DKERNEL=\"" + src.string() + "\"' \"" + emulator +
                              "/" + main_file + "\" -o \"" + bin.string() + "\" > \"" + log.string() + "\" 2>&1";
  if (std::system(compile.c_str()) != 0) return "the host compiler failed: " + log_head(log);
  const std::string run = "\"" + bin.string() + "\" " + args + " > \"" + log.string() + "\" 2>&1";
  const int rc = std::system(run.c_str());
  return rc == 0 ? "" : "exit status " + std::to_string(rc) + ": " + log_head(log);
}

}  // namespace axe::test::emulator
