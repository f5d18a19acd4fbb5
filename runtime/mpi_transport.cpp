// MPI transport: non-blocking point-to-point and collectives, polled against a deadline so that a
// dead or stuck peer becomes an axe::Error on this rank instead of a hang.
#include "axe/runtime/mpi_transport.hpp"

#include <algorithm>
#include <chrono>
#include <climits>
#include <cstdio>
#include <cstring>
#include <thread>
#include <vector>

#include "axe/core/backoff.hpp"
#include "axe/core/error.hpp"

namespace axe {

namespace {
constexpr int kExchangeTag = 4242;
constexpr int kGroupTag = 4343;  // MPI_Comm_create_group
constexpr std::size_t kChunk = std::size_t{1} << 30;  // MPI counts are int
constexpr std::size_t kIntMax = INT_MAX;

// The MPI datatype and op of a native reduction, or false (f16/bf16: no MPI type).
bool native_reduction(DType t, ReduceOp op, MPI_Datatype& type, MPI_Op& mop) {
  switch (t) {
    case DType::F32: type = MPI_FLOAT; break;
    case DType::F64: type = MPI_DOUBLE; break;
    case DType::I32: type = MPI_INT32_T; break;
    case DType::I64: type = MPI_INT64_T; break;
    case DType::U8: type = MPI_UINT8_T; break;
    case DType::F16:
    case DType::BF16: return false;
  }
  switch (op) {
    case ReduceOp::Sum:
    case ReduceOp::Avg: mop = MPI_SUM; break;  // the executor divides by the number of terms
    case ReduceOp::Max: mop = MPI_MAX; break;
    case ReduceOp::Min: mop = MPI_MIN; break;
    case ReduceOp::Prod: mop = MPI_PROD; break;
  }
  return true;
}

std::string ranks_text(std::span<const std::int64_t> v) {
  std::string s = "{";
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (i) s += ',';
    s += std::to_string(v[i]);
  }
  return s + "}";
}
}  // namespace

void mpi_fail(int rc, const char* call, const char* file, int line) {
  char msg[MPI_MAX_ERROR_STRING];
  int len = 0;
  MPI_Error_string(rc, msg, &len);
  fail(std::string("MPI error at ") + file + ":" + std::to_string(line) + " in " + call + ": " +
       std::string(msg, static_cast<std::size_t>(len)));
}

MpiTransport::MpiTransport(MPI_Comm comm, double timeout_s) : timeout_s_(timeout_s) {
  AXE_MPI_CHECK(MPI_Comm_dup(comm, &comm_));
  AXE_MPI_CHECK(MPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN));
  AXE_MPI_CHECK(MPI_Comm_dup(comm, &control_comm_));
  AXE_MPI_CHECK(MPI_Comm_set_errhandler(control_comm_, MPI_ERRORS_RETURN));
  AXE_MPI_CHECK(MPI_Comm_rank(comm_, &rank_));
  AXE_MPI_CHECK(MPI_Comm_size(comm_, &size_));
}

MpiTransport::~MpiTransport() {
  // After a timeout the peer may never match what is left; freeing the communicators could then
  // block, so they are leaked on purpose.
  if (comm_ != MPI_COMM_NULL && !failed_) {
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (!finalized) {
      for (auto& [g, c] : groups_)
        if (c != comm_) MPI_Comm_free(&c);
      if (check_req_ == MPI_REQUEST_NULL) MPI_Comm_free(&control_comm_);  // else left with its check
      MPI_Comm_free(&comm_);
    }
  }
}

void MpiTransport::check_usable(std::string_view what) const {
  if (failed_)
    fail("rank " + std::to_string(rank_) + ": " + std::string(what) +
         ": the MPI transport failed earlier (timeout or peer failure); the runtime cannot be used any more");
}

