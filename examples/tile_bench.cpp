// tile_bench: a tile conversion between two thread layouts, generated from the layouts
// (codegen/tile_codegen.hpp), compiled at run time (NVRTC, cuda/nvrtc.hpp) and timed on one CTA.
//
//   tile_bench --from THREADS --to THREADS --shape S --dtype T --warps W [--iters N]
//              [--launches K] [--shared-budget BYTES] [--choose cheapest|shuffles|shared]
//              [--json] [--source] [--once]
//   tile_bench --cases [--iters N] [--launches K] [--json] [--once]
//
// THREADS is a thread-layout spec (`axe thread-layout --help`: blocked:SPT/TPW/WPC[/ORDER],
// mma:WPC, wgmma:N/WPC, slice:D:PARENT, linear:{...} or an Axe layout over m/lane/warp); S is
// "64x64", "64,64" or "2048"; T one of u8 i8 u16 i16 f16 bf16 u32 i32 f32 u64 i64 f64.
//
// The protocol (the same as examples/tile_bench_gluon.py, which times Triton Gluon's
// convert_layout on the same flags): one CTA of 32 W threads loads a random tile (row-major in
// global memory) in layout A = --from; ITERS times converts A -> B, applies a runtime-valued op
// (x * 1.0 for floats, x ^ 0 for integers), converts B -> A, applies the op again; stores the
// tile in layout A. The output must equal the input bit for bit ("correct"). Time: median over K
// launches (K >= 50, default 50) of time(ITERS) and of time(0), each launch between CUDA events,
// after 10 warm-ups; ns_per_round_trip = (median(ITERS) - median(0)) / ITERS.
//
// Output: one line per case,
//   axe 64x64 f32 blocked:1,4/8,4/4,1/1,0 -> blocked:4,1/4,8/1,4/0,1: 324.0 ns per round trip
//   (correct, shared/shared, 256 + 256 wavefronts)
// and with --json one object per case (a list with --cases) with the keys
//   ns_per_round_trip, correct, mechanism (A -> B: none|registers|shuffles|shared),
//   mechanism_back, from, to, shape, dtype, warps, iters, launches, median_ns_iters,
//   median_ns_zero, shared_bytes, wavefronts (store + load, both conversions, bank model),
//   shuffles, selects, gpu.
// --source prints the generated CUDA source instead (no GPU needed). --once launches each case's
// kernel once with ITERS = 1 and checks it, no timing: for a profiler, whose shared-memory
// wavefronts must equal store_wavefronts and load_wavefronts (the bank model's, both conversions;
// examples/tile_ncu_check.py compares them with Nsight Compute's). Without a GPU the timing run
// says so and exits 0. Bad input: one line naming it, exit 2; a wrong result: exit 1.
//
// The shared budget defaults to the device's opt-in shared memory per block (227 KiB on an H100);
// a smaller one makes the conversions go in repetitions (linear/convert_plan.hpp). --choose forces
// shuffles or shared memory where both apply (as `axe convert-layout --choose`).
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "args.hpp"
#include "axe/codegen/tile_codegen.hpp"
#include "axe/core/error.hpp"
#include "axe/cuda/check.hpp"
#include "axe/cuda/nvrtc.hpp"
#include "axe/linear/thread_spec.hpp"

using namespace axe;

