// The one table of AXE_* environment variables, and the one place that reads the environment.
#include "axe/core/tunables.hpp"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <limits>

#include "axe/core/bytes.hpp"
#include "axe/core/error.hpp"

namespace axe {

namespace {

constexpr std::int64_t kNoMax = std::numeric_limits<std::int64_t>::max();
using K = TunableKind;

// Adding a tunable: one row here, then read it with tunable_int / tunable_seconds / ... where it
// is used, and regenerate the README's table with `axe tunables --markdown`.
constexpr Tunable kTable[] = {
    {"AXE_BACKEND", K::Text, "", 0, 0, "runtime",
     "`host` or `cuda`; empty: `cuda` when built in and a GPU is visible, else `host`"},
    {"AXE_TIMEOUT_S", K::Seconds, "300", 0, 1000000, "runtime",
     "seconds any wait on a peer may take before it fails on every rank with an error"},
    {"AXE_LOCAL_RANK", K::Integer, "", 0, 1 << 20, "runtime",
     "local rank on the node (GPU index) when the launcher sets neither `OMPI_COMM_WORLD_LOCAL_RANK` nor "
     "`SLURM_LOCALID` (nor torchrun's `LOCAL_RANK`)"},
    {"AXE_RENDEZVOUS_PORT", K::Integer, "", 1, 65535, "runtime",
     "under torchrun without MPI: the TCP port rank 0 listens on for axe's rendezvous; empty: `MASTER_PORT` + 1"},
    {"AXE_AGREE_EACH_CALL", K::Integer, "0", 0, 1, "runtime",
     "1: every `redistribute` first agrees with every rank on the request (a rank asking for something else "
     "is named at once); 0: a request every rank agreed on before skips it (a mismatch then surfaces as a "
     "timeout)"},
    {"AXE_CALIBRATE", K::Path, "", 0, 0, "runtime",
     "cost-model calibration file: loaded when it matches this world (backend, ranks, mesh, sizes), else "
     "measured at start-up (about a second) and written there; empty: no calibration"},
    {"AXE_COST_MODEL", K::Path, "", 0, 0, "runtime",
     "cost-model file the planner uses (`KIND [AXIS,...] ALPHA_US GBPS` lines)"},
    {"AXE_CALIBRATE_MESH", K::Text, "", 0, 0, "runtime",
     "mesh of the world (e.g. `x=2,y=2`) whose single-axis groups the calibration also measures; empty: the "
     "world only"},
    {"AXE_CALIBRATE_SIZES", K::ByteList, "", 0, 0, "runtime",
     "per-rank sizes the calibration times (e.g. `64K,16M`); empty: 64K,2M,64M on GPUs, 4K,64K,256K on the "
     "host backend"},
    {"AXE_NCCL_BLOCKING", K::Integer, "1", 0, 1, "cuda",
     "1: blocking data communicators (about 20 us less host time per NCCL call; a peer dying while NCCL "
     "connects can hang the host); 0: every communicator non-blocking (every host wait bounded)"},
    {"AXE_PEER_TRANSPORT", K::Integer, "1", 0, 2, "cuda",
     "who moves data between ranks: 0 NCCL only (one GPU per rank); 1 the peer transport (CUDA IPC) when "
     "ranks share a GPU, else NCCL, and on one node each step on the cheaper of the two when the cost model "
     "has peer lines; 2 the peer transport whenever all ranks are on one node"},
    {"AXE_PEER_UNPACK", K::Integer, "1", 0, 1, "cuda",
     "peer transport: 1 a receiver unpacks a message that is not one contiguous range of its buffer straight "
     "from the sender's staging (one pass); 0 it copies the message into its own staging, then unpacks it"},
    {"AXE_PEER_DIRECT", K::Integer, "1", 0, 1, "cuda",
     "peer transport: 1 a receiver copies a message of a non-reducing, unchunked step that reads the "
     "plan's source or an intermediate buffer straight out of the sender's buffer, in both layouts (no "
     "pack, no staging; for the source the sender's host posts its IPC handle, the receiver maps it once "
     "per allocation); 0 every message is packed into the sender's staging first"},
    {"AXE_CUDA_GRAPHS", K::Integer, "1", 0, 1, "cuda",
     "1: the second and later runs of a cached plan on the same buffers launch one CUDA graph instead of "
     "each kernel and NCCL call (not plans with peer-transport steps; sets NCCL_GRAPH_REGISTER=0 unless it is "
     "set); 0: every run step by step"},
    {"AXE_PEER_CHUNK_BYTES", K::Bytes, "0", 0, kNoMax, "cuda",
     "peer transport: a non-reducing step that sends or receives more than this many bytes on some rank runs "
     "in chunks of about this size (at most 16), packing a chunk while the receivers pull the one before; 0: "
     "only when its staging would exceed the destination (each chunk cost about 10 us more than it saved on 2 "
     "H100s)"},
    {"AXE_PIPELINE_CHUNKS", K::Integer, "1", 1, 16, "cuda",
     "at most this many chunks a step with large pack/unpack work is pipelined in (1: off; it was slower on "
     "2 H200s)"},
    {"AXE_PIPELINE_MIN_BYTES", K::Bytes, "8M", 1, kNoMax, "cuda", "pack + unpack bytes from which a step is pipelined"},
    {"AXE_PIPELINE_BLOCKS_PER_SM", K::Integer, "4", 1, 8, "cuda",
     "blocks per SM of the box kernels inside a pipelined step"},
    {"AXE_COPY_ENGINE_MIN", K::Bytes, "2M", 0, kNoMax, "cuda",
     "boxes of at least this many bytes may go to the copy engines (`cudaMemcpy2DAsync`), except in plans "
     "that run as CUDA graphs; 0: never"},
    {"AXE_COPY_ENGINE_UNIT", K::Integer, "8", 1, 17, "cuda",
     "2-D boxes go to the copy engines only when the box kernel would move them in units under this many "
     "bytes (17: any); contiguous runs always"},
    {"AXE_GENERATED_COPY_MIN_RUN", K::Bytes, "128", 0, kNoMax, "cuda",
     "strided boxes the box kernel would copy go through the copy kernel generated from a thread layout "
     "when their runs have at least this many bytes and everything is 16-byte aligned (1.8-3.3 points of "
     "memcpy ahead of the box kernel from 128-byte runs on an H100, behind below); 0: never"},
    {"AXE_REALIGN_MIN_ROW", K::Bytes, "64", 0, kNoMax, "cuda",
     "copied rows of at least this many bytes that the box kernel could only move in 1-, 2- or 4-byte units "
     "(odd lengths, pitches or offsets: uneven shards) go through the generated copy in 16-byte words of the "
     "destination row; 0: never"},
    {"AXE_OVERLAP_MIN", K::Bytes, "2M", 0, kNoMax, "cuda",
     "a step's local copies of at least this many bytes run on a side stream during its NCCL transfer, when "
     "the transfer has one peer (2-member all-gather, send/recv with one peer); 0: never"},
    {"AXE_KERNEL_CACHE_DIR", K::Path, "", 0, 0, "cuda",
     "directory that keeps the CUBINs of run-time compiled (NVRTC) kernels across processes, one file per "
     "source, architecture and NVRTC version; empty: compiled once per process"},
    {"AXE_TEST_SEED", K::Integer, "20260121", 0, kNoMax, "tests", "seed of the seeded random property tests"},
    {"AXE_TESTDATA_DIR", K::Path, "", 0, 0, "tests", "shared test data; empty: `../shared/testdata`"},
    {"AXE_CUTE_VECTORS", K::Path, "", 0, 0, "tests",
     "CuTe reference vectors; empty: `cute_reference_vectors.json` in the test data"},
    {"AXE_CLI", K::Path, "", 0, 0, "tests",
     "Python tests: the `axe` calculator they compare with (CTest sets it); empty: `axe` on `PATH`, else skipped"},
    {"AXE_PYTHON", K::Path, "", 0, 0, "tests",
     "README check: the interpreter that runs the README's Python (CTest sets it when the extension is built); "
     "empty: skipped"},
    {"AXE_TORCH_PYTHON", K::Path, "", 0, 0, "tests",
     "torch/CUDA Python tests (`python_torch_cuda_np2`): the interpreter with torch that runs them (it must import "
     "the build's extension: configure with `-DPython_EXECUTABLE` at it); empty: the build's Python"},
};

[[noreturn]] void bad_value(const Tunable& t, const std::string& text, const std::string& why) {
  fail(std::string(t.name) + "='" + text + "' is not " + why);
}

std::string range_text(const Tunable& t) {
  if (t.max == kNoMax) return "at least " + std::to_string(t.min);
  return "in " + std::to_string(t.min) + ".." + std::to_string(t.max);
}

// The text's value for tunable t (t's kind), range-checked.
std::int64_t parse_int(const Tunable& t, const std::string& text) {
  std::int64_t x = 0;
  if (t.kind == K::Bytes) {
    try {
      x = parse_bytes(text, t.name);
    } catch (const Error& e) {
      bad_value(t, text, std::string("a byte count (") + e.what() + ")");
    }
  } else {
    errno = 0;
    char* end = nullptr;
    const long long v = std::strtoll(text.c_str(), &end, 10);
    if (end == text.c_str() || *end != '\0' || errno == ERANGE)
      bad_value(t, text, "an integer (expected " + range_text(t) + ")");
    x = v;
  }
  if (x < t.min || x > t.max) bad_value(t, text, "in range (expected " + range_text(t) + ")");
  return x;
}

double parse_seconds(const Tunable& t, const std::string& text) {
  char* end = nullptr;
  const double s = std::strtod(text.c_str(), &end);
  if (end == text.c_str() || *end != '\0' || !std::isfinite(s) || !(s > 0) || s > static_cast<double>(t.max))
    bad_value(t, text, "a number of seconds (expected > 0 and at most " + std::to_string(t.max) + ")");
  return s;
}

const Tunable& typed(std::string_view name, std::initializer_list<TunableKind> kinds) {
  const Tunable& t = tunable_info(name);
  for (auto k : kinds)
    if (t.kind == k) return t;
  fail("tunable " + std::string(name) + " is a " + std::string(to_string(t.kind)) + ", not read that way");
}

}  // namespace

std::string_view to_string(TunableKind k) {
  switch (k) {
    case K::Text: return "text";
    case K::Path: return "path";
    case K::Integer: return "integer";
    case K::Bytes: return "bytes";
    case K::ByteList: return "byte list";
    case K::Seconds: return "seconds";
  }
  return "?";
}

std::span<const Tunable> tunables() { return kTable; }

const Tunable& tunable_info(std::string_view name) {
  for (const auto& t : kTable)
    if (t.name == name) return t;
  fail("tunable '" + std::string(name) + "' is not declared (src/core/tunables.cpp)");
}

std::optional<std::string> environment(std::string_view name) {
  const char* v = std::getenv(std::string(name).c_str());
  if (!v || !*v) return std::nullopt;
  return std::string(v);
}

bool tunable_set(std::string_view name) {
  tunable_info(name);
  return environment(name).has_value();
}

std::string tunable(std::string_view name) {
  const Tunable& t = tunable_info(name);
  return environment(name).value_or(std::string(t.default_value));
}

std::int64_t tunable_int(std::string_view name) {
  const Tunable& t = typed(name, {K::Integer, K::Bytes});
  const std::string text = tunable(name);
  if (text.empty()) fail("tunable " + std::string(name) + " has no value and no default");
  return parse_int(t, text);
}

double tunable_seconds(std::string_view name) {
  const Tunable& t = typed(name, {K::Seconds});
  return parse_seconds(t, tunable(name));
}

std::vector<std::int64_t> tunable_byte_list(std::string_view name) {
  const Tunable& t = typed(name, {K::ByteList});
  const std::string text = tunable(name);
  if (text.empty()) return {};
  try {
    return parse_byte_list(text, t.name);
  } catch (const Error& e) {
    bad_value(t, text, std::string("a list of byte counts (") + e.what() + ")");
  }
}

void check_tunables() {
  for (const auto& t : kTable) {
    if (!environment(t.name)) continue;
    switch (t.kind) {
      case K::Integer:
      case K::Bytes: tunable_int(t.name); break;
      case K::Seconds: tunable_seconds(t.name); break;
      case K::ByteList: tunable_byte_list(t.name); break;
      case K::Text:
      case K::Path: break;
    }
  }
}

std::string tunables_markdown() {
  std::string s = "| variable | kind | default | meaning |\n|---|---|---|---|\n";
  for (const auto& t : kTable) {
    s += "| `" + std::string(t.name) + "` | " + std::string(to_string(t.kind));
    if (t.kind == K::Integer || t.kind == K::Bytes) s += ", " + range_text(t);
    s += " | " + (t.default_value.empty() ? std::string() : "`" + std::string(t.default_value) + "`") + " | ";
    if (t.scope != "runtime") s += std::string(t.scope) + ": ";
    s += std::string(t.doc) + " |\n";
  }
  return s;
}

}  // namespace axe
