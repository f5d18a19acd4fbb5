// TcpControl (the control plane under torchrun): ranks as threads of one process on 127.0.0.1.
// Exact results of each collective, a seeded random sequence of calls against what every rank
// can compute alone, and the faults: a rank that never joins, one that leaves, ranks that call
// different operations, a wrong world size, a port already taken. Every fault must end every
// rank's call with an axe::Error within the timeout.
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "axe/runtime/tcp_control.hpp"
#include "support/test_support.hpp"

namespace axe {
namespace {

using Clock = std::chrono::steady_clock;

// A port that was free a moment ago (bound to port 0, read back, closed).
int free_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a);
  socklen_t len = sizeof a;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  ::close(fd);
  return ntohs(a.sin_port);
}

// Runs body(rank, control) on `size` threads, each with its own TcpControl; returns each rank's
// error ("" when it finished). The rendezvous is part of the body's run (its errors count too).
std::vector<std::string> run_ranks(int size, double timeout_s,
                                   const std::function<void(int, TcpControl&)>& body,
                                   const std::function<int(int)>& world_of = nullptr,
                                   int port = 0) {
  if (port == 0) port = free_port();
  std::vector<std::string> errors(static_cast<std::size_t>(size));
  std::vector<std::thread> threads;
  for (int r = 0; r < size; ++r)
    threads.emplace_back([&, r] {
      errors[static_cast<std::size_t>(r)] = test::error_of([&] {
        TcpControl c({"127.0.0.1", port, r, world_of ? world_of(r) : size, timeout_s});
        body(r, c);
      });
    });
  for (auto& t : threads) t.join();
  return errors;
}

std::vector<std::byte> bytes_of(const std::string& s) {
  const auto* p = reinterpret_cast<const std::byte*>(s.data());
  return {p, p + s.size()};
}

TEST(TcpControl, Collectives_HandDerived) {
  const int n = 4;
  auto errors = run_ranks(n, 20, [&](int r, TcpControl& c) {
    EXPECT_EQ(c.control_rank(), r);
    EXPECT_EQ(c.control_size(), n);
    std::uint64_t v[2] = {static_cast<std::uint64_t>(r), static_cast<std::uint64_t>(10 - r)};
    c.allreduce_max(v, "max");
    EXPECT_EQ(v[0], 3u);   // the highest rank
    EXPECT_EQ(v[1], 10u);  // rank 0's 10 - 0
    for (int root = 0; root < n; ++root) {
      std::uint32_t x[3] = {0, 0, 0};
      if (r == root) x[0] = 100 + root, x[1] = 7, x[2] = 0xdeadbeef;
      c.broadcast(std::as_writable_bytes(std::span<std::uint32_t>(x)), root, "bcast");
      EXPECT_EQ(x[0], 100u + root);
      EXPECT_EQ(x[1], 7u);
      EXPECT_EQ(x[2], 0xdeadbeefu);
    }
    // Rank r sends r copies of 'a' + r: rank 0 sends nothing.
    const auto all = c.allgather(
        bytes_of(std::string(static_cast<std::size_t>(r), static_cast<char>('a' + r))), "ag");
    ASSERT_EQ(all.size(), 4u);
    for (int q = 0; q < n; ++q)
      EXPECT_EQ(all[static_cast<std::size_t>(q)],
                bytes_of(std::string(q, static_cast<char>('a' + q))));
    c.barrier("barrier");
    EXPECT_FALSE(c.control_failed());
  });
  for (int r = 0; r < n; ++r) EXPECT_EQ(errors[static_cast<std::size_t>(r)], "") << "rank " << r;
}

TEST(TcpControl, OneRankNeedsNoConnection_HandDerived) {
  // WORLD_SIZE=1: nothing listens, every collective is local.
  TcpControl c({"127.0.0.1", 1, 0, 1, 1});
  std::uint64_t v[1] = {5};
  c.allreduce_max(v, "max");
  EXPECT_EQ(v[0], 5u);
  const auto all = c.allgather(bytes_of("xyz"), "ag");
  ASSERT_EQ(all.size(), 1u);
  EXPECT_EQ(all[0], bytes_of("xyz"));
}

