// Experiment (not landing; tenth session): kernel_bench's uneven f32 copy (rows of 4088 f32 at a
// pitch of 4096, offset 0, into rows of 4095 at offset 1), where Triton's masked row copy ran 3-4%
// faster than the runtime. Its kernels and helpers up to k_twin are those of
// ../one_wave_2026-11-29/unpack_exp.cu (destination words: two aligned source loads and a shift a
// word); new here: k_src (aligned source words, stored in 4-byte pieces as Triton's layout does),
// k_src8 (the same, 8-byte pieces where the destination allows) and k_shfl (destination words
// whose second source word comes from the next lane by shuffles: one load a word), and k_tri
// (Triton's layout on these rows: 4-byte elements, one an access, EPT a thread along one row; k_tri4
// with 4 consecutive elements a thread; k_trix: Triton's own, loads as k_tri4, stores as k_tri,
// exchanged through shared memory).
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <vector>

#define CK(x)                                                                     \
  do {                                                                            \
    cudaError_t e_ = (x);                                                         \
    if (e_ != cudaSuccess) {                                                      \
      std::printf("CUDA %s at %s:%d\n", cudaGetErrorString(e_), __FILE__, __LINE__); \
      std::exit(1);                                                               \
    }                                                                             \
  } while (0)

struct P {
  long long N, L, SB, DB, SO, DO;  // rows, row bytes, strides, offsets (bytes)
  int W;                           // words a row: (L + 30) / 16
};

#define AXE_ES 1

template <int S> struct axe_piece;
template <> struct axe_piece<1> { typedef unsigned char T; };
template <> struct axe_piece<2> { typedef unsigned short T; };
template <> struct axe_piece<4> { typedef unsigned int T; };
template <> struct axe_piece<8> { typedef unsigned long long T; };
// The byte of the head's (tail's) piece of S bytes, or 16 when it has none; sh in 1..15.
template <int S> __device__ __forceinline__ unsigned axe_head_at(unsigned sh) {
  const unsigned m = 16u - sh;  // the head's length: a piece of each of its bits, smallest first
  return S >= AXE_ES && (m & S) ? sh + (m & (S - 1u)) : 16u;
}
template <int S> __device__ __forceinline__ unsigned axe_tail_at(unsigned sh) {
  return S >= AXE_ES && (sh & S) ? sh & ~(2u * S - 1u) : 16u;
}
template <int S> __device__ __forceinline__ unsigned long long axe_get(unsigned long long w, unsigned o) {
  return o < 16u ? (unsigned long long)*reinterpret_cast<const typename axe_piece<S>::T*>(w + o) << (8 * (o & 7u))
                 : 0ull;
}
template <int S> __device__ __forceinline__ void axe_set(unsigned long long w, unsigned o, unsigned long long lo,
                                                         unsigned long long hi) {
  if (o < 16u)
    *reinterpret_cast<typename axe_piece<S>::T*>(w + o) =
        static_cast<typename axe_piece<S>::T>((o < 8u ? lo : hi) >> (8 * (o & 7u)));
}
__device__ __forceinline__ uint4 axe_join(unsigned long long lo, unsigned long long hi) {
  return make_uint4((unsigned)lo, (unsigned)(lo >> 32), (unsigned)hi, (unsigned)(hi >> 32));
}
// Bytes [b, 16) (head) or [0, b) (tail) of the word at w, the others zero.
template <bool Head> __device__ __forceinline__ uint4 axe_load_part(unsigned long long w, unsigned b) {
  const unsigned o1 = Head ? axe_head_at<1>(b) : axe_tail_at<1>(b), o2 = Head ? axe_head_at<2>(b) : axe_tail_at<2>(b),
                 o4 = Head ? axe_head_at<4>(b) : axe_tail_at<4>(b), o8 = Head ? axe_head_at<8>(b) : axe_tail_at<8>(b);
  const unsigned long long v1 = axe_get<1>(w, o1), v2 = axe_get<2>(w, o2), v4 = axe_get<4>(w, o4), v8 = axe_get<8>(w, o8);
  unsigned long long lo = 0ull, hi = 0ull;
  (o1 < 8u ? lo : hi) |= v1;
  (o2 < 8u ? lo : hi) |= v2;
  (o4 < 8u ? lo : hi) |= v4;
  (o8 < 8u ? lo : hi) |= v8;
  return axe_join(lo, hi);
}
template <bool Head> __device__ __forceinline__ void axe_store_part(unsigned long long w, unsigned b, uint4 v) {
  const unsigned long long lo = (unsigned long long)v.y << 32 | v.x, hi = (unsigned long long)v.w << 32 | v.z;
  axe_set<1>(w, Head ? axe_head_at<1>(b) : axe_tail_at<1>(b), lo, hi);
  axe_set<2>(w, Head ? axe_head_at<2>(b) : axe_tail_at<2>(b), lo, hi);
  axe_set<4>(w, Head ? axe_head_at<4>(b) : axe_tail_at<4>(b), lo, hi);
  axe_set<8>(w, Head ? axe_head_at<8>(b) : axe_tail_at<8>(b), lo, hi);
}
// Bytes k .. k + 15 (k < 16) of the 32 bytes a, b (a's byte 0 first).
__device__ __forceinline__ uint4 axe_shift16(uint4 a, uint4 b, unsigned k) {
  const unsigned q = k >> 2, r = 8 * (k & 3u);
  const unsigned w[8] = {a.x, a.y, a.z, a.w, b.x, b.y, b.z, b.w};
  unsigned t[6], s[5];  // s = w[q .. q + 4]: two words along if q's bit 1, then one if its bit 0
#pragma unroll
  for (int i = 0; i < 6; ++i) t[i] = q & 2u ? w[i + 2] : w[i];
#pragma unroll
  for (int i = 0; i < 5; ++i) s[i] = q & 1u ? t[i + 1] : t[i];
  return make_uint4(__funnelshift_r(s[0], s[1], r), __funnelshift_r(s[1], s[2], r),
                    __funnelshift_r(s[2], s[3], r), __funnelshift_r(s[3], s[4], r));
}
__device__ __forceinline__ uint4 axe_shfl_up16(uint4 v, int width) {
  return make_uint4(__shfl_up_sync(0xffffffffu, v.x, 1, width), __shfl_up_sync(0xffffffffu, v.y, 1, width),
                    __shfl_up_sync(0xffffffffu, v.z, 1, width), __shfl_up_sync(0xffffffffu, v.w, 1, width));
}
__device__ __forceinline__ uint4 axe_ldg16(unsigned long long w) { return __ldg(reinterpret_cast<const uint4*>(w)); }

