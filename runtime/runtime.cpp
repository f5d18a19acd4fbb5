// Runtime bootstrap: MPI, local rank, tunables, backend choice, collective agreement.
#include "axe/runtime/runtime.hpp"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <utility>
#include <vector>

#include "axe/core/backoff.hpp"
#include "axe/core/error.hpp"
#include "axe/runtime/mpi_transport.hpp"
#include "axe/runtime/tcp_control.hpp"

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

// AXE_TIMEOUT_S's declared default, in seconds.
double default_timeout_s() {
  return std::strtod(std::string(tunable_info("AXE_TIMEOUT_S").default_value).c_str(), nullptr);
}

// "rank R: " + message, unless the message already starts so (transport errors name their rank).
std::string with_rank(int rank, const std::string& message) {
  const std::string prefix = "rank " + std::to_string(rank) + ": ";
  return message.rfind(prefix, 0) == 0 ? message : prefix + message;
}

// The backend named `want` ("" or "auto": cuda where available, else host); throws naming it.
BackendEntry choose_backend(const std::string& want, int rank) {
  register_builtin();
  std::lock_guard<std::mutex> g(registry_mu);
  auto& reg = registry();
  if (want.empty() || want == "auto") {
    auto it = reg.find("cuda");
    return it != reg.end() && it->second.available() ? it->second : reg.at("host");
  }
  if (auto it = reg.find(want); it != reg.end()) {
    if (!it->second.available())
      fail("AXE_BACKEND=" + want + ": the backend is built in but cannot run here (no device visible to rank " +
           std::to_string(rank) + ")");
    return it->second;
  }
  if (want == "cuda")
    fail("AXE_BACKEND=cuda: this build of axe has no CUDA backend (configured without a CUDA toolkit); "
         "use AXE_BACKEND=host");
  std::string names;
  for (const auto& [k, e] : reg) names += (names.empty() ? "" : ", ") + k;
  fail("AXE_BACKEND='" + want + "' is not a backend; known: " + names);
}

// MPI_Finalize at exit (once), unless the program finalized MPI itself.
void finalize_mpi_at_exit() {
  static std::once_flag once;
  std::call_once(once, [] {
    std::atexit([] {
      int initialized = 0, finalized = 0;
      MPI_Initialized(&initialized);
      MPI_Finalized(&finalized);
      if (initialized && !finalized) MPI_Finalize();
    });
  });
}

// Waits for `req` until `timeout_s` has passed; false on expiry (the request is abandoned).
bool wait_bounded(MPI_Request& req, double timeout_s) {
  using clock = std::chrono::steady_clock;
  const auto deadline = clock::now() + std::chrono::duration<double>(timeout_s);
  Backoff backoff;
  while (true) {
    int done = 0;
    AXE_MPI_CHECK(MPI_Test(&req, &done, MPI_STATUS_IGNORE));
    if (done) return true;
    if (clock::now() > deadline) return false;
    backoff.pause();
  }
}

// The start-up error of every rank ("" where fine) as one message: the failing ranks grouped by
// message, in order of their lowest rank.
std::string startup_failure(const std::vector<std::string>& errors) {
  std::vector<std::pair<std::string, std::vector<int>>> groups;
  int failing = 0;
  for (std::size_t r = 0; r < errors.size(); ++r) {
    if (errors[r].empty()) continue;
    ++failing;
    const std::string& m = errors[r];
    auto it = std::find_if(groups.begin(), groups.end(), [&](const auto& g) { return g.first == m; });
    if (it == groups.end()) groups.push_back({m, {static_cast<int>(r)}});
    else it->second.push_back(static_cast<int>(r));
  }
  auto ranks_text = [](const std::vector<int>& v) {
    std::string s = v.size() == 1 ? "rank " : "ranks ";
    for (std::size_t i = 0; i < v.size() && i < 16; ++i) s += (i ? "," : "") + std::to_string(v[i]);
    if (v.size() > 16) s += ",...";
    return s;
  };
  std::string msg = "axe start-up failed on " + std::to_string(failing) + " of " + std::to_string(errors.size()) +
                    " ranks: ";
  for (std::size_t i = 0; i < groups.size() && i < 4; ++i)
    msg += (i ? "; " : "") + ranks_text(groups[i].second) + ": " + groups[i].first;
  if (groups.size() > 4) msg += "; and " + std::to_string(groups.size() - 4) + " other messages";
  return msg;
}

