// Internal to the CUDA executor (runtime/cuda/executor_*.cpp, cuda_executor.cpp): the run-time
// form of a step and of a prepared plan, shared by preparation, lowering and dispatch.
#pragma once

#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

#include "axe/cuda/executor.hpp"
#include "axe/cuda/kernels.hpp"
#include "axe/cuda/nccl_comm.hpp"
#include "axe/cuda/peer_comm.hpp"
#include "axe/plan/plan.hpp"

namespace axe::cuda {

namespace internal {

// How a step moves its data over NCCL: grouped ncclSend/ncclRecv (P2P) or one native collective.
// (Not a box mode: `Mode` elsewhere is a mode of a layout or box.)
enum class Path { P2P, AllGather, AllReduce, ReduceScatter, Broadcast };

// Kinds that have a native NCCL collective (used when Step::equal_blocks; an all-gather of
// unequal blocks also, with padded slots, see collective_path).
bool native_kind(StepKind k);

// The run-time form of one step on this rank.
struct PStep {
  Path path = Path::P2P;
  ncclComm_t comm = nullptr;
  int me = 0;              // index in the group (collectives)
  int root = 0;            // broadcast: the root's index in the group
  std::int64_t count = 0;  // elements per member block (collectives)
  BoxList fills;
  BoxList pack;  // in -> send region
  // Point-to-point messages: n elements at off in the send / receive region of scratch, or,
  // when `direct`, in the step's in / out buffer itself (a contiguous message: no pack/unpack).
  struct Msg {
    std::int64_t peer = 0, off = 0, n = 0;
    bool direct = false;
    const char* remote = nullptr;  // peer transport, receives: the message in the sender's staging
    // Peer transport, a receive of a non-reducing step that is not one contiguous range of `out`
    // (AXE_PEER_UNPACK=1): the boxes that read it straight from the sender's staging (`remote`,
    // packed from 0) into `out`, so it is neither copied into this rank's staging nor unpacked
    // from there (no receive region: off is unused).
    BoxList unpack{};
    // Peer transport, a receive of a reducing step (AXE_PEER_UNPACK=1): its boxes by term, read
    // straight from the sender's staging (`remote`, packed from 0) and reduced into `out` in term
    // order with the step's other terms (no receive region).
    std::vector<std::pair<std::int64_t, BoxList>> terms{};
    // Peer transport (AXE_PEER_DIRECT=1, agreed with the peer in connect()): the receiver reads
    // this message straight from the sender's step input, which the sender posts on every call
    // (PeerComm::post) instead of packing it. Receives: `joined` reads the sender's input and
    // writes `out` (compose_message). A post without a handle falls back to the staged path.
    bool from_input = false;
    BoxList joined{};
    // Receives from_input of a step whose input is an intermediate buffer: that buffer in the
    // sender's scratch, mapped here (no post; null: the plan's source, posted per call).
    const char* input = nullptr;
  };
  std::vector<Msg> sends, recvs;
  // Native collectives without staging: the send block read straight from `in` at send_at
  // (elements; -1: packed into scratch), the result written straight into `out` at recv_at
  // (-1: received into scratch, then copied). All-gather with recv_at >= 0 receives every
  // member's block at recv_at + i * count of `out`; with send_at < 0 it then packs its own
  // block into its slot first (NCCL's in-place all-gather).
  std::int64_t send_at = -1, recv_at = -1;
  std::vector<std::pair<std::int64_t, BoxList>> unpack;  // by term: recv region (src2: in)
  std::vector<Transfer> transposes;
  // Local copies in -> out that run on the side stream while the transfer runs (`overlap`), when
  // they move at least the executor's overlap_min bytes; else they are part of `unpack`. The
  // transposes then run on the side stream too.
  BoxList local;
  bool overlap = false;
  BoxList result;    // recv region -> out (all-reduce, reduce-scatter)
  BoxList in_place;  // out -> out over the result's range (avg divides there when recv_at >= 0)
  std::int64_t send_elems = 0, recv_elems = 0;
  std::int64_t pad = 0;  // padded all-gather: staging elements beyond the blocks (slot padding)
  // Pipelining: chunk `chunk` of `chunks` of one plan step; chunks alternate between two
  // staging slots, so chunk c's pack and unpack overlap the transfers of chunks c -/+ 1.
  std::int64_t chunk = 0, chunks = 1;
  int slot = 0;
  bool peer = false;  // moved by the peer transport (else NCCL)
  // Peer transport, sends: the pack of the messages not read from the input (from_input), at
  // their places in the send region; `pack` packs them all (a call whose input cannot be posted).
  BoxList pack_staged;
  bool any_from_input = false;
  bool input_in_scratch = false;  // the step's input is an intermediate buffer: no posts
};

// Lowering (executor_lower.cpp).
// `comm`: some transport moves messages; `peer`: it is the peer transport (every step P2P, sends
// always packed into staging, where the receiver pulls them from).
// `pull_unpack` (with `peer`): receives that are not one contiguous range of `out` are unpacked
// (Msg::unpack) or, in reducing steps, reduced (Msg::terms) straight from the sender's staging.
PStep build_step(const RankPlan& pl, const Step& s, std::size_t index, bool comm, std::int64_t overlap_min,
                 bool peer = false, bool pull_unpack = false);
std::pair<std::int64_t, std::int64_t> kernel_work(const PStep& ps);
bool moves_data(const RankPlan& plan);

}  // namespace internal

struct CudaExecutor::Prepared {
  RankPlan plan;  // a copy: the cache key's content is checked against it
  // The plan through the CUDA passes (plan/passes.hpp): local slices folded (fold_slices), the
  // unwritten elements listed (pad_unwritten).
  RankPlan exec;
  // The plan that runs: `exec` with the steps pipelined (chunks[i] > 1) split (pipeline).
  RankPlan run;
  std::vector<internal::PStep> steps;  // one per run step
  std::vector<std::size_t> origin;     // per run step: its plan step
  // Per plan step: the chunks this rank would pipeline it in (1: none), and the agreed number
  // (the maximum over the world, so that every member of a group makes the same calls).
  std::vector<std::int64_t> wish, chunks;
  // Per plan step: the chunks this rank would run it in on the peer transport (peer_step_chunks).
  std::vector<std::int64_t> peer_wish;
  // Per plan step: it runs on the peer transport (all with the peer transport alone, none with
  // NCCL alone, the agreed choice with both; see executor.hpp).
  std::vector<char> on_peer;
  bool any_peer() const { return std::find(on_peer.begin(), on_peer.end(), 1) != on_peer.end(); }
  // One entry per run step whose kind has a native collective (the same steps on every rank):
  // this rank's group when it runs the native call, else empty.
  std::vector<std::vector<std::int64_t>> groups;
  std::vector<int> group_step;
  bool connected = false;
  void* scratch = nullptr;
  std::int64_t scratch_bytes = 0;
  std::vector<std::int64_t> inter_offset;                         // byte offset of buffer i in scratch (-1: none)
  std::int64_t send_offset[2] = {0, 0}, recv_offset[2] = {0, 0};  // per staging slot
  // Per buffer: exec.pads, padded (NaN / 0) before the steps; empty when the plan's writes cover
  // the buffer (then nothing is filled).
  std::vector<BoxList> pads;
  // Peer transport: the senders' staging mapped here (pinned in `peer` until this plan goes).
  PeerComm* peer = nullptr;
  std::vector<std::pair<int, PeerPost>> pinned;
  // CUDA graphs (executor.hpp), by (source, destination): seen once (exec null), or captured,
  // with the launches and NCCL calls of the captured call; oldest first.
  struct Graph {
    const void* source = nullptr;
    void* destination = nullptr;
    cudaGraphExec_t exec = nullptr;
    std::int64_t launches = 0, nccl_calls = 0;
  };
  std::vector<Graph> graphs;
  bool no_graphs = false;  // a capture failed: this plan runs eagerly
  void drop_graphs();
  ~Prepared();
};

}  // namespace axe::cuda