#ifdef PIECES
__device__ __forceinline__ void store_range(unsigned char* w, int b0, int b1, uint4 v) {
  if (b0 == 0 && b1 == 16) { *reinterpret_cast<uint4*>(w) = v; return; }
  if (b1 == 16) { axe_store_part<true>((unsigned long long)w, (unsigned)b0, v); return; }
  if (b0 == 0) { axe_store_part<false>((unsigned long long)w, (unsigned)b1, v); return; }
  union { uint4 v; unsigned char e[16]; } u;
  u.v = v;
#pragma unroll
  for (int j = 0; j < 16; ++j)
    if (j >= b0 && j < b1) w[j] = u.e[j];
}
#else
__device__ __forceinline__ void store_range(unsigned char* w, int b0, int b1, uint4 v) {
  if (b0 == 0 && b1 == 16) {
    *reinterpret_cast<uint4*>(w) = v;
    return;
  }
  union { uint4 v; unsigned char e[16]; } u;
  u.v = v;
#pragma unroll
  for (int j = 0; j < 16; ++j)
    if (j >= b0 && j < b1) w[j] = u.e[j];
}
#endif
__device__ __forceinline__ int clamp16(int x) { return min(max(x, 0), 16); }

// Word g's place: row y, its byte `at` in the row, destination word address, source word w, shift.
struct Word {
  bool ok;
  int at;
  unsigned sh;
  unsigned long long wd, w;
};
__device__ __forceinline__ Word place(const unsigned char* src, unsigned char* dst, const P& p, long long g) {
  Word x;
  const unsigned gu = (unsigned)g, yu = gu / (unsigned)p.W;  // under 2^32 words here
  const long long y = yu;
  const int m = (int)(gu - yu * (unsigned)p.W);
  x.ok = false;
  if (y >= p.N) return x;
  const unsigned long long D = (unsigned long long)(dst + p.DO + y * p.DB), S = (unsigned long long)(src + p.SO + y * p.SB);
  x.at = 16 * m - (int)(D & 15ull);
  if (x.at >= p.L) return x;
  x.ok = true;
  x.wd = D + (long long)x.at;
  const unsigned long long s0 = S + (long long)x.at;
  x.w = s0 & ~15ull;
  x.sh = (unsigned)s0 & 15u;
  return x;
}

