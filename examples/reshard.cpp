// reshard: the runtime demo. Shards a 2-D tensor over a mesh and walks it through
//   S(0),S(1) -> R,R -> S(1),S(0) -> P,S(1) -> S(0),S(1) (reduce-scatter) -> an interleaved Axe
//   layout (rows cyclic, columns block-cyclic) -> S(0),S(1)
// verifying every element of every step against the global tensor, printing each plan and its
// time. Runs on the host backend without a GPU; exits non-zero on any mismatch.
//
//   axe-run -np 4 ./reshard [--mesh x=2,y=2] [--shape 16,12] [--dtype f64] [--quiet]
#include <bit>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <exception>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "axe/runtime/control.hpp"
#include "axe/runtime/dist_tensor.hpp"
#include "axe/core/error.hpp"

namespace {

// "16,12": two positive extents; anything else is an axe::Error naming --shape.
std::vector<std::int64_t> parse_shape(const std::string& s) {
  std::vector<std::int64_t> v;
  std::size_t pos = 0;
  while (pos <= s.size()) {
    std::size_t e = s.find(',', pos);
    if (e == std::string::npos) e = s.size();
    std::int64_t x = 0;
    const auto [end, ec] = std::from_chars(s.data() + pos, s.data() + e, x);
    if (ec != std::errc() || end != s.data() + e || x < 1 || x > (std::int64_t{1} << 24))
      axe::fail("--shape '" + s + "': '" + s.substr(pos, e - pos) + "' is not an extent in 1..16777216");
    v.push_back(x);
    pos = e + 1;
  }
  if (v.size() != 2) axe::fail("--shape '" + s + "': wants two extents");
  return v;
}

// The demo's mesh for n ranks: x * y = n with x <= y as close as possible (4 -> x=2,y=2,
// 6 -> x=2,y=3, 5 -> x=1,y=5), so that every rank holds a shard.
std::string default_mesh(int n) {
  int x = 1;
  for (int d = 1; d * d <= n; ++d)
    if (n % d == 0) x = d;
  return "x=" + std::to_string(x) + ",y=" + std::to_string(n / x);
}

// A shape near 16 x 12 that the interleaved stage can lay out on the mesh: rows a multiple of the
// first axis, columns a multiple of twice the second (16,12 on x=2,y=2; 16,16 on x=2,y=4).
std::string default_shape(const axe::Mesh& mesh) {
  const std::int64_t p = mesh.sizes()[0], q = mesh.ndim() > 1 ? mesh.sizes()[1] : 1;
  const std::int64_t rows = p * ((16 + p - 1) / p), cols = 2 * q * ((12 + 2 * q - 1) / (2 * q));
  return std::to_string(rows) + "," + std::to_string(cols);
}

// Rows cyclic over the first mesh axis; columns block-cyclic (blocks of 2) over the second.
axe::DistLayout interleaved(const std::vector<std::int64_t>& shape, const axe::Mesh& mesh) {
  const std::int64_t p = mesh.sizes()[0];
  const std::int64_t q = mesh.ndim() > 1 ? mesh.sizes()[1] : 1;
  const std::string a0(mesh.axes()[0].name());
  const std::string a1 = mesh.ndim() > 1 ? std::string(mesh.axes()[1].name()) : a0;
  if (shape[0] % p != 0 || shape[1] % (2 * q) != 0)
    axe::fail("interleaved layout needs rows divisible by " + std::to_string(p) + " and columns by " +
              std::to_string(2 * q) + "; use --shape");
  const std::int64_t r = shape[0] / p, c = shape[1] / (2 * q);
  std::string text = "S[(" + std::to_string(r) + ",";
  text += std::to_string(p) + "," + std::to_string(c) + "," + std::to_string(q) + ",2):(" + std::to_string(2 * c) +
          ",1@" + a0 + ",2,1@" + a1 + ",1)]";
  // Axes of the mesh the layout does not use replicate.
  std::string rep;
  for (std::size_t k = 2; k < mesh.ndim(); ++k)
    rep += (rep.empty() ? "" : ",") + std::string("") + std::to_string(mesh.sizes()[k]) + ":1@" +
           std::string(mesh.axes()[k].name());
  if (mesh.ndim() == 1) {  // q == 1: the column digit sits on the same axis with extent 1
    text = "S[(" + std::to_string(r) + "," + std::to_string(p) + "," + std::to_string(shape[1]) + "):(" +
           std::to_string(shape[1]) + ",1@" + a0 + ",1)]";
  }
  if (!rep.empty()) text += " + R[" + rep + "]";
  return axe::DistLayout(shape, axe::parse_axe_layout(text), mesh);
}

}  // namespace