void MpiTransport::wait_all(std::span<MPI_Request> reqs, std::string_view what, const std::string& detail) {
  using clock = std::chrono::steady_clock;
  const auto deadline = clock::now() + std::chrono::duration<double>(timeout_s_);
  Backoff backoff;
  while (true) {
    int done = 0;
    int rc = MPI_Testall(static_cast<int>(reqs.size()), reqs.data(), &done, MPI_STATUSES_IGNORE);
    if (rc != MPI_SUCCESS) {
      failed_ = true;
      mpi_fail(rc, "MPI_Testall", __FILE__, __LINE__);
    }
    if (done) return;
    if (clock::now() > deadline) {
      // Collective requests cannot be cancelled (MPI_ERR_REQUEST); they are abandoned with the
      // transport, which is unusable from here on.
      failed_ = true;
      char buf[32];
      std::snprintf(buf, sizeof buf, "%g", timeout_s_);
      fail("rank " + std::to_string(rank_) + ": " + std::string(what) + " timed out after " + buf +
           " s (AXE_TIMEOUT_S); a peer exited, failed or is stuck" + (detail.empty() ? "" : ": " + detail));
    }
    poll_check();
    backoff.pause();
  }
}

void MpiTransport::exchange(std::span<const SendBuffer> sends, std::span<const RecvBuffer> recvs) {
  CallScope scope(*this);
  exchange_impl(sends, recvs);
}

void MpiTransport::exchange_impl(std::span<const SendBuffer> sends, std::span<const RecvBuffer> recvs) {
  check_usable("exchange");
  std::vector<MPI_Request> reqs;
  std::vector<std::int64_t> rpeer;  // per receive request
  std::vector<std::size_t> rindex;
  std::vector<std::size_t> rbytes;  // expected bytes per receive request
  auto chunks = [](std::size_t n) { return n == 0 ? std::size_t{1} : (n + kChunk - 1) / kChunk; };
  for (std::size_t i = 0; i < recvs.size(); ++i) {
    const auto& r = recvs[i];
    if (r.peer < 0 || r.peer >= size_)
      fail("exchange on rank " + std::to_string(rank_) + ": receive from rank " + std::to_string(r.peer) +
           " outside the world of " + std::to_string(size_) + " ranks");
    for (std::size_t c = 0; c < chunks(r.data.size()); ++c) {
      std::size_t off = c * kChunk, n = std::min(kChunk, r.data.size() - std::min(off, r.data.size()));
      reqs.emplace_back();
      rpeer.push_back(r.peer);
      rindex.push_back(i);
      rbytes.push_back(n);
      AXE_MPI_CHECK(MPI_Irecv(r.data.data() + off, static_cast<int>(n), MPI_BYTE, static_cast<int>(r.peer),
                              kExchangeTag, comm_, &reqs.back()));
    }
  }
  const std::size_t nrecv = reqs.size();
  for (const auto& s : sends) {
    if (s.peer < 0 || s.peer >= size_)
      fail("exchange on rank " + std::to_string(rank_) + ": send to rank " + std::to_string(s.peer) +
           " outside the world of " + std::to_string(size_) + " ranks");
    for (std::size_t c = 0; c < chunks(s.data.size()); ++c) {
      std::size_t off = c * kChunk, n = std::min(kChunk, s.data.size() - std::min(off, s.data.size()));
      reqs.emplace_back();
      AXE_MPI_CHECK(MPI_Isend(s.data.data() + off, static_cast<int>(n), MPI_BYTE, static_cast<int>(s.peer),
                              kExchangeTag, comm_, &reqs.back()));
    }
  }
  // Receives are checked for their exact size, so wait on them one status at a time.
  std::vector<MPI_Status> st(reqs.size());
  using clock = std::chrono::steady_clock;
  const auto deadline = clock::now() + std::chrono::duration<double>(timeout_s_);
  Backoff backoff;
  while (true) {
    int done = 0;
    int rc = MPI_Testall(static_cast<int>(reqs.size()), reqs.data(), &done, st.data());
    if (rc != MPI_SUCCESS) {
      failed_ = true;
      // Truncation: a peer sent more than this rank expected (the ranks run different plans).
      std::string detail;
      for (std::size_t i = 0; i < nrecv; ++i)
        if (st[i].MPI_ERROR != MPI_SUCCESS && st[i].MPI_ERROR != MPI_ERR_PENDING)
          detail += " message from rank " + std::to_string(rpeer[i]) + " does not fit the " +
                    std::to_string(recvs[rindex[i]].data.size()) + " bytes expected;";
      fail("exchange on rank " + std::to_string(rank_) + ": MPI error" + (detail.empty() ? "" : ":" + detail));
    }
    if (done) break;
    if (clock::now() > deadline) {
      std::vector<std::int64_t> waiting;
      for (std::size_t i = 0; i < nrecv; ++i)
        if (reqs[i] != MPI_REQUEST_NULL) waiting.push_back(rpeer[i]);
      std::sort(waiting.begin(), waiting.end());
      waiting.erase(std::unique(waiting.begin(), waiting.end()), waiting.end());
      for (auto& r : reqs)
        if (r != MPI_REQUEST_NULL) {
          MPI_Cancel(&r);
          MPI_Request_free(&r);
        }
      failed_ = true;
      char buf[32];
      std::snprintf(buf, sizeof buf, "%g", timeout_s_);
      fail("rank " + std::to_string(rank_) + ": " + describe("exchange", {}) + " timed out after " + buf +
           " s (AXE_TIMEOUT_S) waiting for ranks " + ranks_text(waiting) +
           "; a peer exited, failed or runs a different plan");
    }
    poll_check();
    backoff.pause();
  }
  for (std::size_t i = 0; i < nrecv; ++i) {
    int count = 0;
    MPI_Get_count(&st[i], MPI_BYTE, &count);
    if (static_cast<std::size_t>(count) != rbytes[i])
      fail("exchange on rank " + std::to_string(rank_) + ": message from rank " + std::to_string(rpeer[i]) + " has " +
           std::to_string(count) + " bytes, expected " + std::to_string(rbytes[i]) +
           " (the ranks run different plans)");
  }
}

