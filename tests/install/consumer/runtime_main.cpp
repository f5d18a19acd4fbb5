// A downstream program of the distributed runtime: links axe::runtime from the install tree.
#include <axe/runtime/dist_tensor.hpp>
#include <axe/runtime/runtime.hpp>

#include <cstdio>

int main(int argc, char** argv) {
  axe::Runtime rt(&argc, &argv);
  std::printf("rank %d of %d, backend %s\n", rt.rank(), rt.size(), std::string(rt.backend().name()).c_str());
  return 0;
}
