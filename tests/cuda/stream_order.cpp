// axe_cuda_stream_test: the cuda backend's ordering with a caller's stream (backend.hpp
// wait_for_stream / signal_stream, Buffer::used_on_stream; DistTensor::redistribute(to,
// CallerStream)) and its event pool, on the runtime's "cuda" backend under mpirun (1 or more
// ranks; ranks that share a GPU use the peer transport).
//
// The caller's stream is held back by a gate: a host function enqueued on it spins until the
// test opens the gate (bounded: 10 s), so everything enqueued behind it runs late, for as long as
// the test wants and deterministically (the same role as a slow kernel, without one). The laws:
//   - a redistribute ordered with the stream reads what the stream wrote behind the gate, and work
//     enqueued on the stream after it reads the result (no host wait anywhere in between); without
//     the ordering the plan reads the stale source (the control that shows the test can fail);
//   - a buffer lent to the stream (used_on_stream) is freed only after the stream's work on it:
//     the next allocation, which reuses the memory, cannot overwrite it under a late reader;
//   - wait_for_stream / signal_stream reuse a bounded number of events, whatever the number of
//     calls, and device memory stays flat.
// Exit code: 0 on every rank when all pass, 1 when any fails, 77 (CTest SKIP_RETURN_CODE) with
// "skipped: ..." when no GPU is visible (each test also skips by itself without a runtime).
//   AXE_TIMEOUT_S=60 mpirun -np 2 build/bin/axe_cuda_stream_test
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>
#include <mpi.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>
#include <thread>
#include <vector>

#include "axe/core/error.hpp"
#include "axe/cuda/backend.hpp"
#include "axe/cuda/check.hpp"
#include "axe/exec/simulate.hpp"
#include "axe/runtime/dist_tensor.hpp"
#include "axe/runtime/runtime.hpp"

namespace axe::cuda {
namespace {

Runtime* g_runtime = nullptr;  // set by main when every rank sees a GPU

#define AXE_REQUIRE_RUNTIME()                                                                      \
  do {                                                                                             \
    if (!g_runtime) GTEST_SKIP() << "needs a CUDA GPU on every rank (the cuda backend's runtime)"; \
  } while (0)

// A caller's stream held back until open(): everything enqueued after hold() waits for it.
class GatedStream {
 public:
  GatedStream() { AXE_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking)); }
  ~GatedStream() {
    open();
    cudaStreamSynchronize(stream_);
    cudaStreamDestroy(stream_);
  }
  GatedStream(const GatedStream&) = delete;
  GatedStream& operator=(const GatedStream&) = delete;
  cudaStream_t get() const { return stream_; }
  std::uintptr_t handle() const { return reinterpret_cast<std::uintptr_t>(stream_); }
  // Enqueues the gate: the stream stops here until open() (or 10 s).
  void hold() {
    gate_->store(false);
    AXE_CUDA_CHECK(cudaLaunchHostFunc(stream_, &spin, gate_.get()));
  }
  void open() { gate_->store(true); }
  void synchronize() { AXE_CUDA_CHECK(cudaStreamSynchronize(stream_)); }

