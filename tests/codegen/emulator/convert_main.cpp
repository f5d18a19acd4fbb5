// Runs a generated conversion kernel (KERNEL, codegen::conversion_kernel's source: one CTA loads
// `in` in layout a, converts to b and dumps every register of b) on the host emulator.
//   convert_main IN DUMP THREADS DUMP_ELEMENTS
// IN holds the tile's bytes; DUMP receives the dump (thread t's register r at t * RB + r).
#include "cuda_shim.hpp"
#include KERNEL

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <vector>

int main(int argc, char** argv) {
  if (argc != 5) return 2;
  std::ifstream f(argv[1], std::ios::binary);
  const std::vector<char> bytes((std::istreambuf_iterator<char>(f)), {});
  std::vector<axe_element_t> in(bytes.size() / sizeof(axe_element_t)), dump(static_cast<std::size_t>(atoll(argv[4])));
  std::memcpy(in.data(), bytes.data(), in.size() * sizeof(axe_element_t));
  const int threads = atoi(argv[3]);
  gridDim = {1, 1, 1};
  axe_run_cta(threads, 0, [&] { axe_tile_convert(in.data(), dump.data()); });
  std::ofstream(argv[2], std::ios::binary).write(reinterpret_cast<const char*>(dump.data()),
                                                 static_cast<std::streamsize>(dump.size() * sizeof(axe_element_t)));
  return 0;
}