void MpiTransport::allreduce_max(std::span<std::uint64_t> values, std::string_view what) {
  check_usable(what);
  MPI_Request req;
  AXE_MPI_CHECK(MPI_Iallreduce(MPI_IN_PLACE, values.data(), static_cast<int>(values.size()), MPI_UINT64_T, MPI_MAX,
                               control_comm_, &req));
  wait_all(std::span<MPI_Request>(&req, 1), what);
}

void MpiTransport::broadcast(std::span<std::byte> data, int root, std::string_view what) {
  check_usable(what);
  if (data.size() > INT_MAX) fail(std::string(what) + ": broadcast of more than 2 GiB");
  MPI_Request req;
  AXE_MPI_CHECK(MPI_Ibcast(data.data(), static_cast<int>(data.size()), MPI_BYTE, root, control_comm_, &req));
  wait_all(std::span<MPI_Request>(&req, 1), what);
}

std::vector<std::vector<std::byte>> MpiTransport::allgather(std::span<const std::byte> mine, std::string_view what) {
  check_usable(what);
  if (mine.size() > (1u << 30)) fail(std::string(what) + ": all-gather of more than 1 GiB per rank");
  const int n = static_cast<int>(mine.size());
  const auto ranks = static_cast<std::size_t>(size_);
  std::vector<int> counts(ranks), displs(ranks);
  MPI_Request req;
  AXE_MPI_CHECK(MPI_Iallgather(&n, 1, MPI_INT, counts.data(), 1, MPI_INT, control_comm_, &req));
  wait_all(std::span<MPI_Request>(&req, 1), what);
  long long total = 0;
  for (std::size_t r = 0; r < ranks; ++r) {
    displs[r] = static_cast<int>(total);
    total += counts[r];
    if (total > INT_MAX) fail(std::string(what) + ": all-gather of more than 2 GiB in all");
  }
  std::vector<std::byte> all(static_cast<std::size_t>(total));
  AXE_MPI_CHECK(MPI_Iallgatherv(mine.data(), n, MPI_BYTE, all.data(), counts.data(), displs.data(), MPI_BYTE, control_comm_,
                                &req));
  wait_all(std::span<MPI_Request>(&req, 1), what);
  std::vector<std::vector<std::byte>> out(ranks);
  for (std::size_t r = 0; r < ranks; ++r) out[r].assign(all.begin() + displs[r], all.begin() + displs[r] + counts[r]);
  return out;
}

