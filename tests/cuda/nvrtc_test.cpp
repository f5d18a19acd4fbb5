// Run-time compilation (axe/cuda/nvrtc.hpp): PTX and CUBIN from NVRTC, its errors, and the CUBIN
// disk cache (AXE_KERNEL_CACHE_DIR). None of these needs a GPU.
#include "axe/cuda/nvrtc.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <string>

#include "axe/core/error.hpp"
#include "support/test_support.hpp"

namespace axe::cuda {
namespace {

namespace fs = std::filesystem;
using axe::test::error_of;
using axe::test::ScopedEnv;

// What the code generator emits: no #include, extern "C" kernels, builtin vector types,
// intrinsics and inline PTX.
constexpr const char* kSource = R"(
struct Pair { int a, b; };
int twice(int x) { return 2 * x; }  // -default-device: a device function
extern "C" __global__ void axe_gen_iota(int* out, uint4* wide) {
  __shared__ int s[32];
  s[threadIdx.x] = twice(threadIdx.x) / 2;
  __syncthreads();
  int v = __shfl_sync(0xffffffffu, s[threadIdx.x], threadIdx.x);
  unsigned lane;
  asm volatile("mov.u32 %0, %%laneid;" : "=r"(lane));
  out[threadIdx.x] = v + static_cast<int>(lane) - static_cast<int>(threadIdx.x % 32);
  if (threadIdx.x == 0) *wide = make_uint4(1, 2, 3, 4);
}
)";


// A fresh directory, removed with everything in it at the end of the test.
struct TempDir {
  fs::path path;
  TempDir() {
    std::string tmpl = (fs::temp_directory_path() / "axe_nvrtc_XXXXXX").string();
    if (!mkdtemp(tmpl.data())) throw Error("mkdtemp failed for " + tmpl);
    path = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

std::string read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

void write_file(const fs::path& p, const std::string& bytes) {
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out << bytes;
}


int files_in(const fs::path& dir) {
  int n = 0;
  for (const auto& e : fs::directory_iterator(dir)) n += e.is_regular_file();
  return n;
}

TEST(CompileToPtx, HoldsTheEntryOfEachKernel) {
  const std::string ptx = compile_to_ptx(kSource, "gen.cu");
  EXPECT_NE(ptx.find(".entry axe_gen_iota("), std::string::npos) << ptx;
  EXPECT_NE(ptx.find(".target sm_90"), std::string::npos) << ptx.substr(0, 400);
  EXPECT_EQ(ptx.find('\0'), std::string::npos);
}

TEST(CompileToPtx, ArchSelectsTheTarget) {
  const std::string ptx = compile_to_ptx(kSource, "gen.cu", "compute_80");
  EXPECT_NE(ptx.find(".target sm_80"), std::string::npos) << ptx.substr(0, 400);
}

TEST(CompileToPtx, SyntaxError_ThrowsNvrtcLogNamingProgramAndArch) {
  const std::string bad = "extern \"C\" __global__ void k(int* p) {\n  p[0] = 1\n}\n";
  const std::string msg = error_of([&] { compile_to_ptx(bad, "broken_gen.cu"); });
  ASSERT_FALSE(msg.empty()) << "no axe::Error";
  EXPECT_NE(msg.find("'broken_gen.cu'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("compute_90"), std::string::npos) << msg;
  // NVRTC's own log line: "<program>(<line>): error: ...".
  EXPECT_NE(msg.find("broken_gen.cu(3): error"), std::string::npos) << msg;
}

TEST(CompileToPtx, LongLog_IsTruncated) {
  std::string bad;
  for (int i = 0; i < 400; ++i)
    bad += "int v" + std::to_string(i) + " = undeclared_" + std::to_string(i) + ";\n";
  const std::string msg = error_of([&] { compile_to_ptx(bad, "long.cu"); });
  ASSERT_FALSE(msg.empty()) << "no axe::Error";
  EXPECT_LT(msg.size(), 4300u);
  EXPECT_NE(msg.find("more characters of NVRTC's log"), std::string::npos)
      << msg.substr(msg.size() - 200);
}

TEST(CompileToPtx, BadArch_ThrowsNamingIt) {
  const std::string msg = error_of([&] { compile_to_ptx(kSource, "gen.cu", "compute_1"); });
  EXPECT_NE(msg.find("compute_1"), std::string::npos) << msg;
}

TEST(CompileToCubin, IsAnElfForTheRealArch) {
  const std::string cubin = compile_to_cubin(kSource, "gen.cu", "sm_90a");
  ASSERT_GE(cubin.size(), 4u);
  EXPECT_EQ(cubin.substr(0, 4),
            "\x7f"
            "ELF");
  EXPECT_NE(cubin.find("axe_gen_iota"), std::string::npos);
}

TEST(CubinArch, ArchSpecificFrom90) {
  EXPECT_EQ(cubin_arch(9, 0), "sm_90a");
  EXPECT_EQ(cubin_arch(10, 0), "sm_100a");
  EXPECT_EQ(cubin_arch(8, 6), "sm_86");
  EXPECT_EQ(cubin_arch(7, 5), "sm_75");
}

TEST(CubinFor, WithoutCacheDir_CompilesEachTime) {
  ScopedEnv env("AXE_KERNEL_CACHE_DIR", nullptr);
  EXPECT_TRUE(kernel_cache_file(kSource, "sm_90a").empty());
  const auto before = nvrtc_compilations();
  const std::string a = cubin_for(kSource, "gen.cu", "sm_90a");
  const std::string b = cubin_for(kSource, "gen.cu", "sm_90a");
  EXPECT_EQ(nvrtc_compilations() - before, 2);
  EXPECT_EQ(a, b);
}

TEST(CubinFor, Miss_WritesOneFile_Hit_CompilesNothing) {
  TempDir dir;
  ScopedEnv env("AXE_KERNEL_CACHE_DIR", dir.path.c_str());
  const fs::path file = kernel_cache_file(kSource, "sm_90a");
  EXPECT_EQ(file.parent_path(), dir.path);
  EXPECT_EQ(file.extension(), ".cubin");

  const auto before = nvrtc_compilations();
  const std::string first = cubin_for(kSource, "gen.cu", "sm_90a");
  EXPECT_EQ(nvrtc_compilations() - before, 1);
  EXPECT_TRUE(fs::exists(file));
  EXPECT_EQ(files_in(dir.path), 1);  // no temporary file left behind

  const std::string second = cubin_for(kSource, "gen.cu", "sm_90a");
  EXPECT_EQ(nvrtc_compilations() - before, 1) << "a hit compiled";
  EXPECT_EQ(second, first);
  EXPECT_EQ(second, compile_to_cubin(kSource, "gen.cu", "sm_90a"));
}

TEST(CubinFor, MissingDir_IsCreated) {
  TempDir dir;
  const fs::path sub = dir.path / "a" / "b";
  ScopedEnv env("AXE_KERNEL_CACHE_DIR", sub.c_str());
  cubin_for(kSource, "gen.cu", "sm_90a");
  EXPECT_TRUE(fs::exists(kernel_cache_file(kSource, "sm_90a")));
}

TEST(CubinFor, KeyIsSourceAndArch) {
  TempDir dir;
  ScopedEnv env("AXE_KERNEL_CACHE_DIR", dir.path.c_str());
  const std::string other = std::string(kSource) + "\n// another kernel\n";
  EXPECT_NE(kernel_cache_file(kSource, "sm_90a"), kernel_cache_file(kSource, "sm_80"));
  EXPECT_NE(kernel_cache_file(kSource, "sm_90a"), kernel_cache_file(other, "sm_90a"));
  cubin_for(kSource, "gen.cu", "sm_90a");
  cubin_for(kSource, "gen.cu", "sm_80");
  cubin_for(other, "gen.cu", "sm_90a");
  EXPECT_EQ(files_in(dir.path), 3);
}

// Every damaged file is a miss: the CUBIN is compiled again, equal to the right one, and the file
// rewritten (the next call is a hit).
TEST(CubinFor, CorruptFile_IsRecompiledAndRewritten) {
  TempDir dir;
  ScopedEnv env("AXE_KERNEL_CACHE_DIR", dir.path.c_str());
  const std::string good = cubin_for(kSource, "gen.cu", "sm_90a");
  const fs::path file = kernel_cache_file(kSource, "sm_90a");
  const std::string intact = read_file(file);
  ASSERT_GT(intact.size(), good.size());

  std::string flipped = intact;
  flipped[flipped.size() - good.size() / 2] ^= 0x5a;  // a byte inside the CUBIN
  std::string header = intact;
  header[0] = 'X';
  const std::pair<const char*, std::string> damages[] = {
      {"empty", ""},
      {"truncated", intact.substr(0, intact.size() - 7)},
      {"a flipped CUBIN byte", flipped},
      {"a bad header", header},
      {"text", "hello\n"},
      {"longer", intact + "tail"},
  };
  for (const auto& [what, bytes] : damages) {
    SCOPED_TRACE(what);
    write_file(file, bytes);
    const auto before = nvrtc_compilations();
    EXPECT_EQ(cubin_for(kSource, "gen.cu", "sm_90a"), good);
    EXPECT_EQ(nvrtc_compilations() - before, 1);
    EXPECT_EQ(read_file(file), intact);
    EXPECT_EQ(cubin_for(kSource, "gen.cu", "sm_90a"), good);
    EXPECT_EQ(nvrtc_compilations() - before, 1);
  }
}

TEST(CubinFor, UnreadableEntry_IsRecompiled) {
  TempDir dir;
  ScopedEnv env("AXE_KERNEL_CACHE_DIR", dir.path.c_str());
  const fs::path file = kernel_cache_file(kSource, "sm_90a");
  fs::create_directories(
      file);  // a directory where the file should be: neither read nor renamed over
  const std::string cubin = cubin_for(kSource, "gen.cu", "sm_90a");
  EXPECT_EQ(cubin, compile_to_cubin(kSource, "gen.cu", "sm_90a"));
}

TEST(CubinFor, UnwritableDir_IsNotFatal) {
  TempDir dir;
  write_file(dir.path / "plain_file", "x");
  const fs::path under_file = dir.path / "plain_file" / "cache";  // cannot be created, even by root
  ScopedEnv env("AXE_KERNEL_CACHE_DIR", under_file.c_str());
  testing::internal::CaptureStderr();
  const std::string a = cubin_for(kSource, "gen.cu", "sm_90a");
  const std::string b = cubin_for(kSource, "gen.cu", "sm_90a");
  const std::string err = testing::internal::GetCapturedStderr();
  EXPECT_EQ(a, compile_to_cubin(kSource, "gen.cu", "sm_90a"));
  EXPECT_EQ(a, b);
  EXPECT_FALSE(fs::exists(under_file));
  // At most one warning per process (an earlier test in this process may have printed it).
  EXPECT_LE(std::count(err.begin(), err.end(), '\n'), 1) << err;
}

}  // namespace
}  // namespace axe::cuda
