// The peer transport (DESIGN §5): ranks of one node move a step's messages through CUDA IPC
// instead of NCCL. It is what lets several ranks share one GPU: NCCL refuses two ranks on one
// device ("Duplicate GPU detected"), CUDA IPC does not.
//
// Protocol (pull, stream-ordered, no host synchronisation on the data path). Every rank owns a
// flag block, a shared host page (POSIX shared memory registered with CUDA) that every rank of
// the node maps at construction:
//   ready[q]     written by q: how many messages q has made ready for this rank so far (packed,
//                or posted to be read from its input, below);
//   consumed[q]  written by q: how many of this rank's messages to q it has copied out so far.
// A sender packs its messages into its staging (the executor's per-plan scratch, exported to the
// peers when the plan is connected), then writes ready[me] = n in each receiver's block. A
// receiver waits (on its stream) until its ready[q] reaches n, copies the message out of q's
// staging straight into its own buffer (cudaMemcpyAsync, device to device), then writes
// consumed[me] = n in q's block. Before a sender packs into its staging again it waits until
// every receiver has consumed what it sent (consumed[q] == sent to q). Writes and waits are
// cuStreamWriteValue64 / cuStreamWaitValue64 (the write orders all earlier work on the stream
// before it), so a step costs no host round trip.
// Counters are per ordered pair and only grow, so they stay in step across plans as long as
// every rank runs the same steps in the same order (the planner's agreement, plan.hpp).
//
// Bounded: wait() polls the stream's event under AXE_TIMEOUT_S; a peer that stops or exits leaves
// this rank's stream waiting on a flag, and wait() then throws axe::Error naming the rank and
// the operation, and failed() stays true. The stream's waits are then released (its flags set
// beyond any count), so tearing down (cudaStreamSynchronize, cudaFree) does not wait forever.
//
// Posts (reads from the sender's input, executor.hpp): a receiver may copy a message straight out
// of the sender's step input, in the sender's layout, with no pack. That input is the caller's
// buffer, a new one on any call, so its receiver's host must learn where it is before it enqueues
// the copy: the sender's host posts (post()) the IPC handle of the input's allocation, and the
// offset into it, into a ring of kPostDepth slots per ordered pair in the receiver's flag block;
// the receiver's host takes (take()) them in order and maps each allocation once (map()).
// A post without a handle (an allocation CUDA cannot export, e.g. from a stream-ordered pool or
// cuMemCreate) says the sender packed the message into its staging as usual. Host waits on posts
// are bounded by the same timeout.
//
// Mappings. A receiver maps a peer's allocation once and keeps it by the allocation's address
// range in the sender: staging pinned while a plan uses it, inputs at most kMapsPerPeer per peer
// (the least recently used unmapped first, after the copies that read it). A sender's freed
// allocation stays mapped here until then, and CUDA refuses to map memory of the sender's that
// is mapped already ("resource already mapped"): so a post whose range overlaps a mapping of
// another allocation (another buffer id: the old one was freed) unmaps that one first, after its
// copies, as UCX's CUDA IPC cache does.
//
// Example (2 processes on one GPU): PeerComm c(MPI_COMM_WORLD, 0); CudaExecutor ex(&c);
//   ex.execute(plan, src, dst); ex.synchronize();  // S(0) -> R: each rank pulls the other's rows
#pragma once

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "axe/core/error.hpp"

#include "axe/cuda/mpi_c.hpp"