void MpiTransport::start_check(std::span<const std::uint64_t, kCheckValues> values, std::string what,
                               std::string description) {
  check_usable(what);
  if (check_req_ != MPI_REQUEST_NULL) fail("MpiTransport::start_check: a check is already running");
  std::copy(values.begin(), values.end(), check_.begin());
  check_fp_ = values[1];
  check_what_ = std::move(what);
  check_description_ = std::move(description);
  AXE_MPI_CHECK(MPI_Iallreduce(MPI_IN_PLACE, check_.data(), static_cast<int>(kCheckValues), MPI_UINT64_T, MPI_MAX,
                               control_comm_, &check_req_));
}

void MpiTransport::finish_check() {
  if (check_req_ == MPI_REQUEST_NULL) return;
  MPI_Request req = check_req_;  // poll_check leaves it alone from here
  check_req_ = MPI_REQUEST_NULL;
  wait_all(std::span<MPI_Request>(&req, 1), check_what_ + " (agreement)");
  // The ranks ran different plans since the check started: their data may be mismatched in
  // flight, so the runtime cannot go on (~Runtime then ends the job).
  if (check_[1] != ~check_[2]) failed_ = true;
  if (check_[1] != ~check_[2]) fail_disagreement(check_what_, rank_, check_description_, check_fp_, ~check_[2], check_[1]);
}

void MpiTransport::poll_check() {
  if (check_req_ == MPI_REQUEST_NULL) return;
  int done = 0;
  AXE_MPI_CHECK(MPI_Test(&check_req_, &done, MPI_STATUS_IGNORE));
  if (done && check_[1] != ~check_[2]) {
    check_req_ = MPI_REQUEST_NULL;
    failed_ = true;  // the data requests in flight are abandoned
    fail_disagreement(check_what_, rank_, check_description_, check_fp_, ~check_[2], check_[1]);
  }
}

void MpiTransport::barrier(std::string_view what) {
  check_usable(what);
  MPI_Request req;
  AXE_MPI_CHECK(MPI_Ibarrier(control_comm_, &req));
  wait_all(std::span<MPI_Request>(&req, 1), what);
}

// ---- native collectives ---------------------------------------------------------------------

std::string MpiTransport::describe(std::string_view kind, std::span<const std::int64_t> group) const {
  if (plan_ && calls_ < plan_->steps.size()) {
    const Step& s = plan_->steps[calls_];
    std::string step = "step " + std::to_string(calls_) + " of " + std::to_string(plan_->steps.size()) + " (" +
                       std::string(to_string(s.kind));
    if (!s.group.empty()) step += " on group " + ranks_text(s.group);
    if (s.chunks > 1) step += ", chunk " + std::to_string(s.chunk + 1) + "/" + std::to_string(s.chunks);
    return step + ")";
  }
  std::string what = std::string(kind);
  if (!group.empty()) what += " on group " + ranks_text(group);
  return what;
}

