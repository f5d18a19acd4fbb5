// tp_mlp: one SGD step of a 2-layer MLP  Y = relu(X W1) W2,  loss = 0.5/B * |Y - T|^2,  on a
// dp x tp mesh, checked against the same step computed on one rank (float64, tolerance 1e-12).
//
//   X  (B,Din)   S(0),R     batch split over dp
//   W1 (Din,H)   R,S(1)     column-parallel: each tp rank holds H/tp columns
//   W2 (H,Dout)  R,S(0)     row-parallel: each tp rank holds H/tp rows
//   Hp = X W1          (B,H)     S(0),S(1)   no communication
//   Yp = relu(Hp) W2   (B,Dout)  S(0),P      partial sums over tp
//   Y  = Yp            (B,Dout)  S(0),R      all-reduce over tp (redistribute P -> R)
//   dW2 = A^T dY       (H,Dout)  P,S(0)  ->  R,S(0)   gradient all-reduce over dp
//   dW1 = X^T dHp      (Din,H)   P,S(1)  ->  R,S(1)   gradient all-reduce over dp
//
//   axe-run -np 4 ./tp_mlp [--mesh dp=2,tp=2]
#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <cstdio>
#include <exception>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "axe/runtime/dist_tensor.hpp"
#include "axe/core/error.hpp"

namespace {

using Mat = std::vector<double>;  // row-major

// C (n,m) = A (n,k) B (k,m), with optional transposes of the stored operands.
Mat matmul(const Mat& a, const Mat& b, std::int64_t n, std::int64_t k, std::int64_t m, bool ta = false,
           bool tb = false) {
  Mat c(static_cast<std::size_t>(n * m), 0.0);
  for (std::int64_t i = 0; i < n; ++i)
    for (std::int64_t p = 0; p < k; ++p) {
      double av = ta ? a[static_cast<std::size_t>(p * n + i)] : a[static_cast<std::size_t>(i * k + p)];
      for (std::int64_t j = 0; j < m; ++j)
        c[static_cast<std::size_t>(i * m + j)] +=
            av * (tb ? b[static_cast<std::size_t>(j * k + p)] : b[static_cast<std::size_t>(p * m + j)]);
    }
  return c;
}

struct Step {
  Mat w1, w2;
  double loss = 0;
};

// The reference: the whole step on one rank.
Step reference(const Mat& x, const Mat& t, Mat w1, Mat w2, std::int64_t B, std::int64_t Din, std::int64_t H,
               std::int64_t Dout, double lr) {
  Mat hp = matmul(x, w1, B, Din, H), a = hp;
  for (auto& v : a) v = std::max(v, 0.0);
  Mat y = matmul(a, w2, B, H, Dout);
  Step s;
  Mat dy(y.size());
  for (std::size_t i = 0; i < y.size(); ++i) {
    s.loss += 0.5 * (y[i] - t[i]) * (y[i] - t[i]) / static_cast<double>(B);
    dy[i] = (y[i] - t[i]) / static_cast<double>(B);
  }
  Mat dw2 = matmul(a, dy, H, B, Dout, true);
  Mat da = matmul(dy, w2, B, Dout, H, false, true);
  for (std::size_t i = 0; i < da.size(); ++i) da[i] = hp[i] > 0 ? da[i] : 0;
  Mat dw1 = matmul(x, da, Din, B, H, true);
  for (std::size_t i = 0; i < w1.size(); ++i) w1[i] -= lr * dw1[i];
  for (std::size_t i = 0; i < w2.size(); ++i) w2[i] -= lr * dw2[i];
  s.w1 = std::move(w1);
  s.w2 = std::move(w2);
  return s;
}

// This rank's shard on the host (the local buffer may be device memory: AXE_BACKEND=cuda).
Mat as_mat(const axe::DistTensor& t) { return t.to_host_as<double>(); }

}  // namespace