__device__ __forceinline__ Word place2(const unsigned char* src, unsigned char* dst, const P& p, long long y, int m) {
  Word x;
  x.ok = false;
  if (y >= p.N || m >= p.W) return x;
  const unsigned long long D = (unsigned long long)(dst + p.DO + y * p.DB), S = (unsigned long long)(src + p.SO + y * p.SB);
  x.at = 16 * m - (int)(D & 15ull);
  if (x.at >= p.L) return x;
  x.ok = true;
  x.wd = D + (long long)x.at;
  const unsigned long long s0 = S + (long long)x.at;
  x.w = s0 & ~15ull;
  x.sh = (unsigned)s0 & 15u;
  return x;
}
// 2-D tiles: 32 words (lanes) by 8 TR rows (warps, then registers 8 rows apart), along the words first.
template <int TR>
__global__ void __launch_bounds__(256) k_reg2(const unsigned char* __restrict__ src, unsigned char* __restrict__ dst, P p,
                                              long long tiles) {
  const int tiles_a = (p.W + 31) / 32;
  for (long long t = blockIdx.x; t < tiles; t += gridDim.x) {
    const long long band = t / tiles_a;
    const int m = (int)(t - band * tiles_a) * 32 + (threadIdx.x & 31);
    const long long y0 = band * 8 * TR + (threadIdx.x >> 5);
    uint4 lo[TR], hi[TR];
    Word x[TR];
#pragma unroll
    for (int r = 0; r < TR; ++r) {
      x[r] = place2(src, dst, p, y0 + 8 * r, m);
      if (x[r].ok) {
        lo[r] = *reinterpret_cast<const uint4*>(x[r].w);
        hi[r] = x[r].sh ? *reinterpret_cast<const uint4*>(x[r].w + 16) : make_uint4(0, 0, 0, 0);
      }
    }
#pragma unroll
    for (int r = 0; r < TR; ++r) {
      if (!x[r].ok) continue;
      const uint4 v = axe_shift16(lo[r], hi[r], x[r].sh);
      store_range((unsigned char*)x[r].wd, clamp16(-x[r].at), clamp16((int)p.L - x[r].at), v);
    }
  }
}

template <int WPT>
__global__ void __launch_bounds__(256) k_reg(const unsigned char* __restrict__ src, unsigned char* __restrict__ dst, P p,
                                             long long tiles) {
  for (long long t = blockIdx.x; t < tiles; t += gridDim.x) {
    const long long g0 = t * 256 * WPT;
    uint4 lo[WPT], hi[WPT];
    Word x[WPT];
#pragma unroll
    for (int r = 0; r < WPT; ++r) {
      x[r] = place(src, dst, p, g0 + threadIdx.x + 256 * r);
      if (x[r].ok) {
        lo[r] = *reinterpret_cast<const uint4*>(x[r].w);
        hi[r] = x[r].sh ? *reinterpret_cast<const uint4*>(x[r].w + 16) : make_uint4(0, 0, 0, 0);
      }
    }
#pragma unroll
    for (int r = 0; r < WPT; ++r) {
      if (!x[r].ok) continue;
      const uint4 v = axe_shift16(lo[r], hi[r], x[r].sh);
      store_range((unsigned char*)x[r].wd, clamp16(-x[r].at), clamp16((int)p.L - x[r].at), v);
    }
  }
}

template <bool CA>
__device__ __forceinline__ void cp16(void* s, unsigned long long g) {
  const unsigned a = (unsigned)__cvta_generic_to_shared(s);
  if (CA) asm volatile("cp.async.ca.shared.global [%0], [%1], 16;\n" ::"r"(a), "l"(g));
  else asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(a), "l"(g));
}
__device__ __forceinline__ void commit() { asm volatile("cp.async.commit_group;\n" ::); }
template <int N>
__device__ __forceinline__ void wait_groups() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N));
}

