// NVRTC compilation, the CUBIN disk cache and the in-memory kernel cache
// (include/axe/cuda/nvrtc.hpp).
#include "axe/cuda/nvrtc.hpp"

#include <cuda_runtime_api.h>
#include <nvrtc.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <fstream>
#include <mutex>
#include <optional>
#include <system_error>
#include <unordered_map>
#include <vector>

#include "axe/core/error.hpp"
#include "axe/core/tunables.hpp"
#include "axe/cuda/check.hpp"

namespace axe::cuda {

namespace {

[[noreturn]] void throw_nvrtc_error(nvrtcResult r, const char* expr, const char* file, int line) {
  throw Error(std::string(file) + ":" + std::to_string(line) + ": " + expr +
              " failed: " + nvrtcGetErrorString(r));
}

// AXE_CUDA_CHECK's twin for NVRTC calls whose failure is axe's or the machine's, not the
// source's (a compile error is reported with its log by compile()).
#define AXE_NVRTC_CHECK(expr)                                       \
  do {                                                              \
    nvrtcResult axe_nvrtc_res_ = (expr);                            \
    if (axe_nvrtc_res_ != NVRTC_SUCCESS)                            \
      throw_nvrtc_error(axe_nvrtc_res_, #expr, __FILE__, __LINE__); \
  } while (0)

constexpr std::size_t kMaxLog = 4000;

std::atomic<std::int64_t> g_compilations{0};

std::vector<std::string> options(std::string_view arch) {
  return {"-std=c++17", "-default-device", "--gpu-architecture=" + std::string(arch)};
}

std::string nvrtc_version() {
  int major = 0, minor = 0;
  AXE_NVRTC_CHECK(nvrtcVersion(&major, &minor));
  return std::to_string(major) + "." + std::to_string(minor);
}

// Destroys the program however compile() leaves.
struct Program {
  nvrtcProgram p = nullptr;
  ~Program() {
    if (p) nvrtcDestroyProgram(&p);
  }
};

// NVRTC's output for `arch`: PTX text (a virtual arch) or CUBIN bytes (a real one).
std::string compile(std::string_view source, std::string_view program_name, std::string_view arch,
                    bool cubin) {
  const std::string src(source), name(program_name);
  Program prog;
  AXE_NVRTC_CHECK(nvrtcCreateProgram(&prog.p, src.c_str(), name.c_str(), 0, nullptr, nullptr));
  const std::vector<std::string> opts = options(arch);
  std::vector<const char*> argv;
  for (const auto& o : opts) argv.push_back(o.c_str());
  ++g_compilations;
  const nvrtcResult r = nvrtcCompileProgram(prog.p, static_cast<int>(argv.size()), argv.data());
  if (r != NVRTC_SUCCESS) {
    std::size_t n = 0;
    std::string log;
    if (nvrtcGetProgramLogSize(prog.p, &n) == NVRTC_SUCCESS && n > 1) {
      log.resize(n);
      if (nvrtcGetProgramLog(prog.p, log.data()) != NVRTC_SUCCESS) log.clear();
      while (!log.empty() && (log.back() == '\0' || log.back() == '\n')) log.pop_back();
    }
    if (log.size() > kMaxLog)
      log = log.substr(0, kMaxLog) + "\n... (" + std::to_string(log.size() - kMaxLog) +
            " more characters of NVRTC's log)";
    fail("NVRTC could not compile '" + name + "' for " + std::string(arch) + " (" +
         nvrtcGetErrorString(r) + "):\n" + log);
  }
  std::size_t n = 0;
  std::string out;
  if (cubin) {
    AXE_NVRTC_CHECK(nvrtcGetCUBINSize(prog.p, &n));
    out.resize(n);
    AXE_NVRTC_CHECK(nvrtcGetCUBIN(prog.p, out.data()));
  } else {
    AXE_NVRTC_CHECK(nvrtcGetPTXSize(prog.p, &n));
    out.resize(n);
    AXE_NVRTC_CHECK(nvrtcGetPTX(prog.p, out.data()));
    while (!out.empty() && out.back() == '\0') out.pop_back();
  }
  return out;
}

// ---- the disk cache ----
//
// A file is "axe-cubin 1\n<key bytes> <cubin bytes> <fnv1a of cubin, hex>\n<key><cubin>": the key
// is stored whole, so a hash collision of the file name is a miss, and the checksum and the sizes
// make a truncated or corrupted file a miss too.

std::uint64_t fnv1a(std::string_view s) {
  std::uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char c : s) {
    h ^= c;
    h *= 0x100000001b3ull;
  }
  return h;
}

std::string hex(std::uint64_t x) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(x));
  return buf;
}