int main(int argc, char** argv) {
  int status = 0;
  std::unique_ptr<axe::Runtime> runtime;
  try {  // start-up errors too (a bad AXE_* value on any rank)
    runtime = std::make_unique<axe::Runtime>(&argc, &argv);
    axe::Runtime& rt = *runtime;
    std::string mesh_text = rt.size() >= 4 ? "dp=2,tp=2" : "dp=1,tp=" + std::to_string(rt.size());
    for (int i = 1; i < argc; ++i) {
      std::string a = argv[i];
      if (a == "--mesh" && i + 1 < argc) mesh_text = argv[++i];
      else axe::fail("usage: tp_mlp [--mesh dp=2,tp=2]; unknown argument '" + a + "'");
    }
    const axe::Mesh mesh = axe::parse_mesh(mesh_text);
    if (mesh.ndim() != 2) axe::fail("--mesh wants two axes (dp, tp), got '" + mesh_text + "'");
    const std::int64_t dp = mesh.sizes()[0], tp = mesh.sizes()[1];
    const std::int64_t B = 4 * dp, Din = 6, H = 4 * tp, Dout = 5;
    const double lr = 0.1;

    // The same seeded data on every rank.
    std::mt19937_64 g(1234);
    std::normal_distribution<double> nd(0.0, 0.5);
    auto random = [&](std::int64_t n) {
      Mat m(static_cast<std::size_t>(n));
      for (auto& v : m) v = nd(g);
      return m;
    };
    Mat x = random(B * Din), t = random(B * Dout), w1 = random(Din * H), w2 = random(H * Dout);
    auto host = [](std::vector<std::int64_t> shape, const Mat& m) {
      return axe::HostTensor::of<double>(std::move(shape), std::span<const double>(m));
    };
    using axe::Partial;
    using axe::Replicate;
    using axe::Shard;
    auto X = axe::DistTensor::from_global(host({B, Din}, x), mesh, {Shard(0), Replicate()});
    auto T = axe::DistTensor::from_global(host({B, Dout}, t), mesh, {Shard(0), Replicate()});
    auto W1 = axe::DistTensor::from_global(host({Din, H}, w1), mesh, {Replicate(), Shard(1)});
    auto W2 = axe::DistTensor::from_global(host({H, Dout}, w2), mesh, {Replicate(), Shard(0)});
    const std::int64_t b = B / dp, h = H / tp;  // local batch, local hidden

    // Forward.
    Mat xl = as_mat(X), w1l = as_mat(W1), w2l = as_mat(W2), tl = as_mat(T);
    Mat hp = matmul(xl, w1l, b, Din, h), a = hp;  // (b,h): S(0),S(1)
    for (auto& v : a) v = std::max(v, 0.0);
    Mat yp = matmul(a, w2l, b, h, Dout);  // (b,Dout): partial over tp
    auto layout = [&](std::vector<std::int64_t> shape, std::initializer_list<axe::AxisPlacement> p) {
      return axe::shard(std::span<const std::int64_t>(shape), mesh, std::span<const axe::AxisPlacement>(p.begin(), p.size()));
    };
    auto Yp = axe::DistTensor::wrap(layout({B, Dout}, {Shard(0), Partial()}), std::span<const double>(yp));
    auto Y = Yp.redistribute({Shard(0), Replicate()});  // all-reduce over tp
    Mat y = as_mat(Y), dy(y.size());
    double loss_local = 0;
    for (std::size_t i = 0; i < y.size(); ++i) {
      loss_local += 0.5 * (y[i] - tl[i]) * (y[i] - tl[i]) / static_cast<double>(B);
      dy[i] = (y[i] - tl[i]) / static_cast<double>(B);
    }
    // The loss is replicated over tp: sum it over dp through a partial tensor.
    Mat lv{loss_local};
    auto Lp = axe::DistTensor::wrap(layout({1}, {Partial(), Replicate()}), std::span<const double>(lv));
    const double loss = Lp.gather_all().as<double>()[0];

    // Backward.
    Mat dw2 = matmul(a, dy, h, b, Dout, true);  // (h,Dout): partial over dp
    Mat da = matmul(dy, w2l, b, Dout, h, false, true);
    for (std::size_t i = 0; i < da.size(); ++i) da[i] = hp[i] > 0 ? da[i] : 0;
    Mat dw1 = matmul(xl, da, Din, b, h, true);  // (Din,h): partial over dp
    auto dW2 = axe::DistTensor::wrap(layout({H, Dout}, {Partial(), Shard(0)}), std::span<const double>(dw2))
                   .redistribute({Replicate(), Shard(0)});
    auto dW1 = axe::DistTensor::wrap(layout({Din, H}, {Partial(), Shard(1)}), std::span<const double>(dw1))
                   .redistribute({Replicate(), Shard(1)});

    // SGD update on the local shards.
    auto upd = [&](axe::DistTensor& w, const axe::DistTensor& dw) {
      Mat wl = as_mat(w), d = as_mat(dw);
      for (std::size_t i = 0; i < wl.size(); ++i) wl[i] -= lr * d[i];
      w.from_host(std::span<const double>(wl));
    };
    upd(W1, dW1);
    upd(W2, dW2);

    // Check against the single-rank step.
    Step ref = reference(x, t, w1, w2, B, Din, H, Dout, lr);
    auto n1 = W1.gather_all(), n2 = W2.gather_all();
    double err = std::fabs(loss - ref.loss);
    for (std::size_t i = 0; i < ref.w1.size(); ++i) err = std::max(err, std::fabs(n1.as<double>()[i] - ref.w1[i]));
    for (std::size_t i = 0; i < ref.w2.size(); ++i) err = std::max(err, std::fabs(n2.as<double>()[i] - ref.w2[i]));
    double worst = 0;
    MPI_Allreduce(&err, &worst, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    const bool ok = worst <= 1e-12;
    if (rt.rank() == 0)
      std::printf("tp_mlp on %s: B=%lld Din=%lld H=%lld Dout=%lld  loss %.12f (reference %.12f)  max |diff| %.3g  %s\n",
                  axe::to_string(mesh).c_str(), static_cast<long long>(B), static_cast<long long>(Din),
                  static_cast<long long>(H), static_cast<long long>(Dout), loss, ref.loss, worst, ok ? "ok" : "MISMATCH");
    status = ok ? 0 : 1;
  } catch (const std::exception& e) {
    if (runtime) std::fprintf(stderr, "[rank %d] tp_mlp: %s\n", runtime->rank(), e.what());
    else std::fprintf(stderr, "tp_mlp: %s\n", e.what());
    status = 2;
  }
  return status;
}