 private:
  static void CUDART_CB spin(void* p) {
    auto* gate = static_cast<std::atomic<bool>*>(p);
    const auto t0 = std::chrono::steady_clock::now();
    while (!gate->load() && std::chrono::steady_clock::now() - t0 < std::chrono::seconds(10))
      std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  cudaStream_t stream_ = nullptr;
  std::unique_ptr<std::atomic<bool>> gate_ = std::make_unique<std::atomic<bool>>(true);
};

struct DeviceMemory {
  void* p = nullptr;
  explicit DeviceMemory(std::size_t n) { AXE_CUDA_CHECK(cudaMalloc(&p, n ? n : 1)); }
  ~DeviceMemory() { cudaFree(p); }
  DeviceMemory(const DeviceMemory&) = delete;
  DeviceMemory& operator=(const DeviceMemory&) = delete;
};

std::vector<double> download(const void* d, std::size_t n) {
  std::vector<double> h(n);
  if (n) AXE_CUDA_CHECK(cudaMemcpy(h.data(), d, n * sizeof(double), cudaMemcpyDeviceToHost));
  return h;
}

// Equal element by element, NaN (padding) equal to NaN; "" or the first difference.
std::string compare(const std::vector<double>& got, const std::vector<double>& want) {
  if (got.size() != want.size())
    return std::to_string(got.size()) + " elements, expected " + std::to_string(want.size());
  for (std::size_t i = 0; i < got.size(); ++i)
    if (!(got[i] == want[i] || (std::isnan(got[i]) && std::isnan(want[i]))))
      return "slot " + std::to_string(i) + ": " + std::to_string(got[i]) + ", expected " +
             std::to_string(want[i]);
  return "";
}

// The case of the ordering tests: a 48x96 f64 tensor sharded by rows, all-gathered into a
// column-major replicated layout (a real plan on any number of ranks: a transpose on one).
struct Case {
  DistLayout from, to;
  std::vector<double> fresh;  // this rank's source shard as the caller's stream writes it
  std::vector<double> want;   // this rank's destination from `fresh`
};

Case make_case(Runtime& rt) {
  const Mesh m = parse_mesh("gpu=" + std::to_string(rt.size()));
  const std::vector<std::int64_t> shape{48, 96};
  Case c{shard(std::span<const std::int64_t>(shape), m, std::vector<AxisPlacement>{Shard(0)}),
         DistLayout(
             shape,
             parse_axe_layout("S[(48,96):(1,48)] + R[" + std::to_string(rt.size()) + ":1@gpu]"), m),
         {},
         {}};
  c.fresh = fill_source(c.from, rt.rank());
  c.want = reference_destination(c.from, c.to).at(rt.rank());
  return c;
}

// A source tensor holding -1 everywhere (stale), and the fresh values in device memory.
DistTensor stale_source(const Case& c) {
  std::vector<double> stale(c.fresh.size(), -1.0);
  return DistTensor::wrap(c.from, std::span<const double>(stale));
}

TEST(StreamOrder, RedistributeOnCallerStream_ReadsWhatTheStreamWrote_AndTheStreamReadsTheResult) {
  AXE_REQUIRE_RUNTIME();
  Runtime& rt = *g_runtime;
  const Case c = make_case(rt);
  const std::size_t src_bytes = c.fresh.size() * sizeof(double),
                    dst_bytes = c.want.size() * sizeof(double);
  DeviceMemory fresh(src_bytes), out(dst_bytes);
  AXE_CUDA_CHECK(cudaMemcpy(fresh.p, c.fresh.data(), src_bytes, cudaMemcpyHostToDevice));
  AXE_CUDA_CHECK(cudaMemset(out.p, 0xFF, dst_bytes));
  AXE_CUDA_CHECK(cudaDeviceSynchronize());  // cudaMemset is asynchronous; the set-up is done
  DistTensor src = stale_source(c);
  (void)src.redistribute(c.to).to_host();  // the plan prepared and connected beforehand
  GatedStream s;
  for (int rep = 0; rep < 3; ++rep) {
    s.hold();  // the "slow kernel": the stream writes the source only when the gate opens
    AXE_CUDA_CHECK(cudaMemcpyAsync(src.buffer().device_data(), fresh.p, src_bytes,
                                   cudaMemcpyDeviceToDevice, s.get()));
    DistTensor r = src.redistribute(c.to, CallerStream{s.handle()});
    AXE_CUDA_CHECK(cudaMemcpyAsync(out.p, r.buffer().device_data(), dst_bytes,
                                   cudaMemcpyDeviceToDevice, s.get()));
    std::this_thread::sleep_for(
        std::chrono::milliseconds(50));  // axe would have read the stale source by now
    s.open();
    s.synchronize();  // the caller's only wait: its own stream
    EXPECT_EQ(compare(download(out.p, c.want.size()), c.want), "")
        << "rank " << rt.rank() << " rep " << rep;
    EXPECT_EQ(compare(r.to_host_as<double>(), c.want), "")
        << "rank " << rt.rank() << " rep " << rep;
    // Stale again for the next repetition (a host copy on axe's stream: ordered after the plan).
    std::vector<double> stale(c.fresh.size(), -1.0);
    src.from_host(std::span<const double>(stale));
  }
}

TEST(StreamOrder, WithoutTheOrdering_ThePlanReadsTheStaleSource) {
  // The control: the gate does hold the stream back, so the test above would see a missing wait.
  AXE_REQUIRE_RUNTIME();
  Runtime& rt = *g_runtime;
  const Case c = make_case(rt);
  const std::size_t src_bytes = c.fresh.size() * sizeof(double);
  DeviceMemory fresh(src_bytes);
  AXE_CUDA_CHECK(cudaMemcpy(fresh.p, c.fresh.data(), src_bytes, cudaMemcpyHostToDevice));
  DistTensor src = stale_source(c);
  GatedStream s;
  s.hold();
  AXE_CUDA_CHECK(cudaMemcpyAsync(src.buffer().device_data(), fresh.p, src_bytes,
                                 cudaMemcpyDeviceToDevice, s.get()));
  DistTensor r = src.redistribute(c.to);                   // not ordered with s
  const std::vector<double> got = r.to_host_as<double>();  // axe's stream alone: done while s waits
  s.open();
  s.synchronize();
  std::vector<double> stale_want = c.want;
  for (double& v : stale_want)
    if (!std::isnan(v)) v = -1.0;
  EXPECT_EQ(compare(got, stale_want), "") << "rank " << rt.rank();
}

TEST(StreamOrder, LentBuffer_IsFreedOnlyAfterTheStreamsWorkOnIt) {
  AXE_REQUIRE_RUNTIME();
  Backend& b = g_runtime->backend();
  constexpr std::size_t n = 1 << 20;
  DeviceMemory out(n);
  std::vector<unsigned char> pattern(n, 0xAB);
  for (bool lend : {true, false}) {
    AXE_CUDA_CHECK(cudaMemset(out.p, 0x11, n));
    AXE_CUDA_CHECK(cudaDeviceSynchronize());
    GatedStream s;
    std::shared_ptr<Buffer> buf = b.allocate_uninitialized(n);
    b.copy_from_host(std::as_bytes(std::span<const unsigned char>(pattern)), *buf);
    void* old = buf->device_data();
    s.hold();  // the consumer reads the buffer late
    AXE_CUDA_CHECK(cudaMemcpyAsync(out.p, old, n, cudaMemcpyDeviceToDevice, s.get()));
    if (lend) buf->used_on_stream(s.handle());
    buf.reset();  // the last owner: cudaFreeAsync on axe's stream
    // The next allocation of the same size reuses the memory in axe's stream order and zeroes it.
    std::shared_ptr<Buffer> next = b.allocate(n);
    const bool reused = next->device_data() == old;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    s.open();
    s.synchronize();
    b.synchronize();
    std::vector<unsigned char> got(n);
    AXE_CUDA_CHECK(cudaMemcpy(got.data(), out.p, n, cudaMemcpyDeviceToHost));
    const bool intact = got == pattern;
    if (lend) {
      EXPECT_TRUE(intact) << "the consumer read " << int(got[0])
                          << " instead of 0xAB: the buffer was freed (and "
                          << "reused: " << reused
                          << ") before the stream it was lent to had read it";
    } else if (reused) {
      EXPECT_FALSE(intact)
          << "control: without used_on_stream the reused memory should have been zeroed under the "
             "late reader";
    } else {
      std::printf(
          "note: the pool did not reuse the freed memory; the control proves nothing here\n");
    }
  }
}

TEST(StreamOrder, WaitAndSignal_ReuseABoundedNumberOfEvents_AndMemoryStaysFlat) {
  AXE_REQUIRE_RUNTIME();
  Runtime& rt = *g_runtime;
  Backend& b = rt.backend();
  const Case c = make_case(rt);
  DistTensor src = DistTensor::wrap(c.from, std::span<const double>(c.fresh));
  GatedStream s;
  for (int i = 0; i < 50; ++i)
    (void)src.redistribute(c.to, CallerStream{s.handle()});  // warm: plan, pool
  b.synchronize();
  const std::size_t events0 = stream_wait_events_created();
  std::size_t free0 = 0, free1 = 0, total = 0;
  AXE_CUDA_CHECK(cudaMemGetInfo(&free0, &total));
  for (int i = 0; i < 20000; ++i) {
    b.wait_for_stream(s.handle());
    b.signal_stream(s.handle());
    b.signal_stream(0);  // the legacy default stream (torch's default current stream)
  }
  for (int i = 0; i < 2000; ++i) {
    DistTensor r = src.redistribute(c.to, CallerStream{s.handle()});
    if (i % 500 == 0) b.synchronize();
  }
  b.synchronize();
  s.synchronize();
  AXE_CUDA_CHECK(cudaMemGetInfo(&free1, &total));
  const std::size_t made = stream_wait_events_created() - events0;
  EXPECT_LE(made, 2u) << "62000 stream orderings created " << made << " events";
  EXPECT_LE(stream_wait_events_created(), 4u) << "one thread needs one event per device";
  const double drift = (static_cast<double>(free0) - static_cast<double>(free1)) / (1 << 20);
  EXPECT_LT(drift, 16.0) << "device memory fell by " << drift << " MiB over the calls";
  EXPECT_EQ(compare(src.redistribute(c.to).to_host_as<double>(), c.want), "");
  EXPECT_FALSE(rt.failed());
}

TEST(StreamOrder, HostBackendDefaults_DoNothing) {
  // Backend's defaults (the host backend): no stream, nothing to order; CallerStream is plain.
  struct Quiet : Backend {
    std::string_view name() const override { return "quiet"; }
    std::shared_ptr<Buffer> allocate(std::size_t n) override {
      return std::make_shared<HostBuffer>(n);
    }
    void copy_from_host(std::span<const std::byte>, Buffer&) override {}
    void copy_to_host(const Buffer&, std::span<std::byte>) override {}
    void execute(const RankPlan&, const Buffer&, Buffer&) override {}
  } q;
  q.wait_for_stream(0);
  q.signal_stream(12345);
  HostBuffer h(8);
  h.used_on_stream(7);
  EXPECT_EQ(h.bytes(), 8u);
}

// Other ranks print only their failures, prefixed by rank (as tests/runtime/mpi_main.cpp).
class RankFailurePrinter : public ::testing::EmptyTestEventListener {
 public:
  explicit RankFailurePrinter(int rank) : rank_(rank) {}
  void OnTestPartResult(const ::testing::TestPartResult& r) override {
    if (r.failed())
      std::fprintf(stderr, "[rank %d] %s:%d: failure\n%s\n", rank_,
                   r.file_name() ? r.file_name() : "?", r.line_number(), r.summary());
  }