std::string cache_key(std::string_view source, std::string_view arch) {
  std::string key = "nvrtc " + nvrtc_version() + "\narch " + std::string(arch) + "\noptions";
  for (const auto& o : options(arch)) key += " " + o;
  key += "\nsource\n";
  key += source;
  return key;
}

std::string file_header(std::string_view key, std::string_view cubin) {
  return "axe-cubin 1\n" + std::to_string(key.size()) + " " + std::to_string(cubin.size()) + " " +
         hex(fnv1a(cubin)) + "\n";
}

std::optional<std::string> read_cached(const std::filesystem::path& file, std::string_view key) {
  // istream::read, not istreambuf_iterator: a read error (EIO, a directory) sets badbit instead
  // of throwing out of the stream buffer.
  std::error_code ec;
  const auto size = std::filesystem::file_size(file, ec);
  if (ec || !std::filesystem::is_regular_file(file, ec)) return std::nullopt;
  std::ifstream in(file, std::ios::binary);
  std::string text(size, '\0');
  if (!in.read(text.data(), static_cast<std::streamsize>(size)) || in.peek() != EOF)
    return std::nullopt;
  const std::size_t eol1 = text.find('\n');
  const std::size_t eol2 = eol1 == std::string::npos ? eol1 : text.find('\n', eol1 + 1);
  if (eol2 == std::string::npos || text.compare(0, eol1 + 1, "axe-cubin 1\n") != 0)
    return std::nullopt;
  const std::size_t body = eol2 + 1;
  if (text.size() < body + key.size() || text.compare(body, key.size(), key) != 0)
    return std::nullopt;
  std::string cubin = text.substr(body + key.size());
  if (text.compare(0, body, file_header(key, cubin)) != 0) return std::nullopt;
  return cubin;
}

void warn_once(const std::string& what) {
  static std::atomic<bool> warned{false};
  if (!warned.exchange(true))
    std::fprintf(stderr, "axe: warning: %s; kernels are compiled without the disk cache\n",
                 what.c_str());
}

// Writes a temporary file next to `file` and renames it over `file`, so that a reader sees the
// old file or the whole new one, never a half-written one.
void write_cached(const std::filesystem::path& file, std::string_view key, std::string_view cubin) {
  static std::atomic<std::uint64_t> serial{0};
  std::error_code ec;
  std::filesystem::create_directories(file.parent_path(), ec);
  if (ec) {
    warn_once("AXE_KERNEL_CACHE_DIR='" + file.parent_path().string() +
              "' cannot be created: " + ec.message());
    return;
  }
  const std::filesystem::path tmp =
      file.string() + ".tmp." + std::to_string(::getpid()) + "." + std::to_string(serial++);
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out << file_header(key, cubin) << key << cubin;
    out.close();
    if (!out) {
      std::filesystem::remove(tmp, ec);
      warn_once("AXE_KERNEL_CACHE_DIR: cannot write '" + tmp.string() + "'");
      return;
    }
  }
  std::filesystem::rename(tmp, file, ec);
  if (ec) {
    std::filesystem::remove(tmp, ec);
    warn_once("AXE_KERNEL_CACHE_DIR: cannot rename a file to '" + file.string() + "'");
  }
}

std::filesystem::path cache_file_for_key(const std::string& key) {
  const std::string dir = tunable("AXE_KERNEL_CACHE_DIR");
  if (dir.empty()) return {};
  return std::filesystem::path(dir) / (hex(fnv1a(key)) + ".cubin");
}

}  // namespace

std::string compile_to_ptx(std::string_view source, std::string_view program_name,
                           std::string_view arch) {
  return compile(source, program_name, arch, false);
}

