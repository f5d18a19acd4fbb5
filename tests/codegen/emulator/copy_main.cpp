// Runs a generated box copy (KERNEL, codegen::copy_kernel's source) on the host emulator and checks
// it against a plain copy of each box, every element outside the boxes' destinations included.
//   copy_main THREADS TILE_A TILE_B WORDS V GRID  A B SB DB SOFF DOFF SOURCE N NS ND  [box ...]
// One box per 10 numbers: a run of A elements (contiguous on both sides), B rows at strides SB and
// DB, offsets SOFF and DOFF, SOURCE 0 (src) or 1 (src2), and a batch mode of N entries at strides
// NS and ND (N 1: none). WORDS 1: the kernel moves destination words of V elements, 2: in flat tiles
// (TILE_A / V consecutive words of the rows taken one after another, TILE_B 1). The table is
// built as the runtime builds it (runtime/cuda/box_list.cpp, BoxList::copy_device, without its
// folding); GRID CTAs walk the tiles one CTA at a time. The sources are allocated to the byte their
// boxes reach, 16-byte aligned, so a sanitizer build catches a read past them.
// Exit 0 and "0 mismatches" when the destination is right and the sources unchanged.
#include "cuda_shim.hpp"
// The kernel's box descriptor and index are shared by its CTA (CTAs run one at a time).
#undef __shared__
#define __shared__ static
#include KERNEL

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <vector>

namespace {

// A 16-byte aligned buffer of exactly n elements.
struct Buffer {
  std::size_t n;
  axe_element_t* p;
  explicit Buffer(std::size_t count)
      : n(count), p(static_cast<axe_element_t*>(::operator new[](count * sizeof(axe_element_t), std::align_val_t(16)))) {}
  ~Buffer() { ::operator delete[](p, std::align_val_t(16)); }
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
};

}  // namespace

int main(int argc, char** argv) {
  if (argc < 17 || (argc - 7) % 10 != 0) return 2;
  const int threads = atoi(argv[1]);
  const long long ta = atoll(argv[2]), tb = atoll(argv[3]), words = atoll(argv[4]), v = atoll(argv[5]),
                  grid = atoll(argv[6]);
  const int nboxes = (argc - 7) / 10;
  std::vector<axe_copy_box> table(static_cast<std::size_t>(nboxes));
  long long tiles = 0, reach[2] = {0, 0}, dreach = 0;
  for (int i = 0; i < nboxes; ++i) {
    long long f[10];
    for (int k = 0; k < 10; ++k) f[k] = atoll(argv[7 + 10 * i + k]);
    axe_copy_box& d = table[static_cast<std::size_t>(i)];
    std::memset(&d, 0, sizeof d);
    d.A = f[0], d.B = f[1], d.sb = f[2], d.db = f[3], d.soff = f[4], d.doff = f[5], d.source = f[6];
    if (f[7] > 1) d.nb = 1, d.bext[0] = f[7], d.bsst[0] = f[8], d.bdst[0] = f[9];
    d.smin = d.soff;
    d.smax = d.soff + (d.A - 1) + (d.B - 1) * d.sb + (f[7] - 1) * (f[7] > 1 ? f[8] : 0);
    const long long es = sizeof(axe_element_t);
    const long long row_words = (d.A * es + 30) / 16;
    d.tiles_a = words == 2 ? (d.B * row_words + ta / v - 1) / (ta / v)
                : words  ? (row_words + ta / v - 1) / (ta / v)
                         : (d.A + ta - 1) / ta;
    d.tiles_b = (d.B + tb - 1) / tb;
    d.per = d.tiles_a * d.tiles_b;
    d.first = tiles;
    d.tiles = d.per * (f[7] > 1 ? f[7] : 1);
    d.small = 1;
    tiles += d.tiles;
    reach[d.source] = std::max(reach[d.source], d.smax + 1);
    dreach = std::max(dreach, d.doff + (d.A - 1) + (d.B - 1) * d.db + (f[7] - 1) * (f[7] > 1 ? f[9] : 0) + 1);
  }
  Buffer src(static_cast<std::size_t>(std::max(reach[0], 1ll))), src2(static_cast<std::size_t>(std::max(reach[1], 1ll))),
      dst(static_cast<std::size_t>(dreach + 8));
  std::mt19937_64 rng(20261128);
  for (std::size_t i = 0; i < src.n; ++i) src.p[i] = static_cast<axe_element_t>(rng());
  for (std::size_t i = 0; i < src2.n; ++i) src2.p[i] = static_cast<axe_element_t>(rng());
  for (std::size_t i = 0; i < dst.n; ++i) dst.p[i] = static_cast<axe_element_t>(0x5a5a5a5a5a5a5a5aull);
  const std::vector<axe_element_t> src0(src.p, src.p + src.n), src20(src2.p, src2.p + src2.n);
  std::vector<axe_element_t> expect(dst.p, dst.p + dst.n);
  for (const axe_copy_box& d : table) {
    const axe_element_t* s = d.source ? src2.p : src.p;
    for (long long n = 0; n < (d.nb ? d.bext[0] : 1); ++n)
      for (long long b = 0; b < d.B; ++b)
        for (long long a = 0; a < d.A; ++a)
          expect[static_cast<std::size_t>(d.doff + n * d.bdst[0] + b * d.db + a)] = s[d.soff + n * d.bsst[0] + b * d.sb + a];
  }
  gridDim = {static_cast<unsigned>(grid), 1, 1};
  for (long long g = 0; g < grid; ++g)
    axe_run_cta(threads, static_cast<unsigned>(g), [&] { axe_copy(src.p, dst.p, src2.p, table.data(), nboxes, tiles); });
  long long bad = 0;
  for (std::size_t i = 0; i < dst.n; ++i) {
    if (dst.p[i] != expect[i] && bad++ < 5) std::printf("destination element %zu is wrong\n", i);
  }
  if (!std::equal(src0.begin(), src0.end(), src.p) || !std::equal(src20.begin(), src20.end(), src2.p))
    std::printf("a source changed\n"), ++bad;
  std::printf("%lld mismatches over %lld tiles\n", bad, tiles);
  return bad == 0 ? 0 : 1;
}
