// Runs a generated transpose kernel (KERNEL, a file holding codegen::transpose_kernel's source,
// ES its element size) on the host emulator (cuda_shim.hpp) and checks it against a plain
// transposition of a random matrix, every byte outside the destination rows included.
//   transpose_main B A SB DA SOFF DOFF THREADS TILES_A TILES_B [GRID]
// (the kernel walks its tiles in its own order; GRID CTAs, one at a time, default one a tile, so
// that with fewer each CTA loops over several tiles). The
// source holds exactly its last element, so a sanitizer build catches a read past it.
// Exit 0 and "0 mismatches" when the destination is right and the source unchanged.
#include "cuda_shim.hpp"
#include KERNEL

#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

int main(int argc, char** argv) {
  if (argc != 10 && argc != 11) return 2;
  const long long B = atoll(argv[1]), A = atoll(argv[2]), sb = atoll(argv[3]), da = atoll(argv[4]),
                  soff = atoll(argv[5]), doff = atoll(argv[6]);
  const int threads = atoi(argv[7]);
  const long long tiles_a = atoll(argv[8]), tiles_b = atoll(argv[9]);
  std::vector<axe_element_t> src(static_cast<std::size_t>(soff + (B - 1) * sb + A)), dst(static_cast<std::size_t>(doff + A * da + 8));
  std::mt19937_64 rng(20261128);
  for (auto& x : src) x = static_cast<axe_element_t>(rng());
  for (auto& x : dst) x = static_cast<axe_element_t>(0x5a5a5a5a5a5a5a5aull);
  const std::vector<axe_element_t> src0 = src;
  std::vector<axe_element_t> expect = dst;
  for (long long b = 0; b < B; ++b)
    for (long long a = 0; a < A; ++a) expect[static_cast<std::size_t>(doff + a * da + b)] = src[static_cast<std::size_t>(soff + b * sb + a)];
  axe_transpose_desc d{};
  d.A = A;
  d.B = B;
  d.sb = sb;
  d.da = da;
  d.soff = soff;
  d.doff = doff;
  d.tiles_a = tiles_a;
  d.tiles_b = tiles_b;
  d.batch = 1;
  const long long tiles = d.tiles_a * d.tiles_b;
  const long long grid = argc == 11 ? atoll(argv[10]) : tiles;
  gridDim = {static_cast<unsigned>(grid), 1, 1};
  for (long long c = 0; c < grid; ++c)
    axe_run_cta(threads, static_cast<unsigned>(c), [&] { axe_transpose(src.data(), dst.data(), d); });
  long long bad = 0;
  for (std::size_t i = 0; i < dst.size(); ++i) {
    if (dst[i] != expect[i] && bad++ < 5) std::printf("destination element %zu is wrong\n", i);
  }
  if (src != src0) std::printf("the source changed\n"), ++bad;
  std::printf("%lld mismatches\n", bad);
  return bad == 0 ? 0 : 1;
}
