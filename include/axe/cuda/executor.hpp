// The device executor: runs a RankPlan on device buffers with the box kernels and NCCL
// (DESIGN §5), step for step like the host executor (axe/exec/executor.hpp), on one CUDA stream.
//
// Each step runs as its recorded Step::kind says, never as one rank's traffic suggests (plan.hpp,
// "Agreement"): a collective step (group of 2 or more) runs
//   all-gather / reduce-scatter / all-reduce: the native NCCL call on the group's
//     sub-communicator when Step::equal_blocks, else grouped ncclSend/ncclRecv (the v-variant,
//     reductions on receipt in term order);
//   broadcast: ncclBroadcast from Step::root (its index in the group) when equal_blocks, else
//     grouped send/recv;
//   all-to-all: grouped ncclSend/ncclRecv;
// and local-copy / permute / send-recv steps run their messages as grouped ncclSend/ncclRecv
// inside ncclGroupStart/End on the world communicator. A rank whose messages do not have the
// declared collective's shape (a peer outside the group, different blocks, unequal blocks under
// equal_blocks) is a planner bug: axe::Error naming the rank and the step, before anything is
// enqueued (the check of plan/step_check.hpp, which the host executor runs too).
//
// Per step, all launches are enqueued on the stream, in order, with no host synchronisation:
//   fills (1 launch) -> pack every send message back to back (1 launch) -> one NCCL call ->
//   unpack local copies and received messages (1 launch; with partial terms one launch per term,
//   in term order: term 0 writes, later terms combine with the step's op, the last divides for
//   avg). A local copy that transposes (one mode contiguous in the source, another in the
//   destination) runs through the swizzled shared-memory transpose instead.
// Overlap: a step with a transfer to and from one peer whose local copies (own block of an
// all-gather of 2 members received into staging, local boxes of a send/recv step with one peer;
// never a reducing step) move at least overlap_min bytes (AXE_OVERLAP_MIN, default 2 MiB; 0:
// never) runs them, and its local transposes, on a side stream forked after the step's pack (just
// before the NCCL call) and joined before the step ends, so they proceed while NCCL moves the
// messages. Example: S(1) -> R of 8192x8192 f32 on 2 GPUs: each rank copies its own 8192x4096
// block into its columns of the destination (128 MiB) during the all-gather, and after it only
// unpacks the peer's block. Not in pipelined steps, and not with several peers: on 4 H200s the
// copy slowed the all-to-all of S0->S1 (1 GiB: 0.92 ms overlapped, 0.79 ms after it) and, by
// up to 3 %, the all-gathers of S1->R and (S0,S1)->(R,R), while with one peer (2 GPUs) it paid (S1->R
// 1.28-1.31x -> 1.24-1.26x the bound, S0->S1 1.28-1.32x -> 1.22-1.26x). Large boxes of any copy
// may go to the copy engines (kernels.hpp, CopyEnginePolicy).
// Only what must move is moved (decided once per plan, at prepare time; the plan passes of
// plan/passes.hpp, run_passes(plan, cuda_passes()), make the first and last decisions, so
// `axe plan --passes cuda` prints them):
//   - padding (pad_unwritten): before the steps, only the elements of each written buffer that no step's fill,
//     copy or received box writes are set to NaN (0 for integers), as 1-D runs (runs of equal
//     length at a constant spacing, such as an uneven shard's padding column, as one 2-D box);
//     nothing when the writes cover the buffer (every even transition), the whole buffer when
//     the uncovered set is not cheap to list (over 2^20 runs or 4096 boxes).
//   - zero-copy sends: a message / collective block that is one contiguous range of the step's
//     input is handed to NCCL as is (ncclSend, ncclAllGather / ncclReduceScatter /
//     ncclAllReduce sendbuff), no pack.
//   - receive in place: a message / collective result that is one contiguous range of the
//     step's output (and needs no reduction on receipt) is written there by NCCL, no unpack.
//     All-gather: when every member's block lands contiguously at base + i * count and the local
//     copy is the rank's own block, NCCL writes the output directly (out-of-place from the
//     source, or packed into the own slot and in place). All-reduce with a non-contiguous term
//     packs into the output and reduces in place. The source buffer is never written.
//   - local slices folded (fold_slices): a local step that only cuts a contiguous range
//     out of its input for the next step is dropped; the next step reads the input itself.
// So S(0)->R, P->R and P->S(0) with contiguous blocks are one NCCL call and no kernel.
// Unequal blocks (uneven dims): an all-gather whose blocks differ in size runs as one
// ncclAllGather into slots of the largest block rounded up to 256 bytes, in staging, then an
// unpack, when that padding is at most an eighth of the data (else grouped send/recv). Example:
// S(0)->R of 65537x4095 f32 on 4 GPUs: blocks of 16385, 16385, 16385 and 16382 rows, slots of
// 67096576 elements; 3.2 ms at 1 GiB, where grouped send/recv took 4.9 ms and an all-gather of
// the unaligned blocks themselves 4.1 ms.
// Pipelining (opt-in, AXE_PIPELINE_CHUNKS > 1): a step whose pack and unpack kernels move at least
// AXE_PIPELINE_MIN_BYTES on some rank (all-gather, reduce-scatter, point-to-point steps without
// reduction) runs as chunks (the pipeline pass, split_step: chunk c moves elements [c*M/K,
// (c+1)*M/K) of every message), on three streams: packs on one, the NCCL calls on the executor's
// stream, unpacks on a third; chunks alternate between two staging slots, so chunk c+1 packs and
// chunk c-1 unpacks while chunk c is on the wire, and staging is two chunks instead of the whole
// step. The number of chunks is the maximum over the world of what each rank asks for (agreed in
// connect()), so every member of a group makes the same calls. Example: S(1) -> R of 8192x8192 f32
// on 2 GPUs with AXE_PIPELINE_CHUNKS=8: every rank unpacks 256 MiB, so the all-gather runs as 8
// all-gathers of 16 MiB blocks, each unpacked while the next is transferred. It is off by default
// because on 2 H200s over NVLink it did not pay: the box kernels and NCCL's share the SMs and HBM,
// and at 1 GiB S(1)->R went from 1.29x to 1.31-1.49x the raw all-gather (4 or 8 chunks, 2-8 blocks
// per SM); it does cut staging (P->S(1): 2x the destination unchunked, 1x with 4 chunks, at the
// same speed).
// Staging bound (always on): a step whose staging (packed sends + receive region) is larger than
// the destination's local size, and at least kStagingBoundMin (64 MiB), is split the same way into
// K = 2 * ceil(staging / destination) chunks (at most 16), whose two staging slots then fit in
// the destination. Example: P -> S(1) of 1 GiB f32 on 2 GPUs packs both 512 MiB blocks for the
// reduce-scatter (1 GiB of staging for a 512 MiB destination): 4 chunks, 2 x 256 MiB of staging.
// Below 64 MiB chunking costs more time than the memory is worth: P -> S(1) of 16 MiB on 4 H200s
// took 2.4-2.6x the raw reduce-scatter in 8 chunks of 2 MiB. The slot padding of an all-gather of
// unequal blocks (a few rows) does not count as staging here.
// Plan time (first execute of a plan, cached by plan) has two parts:
//   prepare_local(): descriptor tables built and uploaded, staging allocated once (intermediate
//     buffers plus the largest step's send + receive bytes), the shape checks above. Local.
//   connect(): the pipeline chunks are agreed (one all-reduce over the world) and the
//     sub-communicators the plan's native collectives need are split off
//     (NcclComm::ensure_groups). Collective over the WORLD: every world rank calls it for its
//     RankPlan of the same plan (ranks outside both meshes too: plan_rank gives them the same
//     steps with empty groups), host-synchronous.
// execute() does both on a local cache miss, which is right when every rank runs the same plans
// in the same order with the same cache state (tests, benchmarks). A caller that cannot promise
// that (the runtime's "cuda" backend) calls prepare_local() itself, agrees across ranks whether
// any rank prepared afresh, and then calls connect() on every rank alike.
// Plan rank numbers are world ranks of the NcclComm.
//
// Peer transport (a PeerComm instead of an NcclComm: ranks of one node, possibly sharing a GPU;
// peer_comm.hpp): every step runs as point-to-point messages (a collective kind as its v-variant:
// the messages the plan records for it, reductions on receipt in term order), packed into this
// rank's staging and pulled by the receiver: a message that is one contiguous range of its
// buffer with one device-to-device copy straight into it; any other message of a non-reducing step
// by copy_boxes (kernels.hpp) reading the sender's staging and writing the receiver's buffer in its
// layout (AXE_PEER_UNPACK=1, the default; 0: copied into the receive staging, then unpacked, one
// pass more); a reducing step's messages by reduce kernels reading the sender's staging, one launch
// per term and sender in term order (AXE_PEER_UNPACK=1; 0: through the receive staging, then one
// launch per term). Ordered by stream-side flags, never by the host. Reads from the input
// (AXE_PEER_DIRECT=1, the default; set_peer_direct): a message of a non-reducing, unchunked step
// that reads the plan's source or an intermediate buffer (in the sender's scratch, which the
// receiver maps as staging anyway: no posts), whose receiver's staged path needs no receive
// region, is agreed
// in connect() (connect_from_input: the sender's send boxes joined with the receiver's receive
// boxes by compose_message) to be copied by the receiver straight out of the sender's source,
// both in their layouts, with no pack: per call the sender's host posts where the source lies
// (PeerComm::post, an IPC handle; or that it packed the message, when CUDA cannot export the
// source's allocation), the receiver's host takes the post and maps the allocation (once), and
// the sender's step ends when the receivers have read it (its stream waits for their consumed
// flags). A step's pulls from different
// senders run at once, each sender's on its own stream (forked from and joined back into the
// executor's stream). connect() exchanges, over the world, where each message lies in its sender's
// staging (and maps the senders' staging). Chunks (peer_step_chunks): a non-reducing step runs in
// chunks when its packed sends exceed the destination's local size (the staging bound above), or,
// with AXE_PEER_CHUNK_BYTES > 0 (set_peer_chunk_bytes), when it sends or receives
// more than that many bytes on some rank (at most 16 chunks, the most any rank asks for, agreed
// in connect()). Chunks alternate between two staging slots as pipelined steps do: chunk c is
// packed on a second stream and flagged ready there while the receivers pull chunk c - 1, and
// packing chunk c waits only until the receivers copied out chunk c - 2 (the same slot). It
// bounds staging; it does not pay in time, so it is off by default: on 2 H100s (f32, the
// peer transport forced) each chunk added about 10 us of flag latency against what packing the
// next chunk during the pull saved: S0->S1 at 256 MiB 0.2855 ms unchunked, 0.2998 in 16 MiB
// chunks, 0.4616 in 4 MiB chunks; S1->R 0.606 / 0.683 / 0.811.
// NCCL is not used.
//
// Both transports (an NcclComm and a PeerComm: ranks of one node, one GPU each): each step runs
// on the transport the cost model (set_cost_model; plan/cost_model.hpp, step_transport_cost)
// prices lower at the slowest rank, agreed in connect() in the same all-reduce as the pipeline
// chunks; a model without peer entries keeps every step on NCCL. Steps on the peer transport run
// as above (in their peer chunks); the others as with NCCL alone. set_step_transport forces one transport
// for every step (calibration). A pack into staging waits until the peers have copied out what
// this rank's peer steps sent from it before.
//
// CUDA graphs (AXE_CUDA_GRAPHS=1, the default; set_graphs): the second execute() of a prepared
// plan with the same source and destination pointers captures what it enqueues (ThreadLocal
// stream capture: the kernels, copies, events and NCCL calls) into a CUDA graph and launches it;
// later calls with those pointers launch the graph instead of enqueuing step by step, which
// costs one host call instead of one per kernel and NCCL call. Up to kGraphsPerPlan pointer
// pairs per plan keep a graph (the oldest goes first); re-preparing or evicting a plan destroys
// its graphs. Plans with a step on the peer transport never run as graphs (their stream flags
// carry per-call counts). The first call of a pair runs eagerly, so that lazy work (descriptor
// uploads, NVRTC compiles, NCCL connections) happens outside the capture. With graphs on, the
// NCCL communicators are created with NCCL_GRAPH_REGISTER=0 unless the environment sets it:
// ranks may capture at different calls (their own pointers decide), and NCCL forbids mixing
// registered with unregistered buffers across ranks; without registration a captured NCCL call
// moves data as an eager one does. A capture that fails (CUDA or NCCL refuses it) turns graphs
// off for that plan and the call runs eagerly, with the error of the eager run if there is one.
// Every call of a plan that runs as a graph, its first (eager) one included, copies its boxes
// with the kernels, none on the copy engines (copy_engine.hpp: a captured device-to-device
// cudaMemcpyAsync is slower than the kernels).
//
// Example: S(0) -> R of 64x128 f32 on gpu=2: rank 1's block (rows 32..63) is source [0, 4096)
// and lands at destination [4096, 8192), rank 0's block at [0, 4096): one
// ncclAllGather(source, destination, 4096) on the group {0,1} communicator, no kernel launch
// (no padding, pack or unpack), then synchronize() waits.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "axe/plan/plan.hpp"

