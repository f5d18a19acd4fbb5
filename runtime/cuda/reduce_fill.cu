// reduce_boxes and fill_boxes (include/axe/cuda/kernels.hpp): the box kernel
// (device/box_kernel.cuh) with a reduction or a fill, and the fill's bit pattern.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cmath>
#include <cstdint>
#include <cstring>

#include "axe/cuda/kernels.hpp"
#include "cuda/device/box_kernel.cuh"
#include "cuda/device/dtype_ops.cuh"

namespace axe::cuda {

using internal::Arith;
using internal::BHalf;
using internal::Half;
using internal::combine;
using internal::launch;

namespace {

struct FillF {
  static constexpr bool reads_src = false;
  uint4 pattern;  // the value replicated over 16 bytes
  template <class U>
  __device__ __forceinline__ void apply(const U&, U* d) const {
    U v;
    memcpy(&v, &pattern, sizeof(U));
    *d = v;
  }
};

template <class T>
struct ReduceF {
  static constexpr bool reads_src = true;
  int op;
  int combine_it;
  double divide;
  template <class U>
  __device__ __forceinline__ void apply(const U& s, U* d) const {
    if constexpr (sizeof(U) >= sizeof(T)) {
      constexpr int n = sizeof(U) / sizeof(T);
      U dv = *d;
      T a[n], b[n];
      memcpy(a, &dv, sizeof(U));
      memcpy(b, &s, sizeof(U));
#pragma unroll
      for (int i = 0; i < n; ++i) {
        using A = typename Arith<T>::type;
        A r = Arith<T>::load(b[i]);
        if (combine_it) r = combine<A>(op, Arith<T>::load(a[i]), r);
        if (divide != 1.0) r = static_cast<A>(static_cast<double>(r) / divide);
        a[i] = Arith<T>::store(r);
      }
      memcpy(&dv, a, sizeof(U));
      *d = dv;
    }
  }
};

int op_code(ReduceOp op) {
  switch (op) {
    case ReduceOp::Sum: return 0;
    case ReduceOp::Prod: return 1;
    case ReduceOp::Max: return 2;
    case ReduceOp::Min: return 3;
    case ReduceOp::Avg: return 4;
  }
  return 0;
}

}  // namespace

void reduce_boxes(const BoxList& list, const void* src, void* dst, ReduceOp op, bool combine_it,
                  double divide, cudaStream_t stream, const void* src2) {
  const int oc = op_code(op);
  const int c = combine_it ? 1 : 0;
  switch (list.dtype()) {
    case DType::F32: launch(list, src, dst, stream, ReduceF<float>{oc, c, divide}, src2); break;
    case DType::F64: launch(list, src, dst, stream, ReduceF<double>{oc, c, divide}, src2); break;
    case DType::F16: launch(list, src, dst, stream, ReduceF<Half>{oc, c, divide}, src2); break;
    case DType::BF16: launch(list, src, dst, stream, ReduceF<BHalf>{oc, c, divide}, src2); break;
    case DType::I32: launch(list, src, dst, stream, ReduceF<std::int32_t>{oc, c, divide}, src2); break;
    case DType::I64: launch(list, src, dst, stream, ReduceF<long long>{oc, c, divide}, src2); break;
    case DType::U8: launch(list, src, dst, stream, ReduceF<unsigned char>{oc, c, divide}, src2); break;
  }
}

std::uint64_t value_bits(DType t, double v) {
  std::uint64_t bits = 0;
  auto put = [&](auto x) { std::memcpy(&bits, &x, sizeof(x)); };
  switch (t) {
    case DType::F64: put(v); break;
    case DType::F32: put(static_cast<float>(v)); break;
    case DType::F16: put(__half_as_ushort(__float2half_rn(static_cast<float>(v)))); break;
    case DType::BF16:
      if (std::isnan(v)) put(static_cast<unsigned short>(0x7fc0));
      else put(__bfloat16_as_ushort(__float2bfloat16_rn(static_cast<float>(v))));
      break;
    case DType::I32:
      put(static_cast<std::int32_t>(std::isfinite(v) ? v : (v > 0 ? INT32_MAX : INT32_MIN)));
      break;
    case DType::I64:
      put(static_cast<std::int64_t>(std::isfinite(v) ? v : (v > 0 ? INT64_MAX : INT64_MIN)));
      break;
    case DType::U8:
      put(static_cast<std::uint8_t>(std::isfinite(v) ? v : (v > 0 ? 255 : 0)));
      break;
  }
  return bits;
}

void fill_boxes(const BoxList& list, void* dst, double value, cudaStream_t stream) {
  const std::uint64_t bits = value_bits(list.dtype(), value);
  const std::int64_t es = size_of(list.dtype());
  unsigned char pat[16];
  for (int i = 0; i < 16; ++i) pat[i] = static_cast<unsigned char>(bits >> (8 * (i % es)));
  FillF f;
  std::memcpy(&f.pattern, pat, 16);
  launch(list, nullptr, dst, stream, f);
}

}  // namespace axe::cuda