namespace axe::cuda {

// Where each rank runs: the host it is on and the UUID of its GPU (cudaDeviceProp::uuid as hex).
struct RankPlace {
  std::string node, gpu;
};

// Which transport moves a job's messages: the peer transport or NCCL, and a line that says why
// when the choice is not the plain one. `setting` is AXE_PEER_TRANSPORT: 0 never (NCCL only),
// 1 when two ranks share a GPU, else per step by the cost model on one node, 2 whenever all
// ranks are on one node (every step).
// Throws axe::Error (the same on every rank: the input is the all-gathered places) when ranks
// share a GPU and the peer transport cannot carry the job: setting 0, or ranks on several nodes.
// Example: 4 ranks on node "a", all on GPU "g0", setting 1 -> {peer = true, shared = true}.
// With setting 1, a GPU per rank and one node: per_step (NCCL, and the peer transport beside it
// for the steps the cost model prices lower there, when the model has peer entries).
struct TransportChoice {
  bool peer = false;
  bool shared = false;    // some two ranks share a GPU (NCCL cannot carry the job)
  bool per_step = false;  // both transports may run, each step on the cheaper one
  std::string note;     // one line for the user ("" when nothing needs saying)
};
TransportChoice choose_transport(int setting, std::span<const RankPlace> places);

// Thrown (on every rank alike) when the system refuses the peer transport: a rank cannot map a
// peer's memory. The backend then falls back to NCCL where it can (choose_transport's cases
// without a shared GPU).
class PeerUnavailable : public Error {
 public:
  using Error::Error;
};

// Where a sender's step input lies, told to a receiver's host: the IPC handle of its allocation
// and the input's byte offset in it; buffer 0 (no handle): the sender packed the message.
struct PeerPost {
  std::uint64_t buffer = 0;  // the allocation's id in the sender (CU_POINTER_ATTRIBUTE_BUFFER_ID)
  std::uint64_t base = 0;    // the allocation's start address in the sender
  std::uint64_t size = 0;    // and its bytes
  std::uint64_t offset = 0;  // bytes from its start to the input
  cudaIpcMemHandle_t handle{};
  bool direct() const { return buffer != 0; }
};

// One ordered pair's ring of posts in shared host memory (host logic, no CUDA): `slots` holds
// depth slots of kPostWords words, written by the sender; `taken` is the receiver's count of the
// posts it took, read by the sender. Post n (from 1) goes to slot (n - 1) % depth, its sequence
// number written last (release), so a receiver that sees n there sees the whole post.
inline constexpr std::size_t kPostWords = 16;
class PostRing {
 public:
  PostRing(std::uint64_t* slots, std::uint64_t* taken, std::size_t depth) : slots_(slots), taken_(taken), depth_(depth) {}
  // Writes post n; false (and writes nothing) while the receiver has not yet taken post n - depth.
  bool try_put(std::uint64_t n, const PeerPost& post);
  // Post n once it was written (then counts it taken); false before.
  bool try_take(std::uint64_t n, PeerPost& post);

 private:
  std::uint64_t* slots_;
  std::uint64_t* taken_;
  std::size_t depth_;
};

// One of a peer's allocations mapped here, as the mapping rules see it (host logic).
struct MappedRange {
  std::uint64_t buffer = 0, base = 0, size = 0;  // the allocation's id and range in the peer
  int pins = 0;                                   // staging of plans in use: never unmapped
};

// What PeerComm::map does for a post (host logic, no CUDA; see Mappings above), given the peer's
// mappings, least recently used first: `reuse`, the index of the post's own allocation's
// mapping, or -1; else `unmap`, the indices to unmap first (ascending): those whose range
// overlaps the post's (the peer has freed them), then, when not `pin` and as many unpinned as
// `max_unpinned` would remain, the least recently used unpinned one. `conflict`: an overlapping
// one is pinned (staging the peer freed while a plan here still uses it).
// Example: {A [0,100) unpinned, B [100,200) pinned}, post [50,150) -> unmap {0}, conflict.
struct MapStep {
  std::ptrdiff_t reuse = -1;
  std::vector<std::size_t> unmap;
  bool conflict = false;
};
// `maps`: a random-access range of MappedRange or of a type derived from it (PeerComm's own
// mappings are read in place, with no copy per call).
template <class Ranges>
MapStep plan_mapping(const Ranges& maps, const PeerPost& post, bool pin, std::size_t max_unpinned) {
  MapStep step;
  for (std::size_t i = 0; i < maps.size(); ++i)
    if (maps[i].base == post.base && maps[i].buffer == post.buffer) {
      step.reuse = static_cast<std::ptrdiff_t>(i);
      return step;
    }
  std::size_t unpinned = 0;
  for (std::size_t i = 0; i < maps.size(); ++i) {
    const MappedRange& m = maps[i];
    if (m.base < post.base + post.size && post.base < m.base + m.size) {
      if (m.pins > 0) step.conflict = true;
      else step.unmap.push_back(i);
    } else if (m.pins == 0) {
      ++unpinned;
    }
  }
  if (!pin && unpinned >= max_unpinned)
    for (std::size_t i = 0; i < maps.size(); ++i)
      if (maps[i].pins == 0 && std::find(step.unmap.begin(), step.unmap.end(), i) == step.unmap.end()) {
        step.unmap.insert(std::upper_bound(step.unmap.begin(), step.unmap.end(), i), i);
        break;
      }
  return step;
}

class PeerComm {
 public:
  static constexpr std::size_t kPostDepth = 16;
  static constexpr std::size_t kMapsPerPeer = 16;

  // All-gather of one byte string per rank (rank order); the MPI constructor supplies it.
  using AllGather = std::function<std::vector<std::vector<std::byte>>(std::span<const std::byte>)>;

#ifdef AXE_CUDA_HAVE_MPI
  // Collective over `comm` (every rank on one node): creates this rank's flag block and maps every
  // peer's, and checks that device memory can be mapped between the ranks (CUDA IPC, on a probe
  // allocation). Throws PeerUnavailable on every rank when any rank cannot map a peer's flags or
  // memory (the message names the rank, the peer and the system's error).
  PeerComm(MPI_Comm comm, int device, double timeout_s = 0);
#endif
  // The same from an all-gather the caller provides (tests).
  PeerComm(AllGather allgather, int rank, int size, int device, double timeout_s = 0);
  PeerComm(const PeerComm&) = delete;
  PeerComm& operator=(const PeerComm&) = delete;
  ~PeerComm();

