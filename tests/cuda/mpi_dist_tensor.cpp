// axe_cuda_dist_tensor_test: the runtime's DistTensor on the "cuda" backend under mpirun, one
// process per GPU or several per GPU (then the backend moves data with the peer transport, as it
// does with AXE_PEER_TRANSPORT=2; AXE_BACKEND is forced to cuda). Every rank redistributes the same tensors
// (each case twice: the second run takes the backend's cached preparation); each destination
// shard is copied back to the host and compared element by element with reference_destination
// (the destination layout applied to the global tensor, rounded through the dtype); the source
// must be unchanged. Cases cover the native NCCL collectives, their uneven (v) variants, a
// broadcast, all-to-all, local slices, scatter / gather through one rank, cross-mesh moves and a
// plan in which some ranks are outside both meshes. Then the backend's contract: chained
// asynchronous redistributes, to_host / from_host, wrap over caller device memory, and host
// memory refused by wrap. On the peer transport (AXE_PEER_DIRECT=1, the default) some message
// must have been read straight out of a sender's source, a buffer the runtime allocated
// (DeviceMemory, axe/cuda/device_memory.hpp), and a loop of cached redistributes must hold no
// more device memory after its first two calls, then give its cache back
// (Backend::release_cached_memory).
// Exit code: 0 on every rank when all pass, 1 when any fails, 77 (CTest SKIP_RETURN_CODE) with
// "skipped: ..." when no GPU is visible.
//   AXE_TIMEOUT_S=60 mpirun -np 2 axe_cuda_dist_tensor_test
#include <cuda_runtime_api.h>
#include <mpi.h>

#include <cmath>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "axe/runtime/dist_tensor.hpp"
#include "axe/core/error.hpp"
#include "axe/core/tunables.hpp"
#include "axe/cuda/backend.hpp"
#include "axe/runtime/runtime.hpp"
#include "axe/exec/simulate.hpp"

using namespace axe;