TEST(TcpControl, RandomSequencesOfCallsAgreeWithEveryRanksOwnComputation_Random) {
  auto rng = test::make_rng(0x7c9);
  for (int trial = 0; trial < 6; ++trial) {
    const int n = 2 + static_cast<int>(rng() % 4);
    const std::uint64_t seed = rng();
    auto errors = run_ranks(n, 20, [&](int r, TcpControl& c) {
      // Every rank draws the same sequence of calls; each rank's value is a function of
      // (seed, call, rank), so every rank can compute the expected result alone.
      std::mt19937_64 calls(seed);
      auto value = [&](int call, int rank) {
        return (seed ^ (call * 1000003ull)) * (rank + 1) % 1000;
      };
      for (int call = 0; call < 40; ++call) {
        switch (calls() % 3) {
          case 0: {
            std::uint64_t v[1] = {value(call, r)};
            c.allreduce_max(v, "max");
            std::uint64_t want = 0;
            for (int q = 0; q < n; ++q) want = std::max<std::uint64_t>(want, value(call, q));
            ASSERT_EQ(v[0], want);
            break;
          }
          case 1: {
            const int root = static_cast<int>(calls() % static_cast<std::uint64_t>(n));
            std::uint64_t v[1] = {r == root ? value(call, root) : 0};
            c.broadcast(std::as_writable_bytes(std::span<std::uint64_t>(v)), root, "bcast");
            ASSERT_EQ(v[0], value(call, root));
            break;
          }
          default: {
            const auto all = c.allgather(bytes_of(std::to_string(value(call, r))), "ag");
            for (int q = 0; q < n; ++q)
              ASSERT_EQ(all[static_cast<std::size_t>(q)], bytes_of(std::to_string(value(call, q))));
          }
        }
      }
    });
    for (int r = 0; r < n; ++r)
      EXPECT_EQ(errors[static_cast<std::size_t>(r)], "") << "trial " << trial << " rank " << r;
  }
}

TEST(TcpControl, RankThatNeverJoinsFailsTheOthersWithinTheTimeout_HandDerived) {
  // Two ranks of a world of 3: rank 2 never starts.
  const auto t0 = Clock::now();
  const int port = free_port();
  std::vector<std::string> err(2);
  std::thread a([&] {
    err[0] = test::error_of([&] { TcpControl c({"127.0.0.1", port, 0, 3, 1.0}); });
  });
  std::thread b([&] {
    err[1] = test::error_of([&] { TcpControl c({"127.0.0.1", port, 1, 3, 1.0}); });
  });
  a.join();
  b.join();
  const double s = std::chrono::duration<double>(Clock::now() - t0).count();
  EXPECT_NE(err[0].find("rank 0: torchrun rendezvous at 127.0.0.1:" + std::to_string(port) +
                        " timed out after 1 s (AXE_TIMEOUT_S): rank 2 never connected"),
            std::string::npos)
      << err[0];
  EXPECT_NE(err[1].find("rank 1: "), std::string::npos) << err[1];
  EXPECT_NE(err[1].find("rank 2 never connected"), std::string::npos)
      << err[1];  // rank 0's message
  EXPECT_LT(s, 10);
}

TEST(TcpControl, NobodyListeningIsAClearErrorWithinTheTimeout_HandDerived) {
  const int port = free_port();
  const auto t0 = Clock::now();
  const std::string e = test::error_of([&] { TcpControl c({"127.0.0.1", port, 1, 2, 0.5}); });
  EXPECT_NE(e.find("rank 1: torchrun rendezvous: could not reach rank 0 at 127.0.0.1:" +
                   std::to_string(port) + " within 0.5 s"),
            std::string::npos)
      << e;
  EXPECT_LT(std::chrono::duration<double>(Clock::now() - t0).count(), 5);
  EXPECT_NE(test::error_of([&] {
              TcpControl c({"no-such-host.invalid", port, 1, 2, 0.2});
            }).find("cannot resolve"),
            std::string::npos);
}

