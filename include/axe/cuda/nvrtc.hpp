// Run-time compiled kernels: generated CUDA C++ source compiled by NVRTC, cached on disk and in
// memory, launched through the runtime API.
//
// The source is self-contained: no #include of CUDA headers (NVRTC provides the builtin vector
// types, threadIdx, __shfl_sync, __syncthreads, inline PTX without them); kernels are declared
// `extern "C" __global__` so that their names are not mangled. Every compilation uses
//   -std=c++17 -default-device --gpu-architecture=<arch>
// (-default-device: a helper without __device__ is a device function; no --use_fast_math).
//
// Example:
//   const char* src =
//       R"(extern "C" __global__ void iota(int* out) { out[threadIdx.x] = threadIdx.x; })";
//   compile_to_ptx(src, "iota.cu");  // PTX text holding ".entry iota"; needs no GPU
//   cudaKernel_t k = KernelCache::global().kernel(src, "iota");  // sm_90a CUBIN on an H100
//   void* args[] = {&d_out};
//   launch(k, dim3(1), dim3(32), args);  // d_out = 0, 1, ..., 31
//
// The disk cache: when AXE_KERNEL_CACHE_DIR names a directory, each CUBIN is kept there in a file
// named by a hash of (NVRTC version, options, arch, source), written atomically (a temporary
// file renamed). A file that is missing, truncated, corrupt or holds another key is a miss and is
// recompiled and rewritten; a directory that cannot be created or written costs one warning on
// stderr per process and the kernels are compiled as without it.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>

namespace axe::cuda {

// PTX of `source` for a virtual architecture (`compute_90`, `compute_80`, ...). Needs no GPU.
// `program_name` names the source in NVRTC's log and in the error. Throws axe::Error naming the
// program and the arch and carrying NVRTC's log (its first 4000 characters) when NVRTC fails.
std::string compile_to_ptx(std::string_view source, std::string_view program_name,
                           std::string_view arch = "compute_90");

// CUBIN (bytes) of `source` for a real architecture (`sm_90a`, `sm_80`, ...), straight from
// NVRTC, no cache. Needs no GPU. Errors as compile_to_ptx.
std::string compile_to_cubin(std::string_view source, std::string_view program_name,
                             std::string_view arch);

// compile_to_cubin through the disk cache (AXE_KERNEL_CACHE_DIR; unset: compile_to_cubin).
// Guarantees: the bytes equal what compile_to_cubin returns for the same NVRTC; a hit runs no
// compilation (nvrtc_compilations() unchanged); a miss compiles once and writes the file.
std::string cubin_for(std::string_view source, std::string_view program_name,
                      std::string_view arch);

// The file cubin_for reads and writes for (source, arch); empty when AXE_KERNEL_CACHE_DIR is
// unset. E.g. "<dir>/3f2a9c0d1b7e6a45.cubin".
std::filesystem::path kernel_cache_file(std::string_view source, std::string_view arch);

// NVRTC compilations this process has run (every compile_to_ptx / compile_to_cubin, and the
// misses of cubin_for and KernelCache): how tests tell a cache hit from a miss.
std::int64_t nvrtc_compilations();

// The real architecture a CUBIN for compute capability major.minor is compiled for: the
// architecture-specific variant from 9.0 on (wgmma, setmaxnreg need it), since the CUBIN runs on
// that device only. cubin_arch(9, 0) == "sm_90a", cubin_arch(8, 6) == "sm_86".
std::string cubin_arch(int major, int minor);

// Launchable kernels of generated source for the current device, compiled once per (device
// architecture, source) and loaded once (cudaLibraryLoadData); thread-safe. A loaded library is
// context-independent, so devices of one architecture share it. Libraries stay loaded for the
// life of the process. A first use compiles under the cache's one lock (first uses of different
// sources on several threads wait for each other); later uses are a lookup.
class KernelCache {
 public:
  KernelCache();
  ~KernelCache();
  KernelCache(const KernelCache&) = delete;
  KernelCache& operator=(const KernelCache&) = delete;

  // The process-wide cache.
  static KernelCache& global();

  // The kernel `kernel_name` (an extern "C" __global__ function of `source`) for the current
  // device (cudaGetDevice). Throws axe::Error "no CUDA device: generated kernels need a GPU"
  // without one, NVRTC's error when the source does not compile, and a CUDA error naming the
  // kernel when the library has no such kernel.
  cudaKernel_t kernel(std::string_view source, std::string_view kernel_name);

 private:
  struct State;
  std::unique_ptr<State> state_;
};

// Launches `kernel` (from KernelCache) as cudaLaunchKernel does: args[i] points to the i-th
// parameter. Errors of the launch call are thrown as axe::Error (AXE_CUDA_CHECK).
void launch(cudaKernel_t kernel, dim3 grid, dim3 block, void** args, std::size_t shared_bytes = 0,
            cudaStream_t stream = nullptr);

}  // namespace axe::cuda