MPI_Comm MpiTransport::group_comm(std::span<const std::int64_t> group, const std::string& what) {
  const std::size_t g = group.size();
  bool world = static_cast<int>(g) == size_;
  for (std::size_t i = 0; world && i < g; ++i) world = group[i] == static_cast<std::int64_t>(i);
  if (world) return comm_;
  std::vector<std::int64_t> key(group.begin(), group.end());
  if (auto it = groups_.find(key); it != groups_.end()) return it->second;
  std::vector<int> ranks(g);
  std::size_t me = g;
  for (std::size_t i = 0; i < g; ++i) {
    if (group[i] < 0 || group[i] >= size_)
      fail("rank " + std::to_string(rank_) + ": " + what + ": member " + std::to_string(group[i]) +
           " outside the world of " + std::to_string(size_) + " ranks");
    ranks[i] = static_cast<int>(group[i]);
    if (group[i] == rank_) me = i;
  }
  if (me == g) fail("rank " + std::to_string(rank_) + ": " + what + ": this rank is not a member");
  // Handshake (bounded): every member must be here, naming the same group, before the unbounded
  // MPI_Comm_create_group starts.
  std::uint64_t fp = 1469598103934665603ull;
  for (auto r : key) {
    fp ^= static_cast<std::uint64_t>(r);
    fp *= 1099511628211ull;
  }
  std::vector<std::uint64_t> theirs(g, fp);
  std::vector<SendBuffer> sends;
  std::vector<RecvBuffer> recvs;
  for (std::size_t i = 0; i < g; ++i) {
    if (i == me) continue;
    sends.push_back({group[i], std::as_bytes(std::span<const std::uint64_t>(&fp, 1))});
    recvs.push_back({group[i], std::as_writable_bytes(std::span<std::uint64_t>(&theirs[i], 1))});
  }
  exchange_impl(sends, recvs);
  for (std::size_t i = 0; i < g; ++i)
    if (theirs[i] != fp)
      fail("rank " + std::to_string(rank_) + ": " + what + ": member " + std::to_string(group[i]) +
           " names a different group (the ranks run different plans)");
  MPI_Group all = MPI_GROUP_NULL, sub = MPI_GROUP_NULL;
  MPI_Comm c = MPI_COMM_NULL;
  AXE_MPI_CHECK(MPI_Comm_group(comm_, &all));
  int rc = MPI_Group_incl(all, static_cast<int>(g), ranks.data(), &sub);
  if (rc == MPI_SUCCESS) rc = MPI_Comm_create_group(comm_, sub, kGroupTag, &c);
  MPI_Group_free(&all);
  if (sub != MPI_GROUP_NULL) MPI_Group_free(&sub);
  if (rc != MPI_SUCCESS) {
    failed_ = true;
    mpi_fail(rc, "MPI_Comm_create_group", __FILE__, __LINE__);
  }
  AXE_MPI_CHECK(MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN));
  groups_.emplace(std::move(key), c);
  ++counts_.communicators;
  return c;
}

namespace {
std::size_t member_index(std::span<const std::int64_t> group, std::int64_t rank, const char* what) {
  for (std::size_t i = 0; i < group.size(); ++i)
    if (group[i] == rank) return i;
  fail(std::string(what) + ": rank " + std::to_string(rank) + " is not a member of group " + ranks_text(group));
}
}  // namespace

void MpiTransport::all_gather(std::span<const std::int64_t> group, std::span<const std::byte> mine,
                              std::span<const RecvBuffer> blocks) {
  CallScope scope(*this);
  check_usable("all-gather");
  const std::size_t g = group.size(), me = member_index(group, rank_, "all-gather");
  // Every member knows every block's size (it receives all others): the same decision everywhere.
  std::vector<std::size_t> sizes(g);
  std::size_t total = 0;
  bool equal = true;
  for (std::size_t i = 0; i < g; ++i) {
    sizes[i] = i == me ? mine.size() : blocks[i].data.size();
    total += sizes[i];
    equal = equal && sizes[i] == sizes[0];
  }
  if (!native_ || total > kIntMax) {
    if (depth_ == 1) ++counts_.fallback;  // not again for a default calling another collective
    Transport::all_gather(group, mine, blocks);
    return;
  }
  if (total == 0) return;
  const std::string what = describe("all-gather", group);
  MPI_Comm c = group_comm(group, what);
  std::vector<std::byte> stage(total);
  std::vector<int> counts(g), displs(g);
  for (std::size_t i = 0, pos = 0; i < g; pos += sizes[i], ++i) {
    counts[i] = static_cast<int>(sizes[i]);
    displs[i] = static_cast<int>(pos);
  }
  MPI_Request req;
  if (equal)
    AXE_MPI_CHECK(MPI_Iallgather(mine.data(), counts[me], MPI_BYTE, stage.data(), counts[me], MPI_BYTE, c, &req));
  else
    AXE_MPI_CHECK(MPI_Iallgatherv(mine.data(), counts[me], MPI_BYTE, stage.data(), counts.data(), displs.data(),
                                  MPI_BYTE, c, &req));
  wait_all(std::span<MPI_Request>(&req, 1), what);
  for (std::size_t i = 0; i < g; ++i)
    if (i != me && sizes[i]) std::memcpy(blocks[i].data.data(), stage.data() + displs[i], sizes[i]);
  ++counts_.all_gather;
}