int main(int argc, char** argv) {
  std::unique_ptr<axe::Runtime> runtime;
  int status = 0;
  try {
    runtime = std::make_unique<axe::Runtime>(&argc, &argv);
    axe::Runtime& rt = *runtime;
    std::string mesh_text, shape_text, dtype_text = "f64";
    bool quiet = false;
    for (int i = 1; i < argc; ++i) {
      std::string a = argv[i];
      auto value = [&]() -> std::string {
        if (i + 1 >= argc) axe::fail(a + " needs a value");
        return argv[++i];
      };
      if (a == "--mesh") mesh_text = value();
      else if (a == "--shape") shape_text = value();
      else if (a == "--dtype") dtype_text = value();
      else if (a == "--quiet") quiet = true;
      else if (a == "--help" || a == "-h") {
        if (rt.rank() == 0)
          std::printf("usage: reshard [--mesh x=2,y=2] [--shape 16,12] [--dtype f64] [--quiet]\n"
                      "  default mesh: x*y = the number of ranks, as square as it divides; default shape: near\n"
                      "  16,12 with rows a multiple of x and columns of 2*y\n");
        return 0;
      } else axe::fail("unknown argument '" + a + "'");
    }
    if (mesh_text.empty()) mesh_text = default_mesh(rt.size());
    const axe::Mesh mesh = axe::parse_mesh(mesh_text);
    if (mesh.ndim() < 1 || mesh.ndim() > 2) axe::fail("--mesh wants one or two axes, got '" + mesh_text + "'");
    if (mesh.size() != rt.size())
      axe::fail("--mesh " + mesh_text + " has " + std::to_string(mesh.size()) + " devices but " +
                std::to_string(rt.size()) + " ranks run; give a mesh of " + std::to_string(rt.size()) +
                " devices, or leave --mesh out");
    if (shape_text.empty()) shape_text = default_shape(mesh);
    const auto shape = parse_shape(shape_text);
    const axe::DType dt = axe::parse_dtype(dtype_text);
    const bool two = mesh.ndim() == 2;

    // The global tensor: element i holds i (exact in every float type up to 2^24 elements for f32).
    axe::HostTensor x(shape, dt);
    for (std::int64_t i = 0; i < x.elements(); ++i) x.set(i, static_cast<double>(i % 251 + 7 * (i / 251)));
    using axe::Partial;
    using axe::Replicate;
    using axe::Shard;
    auto P = [&](std::initializer_list<axe::AxisPlacement> two_d, std::initializer_list<axe::AxisPlacement> one_d) {
      return axe::shard(std::span<const std::int64_t>(shape), mesh,
                        two ? std::span<const axe::AxisPlacement>(two_d.begin(), two_d.size())
                            : std::span<const axe::AxisPlacement>(one_d.begin(), one_d.size()));
    };
    struct Stage {
      const char* name;
      axe::DistLayout layout;
    };
    std::vector<Stage> stages = {
        {"R,R (all-gather)", P({Replicate(), Replicate()}, {Replicate()})},
        {"S(1),S(0) (transpose of the sharding)", P({Shard(1), Shard(0)}, {Shard(1)})},
        {"P,S(1) (partial terms)", P({Partial(), Shard(1)}, {Partial()})},
        {"S(0),S(1) (reduce-scatter)", P({Shard(0), Shard(1)}, {Shard(0)})},
        {"interleaved Axe layout", interleaved(shape, mesh)},
        {"S(0),S(1) (back)", P({Shard(0), Shard(1)}, {Shard(0)})},
    };

    if (rt.rank() == 0)
      std::printf("reshard: %s tensor (%lld,%lld) on mesh %s, %d ranks, backend %s\n", dtype_text.c_str(),
                  static_cast<long long>(shape[0]), static_cast<long long>(shape[1]), axe::to_string(mesh).c_str(),
                  rt.size(), std::string(rt.backend().name()).c_str());
    axe::DistTensor t = axe::DistTensor::scatter(x, P({Shard(0), Shard(1)}, {Shard(0)}), 0);
    if (rt.rank() == 0 && !quiet) std::printf("start: S(0),S(1)\n%s", t.visualize().c_str());

    int mismatches = 0;
    auto check = [&](const axe::DistTensor& d, const char* name) {
      // Non-partial layouts: the local buffer equals the shard cut from x directly. Every layout:
      // the gathered (reduced) tensor equals x.
      int bad = 0;
      if (d.layout().layout().terms() == 1) {
        axe::DistTensor want = axe::DistTensor::from_global(x, d.layout());
        // to_host: the local buffers may be device memory (AXE_BACKEND=cuda).
        const std::vector<std::byte> a = d.to_host(), b = want.to_host();
        const std::int64_t es = axe::size_of(dt);
        for (std::size_t i = 0; i * es < a.size(); ++i) {
          double u = axe::load_element(dt, a.data() + i * es), v = axe::load_element(dt, b.data() + i * es);
          if (!(u == v || (std::isnan(u) && std::isnan(v)))) {
            if (bad++ < 3)
              std::fprintf(stderr, "[rank %d] %s: slot %zu holds %g, expected %g\n", rt.rank(), name, i, u, v);
          }
        }
      }
      axe::HostTensor g = d.gather_all();
      for (std::int64_t i = 0; i < x.elements(); ++i)
        if (g.get(i) != x.get(i) && bad++ < 3)
          std::fprintf(stderr, "[rank %d] %s: element %lld is %g, expected %g\n", rt.rank(), name,
                       static_cast<long long>(i), g.get(i), x.get(i));
      // The most mismatches on any rank (the runtime's control plane: MPI, or TCP under torchrun).
      std::uint64_t any[1] = {static_cast<std::uint64_t>(bad)};
      rt.control().allreduce_max(any, "reshard: check");
      mismatches += static_cast<int>(any[0]);
      return static_cast<int>(any[0]);
    };
    check(t, "start");
    for (const auto& s : stages) {
      axe::PlanRequest req{t.layout(), s.layout, dt};
      if (rt.rank() == 0 && !quiet) std::printf("\n== %s\n%s", s.name, axe::to_string(axe::plan_all(req)).c_str());
      rt.barrier();
      const auto t0 = std::chrono::steady_clock::now();
      axe::DistTensor next = t.redistribute(s.layout);
      // The slowest rank's time: non-negative doubles order as their bits do.
      std::uint64_t slowest[1] = {std::bit_cast<std::uint64_t>(
          std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count())};
      rt.control().allreduce_max(slowest, "reshard: timing");
      const double worst = std::bit_cast<double>(slowest[0]);
      int bad = check(next, s.name);
      if (rt.rank() == 0) {
        if (!quiet) std::printf("%s", next.visualize().c_str());
        std::printf("%-40s %9.3f ms  %s\n", s.name, worst * 1e3, bad ? "MISMATCH" : "ok");
      }
      t = std::move(next);
    }
    if (rt.rank() == 0) std::printf(mismatches ? "FAILED: %d mismatches\n" : "all %d elements verified at every step\n",
                                    mismatches ? mismatches : static_cast<int>(x.elements()));
    status = mismatches ? 1 : 0;
  } catch (const std::exception& e) {  // start-up errors too (a bad AXE_* value on any rank)
    if (runtime) std::fprintf(stderr, "[rank %d] reshard: %s\n", runtime->rank(), e.what());
    else std::fprintf(stderr, "reshard: %s\n", e.what());
    status = 2;
  }
  return status;
}
