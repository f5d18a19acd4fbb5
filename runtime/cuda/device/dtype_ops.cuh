// Element arithmetic of reduce_boxes on the device: the arithmetic type of each storage type
// (f16 and bf16 in float) and the reduction operators.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

namespace axe::cuda::internal {

// Arithmetic type of each storage type.
template <class T>
struct Arith {
  using type = T;
  __device__ static T load(T v) { return v; }
  __device__ static T store(T v) { return v; }
};
struct Half {
  unsigned short bits;
};
struct BHalf {
  unsigned short bits;
};
template <>
struct Arith<Half> {
  using type = float;
  __device__ static float load(Half v) { return __half2float(__ushort_as_half(v.bits)); }
  __device__ static Half store(float v) { return Half{__half_as_ushort(__float2half_rn(v))}; }
};
template <>
struct Arith<BHalf> {
  using type = float;
  __device__ static float load(BHalf v) {
    return __bfloat162float(__ushort_as_bfloat16(v.bits));
  }
  __device__ static BHalf store(float v) {
    return BHalf{__bfloat16_as_ushort(__float2bfloat16_rn(v))};
  }
};

template <class A>
__device__ __forceinline__ A combine(int op, A a, A b) {
  switch (op) {
    case 0:  // sum
    case 4:  // avg
      return static_cast<A>(a + b);
    case 1: return static_cast<A>(a * b);  // prod
    case 2: return a > b ? a : b;          // max
    default: return a < b ? a : b;         // min
  }
}

}  // namespace axe::cuda::internal
