// Checks axe_row_of_word (KERNEL: codegen's kFlatWordHelpers) against integer division: for rows
// of W words, every word g near the first multiples of W and of 2^20 W (where the float estimate
// is likeliest to be one off), and seeded random words with g / W under 2^20, as the flat copy
// tiles call it (the tile's words since its first row's start: under W + 16384).
//   row_of_word_main
// Prints the count of words whose estimate was corrected and exits 0 when every (q, m) is right
// and some estimate was corrected (else the correction would go untested).
#include "cuda_shim.hpp"
#include KERNEL

#include <cstdio>
#include <random>

int main() {
  long long checked = 0, corrected = 0, bad = 0;
  std::mt19937_64 rng(20261128);
  auto check = [&](long long g, long long W) {
    if (g < 0 || g > 0x7fffffffll || g / W >= (1ll << 20)) return;
    const float finv = (float)(1.0 / (double)W);
    int m = -1;
    const int q = axe_row_of_word((int)g, (int)W, finv, m);
    ++checked;
    if ((int)((float)g * finv) != q) ++corrected;
    if (q != g / W || m != g % W) {
      if (bad++ < 5) std::printf("g %lld, W %lld: q %d, m %d\n", g, W, q, m);
    }
  };
  for (long long W : {1ll, 2ll, 3ll, 6ll, 7ll, 40ll, 129ll, 151ll, 257ll, 513ll, 4095ll, 65537ll, 1000003ll,
                      (1ll << 24) + 1, (1ll << 27) - 1}) {
    for (long long k = 0; k < 4096; ++k)
      for (long long d = -2; d <= 2; ++d) {
        check(k * W + d, W);
        check(((1ll << 20) - 1 - k) * W + d, W);
      }
    for (int i = 0; i < 200000; ++i) check((long long)(rng() % (unsigned long long)std::min(0x7fffffffll, W << 20)), W);
  }
  std::printf("%lld words, %lld estimates corrected, %lld wrong\n", checked, corrected, bad);
  return bad == 0 && corrected > 0 ? 0 : 1;
}