void MpiTransport::all_to_all(std::span<const std::int64_t> group, std::span<const SendBuffer> send,
                              std::span<const RecvBuffer> recv) {
  CallScope scope(*this);
  check_usable("all-to-all");
  const std::size_t g = group.size(), me = member_index(group, rank_, "all-to-all");
  if (!native_) {
    if (depth_ == 1) ++counts_.fallback;  // not again for a default calling another collective
    Transport::all_to_all(group, send, recv);
    return;
  }
  const std::string what = describe("all-to-all", group);
  MPI_Comm c = group_comm(group, what);
  // One datatype per non-empty block: its bytes at their absolute address (blocks of <= 1 GiB),
  // used with MPI_BOTTOM, so the executor's buffers are sent and received in place.
  std::vector<MPI_Datatype> stypes(g, MPI_BYTE), rtypes(g, MPI_BYTE), made;
  std::vector<int> scounts(g, 0), rcounts(g, 0), zeros(g, 0);
  struct Free {
    std::vector<MPI_Datatype>& v;
    ~Free() {
      for (auto& t : v) MPI_Type_free(&t);
    }
  } free_types{made};
  auto make = [&](const std::byte* p, std::size_t n) {
    const std::size_t nb = (n + kChunk - 1) / kChunk;
    std::vector<int> len(nb);
    std::vector<MPI_Aint> disp(nb);
    for (std::size_t k = 0; k < nb; ++k) {
      len[k] = static_cast<int>(std::min(kChunk, n - k * kChunk));
      AXE_MPI_CHECK(MPI_Get_address(p + k * kChunk, &disp[k]));
    }
    MPI_Datatype t;
    AXE_MPI_CHECK(MPI_Type_create_hindexed(static_cast<int>(nb), len.data(), disp.data(), MPI_BYTE, &t));
    made.push_back(t);
    AXE_MPI_CHECK(MPI_Type_commit(&made.back()));
    return made.back();
  };
  for (std::size_t i = 0; i < g; ++i) {
    if (i == me) continue;
    if (!send[i].data.empty()) {
      stypes[i] = make(send[i].data.data(), send[i].data.size());
      scounts[i] = 1;
    }
    if (!recv[i].data.empty()) {
      rtypes[i] = make(recv[i].data.data(), recv[i].data.size());
      rcounts[i] = 1;
    }
  }
  MPI_Request req;
  AXE_MPI_CHECK(MPI_Ialltoallw(MPI_BOTTOM, scounts.data(), zeros.data(), stypes.data(), MPI_BOTTOM, rcounts.data(),
                               zeros.data(), rtypes.data(), c, &req));
  wait_all(std::span<MPI_Request>(&req, 1), what);
  ++counts_.all_to_all;
}

