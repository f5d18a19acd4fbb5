// NcclComm: bootstrap, cached ncclCommSplit groups, and error / timeout detection.
#include "axe/cuda/nccl_comm.hpp"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <string>
#include <thread>

#include "axe/core/backoff.hpp"
#include "axe/core/error.hpp"
#include "axe/core/tunables.hpp"

namespace axe::cuda {

void throw_nccl_error(ncclResult_t r, const char* expr, const char* file, int line) {
  throw Error(std::string(file) + ":" + std::to_string(line) + ": " + expr +
              " failed: " + ncclGetErrorString(r));
}

ncclDataType_t nccl_type(DType t) {
  switch (t) {
    case DType::F32: return ncclFloat32;
    case DType::F16: return ncclFloat16;
    case DType::BF16: return ncclBfloat16;
    case DType::F64: return ncclFloat64;
    case DType::I32: return ncclInt32;
    case DType::I64: return ncclInt64;
    case DType::U8: return ncclUint8;
  }
  return ncclUint8;
}

ncclRedOp_t nccl_op(ReduceOp op) {
  switch (op) {
    case ReduceOp::Sum:
    case ReduceOp::Avg: return ncclSum;
    case ReduceOp::Prod: return ncclProd;
    case ReduceOp::Max: return ncclMax;
    case ReduceOp::Min: return ncclMin;
  }
  return ncclSum;
}

ncclConfig_t NcclComm::config(bool data) const {
  ncclConfig_t c = NCCL_CONFIG_INITIALIZER;
  c.blocking = data && blocking_ ? 1 : 0;
  return c;
}


NcclComm::NcclComm(const ncclUniqueId& id, int rank, int nranks, int device, double timeout_s)
    : rank_(rank), size_(nranks), device_(device) {
  timeout_ = timeout_s > 0 ? timeout_s : tunable_seconds("AXE_TIMEOUT_S");
  if (rank < 0 || rank >= nranks)
    fail("NcclComm: rank " + std::to_string(rank) + " is outside 0.." + std::to_string(nranks - 1));
  init(id);
}

namespace {

// CUDA graphs (executor.hpp): ranks may capture NCCL calls at different calls, and NCCL forbids
// mixing registered with unregistered buffers across ranks, so its graph-time registration is
// off unless the environment asks for it. Before NCCL's first call in the process, which reads it.
// setenv without overwrite leaves a value already there (the user's, or an earlier call's).
void graph_registration_default() {
  if (tunable_int("AXE_CUDA_GRAPHS") != 0) setenv("NCCL_GRAPH_REGISTER", "0", 0);
}

}  // namespace

ncclUniqueId NcclComm::unique_id() {
  graph_registration_default();
  ncclUniqueId id{};
  AXE_NCCL_CHECK(ncclGetUniqueId(&id));
  return id;
}

void NcclComm::init(const ncclUniqueId& id) {
  graph_registration_default();
  blocking_ = tunable_int("AXE_NCCL_BLOCKING") == 1;
  AXE_CUDA_CHECK(cudaSetDevice(device_));
  ncclConfig_t cfg = config(false);
  const ncclResult_t r = ncclCommInitRankConfig(&world_, size_, id, rank_, &cfg);
  if (r != ncclSuccess && r != ncclInProgress) {
    failed_ = true;
    throw Error("NcclComm: ncclCommInitRankConfig failed on rank " + std::to_string(rank_) + " of " +
                std::to_string(size_) + " (device " + std::to_string(device_) +
                "): " + ncclGetErrorString(r));
  }
  settle(world_, "ncclCommInitRankConfig");
  if (blocking_) data_ = split(0, rank_, "ncclCommSplit (blocking data communicator)");
}

ncclComm_t NcclComm::split(int color, int key, const char* what) {
  ncclConfig_t cfg = config(true);
  ncclComm_t child = nullptr;
  const ncclResult_t r = ncclCommSplit(world_, color, key, &child, &cfg);
  if (r != ncclSuccess && r != ncclInProgress)
    abort_and_throw(std::string(what) + " failed: " + ncclGetErrorString(r));
  settle(world_, what);
  if (color == NCCL_SPLIT_NOCOLOR) return nullptr;
  if (!child) abort_and_throw(std::string(what) + " returned no communicator");
  settle(child, what);
  return child;
}

NcclComm::~NcclComm() {
  cudaSetDevice(device_);
  auto finish = [&](ncclComm_t c) {
    if (!c) return;
    if (failed_) {
      ncclCommAbort(c);
      return;
    }
    // Non-blocking finalize: wait under the deadline, abort if it does not complete.
    ncclCommFinalize(c);
    const auto deadline =
        std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_);
    ncclResult_t st = ncclInProgress;
    while (ncclCommGetAsyncError(c, &st) == ncclSuccess && st == ncclInProgress &&
           std::chrono::steady_clock::now() < deadline)
      std::this_thread::yield();
    if (st != ncclSuccess) {
      ncclCommAbort(c);
      return;
    }
    ncclCommDestroy(c);
  };
  for (auto& [g, c] : groups_) finish(c);
  finish(data_);
  finish(world_);
}

void NcclComm::abort_and_throw(const std::string& message) {
  failed_ = true;
  for (auto& [g, c] : groups_)
    if (c) ncclCommAbort(c);
  groups_.clear();
  if (data_) ncclCommAbort(data_);
  data_ = nullptr;
  if (world_) ncclCommAbort(world_);
  world_ = nullptr;
  throw Error("NCCL rank " + std::to_string(rank_) + " of " + std::to_string(size_) + ": " + message +
              "; communicators aborted");
}