 private:
  int rank_;
};

}  // namespace
}  // namespace axe::cuda

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
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
  if (rank != 0) {
    auto& listeners = ::testing::UnitTest::GetInstance()->listeners();
    delete listeners.Release(listeners.default_result_printer());
    listeners.Append(new axe::cuda::RankFailurePrinter(rank));
  }
  int failed = 0;
  if (min_gpus < 1) {
    failed = RUN_ALL_TESTS() != 0 ? 1 : 0;  // each skips with its reason
    if (rank == 0) std::printf("skipped: no GPU visible (%d ranks)\n", size);
    MPI_Finalize();
    return failed ? 1 : 77;
  }
  {
    axe::RuntimeOptions opt;
    opt.backend = "cuda";
    axe::Runtime rt(opt);
    axe::cuda::g_runtime = &rt;
    if (rank == 0)
      std::printf("backend %s, %d ranks on %d GPU(s)\n", std::string(rt.backend().name()).c_str(),
                  size, min_gpus);
    failed = RUN_ALL_TESTS() != 0 ? 1 : 0;
    if (failed) std::fprintf(stderr, "[rank %d] tests failed\n", rank);
    axe::cuda::g_runtime = nullptr;
    if (rt.failed()) {
      std::fprintf(stderr, "[rank %d] the runtime failed (timeout); exiting without MPI_Finalize\n",
                   rank);
      return 1;
    }
    int any = 0;
    MPI_Allreduce(&failed, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    failed = any;
  }
  MPI_Finalize();
  return failed ? 1 : 0;
}