// cp.async: each thread stages its own words' lo / hi in shared memory (no barrier: it reads only
// what it staged), STAGES tiles in flight.
template <int WPT, int STAGES, bool CA>
__global__ void __launch_bounds__(256) k_async(const unsigned char* __restrict__ src, unsigned char* __restrict__ dst, P p,
                                               long long tiles) {
  extern __shared__ uint4 sm[];  // [STAGES][2][256 * WPT]
  auto issue = [&](int stage, long long t) {
    if (t < tiles) {
      uint4* lo = sm + (size_t)stage * 2 * 256 * WPT;
      uint4* hi = lo + 256 * WPT;
#pragma unroll
      for (int r = 0; r < WPT; ++r) {
        const Word x = place(src, dst, p, t * 256 * WPT + threadIdx.x + 256 * r);
        if (x.ok) {
          cp16<CA>(lo + threadIdx.x + 256 * r, x.w);
          if (x.sh) cp16<CA>(hi + threadIdx.x + 256 * r, x.w + 16);
        }
      }
    }
    commit();
  };
#pragma unroll
  for (int s = 0; s < STAGES - 1; ++s) issue(s, blockIdx.x + (long long)s * gridDim.x);
  int stage = 0;
  for (long long t = blockIdx.x; t < tiles; t += gridDim.x) {
    issue((stage + STAGES - 1) % STAGES, t + (long long)(STAGES - 1) * gridDim.x);
    wait_groups<STAGES - 1>();
    const uint4* lo = sm + (size_t)stage * 2 * 256 * WPT;
    const uint4* hi = lo + 256 * WPT;
#pragma unroll
    for (int r = 0; r < WPT; ++r) {
      const Word x = place(src, dst, p, t * 256 * WPT + threadIdx.x + 256 * r);
      if (!x.ok) continue;
      const uint4 v = axe_shift16(lo[threadIdx.x + 256 * r], x.sh ? hi[threadIdx.x + 256 * r] : make_uint4(0, 0, 0, 0), x.sh);
      store_range((unsigned char*)x.wd, clamp16(-x.at), clamp16((int)p.L - x.at), v);
    }
    stage = (stage + 1) % STAGES;
  }
  wait_groups<0>();
}

template <int TR, int STAGES>
__global__ void __launch_bounds__(256) k_async2(const unsigned char* __restrict__ src, unsigned char* __restrict__ dst, P p,
                                                long long tiles) {
  extern __shared__ uint4 sm[];  // [STAGES][2][256 * TR]
  const int tiles_a = (p.W + 31) / 32;
  auto at_of = [&](long long t, int r, long long& y, int& m) {
    const long long band = t / tiles_a;
    m = (int)(t - band * tiles_a) * 32 + (threadIdx.x & 31);
    y = band * 8 * TR + (threadIdx.x >> 5) + 8 * r;
  };
  auto issue = [&](int stage, long long t) {
    if (t < tiles) {
      uint4* lo = sm + (size_t)stage * 2 * 256 * TR;
      uint4* hi = lo + 256 * TR;
#pragma unroll
      for (int r = 0; r < TR; ++r) {
        long long y;
        int m;
        at_of(t, r, y, m);
        const Word x = place2(src, dst, p, y, m);
        if (x.ok) {
          cp16<true>(lo + threadIdx.x + 256 * r, x.w);
          if (x.sh) cp16<true>(hi + threadIdx.x + 256 * r, x.w + 16);
        }
      }
    }
    commit();
  };
#pragma unroll
  for (int s = 0; s < STAGES - 1; ++s) issue(s, blockIdx.x + (long long)s * gridDim.x);
  int stage = 0;
  for (long long t = blockIdx.x; t < tiles; t += gridDim.x) {
    issue((stage + STAGES - 1) % STAGES, t + (long long)(STAGES - 1) * gridDim.x);
    wait_groups<STAGES - 1>();
    const uint4* lo = sm + (size_t)stage * 2 * 256 * TR;
    const uint4* hi = lo + 256 * TR;
#pragma unroll
    for (int r = 0; r < TR; ++r) {
      long long y;
      int m;
      at_of(t, r, y, m);
      const Word x = place2(src, dst, p, y, m);
      if (!x.ok) continue;
      const uint4 v = axe_shift16(lo[threadIdx.x + 256 * r], x.sh ? hi[threadIdx.x + 256 * r] : make_uint4(0, 0, 0, 0), x.sh);
      store_range((unsigned char*)x.wd, clamp16(-x.at), clamp16((int)p.L - x.at), v);
    }
    stage = (stage + 1) % STAGES;
  }
  wait_groups<0>();
}

// The aligned twin: rows of R16 words, source stride SBW words, destination stride DBW words.
__global__ void __launch_bounds__(256) k_twin(const uint4* __restrict__ src, uint4* __restrict__ dst, long long N, int R16,
                                              long long SBW, long long DBW, long long tiles) {
  for (long long t = blockIdx.x; t < tiles; t += gridDim.x) {
    uint4 v[4];
    long long y[4];
    int m[4];
#pragma unroll
    for (int r = 0; r < 4; ++r) {
      const long long g = t * 1024 + threadIdx.x + 256 * r;
      y[r] = g / R16;
      m[r] = (int)(g - y[r] * R16);
      if (y[r] < N) v[r] = src[y[r] * SBW + m[r]];
    }
#pragma unroll
    for (int r = 0; r < 4; ++r)
      if (y[r] < N) dst[y[r] * DBW + m[r]] = v[r];
  }
}