std::string compile_to_cubin(std::string_view source, std::string_view program_name,
                             std::string_view arch) {
  return compile(source, program_name, arch, true);
}

std::filesystem::path kernel_cache_file(std::string_view source, std::string_view arch) {
  return cache_file_for_key(cache_key(source, arch));
}

std::string cubin_for(std::string_view source, std::string_view program_name,
                      std::string_view arch) {
  const std::string key = cache_key(source, arch);
  const std::filesystem::path file = cache_file_for_key(key);
  if (file.empty()) return compile_to_cubin(source, program_name, arch);
  if (auto hit = read_cached(file, key)) return *hit;
  std::string cubin = compile_to_cubin(source, program_name, arch);
  write_cached(file, key, cubin);
  return cubin;
}

std::int64_t nvrtc_compilations() {
  return g_compilations.load();
}

std::string cubin_arch(int major, int minor) {
  return "sm_" + std::to_string(major) + std::to_string(minor) + (major >= 9 ? "a" : "");
}

// ---- the in-memory cache ----

struct KernelCache::State {
  std::mutex mu;
  std::unordered_map<std::string, cudaLibrary_t> libraries;  // arch '\0' source
  std::unordered_map<std::string, cudaKernel_t> kernels;     // arch '\0' source '\0' name
};

KernelCache::KernelCache() : state_(std::make_unique<State>()) {}

// The libraries are left loaded: unloading at exit could run after the CUDA runtime is torn down.
KernelCache::~KernelCache() = default;

KernelCache& KernelCache::global() {
  static KernelCache* cache = new KernelCache();  // never destroyed, see ~KernelCache
  return *cache;
}

cudaKernel_t KernelCache::kernel(std::string_view source, std::string_view kernel_name) {
  int count = 0;
  const cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess || count == 0) {
    cudaGetLastError();
    fail(std::string("no CUDA device: generated kernels need a GPU (cudaGetDeviceCount: ") +
         (e != cudaSuccess ? cudaGetErrorString(e) : "0 devices") + ")");
  }
  int device = 0, major = 0, minor = 0;
  AXE_CUDA_CHECK(cudaGetDevice(&device));
  AXE_CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
  AXE_CUDA_CHECK(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device));
  const std::string arch = cubin_arch(major, minor);
  std::string lib_key = arch;
  lib_key += '\0';
  lib_key += source;
  std::string kernel_key = lib_key;
  kernel_key += '\0';
  kernel_key += kernel_name;

  std::lock_guard<std::mutex> lock(state_->mu);
  if (auto it = state_->kernels.find(kernel_key); it != state_->kernels.end()) return it->second;
  auto lib = state_->libraries.find(lib_key);
  if (lib == state_->libraries.end()) {
    const std::string cubin = cubin_for(source, std::string(kernel_name) + ".cu", arch);
    cudaLibrary_t loaded = nullptr;
    AXE_CUDA_CHECK(
        cudaLibraryLoadData(&loaded, cubin.data(), nullptr, nullptr, 0, nullptr, nullptr, 0));
    lib = state_->libraries.emplace(lib_key, loaded).first;
  }
  cudaKernel_t k = nullptr;
  const std::string name(kernel_name);
  if (const cudaError_t ge = cudaLibraryGetKernel(&k, lib->second, name.c_str());
      ge != cudaSuccess) {
    cudaGetLastError();
    fail("generated source has no kernel '" + name +
         "' (an extern \"C\" __global__ function): " + cudaGetErrorString(ge));
  }
  state_->kernels.emplace(std::move(kernel_key), k);
  return k;
}

void launch(cudaKernel_t kernel, dim3 grid, dim3 block, void** args, std::size_t shared_bytes,
            cudaStream_t stream) {
  // cudaLaunchKernel takes a cudaKernel_t cast to const void* (CUDA 12.x/13 runtime API: its
  // func "can also be a cudaKernel_t", the \note_cudaKernel_t of cuda_runtime_api.h); the
  // kernel runs in the current device's context.
  AXE_CUDA_CHECK(cudaLaunchKernel(reinterpret_cast<const void*>(kernel), grid, block, args,
                                  shared_bytes, stream));
}

}  // namespace axe::cuda
