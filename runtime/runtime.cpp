// Runtime bootstrap: MPI, local rank, tunables, backend choice, collective agreement.
#include "axe/runtime/runtime.hpp"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>

#include "axe/core/error.hpp"
#include "axe/runtime/mpi_transport.hpp"

namespace axe {

std::uint64_t fingerprint(std::string_view text) {
  std::uint64_t h = 1469598103934665603ull;
  for (unsigned char c : text) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

// ---- backend registry ---------------------------------------------------------------------

namespace {
std::mutex registry_mu;
std::map<std::string, BackendEntry>& registry() {
  static std::map<std::string, BackendEntry> r;
  return r;
}

class HostBackend : public Backend {
 public:
  explicit HostBackend(Runtime& rt) : rt_(rt) {}
  std::string_view name() const override { return "host"; }
  std::shared_ptr<Buffer> allocate(std::size_t bytes) override { return std::make_shared<HostBuffer>(bytes); }
  void copy_from_host(std::span<const std::byte> src, Buffer& dst) override {
    if (src.size() != dst.bytes())
      fail("host backend: copy of " + std::to_string(src.size()) + " bytes into a buffer of " +
           std::to_string(dst.bytes()));
    if (!src.empty()) std::memcpy(dst.host_data(), src.data(), src.size());
  }
  void copy_to_host(const Buffer& src, std::span<std::byte> dst) override {
    if (dst.size() != src.bytes())
      fail("host backend: copy of a buffer of " + std::to_string(src.bytes()) + " bytes into " +
           std::to_string(dst.size()));
    if (!dst.empty()) std::memcpy(dst.data(), src.host_data(), dst.size());
  }
  std::shared_ptr<Buffer> wrap_memory(void* data, std::size_t bytes) override {
    return std::make_shared<HostView>(static_cast<std::byte*>(data), bytes);
  }
  void execute(const RankPlan& plan, const Buffer& src, Buffer& dst) override {
    const std::byte* s = src.host_data();
    std::byte* d = dst.host_data();
    if ((!s && src.bytes()) || (!d && dst.bytes())) fail("host backend: buffers are not in host memory");
    MpiTransport& tr = rt_.transport();
    struct PlanScope {  // errors of the transport name the plan's step
      MpiTransport& t;
      PlanScope(MpiTransport& x, const RankPlan& p) : t(x) { t.begin_plan(&p); }
      ~PlanScope() { t.end_plan(); }
    } scope(tr, plan);
    axe::execute(plan, tr, std::span<const std::byte>(s, src.bytes()), std::span<std::byte>(d, dst.bytes()));
  }

 private:
  Runtime& rt_;
};

void register_builtin() {
  static std::once_flag once;
  std::call_once(once, [] {
    register_backend({"host", [] { return true; }, [](Runtime& rt) { return std::make_unique<HostBackend>(rt); }});
  });
}

Runtime* g_current = nullptr;

// A launcher's local-rank variable: -1 when unset.
int local_rank_env(const char* name) {
  const auto v = environment(name);
  if (!v) return -1;
  char* end = nullptr;
  const long x = std::strtol(v->c_str(), &end, 10);
  if (end == v->c_str() || *end != '\0' || x < 0 || x > (1 << 20))
    fail(std::string(name) + "='" + *v + "' is not a local rank (expected an integer in 0..1048576)");
  return static_cast<int>(x);
}
}  // namespace

std::shared_ptr<Buffer> Backend::wrap_memory(void*, std::size_t) {
  fail("the " + std::string(name()) +
       " backend cannot wrap caller memory (DistTensor::wrap over a pointer); pass the data by value");
}

void register_backend(BackendEntry entry) {
  std::lock_guard<std::mutex> g(registry_mu);
  std::string n = entry.name;
  registry()[n] = std::move(entry);
}

std::vector<std::string> registered_backends() {
  register_builtin();
  std::lock_guard<std::mutex> g(registry_mu);
  std::vector<std::string> v;
  for (const auto& [k, e] : registry()) v.push_back(k);
  return v;
}

// ---- runtime ------------------------------------------------------------------------------

Runtime::Runtime(int* argc, char*** argv, RuntimeOptions options) {
  int inited = 0;
  MPI_Initialized(&inited);
  if (!inited) {
    int provided = 0;
    AXE_MPI_CHECK(MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided));
    owns_mpi_ = true;
  }
  try {
    MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
    MPI_Comm_size(MPI_COMM_WORLD, &size_);
    timeout_s_ = options.timeout_s > 0 ? options.timeout_s : tunable_seconds("AXE_TIMEOUT_S");
    // Local size from a shared-memory split; local rank from the launcher when it says so.
    MPI_Comm node;
    AXE_MPI_CHECK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank_, MPI_INFO_NULL, &node));
    MPI_Comm_rank(node, &local_rank_);
    MPI_Comm_size(node, &local_size_);
    MPI_Comm_free(&node);
    int lr = options.local_rank;
    if (lr < 0) lr = local_rank_env("OMPI_COMM_WORLD_LOCAL_RANK");
    if (lr < 0) lr = local_rank_env("SLURM_LOCALID");
    if (lr < 0 && tunable_set("AXE_LOCAL_RANK")) lr = static_cast<int>(tunable_int("AXE_LOCAL_RANK"));
    if (lr >= 0) local_rank_ = lr;
    transport_ = std::make_unique<MpiTransport>(MPI_COMM_WORLD, timeout_s_);