namespace axe::cuda {

class NcclComm;
class PeerComm;

// Which transport the steps of plans prepared from now on run on, with both (see above).
enum class StepTransport { Model, Network, Peer };

// The per-step choice with both transports, host logic (tested without a GPU).
// step_transport_costs: per step of `plan` (after the CUDA passes), this rank's cost on NCCL and
// on the peer transport in ns (step_transport_cost, rounded); kNoPeerPrice where the model has no
// peer line for the step's kind, and everywhere without a model. choose_step_transports: from the
// world's maxima of those (the slowest rank), 1 for the steps that run on the peer transport:
// every step when forced Peer, none when forced Network, else those whose peer cost is strictly
// below their NCCL cost (ties, and steps that move nothing, cost 0 on both: NCCL).
// Example: NCCL {17000, 0}, peer {9000, 0}, Model -> {1, 0}.
inline constexpr std::int64_t kNoPeerPrice = std::int64_t{1} << 62;
struct StepCostsNs {
  std::vector<std::int64_t> network, peer;
};
StepCostsNs step_transport_costs(const CostModel* model, const RankPlan& plan);
std::vector<char> choose_step_transports(std::span<const std::int64_t> network_ns,
                                         std::span<const std::int64_t> peer_ns, StepTransport forced);

// The chunks a step runs in on the peer transport, on this rank (host logic): ceil(bytes /
// chunk_bytes) of the larger of what the step sends and receives here (none when chunk_bytes is
// 0), and at least the staging bound's 2 * ceil(staging / destination_bytes) when the packed sends
// exceed the destination's local bytes and kStagingBoundMin; at most kMaxPipelineChunks; 1 for
// reducing steps (their terms are read straight from the senders' staging) and for a step the
// planner chunked already.
// Examples: an all-to-all sending and receiving 64 MiB of f32, chunk_bytes 16 MiB -> 4; sending
// 100 MiB into a 60 MiB destination, chunk_bytes 0 -> 4.
std::int64_t peer_step_chunks(const Step& s, DType dt, std::int64_t chunk_bytes, std::int64_t destination_bytes);

// Waits for `event` (recorded on a stream the transports' work is on), bounded by their timeout:
// through NCCL's wait (errors polled) when there is a communicator, else the peer transport's,
// else a plain event wait. With both, a failure or timeout also releases the peer transport's
// stream waits, so that this rank can still tear down. Throws axe::Error as those waits do.
void wait_transports(cudaEvent_t event, NcclComm* comm, PeerComm* peer, const char* what);

class CudaExecutor {
 public:
  // `comm` may be null: then only plans without messages run (local copies and fills).
  // `stream` null: the executor creates and owns a non-blocking stream on the current device.
  explicit CudaExecutor(NcclComm* comm, cudaStream_t stream = nullptr);
  // The peer transport (see above); `peer` must outlive the executor.
  explicit CudaExecutor(PeerComm* peer, cudaStream_t stream = nullptr);
  // Both transports (see above): `comm` and `peer` over the same world ranks.
  CudaExecutor(NcclComm* comm, PeerComm* peer, cudaStream_t stream = nullptr);
  // No transport: only plans without messages.
  explicit CudaExecutor(std::nullptr_t, cudaStream_t stream = nullptr)
      : CudaExecutor(static_cast<NcclComm*>(nullptr), stream) {}
  ~CudaExecutor();
  CudaExecutor(const CudaExecutor&) = delete;
  CudaExecutor& operator=(const CudaExecutor&) = delete;