namespace {

// Messages this rank's redistributes read straight out of a sender's source, over all of check().
std::int64_t g_source_reads = 0;

std::int64_t last_source_reads() {
  const auto s = cuda::backend_stats(Runtime::current().backend());
  return s ? s->source_reads : 0;
}

// This rank's source shard of `l` (element x of the global tensor holds x, partial terms as
// simulate.hpp), in dtype `dt`.
DistTensor source_tensor(const DistLayout& l, DType dt) {
  std::vector<double> v = fill_source(l, Runtime::current().rank());
  const auto es = static_cast<std::size_t>(size_of(dt));
  std::vector<std::byte> b(v.size() * es);
  for (std::size_t i = 0; i < v.size(); ++i) store_element(dt, b.data() + i * es, v[i]);
  return DistTensor::wrap(l, dt, std::move(b));
}

std::vector<std::byte> to_host(const DistTensor& t) {
  std::vector<std::byte> h(t.buffer().bytes());
  Runtime::current().backend().copy_to_host(t.buffer(), h);
  return h;
}

// "" or the first mismatch of this rank.
std::string check(const DistLayout& from, const DistLayout& to, DType dt) {
  Runtime& rt = Runtime::current();
  DistTensor src = source_tensor(from, dt);
  const std::vector<std::byte> before = to_host(src);
  std::string err;
  for (int rep = 0; rep < 2 && err.empty(); ++rep) {
    DistTensor dst = src.redistribute(to);
    g_source_reads += last_source_reads();
    std::vector<double> want;
    if (to.mesh().contains(rt.rank())) want = reference_destination(from, to).at(rt.rank());
    const std::vector<std::byte> got = to_host(dst);
    const auto es = static_cast<std::size_t>(size_of(dt));
    if (got.size() != want.size() * es) {
      err = "rank " + std::to_string(rt.rank()) + ": destination has " + std::to_string(got.size() / es) +
            " elements, expected " + std::to_string(want.size());
      break;
    }
    std::vector<std::byte> tmp(es);
    for (std::size_t i = 0; i < want.size() && err.empty(); ++i) {
      double w = want[i];
      if (std::isnan(w) && !is_floating(dt)) w = 0;
      if (!std::isnan(w)) {  // the reference rounded through the dtype
        store_element(dt, tmp.data(), w);
        w = load_element(dt, tmp.data());
      }
      const double g = load_element(dt, got.data() + i * es);
      if (!((std::isnan(w) && std::isnan(g)) || w == g))
        err = "rank " + std::to_string(rt.rank()) + " run " + std::to_string(rep) + " slot " + std::to_string(i) +
              ": expected " + std::to_string(w) + ", got " + std::to_string(g);
    }
    if (err.empty() && to_host(src) != before) err = "rank " + std::to_string(rt.rank()) + ": the source changed";
  }
  return err;
}

std::string kinds(const PlanRequest& r) {
  std::string s;
  const Plan p = plan_all(r);
  for (std::size_t i = 0; i < p.kinds.size(); ++i)
    s += (i ? "," : "") + std::string(to_string(p.kinds[i])) + (p.equal_blocks[i] ? "" : "(v)");
  return s.empty() ? "none" : s;
}

HostTensor iota(std::vector<std::int64_t> shape, DType dt = DType::F64) {
  HostTensor h(std::move(shape), dt);
  for (std::int64_t i = 0; i < h.elements(); ++i) h.set(i, static_cast<double>(i));
  return h;
}

std::string rank_text() { return "rank " + std::to_string(Runtime::current().rank()) + ": "; }

// 200 cached S0->R redistributes (each result dropped before the next): the device memory the
// backend holds after the first two calls does not grow; then the cache is given back.
std::string memory_steady(const Mesh& m) {
  DistTensor t = DistTensor::from_global(iota({96, 160}, DType::F32), m, {Shard(0)});
  std::size_t warm = 0;
  for (int i = 0; i < 200; ++i) {
    DistTensor r = t.redistribute({Replicate()});
    if (i == 1) warm = cuda::backend_stats(Runtime::current().backend())->memory.reserved;
  }
  Runtime::current().backend().synchronize();
  const std::size_t now = cuda::backend_stats(Runtime::current().backend())->memory.reserved;
  if (now > warm)
    return rank_text() + "the backend holds " + std::to_string(now) + " bytes of device memory after 200 calls, " +
           std::to_string(warm) + " after two";
  // Then the cache goes back (Backend::release_cached_memory): what it gives back is what the
  // backend stops holding, and a second call finds nothing.
  const std::size_t released = Runtime::current().backend().release_cached_memory();
  const std::size_t after = cuda::backend_stats(Runtime::current().backend())->memory.reserved;
  if (after + released != now || Runtime::current().backend().release_cached_memory() != 0)
    return rank_text() + "release_cached_memory gave back " + std::to_string(released) + " of " + std::to_string(now) +
           " bytes and left " + std::to_string(after) + ", or gave back more on a second call";
  return "";
}

// Summed over the ranks: some message was read from a sender's source (a runtime buffer).
std::string read_in_place(bool expected) {
  long long mine = g_source_reads, all = 0;
  MPI_Allreduce(&mine, &all, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
  if (expected && all == 0) return "no message was read straight from a sender's source (AXE_PEER_DIRECT=1)";
  return "";
}

// Plans enqueued back to back, each reading the previous result, with no host wait in between.
std::string async_chain(const Mesh& m) {
  HostTensor x = iota({64, 96});
  auto a = DistTensor::from_global(x, m, {Shard(0)});
  auto r = a.redistribute({Replicate()}).redistribute({Shard(1)}).redistribute({Partial()}).redistribute(
      {Replicate()});
  HostTensor g = r.gather_all();
  if (g.data != x.data) return rank_text() + "the chained result differs from the global tensor";
  std::vector<double> mine = r.to_host_as<double>();
  if (mine.size() != static_cast<std::size_t>(x.elements())) return rank_text() + "to_host_as size";
  for (std::size_t i = 0; i < mine.size(); ++i)
    if (mine[i] != static_cast<double>(i)) return rank_text() + "to_host_as slot " + std::to_string(i);
  return "";
}

// Equal element by element, NaN (an uneven shard's padding) equal to NaN.
bool same(const std::vector<double>& a, const std::vector<double>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (!(a[i] == b[i] || (std::isnan(a[i]) && std::isnan(b[i])))) return false;
  return true;
}

std::string host_copies(const Mesh& m) {
  auto t = DistTensor::from_global(iota({16, 8}), m, {Shard(0)});
  std::vector<double> v = t.to_host_as<double>();
  for (auto& e : v) e = -e - 1;
  t.from_host(std::span<const double>(v));
  // An uneven shard's padding is NaN (16 rows on 3 ranks: 6, 6 and 4 of 6 slots).
  if (!same(t.to_host_as<double>(), v)) return rank_text() + "from_host then to_host differs";
  HostTensor g = t.gather_all();
  for (std::int64_t i = 0; i < g.elements(); ++i)
    if (g.get(i) != -static_cast<double>(i) - 1) return rank_text() + "gather after from_host, element " + std::to_string(i);
  std::string e;
  try {
    (void)t.local_bytes();
  } catch (const Error& x) {
    e = x.what();
  }
  if (e.find("to_host") == std::string::npos) return rank_text() + "local_bytes on a device buffer: '" + e + "'";
  e.clear();
  try {
    std::vector<double> short_v(v.size() + 1);
    t.from_host(std::span<const double>(short_v));
  } catch (const Error& x) {
    e = x.what();
  }
  if (e.find("from_host") == std::string::npos) return rank_text() + "from_host of a wrong size: '" + e + "'";
  return "";
}

std::string wrap_device(const Mesh& m, int gpus) {
  Runtime& rt = Runtime::current();
  const DistLayout from = shard({32, 24}, m, {Shard(0)});
  std::vector<double> v = fill_source(from, rt.rank());
  const std::size_t bytes = v.size() * sizeof(double);
  if (cudaSetDevice(rt.local_rank() % gpus) != cudaSuccess) return rank_text() + "cudaSetDevice";
  void* d = nullptr;
  if (cudaMalloc(&d, bytes) != cudaSuccess) return rank_text() + "cudaMalloc";
  std::string err;
  cudaMemcpy(d, v.data(), bytes, cudaMemcpyHostToDevice);
  // From pageable memory cudaMemcpy may return before its copy reaches the device (CUDA's API
  // synchronization rules), and a redistribute without CallerStream does not wait for the legacy
  // stream: the caller finishes its producer first. (With the peer transport a receiver in another
  // process reads this memory straight away.)
  cudaDeviceSynchronize();
  {
    auto t = DistTensor::wrap(from, DType::F64, d, bytes);
    if (const_cast<Buffer&>(t.buffer()).device_data() != d) err = rank_text() + "the tensor does not alias the pointer";
    for (const auto& to : {shard({32, 24}, m, {Replicate()}), shard({32, 24}, m, {Shard(1)})}) {
      auto r = t.redistribute(to);
      std::vector<double> want = reference_destination(from, to).at(rt.rank());
      if (err.empty() && !same(r.to_host_as<double>(), want)) err = rank_text() + "redistribute from wrapped memory";
    }
    std::vector<double> now(v.size());
    cudaMemcpy(now.data(), d, bytes, cudaMemcpyDeviceToHost);
    if (err.empty() && !same(now, v)) err = rank_text() + "the caller's device memory changed";
  }
  cudaFree(d);
  return err;
}

std::string wrap_host_fails(const Mesh& m) {
  const DistLayout l = shard({32, 24}, m, {Shard(0)});
  std::vector<double> v = fill_source(l, Runtime::current().rank());
  std::string e;
  try {
    (void)DistTensor::wrap(l, v.data(), v.size());
  } catch (const Error& x) {
    e = x.what();
  }
  if (e.find("not device memory") == std::string::npos) return rank_text() + "wrap over host memory: '" + e + "'";
  return "";
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 1, gpus = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (cudaGetDeviceCount(&gpus) != cudaSuccess) {
    cudaGetLastError();
    gpus = 0;
  }
  int min_gpus = gpus;
  MPI_Allreduce(&gpus, &min_gpus, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (min_gpus < 1) {
    if (rank == 0) std::printf("skipped: no GPU visible (%d ranks)\n", size);
    MPI_Finalize();
    return 77;
  }
  int failures = 0, cases = 0;
  {
    RuntimeOptions opt;
    opt.backend = "cuda";
    Runtime rt(opt);
    if (rank == 0)
      std::printf("backend %s, %d ranks on %d GPU(s)%s\n", std::string(rt.backend().name()).c_str(), size, min_gpus,
                  min_gpus < size ? " (ranks share GPUs: the peer transport)" : "");
    const Mesh m = parse_mesh("gpu=" + std::to_string(size));
    // The peer transport carries every step (ranks share GPUs, or AXE_PEER_TRANSPORT=2).
    const bool peer = min_gpus < size || tunable_int("AXE_PEER_TRANSPORT") == 2;
    const Mesh first({{"a", 1}}, {0});                 // rank 0 alone
    const Mesh last({{"b", 1}}, {size - 1});           // the last rank alone
    auto S = [](std::vector<std::int64_t> shape, const Mesh& mesh, std::vector<AxisPlacement> p) {
      return shard(std::span<const std::int64_t>(shape), mesh, std::span<const AxisPlacement>(p));
    };
    struct Case {
      std::string name;
      std::function<DistLayout()> from, to;
      DType dtype;
    };
    std::vector<Case> all = {
        {"S0->R allgather f32", [&] { return S({64, 128}, m, {Shard(0)}); }, [&] { return S({64, 128}, m, {Replicate()}); }, DType::F32},
        {"S0->R uneven f64", [&] { return S({63, 130}, m, {Shard(0)}); }, [&] { return S({63, 130}, m, {Replicate()}); }, DType::F64},
        {"S0->R allgather f16", [&] { return S({30, 40}, m, {Shard(0)}); }, [&] { return S({30, 40}, m, {Replicate()}); }, DType::F16},
        {"S1->R allgather u8", [&] { return S({12, 20}, m, {Shard(1)}); }, [&] { return S({12, 20}, m, {Replicate()}); }, DType::U8},
        {"P->R allreduce f64", [&] { return S({64, 128}, m, {Partial()}); }, [&] { return S({64, 128}, m, {Replicate()}); }, DType::F64},
        {"P->R allreduce i32", [&] { return S({40, 24}, m, {Partial()}); }, [&] { return S({40, 24}, m, {Replicate()}); }, DType::I32},
        {"Pavg->S1 f64", [&] { return S({64, 128}, m, {Partial(ReduceOp::Avg)}); }, [&] { return S({64, 128}, m, {Shard(1)}); }, DType::F64},
        {"P->S0 reducescatter f32", [&] { return S({64, 128}, m, {Partial()}); }, [&] { return S({64, 128}, m, {Shard(0)}); }, DType::F32},
        {"Pmax->S0 uneven f64", [&] { return S({31, 17}, m, {Partial(ReduceOp::Max)}); }, [&] { return S({31, 17}, m, {Shard(0)}); }, DType::F64},
        {"S0->S1 alltoall bf16", [&] { return S({64, 128}, m, {Shard(0)}); }, [&] { return S({64, 128}, m, {Shard(1)}); }, DType::BF16},
        {"S1->S0 3d i64", [&] { return S({6, 10, 14}, m, {Shard(1)}); }, [&] { return S({6, 10, 14}, m, {Shard(0)}); }, DType::I64},
        {"R->S0 local f32", [&] { return S({64, 128}, m, {Replicate()}); }, [&] { return S({64, 128}, m, {Shard(0)}); }, DType::F32},
        {"S0->P f64", [&] { return S({64, 128}, m, {Shard(0)}); }, [&] { return S({64, 128}, m, {Partial()}); }, DType::F64},
        {"broadcast held at the last coordinate f32",
         [&] { return DistLayout({4, 8}, parse_axe_layout("S[(4,8):(8,1)] + " + std::to_string(size - 1) + "@gpu"), m); },
         [&] { return DistLayout({4, 8}, parse_axe_layout("S[(4,8):(8,1)] + R[" + std::to_string(size) + ":1@gpu]"), m); },
         DType::F32},
        {"scatter from rank 0 (R on rank 0 -> S0) f64", [&] { return S({37, 21}, first, {Replicate()}); },
         [&] { return S({37, 21}, m, {Shard(0)}); }, DType::F64},
        {"gather to the last rank (S1 -> R there) f32", [&] { return S({37, 21}, m, {Shard(1)}); },
         [&] { return S({37, 21}, last, {Replicate()}); }, DType::F32},
        {"rank 0 -> last rank (others outside both meshes) i32", [&] { return S({16, 9}, first, {Replicate()}); },
         [&] { return S({16, 9}, last, {Replicate()}); }, DType::I32},
        {"rank 0 local (others outside both meshes) f64", [&] { return S({16, 9}, first, {Replicate()}); },
         [&] { return S({16, 9}, first, {Replicate()}); }, DType::F64},
    };
    for (const Case& c : all) {
      ++cases;
      std::string err, what;
      try {
        const DistLayout from = c.from(), to = c.to();
        what = kinds(PlanRequest{from, to, c.dtype});
        err = check(from, to, c.dtype);
      } catch (const std::exception& e) {
        err = std::string("rank ") + std::to_string(rank) + ": " + e.what();
      }
      int bad = err.empty() ? 0 : 1, any = 0;
      if (!err.empty()) std::fprintf(stderr, "[rank %d] %s: %s\n", rank, c.name.c_str(), err.c_str());
      MPI_Allreduce(&bad, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
      if (rank == 0) std::printf("%-52s %-28s %s\n", c.name.c_str(), what.c_str(), any ? "FAILED" : "OK");
      failures += any;
      if (rt.failed()) break;
    }
    // The backend's own contract (backend.hpp, axe/cuda/backend.hpp): execute_async chains,
    // to_host / from_host on device buffers, wrap_memory over caller device memory, and host
    // memory refused with a clear error.
    const std::vector<std::pair<std::string, std::function<std::string()>>> contract = {
        {"async chain S0->R->S1->P->R without synchronizing", [&] { return async_chain(m); }},
        {"to_host / from_host on a device buffer", [&] { return host_copies(m); }},
        {"wrap over caller device memory (aliased, never written)", [&] { return wrap_device(m, gpus); }},
        {"wrap over host memory is a clear error", [&] { return wrap_host_fails(m); }},
        {"200 cached redistributes hold no more device memory than two; the cache goes back",
         [&] { return memory_steady(m); }},
        {"peer transport: messages read in place from the runtime's buffers",
         [&] { return read_in_place(peer && tunable_int("AXE_PEER_DIRECT") != 0); }},
        {"backend not failed after all of the above", [&] { return rt.failed() ? "rt.failed()" : ""; }},
    };
    for (const auto& [name, run] : contract) {
      if (rt.failed()) break;
      ++cases;
      std::string err;
      try {
        err = run();
      } catch (const std::exception& e) {
        err = std::string("rank ") + std::to_string(rank) + ": " + e.what();
      }
      int bad = err.empty() ? 0 : 1, any = 0;
      if (!err.empty()) std::fprintf(stderr, "[rank %d] %s: %s\n", rank, name.c_str(), err.c_str());
      MPI_Allreduce(&bad, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
      if (rank == 0) std::printf("%-81s %s\n", name.c_str(), any ? "FAILED" : "OK");
      failures += any;
    }
    if (rt.failed()) {
      std::fprintf(stderr, "[rank %d] the runtime failed (timeout); exiting without MPI_Finalize\n", rank);
      return 1;
    }
  }
  if (rank == 0) std::printf("%s: %d of %d cases failed\n", failures ? "FAILED" : "PASSED", failures, cases);
  MPI_Finalize();
  return failures ? 1 : 0;
}