    register_builtin();
    std::string want = options.backend.empty() ? tunable("AXE_BACKEND") : options.backend;
    BackendEntry chosen;
    {
      std::lock_guard<std::mutex> g(registry_mu);
      auto& reg = registry();
      if (want.empty() || want == "auto") {
        auto it = reg.find("cuda");
        chosen = it != reg.end() && it->second.available() ? it->second : reg.at("host");
      } else if (auto it = reg.find(want); it != reg.end()) {
        if (!it->second.available())
          fail("AXE_BACKEND=" + want + ": the backend is built in but cannot run here (no device visible to rank " +
               std::to_string(rank_) + ")");
        chosen = it->second;
      } else if (want == "cuda") {
        fail("AXE_BACKEND=cuda: this build of axe has no CUDA backend (configured without a CUDA toolkit); "
             "use AXE_BACKEND=host");
      } else {
        std::string names;
        for (const auto& [k, e] : reg) names += (names.empty() ? "" : ", ") + k;
        fail("AXE_BACKEND='" + want + "' is not a backend; known: " + names);
      }
    }
    previous_ = g_current;
    g_current = this;
    backend_ = chosen.make(*this);
    init_cost_model(options);
  } catch (...) {
    if (g_current == this) g_current = previous_;
    // A start-up step that timed out on a peer (the calibration communicates) leaves MPI unable
    // to finalize: end the job as ~Runtime does, after saying why.
    const bool bad = failed();
    if (owns_mpi_ && bad) {
      try {
        throw;
      } catch (const std::exception& e) {
        std::fprintf(stderr, "axe: rank %d: %s\n", rank_, e.what());
      } catch (...) {
      }
      MPI_Abort(MPI_COMM_WORLD, 1);
    }
    backend_.reset();
    transport_.reset();
    if (owns_mpi_) MPI_Finalize();
    throw;
  }
}

namespace {
std::atomic<std::uint64_t> g_cost_model_versions{0};
}  // namespace

void Runtime::init_cost_model(const RuntimeOptions& options) {
  cost_model_version_ = ++g_cost_model_versions;
  const std::string cal = options.calibrate_file.empty() ? tunable("AXE_CALIBRATE") : options.calibrate_file;
  const std::string file = options.cost_model_file.empty() ? tunable("AXE_COST_MODEL") : options.cost_model_file;
  std::string err;
  if (!cal.empty() && !file.empty())
    err = "AXE_CALIBRATE='" + cal + "' and AXE_COST_MODEL='" + file +
          "' are both set: calibrate into one file, or load one model, not both";
  const std::string what = "AXE_CALIBRATE='" + cal + "' AXE_COST_MODEL='" + file + "'";
  agree("cost model settings", err, fingerprint(what), what);
  if (!cal.empty()) {
    cost_model_ = calibrated_model(*this, cal, options.calibration, &cost_model_origin_);
  } else if (!file.empty()) {
    cost_model_ = load_cost_model(*this, file);
    cost_model_origin_ = "file " + file;
  }
}