void MpiTransport::reduce_scatter(std::span<const std::int64_t> group, std::span<const SendBuffer> send,
                                  std::span<std::byte> out, DType dtype, ReduceOp op) {
  CallScope scope(*this);
  check_usable("reduce-scatter");
  const std::size_t g = group.size(), me = member_index(group, rank_, "reduce-scatter");
  MPI_Datatype type = MPI_DATATYPE_NULL;  // set by native_reduction
  MPI_Op mop = MPI_OP_NULL;
  const std::size_t es = static_cast<std::size_t>(size_of(dtype));
  // send[i] is this rank's block for member i, sized as member i's result: every member knows
  // every block's size.
  std::size_t total = 0;
  bool equal = true;
  for (std::size_t i = 0; i < g; ++i) {
    total += send[i].data.size();
    equal = equal && send[i].data.size() == send[0].data.size();
  }
  if (!native_ || !native_reduction(dtype, op, type, mop) || total / es > kIntMax) {
    if (depth_ == 1) ++counts_.fallback;  // not again for a default calling another collective
    Transport::reduce_scatter(group, send, out, dtype, op);
    return;
  }
  if (send[me].data.size() != out.size())
    fail("reduce-scatter on rank " + std::to_string(rank_) + ": own block of " + std::to_string(send[me].data.size()) +
         " bytes for a result of " + std::to_string(out.size()));
  if (total == 0) return;
  const std::string what = describe("reduce-scatter", group);
  MPI_Comm c = group_comm(group, what);
  std::vector<std::byte> stage(total);
  std::vector<int> counts(g);
  for (std::size_t i = 0, pos = 0; i < g; ++i) {
    if (!send[i].data.empty()) std::memcpy(stage.data() + pos, send[i].data.data(), send[i].data.size());
    pos += send[i].data.size();
    counts[i] = static_cast<int>(send[i].data.size() / es);
  }
  MPI_Request req;
  if (equal)
    AXE_MPI_CHECK(MPI_Ireduce_scatter_block(stage.data(), out.data(), counts[0], type, mop, c, &req));
  else
    AXE_MPI_CHECK(MPI_Ireduce_scatter(stage.data(), out.data(), counts.data(), type, mop, c, &req));
  wait_all(std::span<MPI_Request>(&req, 1), what);
  ++counts_.reduce_scatter;
}

void MpiTransport::all_reduce(std::span<const std::int64_t> group, std::span<const std::byte> in,
                              std::span<std::byte> out, DType dtype, ReduceOp op) {
  CallScope scope(*this);
  check_usable("all-reduce");
  (void)member_index(group, rank_, "all-reduce");
  MPI_Datatype type = MPI_DATATYPE_NULL;  // set by native_reduction
  MPI_Op mop = MPI_OP_NULL;
  const std::size_t es = static_cast<std::size_t>(size_of(dtype));
  if (in.size() != out.size())
    fail("all-reduce on rank " + std::to_string(rank_) + ": input of " + std::to_string(in.size()) +
         " bytes, output of " + std::to_string(out.size()));
  if (!native_ || !native_reduction(dtype, op, type, mop) || in.size() / es > kIntMax) {
    if (depth_ == 1) ++counts_.fallback;  // not again for a default calling another collective
    Transport::all_reduce(group, in, out, dtype, op);
    return;
  }
  if (in.empty()) return;  // every member's block has the same size
  const std::string what = describe("all-reduce", group);
  MPI_Comm c = group_comm(group, what);
  MPI_Request req;
  AXE_MPI_CHECK(MPI_Iallreduce(in.data(), out.data(), static_cast<int>(in.size() / es), type, mop, c, &req));
  wait_all(std::span<MPI_Request>(&req, 1), what);
  ++counts_.all_reduce;
}

void MpiTransport::broadcast(std::span<const std::int64_t> group, std::size_t root, std::span<std::byte> data) {
  CallScope scope(*this);
  check_usable("broadcast");
  (void)member_index(group, rank_, "broadcast");
  if (root >= group.size())
    fail("broadcast on rank " + std::to_string(rank_) + ": root index " + std::to_string(root) + " outside group " +
         ranks_text(group));
  if (!native_ || data.size() > kIntMax) {
    if (depth_ == 1) ++counts_.fallback;  // not again for a default calling another collective
    Transport::broadcast(group, root, data);
    return;
  }
  if (data.empty()) return;  // every member's data has the same size
  const std::string what = describe("broadcast", group);
  MPI_Comm c = group_comm(group, what);
  MPI_Request req;
  AXE_MPI_CHECK(MPI_Ibcast(data.data(), static_cast<int>(data.size()), MPI_BYTE, static_cast<int>(root), c, &req));
  wait_all(std::span<MPI_Request>(&req, 1), what);
  ++counts_.broadcast;
}

}  // namespace axe