// The first agreement of a Runtime, on MPI_COMM_WORLD, before any blocking collective: every rank
// passes its start-up error ("" when fine). When any rank has one, every rank throws the same
// axe::Error naming the failing ranks and their messages (ranks with the same message grouped):
//   axe start-up failed on 1 of 4 ranks: rank 1: AXE_TIMEOUT_S='abc' is not a number of seconds (...)
// Each wait is bounded by timeout_s; on expiry `abandoned` is set (MPI cannot be finalized) and
// this rank throws a timeout error.
void startup_agreement(int rank, int size, double timeout_s, const std::string& local_error, bool& abandoned) {
  char secs[32];
  std::snprintf(secs, sizeof secs, "%g", timeout_s);
  auto wait = [&](MPI_Request& req) {
    if (wait_bounded(req, timeout_s)) return;
    abandoned = true;
    fail("rank " + std::to_string(rank) + ": start-up agreement (axe::Runtime) timed out after " + secs +
         " s (AXE_TIMEOUT_S); a peer exited, failed or is stuck before constructing its axe::Runtime" +
         (local_error.empty() ? "" : "; this rank's own start-up error: " + local_error));
  };
  std::int64_t failing = local_error.empty() ? 0 : 1;
  MPI_Request req;
  AXE_MPI_CHECK(MPI_Iallreduce(MPI_IN_PLACE, &failing, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD, &req));
  wait(req);
  if (failing == 0) return;
  // Only on failure: every rank's message (at most 1000 characters each).
  const std::string mine = local_error.substr(0, 1000);
  int len = static_cast<int>(mine.size());
  const auto n = static_cast<std::size_t>(size);
  std::vector<int> lens(n), displs(n);
  AXE_MPI_CHECK(MPI_Iallgather(&len, 1, MPI_INT, lens.data(), 1, MPI_INT, MPI_COMM_WORLD, &req));
  wait(req);
  int total = 0;
  for (std::size_t i = 0; i < n; ++i) {
    displs[i] = total;
    total += lens[i];
  }
  std::string all(static_cast<std::size_t>(total), '\0');
  AXE_MPI_CHECK(MPI_Iallgatherv(mine.data(), len, MPI_CHAR, all.data(), lens.data(), displs.data(), MPI_CHAR,
                                MPI_COMM_WORLD, &req));
  wait(req);
  std::vector<std::string> errors(n);
  for (std::size_t r = 0; r < n; ++r)
    errors[r] = all.substr(static_cast<std::size_t>(displs[r]), static_cast<std::size_t>(lens[r]));
  fail(startup_failure(errors));
}

// Under torchrun without MPI: WORLD_SIZE set and not 1 (one process is MPI's singleton), no MPI
// launcher's rank variables, and MPI not initialised.
bool torchrun_without_mpi() {
  for (const char* v : {"OMPI_COMM_WORLD_SIZE", "PMI_RANK", "PMI_SIZE", "PMIX_RANK"})
    if (environment(v)) return false;
  const auto world = environment("WORLD_SIZE");
  if (!world || *world == "1") return false;
  int inited = 0;
  MPI_Initialized(&inited);
  return !inited;
}