namespace {

struct Case {
  std::string from, to, shape, dtype;
  std::int64_t warps = 4;
};

// The issue's cases (Triton on one H100, 2026-11-24: 319, 429, 1146, 196, about 200 ns), then our
// own in every mechanism class: registers, shuffles (TV-18, a ship), TV-19 (shared on one warp),
// and shared memory for 8-, 16- and 64-bit elements.
const std::vector<Case> kCases = {
    {"blocked:1,4/8,4/4,1/1,0", "blocked:4,1/4,8/1,4/0,1", "64x64", "f32", 4},
    {"blocked:1,8/16,2/4,1/1,0", "blocked:8,1/2,16/1,4/0,1", "128x64", "f16", 4},
    {"wgmma:128/4,1", "blocked:1,4/4,8/4,1/1,0", "128x128", "f32", 4},
    {"blocked:1,4/4,8/1,1/1,0", "blocked:4,1/8,4/1,1/0,1", "32x32", "f32", 1},
    {"blocked:4/32/4/0", "blocked:1/32/4/0", "2048", "f32", 4},
    {"blocked:1,4/8,4/4,1/1,0", "S[(2,4,8,4,4,4):(16,1@warp,4@lane,1,1@lane,4)]", "64x64", "f32", 4},
    {"S[(4,4):(1@lane,1)]", "S[(4,4):(1,1@lane)]", "4x4", "f32", 1},
    {R"(linear:{"reg":[[1],[2]],"lane":[[4],[8]]})", R"(linear:{"reg":[[4],[2]],"lane":[[1],[8]]})", "16", "f32", 1},
    {"blocked:1,4/8,4/4,1/1,0", "blocked:1,4/4,8/4,1/1,0", "64x64", "f32", 4},
    {"mma:2,2", "blocked:1,4/8,4/4,1/1,0", "64x64", "f16", 4},
    {"blocked:1,16/8,4/4,1/1,0", "blocked:16,1/4,8/1,4/0,1", "64x64", "u8", 4},
    {"blocked:1,8/8,4/4,1/1,0", "blocked:8,1/4,8/1,4/0,1", "64x64", "bf16", 4},
    {"blocked:1,2/8,4/4,1/1,0", "blocked:2,1/4,8/1,4/0,1", "64x64", "f64", 4},
};

std::vector<std::int64_t> parse_shape(const std::string& text) {
  std::vector<std::int64_t> s;
  std::string cur;
  for (char c : text + ",") {
    if (c == 'x' || c == ',') {
      s.push_back(examples::int_arg("--shape", cur, 1, std::int64_t{1} << 22));
      cur.clear();
    } else {
      cur += c;
    }
  }
  return s;
}

struct Result {
  Case c;
  codegen::TileKernel k;
  bool correct = false;
  double median_iters = 0, median_zero = 0;
  std::int64_t iters = 0, launches = 0;
  double ns() const { return iters ? (median_iters - median_zero) / static_cast<double>(iters) : 0; }
};

std::string quote(const std::string& s) {
  std::string q = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') q += '\\';
    q += c;
  }
  return q + "\"";
}

std::string json(const Result& r, const std::string& gpu) {
  const auto& a = r.k.there.counts;
  const auto& b = r.k.back.counts;
  std::ostringstream o;
  o << "{\"ns_per_round_trip\": " << r.ns() << ", \"correct\": " << (r.correct ? "true" : "false")
    << ", \"mechanism\": " << quote(linear::to_string(r.k.there.mechanism))
    << ", \"mechanism_back\": " << quote(linear::to_string(r.k.back.mechanism))
    << ", \"from\": " << quote(r.c.from) << ", \"to\": " << quote(r.c.to)
    << ", \"shape\": " << quote(r.c.shape) << ", \"dtype\": " << quote(r.c.dtype)
    << ", \"warps\": " << r.c.warps << ", \"iters\": " << r.iters << ", \"launches\": " << r.launches
    << ", \"median_ns_iters\": " << r.median_iters << ", \"median_ns_zero\": " << r.median_zero
    << ", \"shared_bytes\": " << r.k.shared_bytes << ", \"wavefronts\": " << a.wavefronts() + b.wavefronts()
    << ", \"store_wavefronts\": " << a.store_wavefronts + b.store_wavefronts
    << ", \"load_wavefronts\": " << a.load_wavefronts + b.load_wavefronts
    << ", \"shuffles\": " << a.shuffles + b.shuffles << ", \"selects\": " << a.selects + b.selects
    << ", \"gpu\": " << quote(gpu) << "}";
  return o.str();
}

std::string line(const Result& r) {
  char ns[64];
  std::snprintf(ns, sizeof ns, "%.1f", r.ns());
  const auto& a = r.k.there.counts;
  const auto& b = r.k.back.counts;
  return "axe " + r.c.shape + " " + r.c.dtype + " " + r.c.from + " -> " + r.c.to + ": " + ns +
         " ns per round trip (" + (r.correct ? "correct" : "INCORRECT") + ", " +
         linear::to_string(r.k.there.mechanism) + "/" + linear::to_string(r.k.back.mechanism) +
         ", " + std::to_string(a.wavefronts() + b.wavefronts()) + " wavefronts, " +
         std::to_string(a.shuffles + b.shuffles) + " shuffles)";
}

linear::ConvertOptions::Choice g_choice = linear::ConvertOptions::Choice::cheapest;