void NcclComm::settle(ncclComm_t comm, const char* what) {
  if (failed_) throw Error(std::string("NcclComm: ") + what + " after an earlier failure");
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_);
  while (true) {
    ncclResult_t st = ncclSuccess;
    const ncclResult_t r = ncclCommGetAsyncError(comm, &st);
    if (r != ncclSuccess)
      abort_and_throw(std::string(what) + ": ncclCommGetAsyncError failed: " + ncclGetErrorString(r));
    if (st == ncclSuccess) return;
    if (st != ncclInProgress)
      abort_and_throw(std::string(what) + " failed: " + ncclGetErrorString(st) + " (" +
                      ncclGetLastError(comm) + ")");
    if (std::chrono::steady_clock::now() > deadline)
      abort_and_throw(std::string(what) + " timed out after " + std::to_string(timeout_) +
                      " s (AXE_TIMEOUT_S)");
    std::this_thread::yield();
  }
}

void NcclComm::wait(cudaEvent_t event, const char* what) {
  if (failed_) throw Error(std::string("NcclComm: ") + what + " after an earlier failure");
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_);
  auto check = [&](ncclComm_t c) {
    if (!c) return;
    ncclResult_t st = ncclSuccess;
    if (ncclCommGetAsyncError(c, &st) != ncclSuccess || (st != ncclSuccess && st != ncclInProgress))
      abort_and_throw(std::string(what) + " failed: " + ncclGetErrorString(st) + " (" +
                      ncclGetLastError(c) + ")");
  };
  Backoff backoff;
  while (true) {
    const cudaError_t e = cudaEventQuery(event);
    if (e == cudaSuccess) return;
    if (e != cudaErrorNotReady)
      abort_and_throw(std::string(what) + ": CUDA error " + cudaGetErrorString(e));
    check(world_);
    check(data_);
    for (auto& [g, c] : groups_) check(c);
    if (std::chrono::steady_clock::now() > deadline)
      abort_and_throw(std::string(what) + " timed out after " + std::to_string(timeout_) +
                      " s (AXE_TIMEOUT_S)");
    backoff.pause();
  }
}

void NcclComm::allreduce_max(std::vector<std::int64_t>& values, const char* what) {
  if (failed_) throw Error(std::string("NcclComm: ") + what + " after an earlier failure");
  if (values.empty()) return;
  AXE_CUDA_CHECK(cudaSetDevice(device_));
  const std::size_t n = values.size();
  std::int64_t* d = nullptr;
  cudaStream_t s = nullptr;
  cudaEvent_t ev = nullptr;
  AXE_CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  AXE_CUDA_CHECK(cudaEventCreateWithFlags(&ev, cudaEventDisableTiming));
  AXE_CUDA_CHECK(cudaMalloc(&d, n * sizeof(std::int64_t)));
  auto release = [&] {
    cudaFree(d);
    cudaEventDestroy(ev);
    cudaStreamDestroy(s);
  };
  try {
    AXE_CUDA_CHECK(cudaMemcpyAsync(d, values.data(), n * sizeof(std::int64_t), cudaMemcpyHostToDevice, s));
    AXE_NCCL_CHECK(ncclAllReduce(d, d, n, ncclInt64, ncclMax, world_, s));
    settle(world_, what);
    AXE_CUDA_CHECK(cudaEventRecord(ev, s));
    wait(ev, what);
    AXE_CUDA_CHECK(cudaMemcpy(values.data(), d, n * sizeof(std::int64_t), cudaMemcpyDeviceToHost));
  } catch (...) {
    release();
    throw;
  }
  release();
}

ncclComm_t NcclComm::find_group(std::span<const std::int64_t> group) const {
  auto it = groups_.find(std::vector<std::int64_t>(group.begin(), group.end()));
  return it == groups_.end() ? nullptr : it->second;
}

void NcclComm::ensure_groups(const std::vector<std::vector<std::int64_t>>& groups) {
  if (groups.empty()) return;
  if (failed_) throw Error("NcclComm::ensure_groups after an earlier failure");
  AXE_CUDA_CHECK(cudaSetDevice(device_));
  // Which steps need a split anywhere: one max all-reduce of the flags over the world. A group
  // listed again (the chunks of a planner-chunked step share their group) asks only once: the
  // split of its first listing serves the others, and no rank then calls ncclCommSplit with
  // NCCL_SPLIT_NOCOLOR once per chunk.
  const std::size_t n = groups.size();
  std::vector<std::int64_t> any(n);
  for (std::size_t i = 0; i < n; ++i)
    any[i] = !groups[i].empty() && !find_group(groups[i]) &&
                     std::find(groups.begin(), groups.begin() + static_cast<std::ptrdiff_t>(i), groups[i]) ==
                         groups.begin() + static_cast<std::ptrdiff_t>(i)
                 ? 1
                 : 0;
  allreduce_max(any, "ncclAllReduce (group flags)");
  for (std::size_t i = 0; i < n; ++i) {
    if (!any[i]) continue;
    const auto& g = groups[i];
    int color = NCCL_SPLIT_NOCOLOR, key = 0;
    if (!g.empty() && !find_group(g)) {
      auto it = std::find(g.begin(), g.end(), static_cast<std::int64_t>(rank_));
      if (it == g.end())
        fail("NcclComm::ensure_groups: rank " + std::to_string(rank_) +
             " is not a member of its own step group");
      color = static_cast<int>(*std::min_element(g.begin(), g.end()));
      key = static_cast<int>(it - g.begin());
    }
    if (ncclComm_t child = split(color, key, "ncclCommSplit")) groups_[g] = child;
  }
}

ncclComm_t NcclComm::group(std::span<const std::int64_t> group) {
  if (ncclComm_t c = find_group(group)) return c;
  ensure_groups({std::vector<std::int64_t>(group.begin(), group.end())});
  return find_group(group);
}

}  // namespace axe::cuda