  // Enqueues `plan` on the stream: `source` holds plan.buffers.front() elements (device memory;
  // may be null when that is 0), `destination` plan.buffers.back() elements, padding set to NaN
  // (0 for integers). Returns without waiting for the device. Throws axe::Error on a plan this
  // executor cannot run (messages without a communicator, a rank mismatch).
  void execute(const RankPlan& plan, const void* source, void* destination);
  // Plan-time work of this rank (see above). Returns true when `plan` was prepared now (not
  // found in the cache): then connect(plan) must follow, on every world rank alike. Throws
  // axe::Error naming rank and step on a plan whose messages do not match its step kinds.
  bool prepare_local(const RankPlan& plan);
  // True when `plan` is prepared and connected here (execute() then has no plan-time work).
  bool ready(const RankPlan& plan) const;
  // Splits the sub-communicators of `plan` (prepared) that any rank lacks. Collective over the
  // world: every world rank calls it, each with its own RankPlan of the same plan.
  void connect(const RankPlan& plan);
  // Waits for everything enqueued so far; NCCL errors and AXE_TIMEOUT_S are detected here
  // (communicators aborted, axe::Error thrown).
  void synchronize();
  cudaStream_t stream() const { return stream_; }
  // Kernel launches and NCCL calls issued by the last execute() (for tests and benchmarks; a
  // graph replay reports those of the call it captured).
  std::int64_t launches() const { return launches_; }
  std::int64_t nccl_calls() const { return nccl_calls_; }
  // Messages the last execute() copied straight out of their senders' input (AXE_PEER_DIRECT),
  // and of them those from the plan's source (posted per call; the others are intermediate
  // buffers in the senders' scratch).
  std::int64_t input_reads() const { return input_reads_; }
  std::int64_t source_reads() const { return source_reads_; }
  // Whether the last execute() launched a CUDA graph (see above), captured or replayed.
  bool graphed() const { return graphed_; }
  // CUDA graphs on or off (see above) for calls from now on; off destroys the graphs kept.
  void set_graphs(bool on);
  bool graphs() const { return graphs_; }
  static constexpr int kGraphsPerPlan = 2;
  // Device bytes this executor allocated for `plan` (intermediate buffers and staging slots);
  // -1 when the plan is not prepared.
  std::int64_t staging_bytes(const RankPlan& plan) const;
  // Per plan step, the number of pipelined chunks it runs in (1: not pipelined); empty when the
  // plan is not prepared.
  std::vector<std::int64_t> pipeline_chunks(const RankPlan& plan) const;