codegen::TileKernel generate(const Case& c, std::int64_t budget) {
  const auto shape = parse_shape(c.shape);
  auto layout = [&](const char* flag, const std::string& spec) {
    try {
      return linear::parse_thread_layout(spec, shape);
    } catch (const std::exception& e) {
      fail(std::string(flag) + " '" + spec + "': " + e.what());
    }
  };
  const auto a = layout("--from", c.from), b = layout("--to", c.to);
  linear::ConvertOptions o;
  o.shared_budget_bytes = budget;
  o.choice = g_choice;
  auto k = codegen::round_trip_kernel(a, b, shape, codegen::parse_element(c.dtype), o);
  if (k.threads != 32 * c.warps) {
    fail("--warps " + std::to_string(c.warps) + " but the layouts use " +
         std::to_string(k.threads / 32) + " warp(s)");
  }
  return k;
}

Result run(const Case& c, std::int64_t budget, std::int64_t iters, std::int64_t launches, bool once) {
  Result r{c, generate(c, budget), false, 0, 0, iters, launches};
  const auto shape = parse_shape(c.shape);
  const auto e = codegen::parse_element(c.dtype);
  std::int64_t n = 1;
  for (auto x : shape) n *= x;
  const auto bytes = static_cast<std::size_t>(n * e.bytes);
  // Random bits; floats keep their top exponent bit clear (finite, x * 1.0 == x exactly).
  std::vector<unsigned char> in(bytes), out(bytes);
  std::mt19937_64 rng(12345);
  for (auto& x : in) x = static_cast<unsigned char>(rng());
  if (e.kind != codegen::Element::Kind::integer) {
    const std::int64_t top = e.bytes * 8 - 2;  // the exponent's top bit
    for (std::int64_t i = 0; i < n; ++i) in[static_cast<std::size_t>(i * e.bytes + top / 8)] &= static_cast<unsigned char>(~(1u << (top % 8)));
  }
  void *din = nullptr, *dout = nullptr;
  AXE_CUDA_CHECK(cudaMalloc(&din, bytes));
  AXE_CUDA_CHECK(cudaMalloc(&dout, bytes));
  AXE_CUDA_CHECK(cudaMemcpy(din, in.data(), bytes, cudaMemcpyHostToDevice));
  AXE_CUDA_CHECK(cudaMemset(dout, 0xa5, bytes));
  cudaKernel_t kernel = cuda::KernelCache::global().kernel(r.k.source, r.k.name);
  int device = 0;
  AXE_CUDA_CHECK(cudaGetDevice(&device));
  AXE_CUDA_CHECK(cudaKernelSetAttributeForDevice(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                                 static_cast<int>(r.k.shared_bytes), device));
  float fscale = 1.0f;
  double dscale = 1.0;
  unsigned long long iscale = 0;
  void* scale = e.kind == codegen::Element::Kind::integer ? static_cast<void*>(&iscale)
                : e.kind == codegen::Element::Kind::f64   ? static_cast<void*>(&dscale)
                                                          : static_cast<void*>(&fscale);
  int it = 0;
  void* args[] = {&din, &dout, &it, scale};
  auto launch = [&](std::int64_t count) {
    it = static_cast<int>(count);
    cuda::launch(kernel, dim3(1), dim3(static_cast<unsigned>(r.k.threads)), args,
                 static_cast<std::size_t>(r.k.shared_bytes));
  };
  launch(iters);
  AXE_CUDA_CHECK(cudaDeviceSynchronize());
  AXE_CUDA_CHECK(cudaMemcpy(out.data(), dout, bytes, cudaMemcpyDeviceToHost));
  r.correct = out == in;
  if (once) {
    r.launches = 0;
    cudaFree(din);
    cudaFree(dout);
    return r;
  }
  cudaEvent_t t0, t1;
  AXE_CUDA_CHECK(cudaEventCreate(&t0));
  AXE_CUDA_CHECK(cudaEventCreate(&t1));
  std::vector<float> with, without;
  auto time = [&](std::int64_t count) {
    AXE_CUDA_CHECK(cudaEventRecord(t0));
    launch(count);
    AXE_CUDA_CHECK(cudaEventRecord(t1));
    AXE_CUDA_CHECK(cudaEventSynchronize(t1));
    float ms = 0;
    AXE_CUDA_CHECK(cudaEventElapsedTime(&ms, t0, t1));
    return ms * 1e6f;
  };
  for (int w = 0; w < 10; ++w) {
    time(iters);
    time(0);
  }
  for (std::int64_t l = 0; l < launches; ++l) {  // interleaved: clocks drift alike for both
    with.push_back(time(iters));
    without.push_back(time(0));
  }
  auto median = [](std::vector<float> v) {
    std::sort(v.begin(), v.end());
    return v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
  };
  r.median_iters = median(with);
  r.median_zero = median(without);
  cudaEventDestroy(t0);
  cudaEventDestroy(t1);
  cudaFree(din);
  cudaFree(dout);
  return r;
}