TEST(TcpControl, RankThatLeavesFailsTheOthers_HandDerived) {
  auto errors = run_ranks(3, 5, [](int r, TcpControl& c) {
    c.barrier("first");
    if (r == 1) return;  // its TcpControl is destroyed: the connection closes
    c.barrier("second");
  });
  EXPECT_EQ(errors[1], "");
  EXPECT_NE(errors[0].find("rank 0: second: rank 1 closed the control connection"),
            std::string::npos)
      << errors[0];
  EXPECT_NE(errors[2].find("rank 1 closed the control connection"), std::string::npos) << errors[2];
}

TEST(TcpControl, StuckRankTimesOutEveryOtherRank_HandDerived) {
  const auto t0 = Clock::now();
  auto errors = run_ranks(3, 1.0, [](int r, TcpControl& c) {
    c.barrier("first");
    if (r == 2)
      std::this_thread::sleep_for(std::chrono::milliseconds(2500));  // stuck past the timeout
    std::uint64_t v[1] = {1};
    c.allreduce_max(v, "stuck");
    // After a failure, every later call fails at once.
    EXPECT_TRUE(c.control_failed());
  });
  EXPECT_NE(
      errors[0].find("rank 0: stuck timed out after 1 s (AXE_TIMEOUT_S): rank 2 did not answer"),
      std::string::npos)
      << errors[0];
  EXPECT_NE(errors[1].find("rank 2 did not answer"), std::string::npos) << errors[1];
  EXPECT_NE(errors[2], "");
  EXPECT_LT(std::chrono::duration<double>(Clock::now() - t0).count(), 10);
}

TEST(TcpControl, RanksCallingDifferentOperationsFailAlike_HandDerived) {
  auto errors = run_ranks(3, 5, [](int r, TcpControl& c) {
    if (r == 1) {
      c.barrier("a barrier");
    } else {
      std::uint64_t v[1] = {1};
      c.allreduce_max(v, "a max");
    }
  });
  for (int r = 0; r < 3; ++r)
    EXPECT_NE(errors[static_cast<std::size_t>(r)].find(
                  "rank 1 is in barrier #1, rank 0 in allreduce_max #1"),
              std::string::npos)
        << "rank " << r << ": " << errors[static_cast<std::size_t>(r)];
  auto sizes = run_ranks(2, 5, [](int r, TcpControl& c) {
    std::vector<std::uint64_t> v(static_cast<std::size_t>(r + 1), 1);
    c.allreduce_max(v, "max");
  });
  for (const auto& e : sizes)
    EXPECT_NE(e.find("rank 1 passes 2 values, rank 0 1"), std::string::npos) << e;
}

TEST(TcpControl, WrongWorldSizeOnOneRankIsNamed_HandDerived) {
  auto errors = run_ranks(
      2, 3, [](int, TcpControl&) {}, [](int r) { return r == 1 ? 3 : 2; });
  EXPECT_NE(errors[0].find("rank 1 has WORLD_SIZE=3, rank 0 has 2"), std::string::npos)
      << errors[0];
  EXPECT_NE(errors[1].find("rank 1 has WORLD_SIZE=3, rank 0 has 2"), std::string::npos)
      << errors[1];
}

TEST(TcpControl, PortInUseIsAClearErrorOnRankZero_HandDerived) {
  const int fd = ::socket(AF_INET6, SOCK_STREAM, 0);
  sockaddr_in6 a{};
  a.sin6_family = AF_INET6;
  a.sin6_addr = in6addr_any;
  ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
  ASSERT_EQ(::listen(fd, 1), 0);
  socklen_t len = sizeof a;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  const int port = ntohs(a.sin6_port);
  const std::string e = test::error_of([&] { TcpControl c({"127.0.0.1", port, 0, 2, 1}); });
  ::close(fd);
  EXPECT_NE(e.find("rank 0: torchrun rendezvous: cannot listen on port " + std::to_string(port)),
            std::string::npos)
      << e;
  EXPECT_NE(test::error_of([] {
              TcpControl c({"127.0.0.1", 0, 0, 2, 1});
            }).find("port 0 is not in 1..65535"),
            std::string::npos);
  EXPECT_NE(test::error_of([] {
              TcpControl c({"127.0.0.1", 1234, 2, 2, 1});
            }).find("rank 2 of a world of 2"),
            std::string::npos);
}

}  // namespace
}  // namespace axe