  // Pipelining (see above): a step is split in chunks when this rank's pack + unpack work is at
  // least min_bytes, into work / chunk_bytes chunks, at least 2 and at most max_chunks (1 turns
  // pipelining off). Defaults: AXE_PIPELINE_CHUNKS (1: off), AXE_PIPELINE_MIN_BYTES (8 MiB),
  // chunk_bytes 8 MiB. Affects plans prepared afterwards; throws axe::Error on values out of
  // range (max_chunks 1..16, the others >= 1).
  void set_pipeline(std::int64_t max_chunks, std::int64_t min_bytes,
                    std::int64_t chunk_bytes = std::int64_t{8} << 20);
  // With both transports: the model that picks each step's transport (nullptr, the default: every
  // step on NCCL), read when a plan is connected; it must outlive the executor. And the forcing
  // (Model: by the model); a change drops the prepared plans.
  void set_cost_model(const CostModel* model) { model_ = model; }
  void set_step_transport(StepTransport t);
  // Per plan step, whether it runs on the peer transport; empty when the plan is not prepared.
  std::vector<bool> peer_steps(const RankPlan& plan) const;
  // Peer transport chunks (see above; 0: none) for plans prepared afterwards; axe::Error when
  // negative.
  void set_peer_chunk_bytes(std::int64_t bytes);
  // Receivers read messages straight from the senders' input (AXE_PEER_DIRECT; see above), for
  // plans connected from now on (a message only where both its sender and receiver have it on).
  void set_peer_direct(bool on) { peer_direct_ = on; }
  bool peer_direct() const { return peer_direct_; }
  std::int64_t peer_chunk_bytes() const { return peer_chunk_bytes_; }
  // Overlap threshold (see above; 0 turns it off) for plans prepared afterwards; axe::Error when
  // negative.
  void set_overlap_min(std::int64_t bytes);
  std::int64_t overlap_min() const { return overlap_min_; }
  static constexpr std::int64_t kMaxPipelineChunks = 16;
  // Steps staging at least this many bytes never stage more than the destination (see above).
  static constexpr std::int64_t kStagingBoundMin = std::int64_t{64} << 20;