// Source words: a tile is TPR x 256 x RPT source words of one row (the row's aligned words from the
// one holding its first byte); each thread loads RPT of them (256 apart), then stores each word's
// bytes of the row at the destination's shift in 4-byte pieces (W8: 8-byte pieces where aligned).
template <int RPT, bool W8>
__global__ void __launch_bounds__(256) k_src(const unsigned char* __restrict__ src, unsigned char* __restrict__ dst, P p,
                                             long long tiles) {
  const long long per_row = (p.L / 16 + 2 + 256 * RPT - 1) / (256 * RPT);
  for (long long t = blockIdx.x; t < tiles; t += gridDim.x) {
    const long long y = t / per_row;
    const int part = (int)(t - y * per_row);
    const unsigned long long S = (unsigned long long)(src + p.SO + y * p.SB), D = (unsigned long long)(dst + p.DO + y * p.DB);
    const unsigned long long S0 = S & ~15ull, SE = S + p.L;
    uint4 v[RPT];
    unsigned long long w[RPT];
#pragma unroll
    for (int r = 0; r < RPT; ++r) {
      w[r] = S0 + 16ull * ((unsigned long long)part * 256 * RPT + threadIdx.x + 256 * r);
      if (w[r] < SE) v[r] = *reinterpret_cast<const uint4*>(w[r]);
    }
#pragma unroll
    for (int r = 0; r < RPT; ++r) {
      if (w[r] >= SE) continue;
      const unsigned e[4] = {v[r].x, v[r].y, v[r].z, v[r].w};
      const unsigned long long d = D + (w[r] - S);  // the word's first byte at the destination
      const bool whole = w[r] >= S && w[r] + 16 <= SE;
      if (W8 && whole && (d & 7ull) == 4ull) {
        *reinterpret_cast<unsigned*>(d) = e[0];
        *reinterpret_cast<uint2*>(d + 4) = make_uint2(e[1], e[2]);
        *reinterpret_cast<unsigned*>(d + 12) = e[3];
      } else if (W8 && whole && (d & 7ull) == 0ull) {
        *reinterpret_cast<uint2*>(d) = make_uint2(e[0], e[1]);
        *reinterpret_cast<uint2*>(d + 8) = make_uint2(e[2], e[3]);
      } else {
#pragma unroll
        for (int k = 0; k < 4; ++k)
          if (w[r] + 4 * k >= S && w[r] + 4 * k < SE) *reinterpret_cast<unsigned*>(d + 4 * k) = e[k];
      }
    }
  }
}

// Destination words as k_reg2 (32 words of a row a warp, TR rows a thread), each lane loading one
// source word: its word's first; the second is the next lane's first, taken by shuffles (lane 31
// loads its own). Reads up to one word past a row's end (the buffers have slack).
template <int TR>
__global__ void __launch_bounds__(256) k_shfl(const unsigned char* __restrict__ src, unsigned char* __restrict__ dst, P p,
                                              long long tiles) {
  const int tiles_a = (p.W + 31) / 32;
  const unsigned lane = threadIdx.x & 31u;
  for (long long t = blockIdx.x; t < tiles; t += gridDim.x) {
    const long long band = t / tiles_a;
    const int m = (int)(t - band * tiles_a) * 32 + (int)lane;
    const long long y0 = band * 8 * TR + (threadIdx.x >> 5);
    uint4 lo[TR], hi[TR];
    int at[TR];
    unsigned sh[TR];
    unsigned long long wd[TR];
#pragma unroll
    for (int r = 0; r < TR; ++r) {
      const long long y = y0 + 8 * r;
      at[r] = (int)p.L + 16;
      lo[r] = make_uint4(0, 0, 0, 0);
      hi[r] = make_uint4(0, 0, 0, 0);
      sh[r] = 0;
      if (y < p.N) {
        const unsigned long long D = (unsigned long long)(dst + p.DO + y * p.DB), S = (unsigned long long)(src + p.SO + y * p.SB);
        const int a = 16 * m - (int)(D & 15ull);
        if (a < (int)p.L + 16) {  // one word past the row: its first source word is the last word's second
          at[r] = a;
          wd[r] = D + (long long)a;
          const unsigned long long s0 = S + (long long)a, w = s0 & ~15ull;
          sh[r] = (unsigned)s0 & 15u;
          lo[r] = *reinterpret_cast<const uint4*>(w);
          if (lane == 31u && sh[r]) hi[r] = *reinterpret_cast<const uint4*>(w + 16);
        }
      }
    }
#pragma unroll
    for (int r = 0; r < TR; ++r) {
      const uint4 n = make_uint4(__shfl_down_sync(0xffffffffu, lo[r].x, 1), __shfl_down_sync(0xffffffffu, lo[r].y, 1),
                                 __shfl_down_sync(0xffffffffu, lo[r].z, 1), __shfl_down_sync(0xffffffffu, lo[r].w, 1));
      if (lane != 31u) hi[r] = n;
    }
#pragma unroll
    for (int r = 0; r < TR; ++r) {
      if (at[r] >= (int)p.L) continue;
      const uint4 v = axe_shift16(lo[r], hi[r], sh[r]);
      store_range((unsigned char*)wd[r], clamp16(-at[r]), clamp16((int)p.L - at[r]), v);
    }
  }
}