// A torchrun variable as an integer in [lo, hi]; throws naming it.
int torchrun_int(const char* name, int lo, int hi) {
  const std::string v = environment(name).value_or("");
  char* end = nullptr;
  const long x = std::strtol(v.c_str(), &end, 10);
  if (v.empty() || *end != '\0' || x < lo || x > hi)
    fail(std::string(name) + "='" + v + "' is not an integer in " + std::to_string(lo) + ".." + std::to_string(hi) +
         " (torchrun's environment)");
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
  if (torchrun_without_mpi()) {
    start_tcp(options);
    return;
  }
  int inited = 0;
  MPI_Initialized(&inited);
  if (!inited) {
    int provided = 0;
    AXE_MPI_CHECK(MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided));
    owns_mpi_ = true;
  }
  bool abandoned = false;  // a start-up wait timed out: MPI cannot be finalized
  try {
    MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
    MPI_Comm_size(MPI_COMM_WORLD, &size_);
    // Everything one rank alone can fail on (the environment, the launcher's local rank, the
    // backend's name) is checked before the first collective, and the ranks agree on the outcome
    // in a bounded wait: a rank that failed here and went to MPI_Finalize would otherwise leave
    // the others in the unbounded MPI_Comm_split_type below.
    std::string local_error;
    int lr = options.local_rank;
    BackendEntry chosen;
    try {
      check_tunables();
      timeout_s_ = options.timeout_s > 0 ? options.timeout_s : tunable_seconds("AXE_TIMEOUT_S");
      if (lr < 0) lr = local_rank_env("OMPI_COMM_WORLD_LOCAL_RANK");
      if (lr < 0) lr = local_rank_env("SLURM_LOCALID");
      if (lr < 0 && tunable_set("AXE_LOCAL_RANK")) lr = static_cast<int>(tunable_int("AXE_LOCAL_RANK"));
      chosen = choose_backend(options.backend.empty() ? tunable("AXE_BACKEND") : options.backend, rank_);
    } catch (const std::exception& e) {
      local_error = e.what();
      // This first agreement is bounded by the default timeout when this rank's own is the bad value.
      if (!(timeout_s_ > 0)) timeout_s_ = default_timeout_s();
    }
    startup_agreement(rank_, size_, timeout_s_, local_error, abandoned);
    // Local size from a shared-memory split; local rank from the launcher when it says so.
    MPI_Comm node;
    AXE_MPI_CHECK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank_, MPI_INFO_NULL, &node));
    MPI_Comm_rank(node, &local_rank_);
    MPI_Comm_size(node, &local_size_);
    MPI_Comm_free(&node);
    if (lr >= 0) local_rank_ = lr;
    transport_ = std::make_unique<MpiTransport>(MPI_COMM_WORLD, timeout_s_);
    control_ = transport_.get();
    start_backend(chosen, options);
  } catch (...) {
    if (g_current == this) g_current = previous_;
    // A start-up step that timed out on a peer (the calibration communicates) leaves MPI unable
    // to finalize: end the job as ~Runtime does, after saying why.
    const bool bad = failed() || abandoned;
    if (owns_mpi_ && bad) {
      try {
        throw;
      } catch (const std::exception& e) {
        std::fprintf(stderr, "axe: %s\n", with_rank(rank_, e.what()).c_str());
      } catch (...) {
      }
      MPI_Abort(MPI_COMM_WORLD, 1);
    }
    backend_.reset();
    transport_.reset();
    // Every rank throws this error alike; MPI is finalized at exit, not here. Finalizing now would
    // let one rank exit (non-zero) while another is still on its way to report the error, and
    // mpirun ends the job at the first non-zero exit: MPI_Finalize's fence at exit comes after
    // every rank's report.
    if (owns_mpi_) finalize_mpi_at_exit();
    throw;
  }
}

