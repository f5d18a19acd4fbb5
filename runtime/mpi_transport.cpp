// MPI transport: non-blocking point-to-point and collectives, polled against a deadline so that a
// dead or stuck peer becomes an axe::Error on this rank instead of a hang.
#include "axe/mpi_transport.hpp"

#include <algorithm>
#include <chrono>
#include <climits>
#include <cstdio>
#include <thread>
#include <vector>

#include "axe/error.hpp"

namespace axe {

namespace {
constexpr int kExchangeTag = 4242;
constexpr std::size_t kChunk = std::size_t{1} << 30;  // MPI counts are int

std::string ranks_text(const std::vector<std::int64_t>& v) {
  std::string s = "{";
  for (std::size_t i = 0; i < v.size(); ++i) s += (i ? "," : "") + std::to_string(v[i]);
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
  AXE_MPI_CHECK(MPI_Comm_rank(comm_, &rank_));
  AXE_MPI_CHECK(MPI_Comm_size(comm_, &size_));
}

MpiTransport::~MpiTransport() {
  // After a timeout the peer may never match what is left; freeing the communicator could then
  // block, so it is leaked on purpose.
  if (comm_ != MPI_COMM_NULL && !failed_) {
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (!finalized) MPI_Comm_free(&comm_);
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
  int spins = 0;
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
    // Spin briefly for latency, then yield so oversubscribed ranks make progress.
    if (++spins > 64) std::this_thread::sleep_for(std::chrono::microseconds(spins > 4096 ? 500 : 20));
  }
}

void MpiTransport::exchange(std::span<const SendBuffer> sends, std::span<const RecvBuffer> recvs) {
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
  int spins = 0;
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
      fail("rank " + std::to_string(rank_) + ": exchange timed out after " + buf +
           " s (AXE_TIMEOUT_S) waiting for ranks " + ranks_text(waiting) +
           "; a peer exited, failed or runs a different plan");
    }
    if (++spins > 64) std::this_thread::sleep_for(std::chrono::microseconds(spins > 4096 ? 500 : 20));
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
                               comm_, &req));
  wait_all(std::span<MPI_Request>(&req, 1), what);
}

void MpiTransport::broadcast(std::span<std::byte> data, int root, std::string_view what) {
  check_usable(what);
  if (data.size() > INT_MAX) fail(std::string(what) + ": broadcast of more than 2 GiB");
  MPI_Request req;
  AXE_MPI_CHECK(MPI_Ibcast(data.data(), static_cast<int>(data.size()), MPI_BYTE, root, comm_, &req));
  wait_all(std::span<MPI_Request>(&req, 1), what);
}

void MpiTransport::barrier(std::string_view what) {
  check_usable(what);
  MPI_Request req;
  AXE_MPI_CHECK(MPI_Ibarrier(comm_, &req));
  wait_all(std::span<MPI_Request>(&req, 1), what);
}

}  // namespace axe