constexpr const char* kUsage =
    "usage: tile_bench --from THREADS --to THREADS --shape S --dtype T --warps W [--iters N]\n"
    "                  [--launches K] [--shared-budget BYTES] [--choose cheapest|shuffles|shared]\n"
    "                  [--json] [--source] [--once]\n"
    "       tile_bench --cases [--iters N] [--launches K] [--json] [--once]\n";

}  // namespace

int main(int argc, char** argv) {
  try {
    Case c;
    bool cases = false, as_json = false, source = false, once = false;
    std::int64_t iters = 1000, launches = 50, budget = 0;
    for (int i = 1; i < argc; ++i) {
      const std::string a = argv[i];
      auto value = [&]() -> std::string {
        if (i + 1 >= argc) fail(a + " needs a value");
        return argv[++i];
      };
      if (a == "--from") c.from = value();
      else if (a == "--to") c.to = value();
      else if (a == "--shape") c.shape = value();
      else if (a == "--dtype") c.dtype = value();
      else if (a == "--warps") c.warps = examples::int_arg("--warps", value(), 1, 32);
      else if (a == "--iters") iters = examples::int_arg("--iters", value(), 1, 1 << 24);
      else if (a == "--launches") launches = examples::int_arg("--launches", value(), 50, 1 << 20);
      else if (a == "--shared-budget") budget = examples::int_arg("--shared-budget", value(), 16, std::int64_t{1} << 30);
      else if (a == "--choose") {
        const std::string v = value();
        using C = linear::ConvertOptions::Choice;
        if (v == "cheapest") g_choice = C::cheapest;
        else if (v == "shuffles") g_choice = C::shuffles;
        else if (v == "shared") g_choice = C::shared;
        else fail("--choose: expected cheapest, shuffles or shared, got '" + v + "'");
      } else if (a == "--json") as_json = true;
      else if (a == "--cases") cases = true;
      else if (a == "--source") source = true;
      else if (a == "--once") once = true;
      else if (a == "--help" || a == "-h") {
        std::cout << kUsage;
        return 0;
      } else {
        fail("unknown argument '" + a + "'\n" + kUsage);
      }
    }
    std::vector<Case> todo = cases ? kCases : std::vector<Case>{c};
    if (!cases && (c.from.empty() || c.to.empty() || c.shape.empty() || c.dtype.empty())) {
      fail(std::string("--from, --to, --shape and --dtype are required\n") + kUsage);
    }
    if (source) {
      for (const auto& k : todo) std::cout << generate(k, budget ? budget : 48 * 1024).source;
      return 0;
    }
    for (const auto& k : todo) generate(k, budget ? budget : 48 * 1024);  // bad input before any GPU work
    int devices = 0;
    if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
      std::printf("tile_bench: no CUDA GPU visible, nothing to measure\n");
      return 0;
    }
    cudaDeviceProp prop;
    AXE_CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
    if (!budget) budget = static_cast<std::int64_t>(prop.sharedMemPerBlockOptin);
    bool all_correct = true;
    std::vector<std::string> objects;
    for (const auto& k : todo) {
      Result r = run(k, budget, once ? 1 : iters, launches, once);
      all_correct = all_correct && r.correct;
      if (as_json) {
        objects.push_back(json(r, prop.name));
      } else {
        std::cout << line(r) << std::endl;
      }
    }
    if (as_json) {
      if (cases) std::cout << "[";
      for (std::size_t i = 0; i < objects.size(); ++i) std::cout << (i ? ",\n " : "") << objects[i];
      std::cout << (cases ? "]\n" : "\n");
    }
    return all_correct ? 0 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tile_bench: %s\n", e.what());
    return 2;
  }
}