// Under torchrun without MPI (see runtime.hpp): the same start-up as with MPI, over a TCP
// rendezvous at rank 0. RANK and WORLD_SIZE must be right on every rank (they are the
// rendezvous); every other start-up error is agreed on and raised on every rank alike.
void Runtime::start_tcp(const RuntimeOptions& options) {
  rank_ = torchrun_int("RANK", 0, 1 << 20);
  size_ = torchrun_int("WORLD_SIZE", 1, 1 << 20);
  const auto master = environment("MASTER_ADDR");
  if (!master || master->empty())
    fail("WORLD_SIZE=" + std::to_string(size_) +
         " without an MPI launcher, but MASTER_ADDR is not set: launch with torchrun (which sets RANK, WORLD_SIZE, "
         "MASTER_ADDR and MASTER_PORT) or with mpirun (launch/axe-run -np N ...)");
  if (rank_ >= size_)
    fail("RANK=" + std::to_string(rank_) + " is not a rank of WORLD_SIZE=" + std::to_string(size_) +
         " (torchrun's environment)");
  std::string local_error;
  int lr = options.local_rank, port = 0;
  BackendEntry chosen;
  try {
    check_tunables();
    timeout_s_ = options.timeout_s > 0 ? options.timeout_s : tunable_seconds("AXE_TIMEOUT_S");
  } catch (const std::exception& e) {
    local_error = e.what();
    timeout_s_ = default_timeout_s();
  }
  // The port is the rendezvous itself: a bad one fails here, on the ranks that have it (the
  // others' rendezvous then times out naming the ranks that never came).
  port = tunable_set("AXE_RENDEZVOUS_PORT") ? static_cast<int>(tunable_int("AXE_RENDEZVOUS_PORT"))
                                            : torchrun_int("MASTER_PORT", 1, 65534) + 1;
  if (local_error.empty()) {
    try {
      if (lr < 0) lr = local_rank_env("LOCAL_RANK");
      if (lr < 0 && tunable_set("AXE_LOCAL_RANK")) lr = static_cast<int>(tunable_int("AXE_LOCAL_RANK"));
      chosen = choose_backend(options.backend.empty() ? tunable("AXE_BACKEND") : options.backend, rank_);
      if (chosen.name == "host")
        fail("the host backend moves its data over MPI, and this job was started by torchrun without an MPI "
             "launcher: use the cuda backend (GPUs, AXE_BACKEND=cuda), or launch with mpirun (launch/axe-run -np N ...)");
    } catch (const std::exception& e) {
      local_error = e.what();
    }
  }
  tcp_ = std::make_unique<TcpControl>(TcpRendezvous{*master, port, rank_, size_, timeout_s_});
  control_ = tcp_.get();
  try {
    // One all-gather: every rank's host name (the local ranks) and start-up error.
    char host[256] = {};
    gethostname(host, sizeof host - 1);
    const std::string mine = std::string(host) + '\0' + local_error.substr(0, 1000);
    const auto all = control_->allgather(std::as_bytes(std::span<const char>(mine.data(), mine.size())), "start-up agreement");
    std::vector<std::string> hosts, errors;
    for (const auto& b : all) {
      const std::string t(reinterpret_cast<const char*>(b.data()), b.size());
      const std::size_t z = t.find('\0');
      hosts.push_back(t.substr(0, z));
      errors.push_back(z == std::string::npos ? std::string() : t.substr(z + 1));
    }
    if (std::any_of(errors.begin(), errors.end(), [](const std::string& e) { return !e.empty(); }))
      fail(startup_failure(errors));
    local_rank_ = 0;
    local_size_ = 0;
    for (int r = 0; r < size_; ++r)
      if (hosts[static_cast<std::size_t>(r)] == hosts[static_cast<std::size_t>(rank_)]) {
        if (r < rank_) ++local_rank_;
        ++local_size_;
      }
    if (lr >= 0) local_rank_ = lr;
    start_backend(chosen, options);
  } catch (...) {
    if (g_current == this) g_current = previous_;
    backend_.reset();
    tcp_.reset();
    control_ = nullptr;
    throw;
  }
}

// The last step of either start-up: this runtime becomes current, its backend and cost model.
void Runtime::start_backend(const BackendEntry& chosen, const RuntimeOptions& options) {
  previous_ = g_current;
  g_current = this;
  backend_ = chosen.make(*this);
  init_cost_model(options);
}