// Triton's masked row copy as its layout has it on these rows (no 16-byte alignment known: one
// element an access): a tile is 256 x EPT elements of one row, thread t its elements t + 256 k,
// all loaded, then stored. ES-byte elements; every row's offsets are multiples of ES here.
template <int EPT, int ES>
__global__ void __launch_bounds__(256) k_tri(const unsigned char* __restrict__ src, unsigned char* __restrict__ dst, P p,
                                             long long tiles) {
  typedef typename axe_piece<ES>::T T;
  const long long n = p.L / ES, per_row = (n + 256 * EPT - 1) / (256 * EPT);
  for (long long t = blockIdx.x; t < tiles; t += gridDim.x) {
    const long long y = t / per_row;
    const long long e0 = (t - y * per_row) * 256 * EPT + threadIdx.x;
    const T* s = reinterpret_cast<const T*>(src + p.SO + y * p.SB);
    T* d = reinterpret_cast<T*>(dst + p.DO + y * p.DB);
    T v[EPT];
#pragma unroll
    for (int k = 0; k < EPT; ++k)
      if (e0 + 256 * k < n) v[k] = s[e0 + 256 * k];
#pragma unroll
    for (int k = 0; k < EPT; ++k)
      if (e0 + 256 * k < n) d[e0 + 256 * k] = v[k];
  }
}

// As k_tri with 4 consecutive elements a thread (Triton's sizePerThread 4): thread t holds
// elements 4 t + j + 1024 k, j < 4, k < EPT / 4.
template <int EPT, int ES>
__global__ void __launch_bounds__(256) k_tri4(const unsigned char* __restrict__ src, unsigned char* __restrict__ dst, P p,
                                              long long tiles) {
  typedef typename axe_piece<ES>::T T;
  const long long n = p.L / ES, per_row = (n + 256 * EPT - 1) / (256 * EPT);
  for (long long t = blockIdx.x; t < tiles; t += gridDim.x) {
    const long long y = t / per_row;
    const long long e0 = (t - y * per_row) * 256 * EPT + 4 * threadIdx.x;
    const T* s = reinterpret_cast<const T*>(src + p.SO + y * p.SB);
    T* d = reinterpret_cast<T*>(dst + p.DO + y * p.DB);
    T v[EPT];
#pragma unroll
    for (int k = 0; k < EPT; ++k)
      if (e0 + 1024 * (k / 4) + (k % 4) < n) v[k] = s[e0 + 1024 * (k / 4) + (k % 4)];
#pragma unroll
    for (int k = 0; k < EPT; ++k)
      if (e0 + 1024 * (k / 4) + (k % 4) < n) d[e0 + 1024 * (k / 4) + (k % 4)] = v[k];
  }
}

