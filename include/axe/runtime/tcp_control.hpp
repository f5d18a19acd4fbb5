// The control plane over TCP (control.hpp), for jobs launched by torchrun without an MPI launcher.
//
// Rank 0 listens on `port` (every interface); every other rank connects to `address`:`port`,
// retrying until rank 0 is up, and says hello (its rank and the world size). The constructor
// returns on every rank once all ranks are connected, so it is the job's first barrier. Every
// collective is a gather to rank 0 and an answer from it: each rank sends one frame (the call's
// kind, its sequence number, its bytes), rank 0 checks that all frames are the same call, combines
// them and sends the result back. Rank 0 answers every rank with an error frame when a rank sent
// a different call, closed its connection or did not answer in time, so the others fail at once
// with rank 0's message rather than wait out their own timeout.
//
// Every wait is bounded by timeout_s (AXE_TIMEOUT_S); a failure makes control_failed() true and
// throws axe::Error naming the call and the ranks concerned, e.g.
//   rank 0: cuda backend: plan preparation timed out after 5 s (AXE_TIMEOUT_S): rank 2 did not
//   answer rank 1: torchrun rendezvous: could not reach rank 0 at node0:29501 within 300 s
//   (AXE_TIMEOUT_S): Connection refused
// Frames carry at most 1 GiB. The connections have TCP_NODELAY: a collective of a few bytes costs
// two round trips through rank 0 (tens of microseconds on one node).
//
// Example (what Runtime does under `torchrun --nproc-per-node 2`, MASTER_PORT=29500):
//   TcpControl c({.address = "127.0.0.1", .port = 29501, .rank = rank, .size = 2, .timeout_s =
//   300}); std::uint64_t v[1] = {rank};  c.allreduce_max(v, "demo");  // v[0] == 1 on both ranks
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "axe/runtime/control.hpp"

namespace axe {

struct TcpRendezvous {
  std::string address;  // rank 0's host name or address (MASTER_ADDR)
  int port = 0;         // rank 0's listening port, 1..65535
  int rank = 0, size = 1;
  double timeout_s = 300;
};

class TcpControl : public Control {
 public:
  // Collective over the `size` ranks of `r`; throws axe::Error (and closes what it opened) when
  // rank 0 cannot listen, a rank cannot reach it, or not every rank joined within the timeout.
  explicit TcpControl(const TcpRendezvous& r);
  ~TcpControl() override;
  TcpControl(const TcpControl&) = delete;
  TcpControl& operator=(const TcpControl&) = delete;

  int control_rank() const override { return rank_; }
  int control_size() const override { return size_; }
  bool control_failed() const override { return failed_; }
  void allreduce_max(std::span<std::uint64_t> values, std::string_view what) override;
  void broadcast(std::span<std::byte> data, int root, std::string_view what) override;
  std::vector<std::vector<std::byte>> allgather(std::span<const std::byte> mine,
                                                std::string_view what) override;
  void barrier(std::string_view what) override;

 private:
  // One collective: this rank's frame in, and on rank 0 every rank's frames combined by
  // `combine` into the answer every rank gets back (the bytes returned).
  void rendezvous(const TcpRendezvous& r);
  void close_all();
  enum class Kind : std::uint32_t {
    hello = 1,
    allreduce_max = 2,
    broadcast = 3,
    allgather = 4,
    barrier = 5,
    error = 6
  };
  std::vector<std::byte> collective(Kind kind, std::span<const std::byte> mine,
                                    std::string_view what);
  [[noreturn]] void fail_here(const std::string& message);
  // Rank 0: sends an error frame to every connected rank (best effort), then fails.
  [[noreturn]] void fail_everywhere(const std::string& message);

  int rank_ = 0, size_ = 1;
  double timeout_s_ = 300;
  bool failed_ = false;
  std::uint64_t seq_ = 0;
  std::vector<int>
      fds_;  // rank 0: fds_[r] is rank r's connection (fds_[0] = -1); others: fds_[0] to rank 0
};

}  // namespace axe
