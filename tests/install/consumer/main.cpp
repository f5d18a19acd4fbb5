// A downstream program: parses a CuTe layout and an Axe layout through the installed headers.
#include <axe/axe.hpp>

#include <iostream>

int main() {
  auto l = axe::cute::parse_layout("((2,3),4):((1,2),6)");
  if (axe::cute::size(l) != 24 || l(23) != 23) return 1;
  auto a = axe::parse_axe_layout("S[(8,2,4,2):(4@lane,1@warp,1@lane,1)] + R[2:4@warp] + 5@warp");
  if (a.size() != 128) return 1;
  std::cout << axe::cute::to_string(l) << " " << axe::to_string(a) << "\n";
  return 0;
}