  int rank() const { return rank_; }
  int size() const { return size_; }
  int device() const { return device_; }
  double timeout() const { return timeout_; }
  bool failed() const { return failed_; }

  // Collective over the world: every rank's `mine`, in rank order. Host-synchronous.
  std::vector<std::vector<std::byte>> allgather(std::span<const std::byte> mine);
  // This rank's staging for the peers (cudaMalloc'd): its post (with the handle).
  PeerPost export_staging(void* p);

  // The protocol above, enqueued on `s`. `peer` is a world rank.
  void signal_ready(int peer, cudaStream_t s);                      // after packing for peer
  std::uint64_t wait_ready(int peer, cudaStream_t s);               // before copying peer's message out
  void signal_consumed(int peer, std::uint64_t n, cudaStream_t s);  // after that copy
  void wait_consumed(cudaStream_t s);  // before packing: every message sent so far was copied out
  // Per peer, how many messages this rank has signalled ready so far: a mark for the wait below.
  const std::vector<std::uint64_t>& sent() const { return sent_; }
  // Before packing into a staging slot: every message sent up to `mark` (an earlier sent()) was
  // copied out, so chunks alternating between two slots wait only for the chunk before last.
  void wait_consumed(cudaStream_t s, std::span<const std::uint64_t> mark);

  // Posts (see above). post(): this rank's next post to `peer` (host; waits under the timeout
  // while the ring is full). take(): `peer`'s next post to this rank (host; waits under the
  // timeout until it is written). describe(p): the post for a step input at device address p of
  // this rank (handles cached by allocation); a post without a handle when the allocation cannot
  // be exported.
  void post(int peer, const PeerPost& post);
  PeerPost take(int peer);
  PeerPost describe(const void* p);
  // The address, in this process, of a direct post's data of `peer` (its allocation mapped on
  // first use; see Mappings above). `pin`: staging, kept mapped until as many unpin() calls.
  // used(): the mapping is read by work enqueued on `s` so far (it is unmapped only after that).
  const char* map(int peer, const PeerPost& post, bool pin = false);
  void unpin(int peer, const PeerPost& post);
  void used(int peer, const PeerPost& post, cudaStream_t s);
  // The peers' inputs mapped here now (at most kMapsPerPeer per peer; pinned staging aside).
  std::size_t mapped_inputs() const;

  // Called on every round of the host waits above (post, take); it may throw to end the wait
  // (the runtime's background agreement, when it finds the ranks running different plans).
  void set_host_poll(std::function<void()> poll) { host_poll_ = std::move(poll); }

  // Waits for `event` under the deadline; after timeout() seconds or a CUDA error: failed(), the
  // streams' pending flag waits released (release_waits), and axe::Error naming the rank and
  // `what`.
  void wait(cudaEvent_t event, const char* what);
  [[noreturn]] void fail_and_throw(const std::string& message);
  // Satisfies every flag wait enqueued on this rank's streams (this rank's block set beyond any
  // count, by CPU stores), so that a failed rank can still synchronize and free its memory.
  void release_waits() noexcept;

 private:
  void init();
  AllGather allgather_;
  int rank_ = 0, size_ = 1, device_ = 0;
  double timeout_ = 300;
  bool failed_ = false;
  // Flag blocks: shared host pages (one per rank, POSIX shared memory registered with CUDA), as
  // device addresses for the streams and host addresses for release_waits.
  std::size_t block_bytes_ = 0;
  std::vector<std::uint64_t*> host_blocks_;  // every rank's block, mapped here (host address)
  std::uint64_t* flags_ = nullptr;           // this rank's block: ready[size], consumed[size]
  std::vector<std::uint64_t*> peer_flags_;   // every rank's block (device address; own: flags_)
  std::vector<std::uint64_t> sent_, received_, waited_consumed_;
  // Posts: counts per peer, this rank's exported allocations (by id), and the peers' allocations
  // mapped here (per peer, least recently used first).
  std::vector<std::uint64_t> posted_, taken_;
  std::vector<PeerPost> exports_;
  struct Mapping : MappedRange {
    char* local = nullptr;  // the allocation's start, here
    cudaEvent_t last_use = nullptr;
  };
  std::vector<std::vector<Mapping>> maps_;
  std::function<void()> host_poll_;
  PostRing ring(int sender, int receiver) const;
  void unmap(Mapping& m, bool wait_first);
  template <class Try>
  void wait_host(Try&& ready, const std::string& what);
};

}  // namespace axe::cuda
