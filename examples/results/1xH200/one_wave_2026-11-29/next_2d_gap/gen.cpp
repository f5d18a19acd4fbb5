// Prints a generated copy kernel's source: gen ES A ROWS WARPS [flat] (destination words).
#include <cstdio>
#include <cstdlib>

#include "axe/codegen/copy_codegen.hpp"

int main(int argc, char** argv) {
  if (argc < 5) return 2;
  using namespace axe::codegen;
  const long long es = std::atoll(argv[1]);
  const CopyTile t{std::atoll(argv[2]), std::atoll(argv[3]), std::atoll(argv[4]), argc > 5};
  std::fputs(copy_kernel(Element(es, Element::Kind::integer, "raw"), t, TransposeAccess::realigned).source.c_str(), stdout);
}
