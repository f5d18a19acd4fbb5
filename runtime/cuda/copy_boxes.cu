// copy_boxes (include/axe/cuda/kernels.hpp): the copy-engine calls, the generated copy
// (generated_copy.cpp: realigned rows, aligned strided runs) and the box kernel
// (device/box_kernel.cuh) with a plain copy.
#include <cuda_runtime.h>

#include <cstdint>

#include "axe/cuda/check.hpp"
#include "axe/cuda/kernels.hpp"
#include "cuda/device/box_kernel.cuh"
#include "cuda/internal.hpp"

namespace axe::cuda {

using internal::launch;

namespace {

struct CopyF {
  static constexpr bool reads_src = true;
  template <class U>
  __device__ __forceinline__ void apply(const U& s, U* d) const {
    *d = s;
  }
};

}  // namespace

void copy_boxes(const BoxList& list, const void* src, void* dst, cudaStream_t stream,
                const void* src2) {
  copy_boxes(list, src, dst, stream, src2, copy_engine_policy());
}

void copy_boxes(const BoxList& list, const void* src, void* dst, cudaStream_t stream,
                const void* src2, const CopyEnginePolicy& policy) {
  const BoxList::Split sp = list.split(policy);
  const BoxList* kernel_list = sp.engine.empty() && !sp.rows ? &list : sp.rest.get();
  for (const EngineCopy& c : sp.engine) {
    const char* s = static_cast<const char*>(c.source ? src2 : src) + c.src_offset;
    char* d = static_cast<char*>(dst) + c.dst_offset;
    if (c.height == 1)
      AXE_CUDA_CHECK(cudaMemcpyAsync(d, s, static_cast<std::size_t>(c.width), cudaMemcpyDeviceToDevice, stream));
    else
      AXE_CUDA_CHECK(cudaMemcpy2DAsync(d, static_cast<std::size_t>(c.dst_pitch), s,
                                       static_cast<std::size_t>(c.src_pitch), static_cast<std::size_t>(c.width),
                                       static_cast<std::size_t>(c.height), cudaMemcpyDeviceToDevice, stream));
  }
  // Realigned rows (copy_engine.hpp): the generated copy's destination words.
  if (sp.rows) copy_generated(*sp.rows, src, dst, stream, src2);
  if (!kernel_list) return;
  // Aligned strided boxes in runs of at least generated_min_run bytes: the generated tile copy
  // (copy_engine.hpp gives the figures for and against).
  if (copies_generated(*kernel_list, src, dst, src2, policy))
    copy_generated(*kernel_list, src, dst, stream, src2);
  else
    launch(*kernel_list, src, dst, stream, CopyF{}, src2);
}

}  // namespace axe::cuda