// Triton's kernel for these rows as its SASS shows it (call 6): loads of 4 consecutive elements a
// thread (k_tri4's layout), a shared-memory exchange, stores of one element a thread 256 apart
// (k_tri's layout).
template <int EPT, int ES>
__global__ void __launch_bounds__(256) k_trix(const unsigned char* __restrict__ src, unsigned char* __restrict__ dst, P p,
                                              long long tiles) {
  typedef typename axe_piece<ES>::T T;
  __shared__ T sm[256 * EPT];
  const long long n = p.L / ES, per_row = (n + 256 * EPT - 1) / (256 * EPT);
  for (long long t = blockIdx.x; t < tiles; t += gridDim.x) {
    const long long y = t / per_row;
    const long long b0 = (t - y * per_row) * 256 * EPT;
    const T* s = reinterpret_cast<const T*>(src + p.SO + y * p.SB);
    T* d = reinterpret_cast<T*>(dst + p.DO + y * p.DB);
    T v[EPT];
#pragma unroll
    for (int k = 0; k < EPT; ++k) {
      const int e = 4 * (int)threadIdx.x + 1024 * (k / 4) + (k % 4);
      if (b0 + e < n) v[k] = s[b0 + e];
    }
    __syncthreads();
#pragma unroll
    for (int k = 0; k < EPT; ++k) sm[4 * threadIdx.x + 1024 * (k / 4) + (k % 4)] = v[k];
    __syncthreads();
#pragma unroll
    for (int k = 0; k < EPT; ++k) {
      const int e = (int)threadIdx.x + 256 * k;
      if (b0 + e < n) d[b0 + e] = sm[e];
    }
  }
}

float median_ms(const std::function<void()>& f) {
  cudaEvent_t a, b;
  CK(cudaEventCreate(&a));
  CK(cudaEventCreate(&b));
  for (int i = 0; i < 5; ++i) f();
  std::vector<float> t;
  for (int i = 0; i < 30; ++i) {
    CK(cudaEventRecord(a));
    for (int r = 0; r < 10; ++r) f();
    CK(cudaEventRecord(b));
    CK(cudaEventSynchronize(b));
    float ms = 0;
    CK(cudaEventElapsedTime(&ms, a, b));
    t.push_back(ms / 10);
  }
  std::sort(t.begin(), t.end());
  CK(cudaGetLastError());
  return t[t.size() / 2];
}

