// AXE_CUDA_CHECK's error (include/axe/cuda/check.hpp).
#include <cuda_runtime_api.h>

#include <string>

#include "axe/core/error.hpp"
#include "axe/cuda/check.hpp"

namespace axe::cuda {

void throw_cuda_error(cudaError_t e, const char* expr, const char* file, int line) {
  throw Error(std::string(file) + ":" + std::to_string(line) + ": " + expr +
              " failed: " + cudaGetErrorString(e));
}

}  // namespace axe::cuda