 private:
  struct Prepared;
  Prepared* lookup(const RankPlan& plan) const;
  void build(Prepared& p);
  void wish_chunks(Prepared& p) const;
  void ensure_pipeline_streams();
  void ensure_side_stream();
  void connect_peers(Prepared& p);
  void connect_from_input(Prepared& p, const std::vector<const char*>& scratch_of);
  // Enqueues the prepared plan step by step on stream_ (execute() without the graph logic).
  void enqueue(Prepared& p, const void* source, void* destination);
  // Runs `p` on (source, destination) as a graph (captured now or kept), or returns false when
  // this call runs eagerly (see "CUDA graphs" above).
  bool run_graph(Prepared& p, const void* source, void* destination);
  // Peer transport: waits (bounded) until every peer has copied out what this rank sent, so its
  // staging may be freed; nothing without a PeerComm or after a failure.
  void quiesce() noexcept;
  // The per-step transport choice of a plan being connected with both transports (connect()).
  void choose_transports(Prepared& p, std::vector<std::int64_t>& agreed);
  NcclComm* comm_;
  PeerComm* peer_ = nullptr;
  const CostModel* model_ = nullptr;
  StepTransport forced_ = StepTransport::Model;
  cudaStream_t stream_ = nullptr;
  bool owns_stream_ = false;
  cudaEvent_t done_ = nullptr;
  std::map<const RankPlan*, std::unique_ptr<Prepared>> cache_;
  std::int64_t launches_ = 0, nccl_calls_ = 0, input_reads_ = 0, source_reads_ = 0;
  std::int64_t max_chunks_ = 1, min_pipeline_bytes_ = std::int64_t{8} << 20,
               pipeline_chunk_bytes_ = std::int64_t{8} << 20;
  std::int64_t overlap_min_ = std::int64_t{2} << 20;
  std::int64_t peer_chunk_bytes_ = 0;  // AXE_PEER_CHUNK_BYTES
  bool peer_unpack_ = true;  // AXE_PEER_UNPACK: receivers unpack straight from the senders' staging
  bool peer_direct_ = true;  // AXE_PEER_DIRECT: receivers read the senders' input (connect_from_input)
  bool graphs_ = true;       // AXE_CUDA_GRAPHS
  bool graphed_ = false;
  int pipeline_blocks_per_sm_ = 4;  // box-kernel occupancy in pipelined steps (AXE_PIPELINE_BLOCKS_PER_SM)
  cudaStream_t pack_stream_ = nullptr, unpack_stream_ = nullptr;
  std::vector<cudaEvent_t> events_;  // fork, then per chunk: packed, transferred, unpacked
  // Peer chunks: PeerComm::sent() before a step's chunk 0 ([0]) and after chunk c's signals ([c + 1]).
  std::vector<std::vector<std::uint64_t>> peer_marks_;
  cudaStream_t side_stream_ = nullptr;  // local copies overlapping a step's transfer
  cudaEvent_t fork_ = nullptr, join_ = nullptr;
  // Peer transport: one stream per sending peer of a step, so that pulls from several peers run
  // at once (forked from stream_ at pull_fork_, joined back through pull_join_).
  std::vector<cudaStream_t> pull_streams_;
  std::vector<cudaEvent_t> pull_join_;
  cudaEvent_t pull_fork_ = nullptr;
  void ensure_pull_streams(std::size_t n);
};

}  // namespace axe::cuda