void Runtime::set_cost_model(const CostModel& model) {
  const std::string text = model.fingerprint();
  agree("Runtime::set_cost_model", "", fingerprint(text), "cost model " + text);
  cost_model_ = model;
  cost_model_origin_ = "set_cost_model";
  cost_model_version_ = ++g_cost_model_versions;
}

Runtime::~Runtime() {
  if (g_current == this) g_current = previous_;
  const bool bad = failed();
  backend_.reset();
  transport_.reset();
  // After a timeout a peer may never answer: MPI_Finalize would block on it. The error was
  // already thrown (and reported) on this rank; at shutdown the job is ended through the launcher
  // with MPI_Abort, which mpirun handles reliably (a plain exit without MPI_Finalize can leave
  // Open MPI 4.1's mpirun hanging when a peer waits in MPI_Finalize).
  if (owns_mpi_ && bad) MPI_Abort(MPI_COMM_WORLD, 1);
  if (owns_mpi_ && !bad) {
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (!finalized) MPI_Finalize();
  }
}

Runtime& Runtime::current() {
  if (!g_current) fail("no axe::Runtime is alive: construct one (axe::Runtime rt(&argc, &argv)) before using DistTensor");
  return *g_current;
}

bool Runtime::failed() const {
  return (transport_ && transport_->failed()) || (backend_ && backend_->failed());
}

void Runtime::barrier() { transport_->barrier("barrier"); }

void Runtime::agree(std::string_view what, const std::string& local_error, std::uint64_t fp,
                    std::string_view description, std::uint64_t* flag) {
  agree(what, local_error, fp, description,
        flag ? std::span<std::uint64_t>(flag, 1) : std::span<std::uint64_t>());
}

void Runtime::agree(std::string_view what, const std::string& local_error, std::uint64_t fp,
                    std::string_view description, std::span<std::uint64_t> flags) {
  // max over ranks of: (size - rank) for failing ranks (-> the lowest failing rank), the
  // fingerprint, and its complement (-> the minimum fingerprint).
  // A failed backend (aborted NCCL communicators) joins the agreement with an error, so every
  // rank raises at once instead of waiting for the dead backend.
  std::string error = local_error;
  if (error.empty() && backend_ && backend_->failed())
    error = "rank " + std::to_string(rank_) + ": the " + std::string(backend_->name()) +
            " backend failed earlier (NCCL error or timeout); the runtime cannot be used any more";
  if (flags.size() > 8) fail(std::string(what) + ": at most 8 agreement flags, " + std::to_string(flags.size()) + " given");
  std::uint64_t v[3 + 8] = {error.empty() ? 0 : static_cast<std::uint64_t>(size_ - rank_), fp, ~fp};
  std::copy(flags.begin(), flags.end(), v + 3);
  transport_->allreduce_max(std::span<std::uint64_t>(v, 3 + flags.size()), std::string(what) + " (agreement)");
  std::copy(v + 3, v + 3 + flags.size(), flags.begin());
  if (v[0] != 0) {
    const int bad = size_ - static_cast<int>(v[0]);
    std::uint64_t len = bad == rank_ ? error.size() : 0;
    transport_->broadcast(std::as_writable_bytes(std::span<std::uint64_t>(&len, 1)), bad, what);
    std::string msg(static_cast<std::size_t>(len), '\0');
    if (bad == rank_) msg = error;
    transport_->broadcast(std::as_writable_bytes(std::span<char>(msg.data(), msg.size())), bad, what);
    if (!error.empty() && bad != rank_)
      fail(std::string(what) + ": " + error + " (rank " + std::to_string(rank_) + "; lowest failing rank " +
           std::to_string(bad) + ")");
    fail(std::string(what) + ": " + msg + " (reported by rank " + std::to_string(bad) + ")");
  }
  if (v[1] != ~v[2]) {
    char buf[80];
    std::snprintf(buf, sizeof buf, "%016llx (ranks range %016llx..%016llx)", static_cast<unsigned long long>(fp),
                  static_cast<unsigned long long>(~v[2]), static_cast<unsigned long long>(v[1]));
    fail(std::string(what) + ": the ranks disagree on the request; rank " + std::to_string(rank_) + " has '" +
         std::string(description) + "', fingerprint " + buf);
  }
}

}  // namespace axe