int main(int argc, char** argv) {
  const bool quick = argc > 1 && !std::strcmp(argv[1], "quick");  // the main kernels only
  const int only = argc > 2 ? std::atoi(argv[2]) : -1;              // one case
  cudaDeviceProp prop;
  CK(cudaGetDeviceProperties(&prop, 0));
  const int sms = prop.multiProcessorCount;
  const long long N = (256ll << 20) / 4096;
  const size_t bytes = (size_t)N * 4096 + 256;
  unsigned char *a, *b, *c;  // a: source, b: destination, c: the destination's starting copy
  CK(cudaMalloc(&a, bytes));
  CK(cudaMalloc(&b, bytes));
  CK(cudaMalloc(&c, bytes));
  std::vector<unsigned char> ha(bytes), hc(bytes), ref(bytes), got(bytes);
  unsigned s = 12345u;
  for (auto& x : ha) x = (unsigned char)((s = s * 1664525u + 1013904223u) >> 24);
  for (auto& x : hc) x = (unsigned char)((s = s * 1664525u + 1013904223u) >> 24);
  CK(cudaMemcpy(a, ha.data(), bytes, cudaMemcpyHostToDevice));
  CK(cudaMemcpy(c, hc.data(), bytes, cudaMemcpyHostToDevice));
  unsigned char* src = a + 64;  // 64 bytes of slack before (whole words read past a row's ends)
  unsigned char* dst = b + 64;
  struct Case { const char* name; long long L, SB, DB, SO, DO; };
  // name: what, then the row (L of stride at offset)
  std::vector<Case> cases{
      {"copy f32 4088/4096->4095+1", 4 * 4088, 4 * 4096, 4 * 4095, 0, 4},
      {"pack f32 2047/4095+1", 4 * 2047, 4 * 4095, 4 * 2047, 4, 0},
  };
  for (int ci = 0; ci < (int)cases.size(); ++ci) {
    const Case& k = cases[ci];
    if (only >= 0 && ci != only) continue;
    P p;
    p.N = (256ll << 20) / std::max(k.SB, k.DB);  // kernel_bench's rows
    p.L = k.L;
    p.SB = k.SB;
    p.SO = k.SO;
    p.DB = k.DB;
    p.DO = k.DO;
    p.W = (int)((k.L + 30) / 16);
    ref = hc;
    for (long long y = 0; y < p.N; ++y)
      std::memcpy(&ref[64 + p.DO + y * p.DB], &ha[64 + p.SO + y * p.SB], (size_t)p.L);
    const double payload = double(p.N * p.L);
    const float mc = median_ms([&] { CK(cudaMemcpyAsync(b, a, (size_t)payload, cudaMemcpyDeviceToDevice)); });
    std::printf("-- %s: %lld rows, memcpy %.4f ms (%.0f GB/s)\n", k.name, p.N, mc, 2 * payload / mc / 1e6);
    auto run = [&](const char* name, auto kernel, long long tiles, size_t shmem, bool all = false) {
      if (shmem) CK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)shmem));
      int per = 0;
      CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per, kernel, 256, shmem));
      const long long grid = all ? tiles : std::min<long long>(tiles, (long long)per * sms);
      CK(cudaMemcpy(b, c, bytes, cudaMemcpyDeviceToDevice));
      kernel<<<(unsigned)grid, 256, shmem>>>(src, dst, p, tiles);
      CK(cudaDeviceSynchronize());
      CK(cudaMemcpy(got.data(), b, bytes, cudaMemcpyDeviceToHost));
      const bool ok = got == ref;
      cudaFuncAttributes fa;
      CK(cudaFuncGetAttributes(&fa, kernel));
      const float ms = median_ms([&] { kernel<<<(unsigned)grid, 256, shmem>>>(src, dst, p, tiles); });
      std::printf("%-26s %-16s %.4f ms %5.1f%%  %s  regs %d spill %zu  blocks/SM %d\n", k.name, name, ms, 100.0 * mc / ms,
                  ok ? "correct" : "WRONG", fa.numRegs, (size_t)fa.localSizeBytes, per);
    };
    const long long flat4 = (p.N * p.W + 1023) / 1024, tiles_a = (p.W + 31) / 32;
    const long long rows8 = (p.N + 7) / 8;
    for (int round = 0; round < 2; ++round) {
      run("2d reg 4", k_reg2<4>, tiles_a * ((p.N + 31) / 32), 0);
      run("2d reg 2", k_reg2<2>, tiles_a * ((p.N + 15) / 16), 0);
      run("flat reg 4", k_reg<4>, flat4, 0);
      run("shfl 4", k_shfl<4>, tiles_a * ((p.N + 31) / 32), 0);
      run("shfl 2", k_shfl<2>, tiles_a * ((p.N + 15) / 16), 0);
      const long long src4 = p.N * ((p.L / 16 + 2 + 1023) / 1024), src2 = p.N * ((p.L / 16 + 2 + 511) / 512);
      run("src 4 x4B", k_src<4, false>, src4, 0);
      run("src 4 4/8B", k_src<4, true>, src4, 0);
      run("src 2 4/8B", k_src<2, true>, src2, 0);
      (void)rows8;
      const long long n4 = p.L / 4;
      run("tri 16 one wave", k_tri<16, 4>, p.N * ((n4 + 4095) / 4096), 0);
      run("tri 16 grid", k_tri<16, 4>, p.N * ((n4 + 4095) / 4096), 0, true);
      run("tri 8 one wave", k_tri<8, 4>, p.N * ((n4 + 2047) / 2048), 0);
      run("tri 8 grid", k_tri<8, 4>, p.N * ((n4 + 2047) / 2048), 0, true);
      run("tri 32 one wave", k_tri<32, 4>, p.N * ((n4 + 8191) / 8192), 0);
      run("tri4 16 grid", k_tri4<16, 4>, p.N * ((n4 + 4095) / 4096), 0, true);
      run("tri4 8 grid", k_tri4<8, 4>, p.N * ((n4 + 2047) / 2048), 0, true);
      run("tri4 16 one wave", k_tri4<16, 4>, p.N * ((n4 + 4095) / 4096), 0);
      run("trix 16 grid", k_trix<16, 4>, p.N * ((n4 + 4095) / 4096), 0, true);
      run("trix 8 grid", k_trix<8, 4>, p.N * ((n4 + 2047) / 2048), 0, true);
      run("trix 16 one wave", k_trix<16, 4>, p.N * ((n4 + 4095) / 4096), 0);
    }
    if (k.L % 16 == 0 && k.SB % 16 == 0 && k.DB % 16 == 0 && k.SO % 16 == 0 && k.DO % 16 == 0) {
      const long long R16 = k.L / 16, tiles = (N * R16 + 1023) / 1024;
      int per = 0;
      CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per, k_twin, 256, 0));
      const long long grid = std::min<long long>(tiles, (long long)per * sms);
      const float ms = median_ms([&] {
        k_twin<<<(unsigned)grid, 256>>>((const uint4*)(src + k.SO), (uint4*)(dst + k.DO), N, (int)R16, k.SB / 16, k.DB / 16,
                                        tiles);
      });
      std::printf("%-26s %-16s %.4f ms %5.1f%%\n", k.name, "vectors", ms, 100.0 * mc / ms);
    }
  }
  return 0;
}
