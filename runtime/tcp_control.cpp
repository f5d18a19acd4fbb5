// The control plane over TCP (tcp_control.hpp): a star of connections to rank 0.
#include "axe/runtime/tcp_control.hpp"

#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <thread>
#include <utility>

#include "axe/core/error.hpp"

namespace axe {
namespace {

using Clock = std::chrono::steady_clock;

constexpr std::uint32_t kMagic = 0x41584531;  // "AXE1"
constexpr std::uint64_t kMaxFrame = std::uint64_t{1} << 30;

struct Header {
  std::uint32_t magic = kMagic;
  std::uint32_t kind = 0;
  std::uint64_t seq = 0;
  std::uint64_t len = 0;
};

std::string seconds_text(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", s);
  return buf;
}

Clock::time_point after(double seconds) {
  return Clock::now() +
         std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
}

// Ranks other than 0 wait this much longer than rank 0 for its answer, so that rank 0's verdict
// (which rank is missing) reaches them rather than their own, vaguer timeout.
Clock::duration grace(double timeout_s) {
  return std::chrono::duration_cast<Clock::duration>(
      std::chrono::duration<double>(std::min(timeout_s, 2.0)));
}

int ms_left(Clock::time_point deadline) {
  const auto left =
      std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
  return left <= 0 ? 0 : static_cast<int>(std::min<long long>(left, 1000));
}

// Why an I/O call stopped: "" on success, else a short reason ("timeout", "closed", strerror).
using Why = std::string;

Why send_all(int fd, const void* data, std::size_t n, Clock::time_point deadline) {
  auto* p = static_cast<const char*>(data);
  while (n > 0) {
    const ssize_t k = ::send(fd, p, n, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (k > 0) {
      p += k;
      n -= static_cast<std::size_t>(k);
      continue;
    }
    if (k < 0 && errno == EINTR) continue;
    if (k < 0 && errno != EAGAIN && errno != EWOULDBLOCK)
      return errno == EPIPE || errno == ECONNRESET ? "closed" : std::strerror(errno);
    if (Clock::now() >= deadline) return "timeout";
    pollfd pfd{fd, POLLOUT, 0};
    ::poll(&pfd, 1, ms_left(deadline));
  }
  return {};
}

Why recv_all(int fd, void* data, std::size_t n, Clock::time_point deadline) {
  auto* p = static_cast<char*>(data);
  while (n > 0) {
    const ssize_t k = ::recv(fd, p, n, MSG_DONTWAIT);
    if (k > 0) {
      p += k;
      n -= static_cast<std::size_t>(k);
      continue;
    }
    if (k == 0) return "closed";
    if (errno == EINTR) continue;
    if (errno != EAGAIN && errno != EWOULDBLOCK)
      return errno == ECONNRESET ? "closed" : std::strerror(errno);
    if (Clock::now() >= deadline) return "timeout";
    pollfd pfd{fd, POLLIN, 0};
    ::poll(&pfd, 1, ms_left(deadline));
  }
  return {};
}

Why send_frame(int fd, std::uint32_t kind, std::uint64_t seq, std::span<const std::byte> payload,
               Clock::time_point deadline) {
  const Header h{kMagic, kind, seq, payload.size()};
  Why w = send_all(fd, &h, sizeof h, deadline);
  if (w.empty() && !payload.empty()) w = send_all(fd, payload.data(), payload.size(), deadline);
  return w;
}

Why recv_frame(int fd, Header& h, std::vector<std::byte>& payload, Clock::time_point deadline) {
  Why w = recv_all(fd, &h, sizeof h, deadline);
  if (!w.empty()) return w;
  if (h.magic != kMagic)
    return "a frame that is not axe's (another program on the rendezvous port?)";
  if (h.len > kMaxFrame) return "a frame of " + std::to_string(h.len) + " bytes (at most 1 GiB)";
  payload.resize(static_cast<std::size_t>(h.len));
  return payload.empty() ? Why{} : recv_all(fd, payload.data(), payload.size(), deadline);
}

void tune_socket(int fd) {
  int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  ::fcntl(fd, F_SETFD, FD_CLOEXEC);
}

std::string kind_text(std::uint32_t k) {
  switch (k) {
    case 1:
      return "hello";
    case 2:
      return "allreduce_max";
    case 3:
      return "broadcast";
    case 4:
      return "allgather";
    case 5:
      return "barrier";
    case 6:
      return "error";
  }
  return "kind " + std::to_string(k);
}

std::string ranks_list(const std::vector<int>& ranks) {
  std::string s = ranks.size() == 1 ? "rank " : "ranks ";
  for (std::size_t i = 0; i < ranks.size() && i < 16; ++i)
    s += (i ? "," : "") + std::to_string(ranks[i]);
  if (ranks.size() > 16) s += ",...";
  return s;
}

template <class T>
void append(std::vector<std::byte>& out, const T& v) {
  const auto* p = reinterpret_cast<const std::byte*>(&v);
  out.insert(out.end(), p, p + sizeof v);
}

}  // namespace

TcpControl::TcpControl(const TcpRendezvous& r)
    : rank_(r.rank), size_(r.size), timeout_s_(r.timeout_s) {
  try {
    rendezvous(r);
  } catch (...) {
    close_all();  // the destructor does not run for a constructor that throws
    throw;
  }
}

void TcpControl::close_all() {
  for (int& fd : fds_)
    if (fd >= 0) ::close(std::exchange(fd, -1));
}

void TcpControl::rendezvous(const TcpRendezvous& r) {
  const std::string where = r.address + ":" + std::to_string(r.port);
  const std::string secs = seconds_text(timeout_s_);
  if (size_ < 1 || rank_ < 0 || rank_ >= size_)
    fail("torchrun rendezvous: rank " + std::to_string(rank_) + " of a world of " +
         std::to_string(size_));
  if (r.port < 1 || r.port > 65535)
    fail("torchrun rendezvous: port " + std::to_string(r.port) + " is not in 1..65535");
  const auto deadline = after(timeout_s_);
  if (size_ == 1) return;
  if (rank_ == 0) {
    fds_.assign(static_cast<std::size_t>(size_), -1);
    const int ls = ::socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0);
    int one = 1, zero = 0;
    sockaddr_in6 a{};
    a.sin6_family = AF_INET6;
    a.sin6_addr = in6addr_any;
    a.sin6_port = htons(static_cast<std::uint16_t>(r.port));
    if (ls < 0 || ::setsockopt(ls, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) != 0 ||
        ::setsockopt(ls, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof zero) != 0 ||
        ::bind(ls, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 || ::listen(ls, size_) != 0) {
      const std::string why = std::strerror(errno);
      if (ls >= 0) ::close(ls);
      failed_ = true;
      fail("rank 0: torchrun rendezvous: cannot listen on port " + std::to_string(r.port) + ": " +
           why + " (the port is MASTER_PORT + 1 unless AXE_RENDEZVOUS_PORT names another)");
    }
    int joined = 1;
    std::string problem;
    while (joined < size_ && problem.empty()) {
      pollfd pfd{ls, POLLIN, 0};
      if (Clock::now() >= deadline) break;
      if (::poll(&pfd, 1, ms_left(deadline)) <= 0) continue;
      const int fd = ::accept4(ls, nullptr, nullptr, SOCK_CLOEXEC);
      if (fd < 0) continue;
      tune_socket(fd);
      Header h;
      std::vector<std::byte> payload;
      // A hello comes at once after the connection; a second's wait bounds a stray client.
      const Why w = recv_frame(fd, h, payload, std::min(deadline, after(1)));
      std::uint64_t their_size = 0;
      if (w.empty() && payload.size() == sizeof their_size)
        std::memcpy(&their_size, payload.data(), sizeof their_size);
      std::string bad;
      if (!w.empty() || h.kind != static_cast<std::uint32_t>(Kind::hello) ||
          payload.size() != sizeof their_size)
        bad = "a connection that is not an axe rank's hello";
      else if (h.seq == 0 || h.seq >= static_cast<std::uint64_t>(size_) || fds_[h.seq] >= 0)
        bad = "rank " + std::to_string(h.seq) + " joined " +
              (h.seq && h.seq < static_cast<std::uint64_t>(size_)
                   ? "twice"
                   : "but is not a rank of this world");
      else if (their_size != static_cast<std::uint64_t>(size_))
        bad = "rank " + std::to_string(h.seq) + " has WORLD_SIZE=" + std::to_string(their_size) +
              ", rank 0 has " + std::to_string(size_);
      if (!bad.empty()) {
        // A stray connection is ignored; a rank of this job that does not fit ends the rendezvous.
        const std::string msg = "torchrun rendezvous at " + where + ": " + bad;
        if (w.empty() && h.kind == static_cast<std::uint32_t>(Kind::hello))
          send_frame(fd, static_cast<std::uint32_t>(Kind::error), 0,
                     std::as_bytes(std::span<const char>(msg.data(), msg.size())), after(1));
        ::close(fd);
        if (w.empty() && h.kind == static_cast<std::uint32_t>(Kind::hello)) problem = msg;
        continue;
      }
      fds_[h.seq] = fd;
      ++joined;
    }
    ::close(ls);
    if (problem.empty() && joined < size_) {
      std::vector<int> missing;
      for (int q = 1; q < size_; ++q)
        if (fds_[static_cast<std::size_t>(q)] < 0) missing.push_back(q);
      problem = "torchrun rendezvous at " + where + " timed out after " + secs +
                " s (AXE_TIMEOUT_S): " + ranks_list(missing) + " never connected";
    }
    if (!problem.empty()) fail_everywhere("rank 0: " + problem);
    // Everyone is here: the answer to every hello.
    for (int q = 1; q < size_; ++q)
      if (Why w = send_frame(fds_[static_cast<std::size_t>(q)],
                             static_cast<std::uint32_t>(Kind::hello), 0, {}, deadline);
          !w.empty())
        fail_everywhere("rank 0: torchrun rendezvous: rank " + std::to_string(q) +
                        " left during the rendezvous (" + w + ")");
    return;
  }
  // Ranks 1..size-1: connect (rank 0 may not listen yet), say hello, wait for everyone.
  fds_.assign(1, -1);
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  std::string last = "no attempt";
  while (fds_[0] < 0) {
    addrinfo* res = nullptr;
    const int g = ::getaddrinfo(r.address.c_str(), std::to_string(r.port).c_str(), &hints, &res);
    if (g != 0) {
      last = std::string("cannot resolve the address: ") + gai_strerror(g);
    } else {
      for (addrinfo* p = res; p && fds_[0] < 0; p = p->ai_next) {
        const int fd = ::socket(p->ai_family, p->ai_socktype | SOCK_CLOEXEC, p->ai_protocol);
        if (fd < 0) continue;
        if (::connect(fd, p->ai_addr, p->ai_addrlen) == 0) {
          tune_socket(fd);
          fds_[0] = fd;
        } else {
          last = std::strerror(errno);
          ::close(fd);
        }
      }
      ::freeaddrinfo(res);
    }
    if (fds_[0] >= 0) break;
    if (Clock::now() >= deadline) {
      failed_ = true;
      fail("rank " + std::to_string(rank_) + ": torchrun rendezvous: could not reach rank 0 at " +
           where + " within " + secs + " s (AXE_TIMEOUT_S): " + last);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  const std::uint64_t n = static_cast<std::uint64_t>(size_);
  Why w = send_frame(fds_[0], static_cast<std::uint32_t>(Kind::hello),
                     static_cast<std::uint64_t>(rank_),
                     std::as_bytes(std::span<const std::uint64_t>(&n, 1)), deadline);
  Header h;
  std::vector<std::byte> payload;
  if (w.empty()) w = recv_frame(fds_[0], h, payload, deadline + grace(timeout_s_));
  if (!w.empty())
    fail_here("torchrun rendezvous at " + where + ": " +
              (w == "timeout" ? "not every rank joined within " + secs + " s (AXE_TIMEOUT_S)"
                              : "rank 0 closed the connection (" + w + ")"));
  if (h.kind == static_cast<std::uint32_t>(Kind::error))
    fail_here("torchrun rendezvous failed: " +
              std::string(reinterpret_cast<const char*>(payload.data()), payload.size()));
}

TcpControl::~TcpControl() { close_all(); }

void TcpControl::fail_here(const std::string& message) {
  failed_ = true;
  const std::string prefix = "rank " + std::to_string(rank_) + ": ";
  fail(message.rfind("rank ", 0) == 0 ? message : prefix + message);
}

void TcpControl::fail_everywhere(const std::string& message) {
  const auto deadline = after(1);
  for (int fd : fds_)
    if (fd >= 0)
      send_frame(fd, static_cast<std::uint32_t>(Kind::error), seq_,
                 std::as_bytes(std::span<const char>(message.data(), message.size())), deadline);
  fail_here(message);
}

std::vector<std::byte> TcpControl::collective(Kind kind, std::span<const std::byte> mine,
                                              std::string_view what) {
  if (failed_)
    fail("rank " + std::to_string(rank_) + ": " + std::string(what) +
         ": the control connection failed earlier (timeout or peer failure); the runtime cannot be "
         "used any more");
  const std::uint64_t seq = ++seq_;
  const auto deadline = after(timeout_s_);
  const std::string secs = seconds_text(timeout_s_);
  const auto k = static_cast<std::uint32_t>(kind);
  if (size_ == 1) return {mine.begin(), mine.end()};
  if (rank_ != 0) {
    Why w = send_frame(fds_[0], k, seq, mine, deadline);
    Header h;
    std::vector<std::byte> answer;
    if (w.empty()) w = recv_frame(fds_[0], h, answer, deadline + grace(timeout_s_));
    if (w == "timeout")
      fail_here(std::string(what) + " timed out after " + secs +
                " s (AXE_TIMEOUT_S) waiting for rank 0; a peer exited, failed or is stuck");
    if (!w.empty())
      fail_here(std::string(what) + ": the connection to rank 0 failed (" + w +
                "); rank 0 exited or failed");
    if (h.kind == static_cast<std::uint32_t>(Kind::error))
      fail_here(std::string(what) + ": " +
                std::string(reinterpret_cast<const char*>(answer.data()), answer.size()));
    return answer;
  }
  // Rank 0: every rank's frame, then the combined answer.
  std::vector<std::vector<std::byte>> frames(static_cast<std::size_t>(size_));
  frames[0].assign(mine.begin(), mine.end());
  std::vector<int> silent, closed;
  std::string mismatch;
  for (int q = 1; q < size_; ++q) {
    Header h;
    const Why w = recv_frame(fds_[static_cast<std::size_t>(q)], h,
                             frames[static_cast<std::size_t>(q)], deadline);
    if (w == "timeout")
      silent.push_back(q);
    else if (!w.empty())
      closed.push_back(q);
    else if ((h.kind != k || h.seq != seq) && mismatch.empty())
      mismatch = "rank " + std::to_string(q) + " is in " + kind_text(h.kind) + " #" +
                 std::to_string(h.seq) + ", rank 0 in " + kind_text(k) + " #" +
                 std::to_string(seq) + " (the ranks call different operations)";
  }
  if (!closed.empty())
    fail_everywhere("rank 0: " + std::string(what) + ": " + ranks_list(closed) +
                    " closed the control connection (exited or failed)");
  if (!silent.empty())
    fail_everywhere("rank 0: " + std::string(what) + " timed out after " + secs +
                    " s (AXE_TIMEOUT_S): " + ranks_list(silent) +
                    " did not answer; a peer exited, failed or is stuck");
  if (!mismatch.empty()) fail_everywhere("rank 0: " + std::string(what) + ": " + mismatch);
  std::vector<std::byte> answer;
  std::string bad;
  switch (kind) {
    case Kind::allreduce_max: {
      answer = frames[0];
      const std::size_t n = answer.size() / sizeof(std::uint64_t);
      for (int q = 1; q < size_ && bad.empty(); ++q) {
        const auto& f = frames[static_cast<std::size_t>(q)];
        if (f.size() != answer.size()) {
          bad = "rank " + std::to_string(q) + " passes " + std::to_string(f.size() / 8) +
                " values, rank 0 " + std::to_string(n);
          break;
        }
        for (std::size_t i = 0; i < n; ++i) {
          std::uint64_t a, b;
          std::memcpy(&a, answer.data() + 8 * i, 8);
          std::memcpy(&b, f.data() + 8 * i, 8);
          if (b > a) std::memcpy(answer.data() + 8 * i, &b, 8);
        }
      }
      break;
    }
    case Kind::broadcast: {
      // Each frame: the root (u64), the byte count (u64), and the bytes on the root only.
      std::uint64_t root = 0, len = 0;
      std::memcpy(&root, frames[0].data(), 8);
      std::memcpy(&len, frames[0].data() + 8, 8);
      for (int q = 0; q < size_ && bad.empty(); ++q) {
        const auto& f = frames[static_cast<std::size_t>(q)];
        std::uint64_t fr = 0, fl = 0;
        if (f.size() >= 16) {
          std::memcpy(&fr, f.data(), 8);
          std::memcpy(&fl, f.data() + 8, 8);
        }
        if (f.size() < 16 || fr != root || fl != len)
          bad = "rank " + std::to_string(q) + " broadcasts " + std::to_string(fl) +
                " bytes from rank " + std::to_string(fr) + ", rank 0 " + std::to_string(len) +
                " bytes from rank " + std::to_string(root);
      }
      if (bad.empty()) {
        const auto& f = frames[static_cast<std::size_t>(root)];
        if (f.size() != 16 + len)
          bad = "the root's frame has the wrong length";
        else
          answer.assign(f.begin() + 16, f.end());
      }
      break;
    }
    case Kind::allgather:
      // The answer: the count, every length, then every rank's bytes.
      append(answer, static_cast<std::uint64_t>(size_));
      for (const auto& f : frames) append(answer, static_cast<std::uint64_t>(f.size()));
      for (const auto& f : frames) answer.insert(answer.end(), f.begin(), f.end());
      if (answer.size() > kMaxFrame) bad = "all-gather of more than 1 GiB";
      break;
    default:
      break;
  }
  if (!bad.empty()) fail_everywhere("rank 0: " + std::string(what) + ": " + bad);
  std::vector<int> gone;
  for (int q = 1; q < size_; ++q)
    if (!send_frame(fds_[static_cast<std::size_t>(q)], k, seq, answer, deadline).empty())
      gone.push_back(q);
  if (!gone.empty())
    fail_everywhere("rank 0: " + std::string(what) + ": " + ranks_list(gone) +
                    " left before the answer");
  return answer;
}

void TcpControl::allreduce_max(std::span<std::uint64_t> values, std::string_view what) {
  const auto answer = collective(Kind::allreduce_max, std::as_bytes(values), what);
  std::memcpy(values.data(), answer.data(), std::min(answer.size(), values.size_bytes()));
}

void TcpControl::broadcast(std::span<std::byte> data, int root, std::string_view what) {
  if (root < 0 || root >= size_)
    fail(std::string(what) + ": broadcast from rank " + std::to_string(root) + " of " +
         std::to_string(size_));
  std::vector<std::byte> frame;
  append(frame, static_cast<std::uint64_t>(root));
  append(frame, static_cast<std::uint64_t>(data.size()));
  if (root == rank_) frame.insert(frame.end(), data.begin(), data.end());
  const auto answer = collective(Kind::broadcast, frame, what);
  if (answer.size() != data.size())
    fail_here(std::string(what) + ": broadcast answer of the wrong length");
  std::copy(answer.begin(), answer.end(), data.begin());
}

std::vector<std::vector<std::byte>> TcpControl::allgather(std::span<const std::byte> mine,
                                                          std::string_view what) {
  const auto answer = collective(Kind::allgather, mine, what);
  std::vector<std::vector<std::byte>> out(static_cast<std::size_t>(size_));
  if (size_ == 1) {
    out[0] = answer;
    return out;
  }
  std::uint64_t n = 0;
  std::memcpy(&n, answer.data(), 8);
  std::size_t at = 8 + 8 * static_cast<std::size_t>(size_);
  if (n != static_cast<std::uint64_t>(size_) || answer.size() < at)
    fail_here(std::string(what) + ": malformed all-gather answer");
  for (std::size_t q = 0; q < out.size(); ++q) {
    std::uint64_t len = 0;
    std::memcpy(&len, answer.data() + 8 + 8 * q, 8);
    if (at + len > answer.size()) fail_here(std::string(what) + ": malformed all-gather answer");
    out[q].assign(answer.begin() + static_cast<std::ptrdiff_t>(at),
                  answer.begin() + static_cast<std::ptrdiff_t>(at + len));
    at += len;
  }
  return out;
}

void TcpControl::barrier(std::string_view what) {
  collective(Kind::barrier, {}, what);
}

}  // namespace axe
