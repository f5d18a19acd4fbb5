// The mixed-radix decode of the box kernel: a linear index over a descriptor's
// modes (row-major, last mode fastest) into source and destination offsets.
#pragma once

namespace axe::cuda::internal {

// Peels modes Last - 1 down to First (those below d.rank) off q, innermost first: mode m's index
// is q mod d.ext[m], added to `so` times d.sst[m] and to `dof` times d.dst[m], and q becomes
// q / d.ext[m]. Returns what is left of q (the index of mode First - 1, or 0 when the modes above
// First are all of q). I is `unsigned` when every index fits 32 bits (d.small: 32-bit divisions,
// several times cheaper) and `long long` otherwise. D: Desc (ext, sst, dst, rank).
// Example: ext (3, 4), sst (40, 1), dst (1, 3), q = 7, First 1, Last 2: mode 1 takes 7 mod 4 = 3
// (so += 3, dof += 9) and returns 7 / 4 = 1, the index of mode 0.
// The arithmetic is that of the loops (32 and 64 bits) this replaced, in the same order, and First
// / Last keep the caller's trip count: the kernel's SASS was byte-identical to theirs (sm_90a), so
// the registers too. The generated kernels decode their batch modes themselves.
template <int First, int Last, class I, class D>
__device__ __forceinline__ I decode_modes(const D& d, I q, long long& so, long long& dof) {
#pragma unroll
  for (int m = Last - 1; m >= First; --m) {
    if (m < d.rank) {
      const I e = static_cast<I>(d.ext[m]);
      const I nq = q / e;
      const I i = q - nq * e;
      q = nq;
      so += static_cast<long long>(i) * d.sst[m];
      dof += static_cast<long long>(i) * d.dst[m];
    }
  }
  return q;
}

}  // namespace axe::cuda::internal