MpiTransport& Runtime::transport() {
  if (!transport_)
    fail("this operation needs MPI (the host backend's transport), and the job was started by torchrun without "
         "an MPI launcher; launch with mpirun (launch/axe-run -np N ...)");
  return *transport_;
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
  try {
    if (!failed()) finish_agreements();  // bounded; its error was the caller's to see
  } catch (const std::exception&) {
  }
  const bool bad = failed();
  // After a timeout a peer may never answer: MPI_Finalize would block on it, and the backend's
  // stream may wait for work of peers that will never come (its teardown would wait too). The
  // error was already thrown (and reported) on this rank; the job is ended through the launcher
  // with MPI_Abort first, which mpirun handles reliably (a plain exit without MPI_Finalize can
  // leave Open MPI 4.1's mpirun hanging when a peer waits in MPI_Finalize).
  if (owns_mpi_ && bad) MPI_Abort(MPI_COMM_WORLD, 1);
  backend_.reset();
  transport_.reset();
  tcp_.reset();
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
  return (control_ && control_->control_failed()) || (backend_ && backend_->failed());
}

void Runtime::barrier() {
  finish_agreements();
  control_->barrier("barrier");
}

void fail_disagreement(std::string_view what, int rank, std::string_view description, std::uint64_t fp,
                       std::uint64_t lo, std::uint64_t hi) {
  char buf[80];
  std::snprintf(buf, sizeof buf, "%016llx (ranks range %016llx..%016llx)", static_cast<unsigned long long>(fp),
                static_cast<unsigned long long>(lo), static_cast<unsigned long long>(hi));
  fail(std::string(what) + ": the ranks disagree on the request; rank " + std::to_string(rank) + " has '" +
       std::string(description) + "', fingerprint " + buf);
}

void Runtime::agree_later(std::string_view what, std::uint64_t fp, std::string description) {
  if (!transport_) return agree(what, "", fp, description);
  transport_->finish_check();
  const std::uint64_t v[MpiTransport::kCheckValues] = {0, fp, ~fp};
  transport_->start_check(v, std::string(what), std::move(description));
}

void Runtime::finish_agreements() {
  if (transport_) transport_->finish_check();
}

void Runtime::poll_agreements() {
  if (transport_) transport_->poll_check();
}

void Runtime::agree(std::string_view what, const std::string& local_error, std::uint64_t fp,
                    std::string_view description, std::uint64_t* flag) {
  agree(what, local_error, fp, description,
        flag ? std::span<std::uint64_t>(flag, 1) : std::span<std::uint64_t>());
}

void Runtime::agree(std::string_view what, const std::string& local_error, std::uint64_t fp,
                    std::string_view description, std::span<std::uint64_t> flags) {
  finish_agreements();
  ++agreements_;
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
  // Always all 11 values (unused flags 0), the shape of agree_later's background check, so that
  // a rank's agreement and another rank's check match and both see a disagreement.
  static_assert(std::size(v) == MpiTransport::kCheckValues);
  control_->allreduce_max(std::span<std::uint64_t>(v), std::string(what) + " (agreement)");
  std::copy(v + 3, v + 3 + flags.size(), flags.begin());
  if (v[0] != 0) {
    const int bad = size_ - static_cast<int>(v[0]);
    std::uint64_t len = bad == rank_ ? error.size() : 0;
    control_->broadcast(std::as_writable_bytes(std::span<std::uint64_t>(&len, 1)), bad, what);
    std::string msg(static_cast<std::size_t>(len), '\0');
    if (bad == rank_) msg = error;
    control_->broadcast(std::as_writable_bytes(std::span<char>(msg.data(), msg.size())), bad, what);
    if (!error.empty() && bad != rank_)
      fail(std::string(what) + ": " + error + " (rank " + std::to_string(rank_) + "; lowest failing rank " +
           std::to_string(bad) + ")");
    fail(std::string(what) + ": " + msg + " (reported by rank " + std::to_string(bad) + ")");
  }
  if (v[1] != ~v[2]) fail_disagreement(what, rank_, description, fp, ~v[2], v[1]);
}

}  // namespace axe
