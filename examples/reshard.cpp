// reshard: the runtime demo. Shards a 2-D tensor over a mesh and walks it through
//   S(0),S(1) -> R,R -> S(1),S(0) -> P,S(1) -> S(0),S(1) (reduce-scatter) -> an interleaved Axe
//   layout (rows cyclic, columns block-cyclic) -> S(0),S(1)
// verifying every element of every step against the global tensor, printing each plan and its
// time. Runs on the host backend without a GPU; exits non-zero on any mismatch.
//
//   axe-run -np 4 ./reshard [--mesh x=2,y=2] [--shape 16,12] [--dtype f64] [--quiet]
#include <mpi.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "axe/runtime/dist_tensor.hpp"
#include "axe/core/error.hpp"

namespace {

std::vector<std::int64_t> parse_shape(const std::string& s) {
  std::vector<std::int64_t> v;
  std::size_t pos = 0;
  while (pos <= s.size()) {
    std::size_t e = s.find(',', pos);
    if (e == std::string::npos) e = s.size();
    v.push_back(std::stoll(s.substr(pos, e - pos)));
    pos = e + 1;
  }
  if (v.size() != 2) axe::fail("--shape wants two extents, got '" + s + "'");
  return v;
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
  axe::Runtime rt(&argc, &argv);
  int status = 0;
  try {
    std::string mesh_text, shape_text = "16,12", dtype_text = "f64";
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
        if (rt.rank() == 0) std::printf("usage: reshard [--mesh x=2,y=2] [--shape 16,12] [--dtype f64] [--quiet]\n");
        return 0;
      } else axe::fail("unknown argument '" + a + "'");
    }
    if (mesh_text.empty()) mesh_text = rt.size() >= 4 ? "x=2,y=2" : "x=1,y=" + std::to_string(rt.size());
    const axe::Mesh mesh = axe::parse_mesh(mesh_text);
    if (mesh.ndim() < 1 || mesh.ndim() > 2) axe::fail("--mesh wants one or two axes, got '" + mesh_text + "'");
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
      int any = 0;
      MPI_Allreduce(&bad, &any, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
      mismatches += any;
      return any;
    };
    check(t, "start");
    for (const auto& s : stages) {
      axe::PlanRequest req{t.layout(), s.layout, dt};
      if (rt.rank() == 0 && !quiet) std::printf("\n== %s\n%s", s.name, axe::to_string(axe::plan_all(req)).c_str());
      rt.barrier();
      double t0 = MPI_Wtime();
      axe::DistTensor next = t.redistribute(s.layout);
      double dt_s = MPI_Wtime() - t0, worst = 0;
      MPI_Reduce(&dt_s, &worst, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
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
  } catch (const axe::Error& e) {
    std::fprintf(stderr, "[rank %d] reshard: %s\n", rt.rank(), e.what());
    status = 2;
  }
  return status;
}
