// Generated tile conversions run on the host emulator (tests/codegen/emulator): the random plans of
// the GPU test (tests/cuda/generated_kernels_test.cpp), every fifth of the 200, each loading a
// random tile in its source layout, converting and dumping every register of the destination
// layout, checked element by element (every thread and register the layout uses, replicas
// included) as on a GPU. Plans whose kernel loads shared memory with ldmatrix (inline PTX) are
// left to the GPU test.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <future>
#include <string>
#include <vector>

#include "axe/codegen/tile_codegen.hpp"
#include "codegen/emulator/emulate.hpp"
#include "codegen/random_plans.hpp"
#include "support/test_support.hpp"

namespace axe::test::codegen {
namespace {

// "" when the dump of plan `p` holds, for thread t and destination register r, the element of
// `in` the destination layout places there; else the first difference.
std::string check_plan(const RandomPlan& p, const std::filesystem::path& dir, int n) {
  const auto k = axe::codegen::conversion_kernel(p.from, p.to, p.shape, p.element, p.options);
  if (k.source.find("ldmatrix") != std::string::npos) return "";
  const auto cols = axe::codegen::thread_columns(p.to, p.shape);
  const std::int64_t elements = p.shape[0] * p.shape[1], es = p.element.bytes, regs = cols.registers();
  auto rng = make_rng(0x3e11 + n);
  std::vector<unsigned char> in(static_cast<std::size_t>(elements * es));
  for (auto& b : in) b = static_cast<unsigned char>(rng());
  const auto in_file = dir / ("in" + std::to_string(n)), dump_file = dir / ("dump" + std::to_string(n));
  std::ofstream(in_file, std::ios::binary).write(reinterpret_cast<const char*>(in.data()),
                                                 static_cast<std::streamsize>(in.size()));
  const std::string ran =
      emulator::compile_and_run(dir, "convert" + std::to_string(n), k.source, "convert_main.cpp", es,
                                "\"" + in_file.string() + "\" \"" + dump_file.string() + "\" " +
                                    std::to_string(k.threads) + " " + std::to_string(k.threads * regs));
  if (!ran.empty()) return ran;
  const std::string got = emulator::slurp(dump_file);
  if (static_cast<std::int64_t>(got.size()) != k.threads * regs * es) return "a dump of " + std::to_string(got.size()) + " bytes";
  return check_dump(cols, in, reinterpret_cast<const unsigned char*>(got.data()), k.threads, es);
}

TEST(EmulatedConversions, RandomPlansReproduceTheDestination) {
  const emulator::TempDir dir;
  const auto plans = random_plans(200);
  std::vector<std::future<std::string>> done;  // two at a time: CI has two cores
  std::vector<std::size_t> which;
  for (std::size_t i = 0; i < plans.size(); i += 5) {
    done.push_back(std::async(std::launch::async, [&, i] { return check_plan(plans[i], dir.path, static_cast<int>(i)); }));
    which.push_back(i);
    if (done.size() == 2 || i + 5 >= plans.size()) {
      for (std::size_t j = 0; j < done.size(); ++j) EXPECT_EQ(done[j].get(), "") << label(plans[which[j]]);
      done.clear();
      which.clear();
    }
  }
}

}  // namespace
}  // namespace axe::test::codegen
