// CudaExecutor, preparation: construction and settings, the plan cache, prepare_local() (the
// plan passes, lowering, the chunk wish, padding) and connect() (the agreed chunks,
// sub-communicators), and the scratch layout. Moved from cuda_executor.cpp.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <string>

#include "axe/core/error.hpp"
#include "axe/core/tunables.hpp"
#include "axe/cuda/check.hpp"
#include "axe/cuda/peer_comm.hpp"
#include "axe/plan/compose.hpp"
#include "axe/plan/passes.hpp"
#include "executor_internal.hpp"

namespace axe::cuda {

using namespace internal;

namespace {

std::int64_t align_up(std::int64_t n) { return (n + 255) / 256 * 256; }

}  // namespace

void CudaExecutor::Prepared::drop_graphs() {
  for (const Graph& g : graphs)
    if (g.exec) cudaGraphExecDestroy(g.exec);
  graphs.clear();
}

CudaExecutor::Prepared::~Prepared() {
  drop_graphs();
  if (peer) {
    for (const auto& [q, post] : pinned) peer->unpin(q, post);
  }
  if (scratch) cudaFree(scratch);
}

CudaExecutor::CudaExecutor(PeerComm* peer, cudaStream_t stream) : CudaExecutor(static_cast<NcclComm*>(nullptr), stream) {
  peer_ = peer;
  if (peer_) AXE_CUDA_CHECK(cudaSetDevice(peer_->device()));
}

CudaExecutor::CudaExecutor(NcclComm* comm, PeerComm* peer, cudaStream_t stream) : CudaExecutor(comm, stream) {
  if (comm && peer && (comm->rank() != peer->rank() || comm->size() != peer->size()))
    fail("CudaExecutor: the NCCL communicator (rank " + std::to_string(comm->rank()) + " of " +
         std::to_string(comm->size()) + ") and the peer transport (rank " + std::to_string(peer->rank()) + " of " +
         std::to_string(peer->size()) + ") must span the same ranks");
  peer_ = peer;
}

CudaExecutor::CudaExecutor(NcclComm* comm, cudaStream_t stream) : comm_(comm), stream_(stream) {
  if (comm_) AXE_CUDA_CHECK(cudaSetDevice(comm_->device()));
  if (!stream_) {
    AXE_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
    owns_stream_ = true;
  }
  AXE_CUDA_CHECK(cudaEventCreateWithFlags(&done_, cudaEventDisableTiming));
  // The settings' defaults and ranges are the tunables table's (src/core/tunables.cpp).
  set_pipeline(tunable_int("AXE_PIPELINE_CHUNKS"), tunable_int("AXE_PIPELINE_MIN_BYTES"));
  pipeline_blocks_per_sm_ = static_cast<int>(tunable_int("AXE_PIPELINE_BLOCKS_PER_SM"));
  peer_unpack_ = tunable_int("AXE_PEER_UNPACK") != 0;
  peer_direct_ = tunable_int("AXE_PEER_DIRECT") != 0;
  set_peer_chunk_bytes(tunable_int("AXE_PEER_CHUNK_BYTES"));
  graphs_ = tunable_int("AXE_CUDA_GRAPHS") != 0;
  set_overlap_min(tunable_int("AXE_OVERLAP_MIN"));
}

void CudaExecutor::quiesce() noexcept {
  if (!peer_ || peer_->failed()) return;
  try {
    peer_->wait_consumed(stream_);
    AXE_CUDA_CHECK(cudaEventRecord(done_, stream_));
    peer_->wait(done_, "CudaExecutor: waiting for peers to copy out this rank's staging");
  } catch (const std::exception&) {
    // failed() is set: the job is failing; the staging is freed anyway.
  }
}

CudaExecutor::~CudaExecutor() {
  quiesce();
  if (stream_) cudaStreamSynchronize(stream_);
  cache_.clear();
  for (cudaEvent_t e : events_) cudaEventDestroy(e);
  if (pack_stream_) cudaStreamDestroy(pack_stream_);
  if (unpack_stream_) cudaStreamDestroy(unpack_stream_);
  if (side_stream_) cudaStreamDestroy(side_stream_);
  for (cudaStream_t st : pull_streams_) cudaStreamDestroy(st);
  for (cudaEvent_t e : pull_join_) cudaEventDestroy(e);
  if (pull_fork_) cudaEventDestroy(pull_fork_);
  if (fork_) cudaEventDestroy(fork_);
  if (join_) cudaEventDestroy(join_);
  if (done_) cudaEventDestroy(done_);
  if (owns_stream_) cudaStreamDestroy(stream_);
}

void CudaExecutor::set_step_transport(StepTransport t) {
  if (t == forced_) return;
  if (t == StepTransport::Peer && !peer_)
    fail("CudaExecutor::set_step_transport: the peer transport was asked for, but this executor has none");
  if (t == StepTransport::Network && !comm_)
    fail("CudaExecutor::set_step_transport: NCCL was asked for, but this executor has no communicator");
  forced_ = t;
  quiesce();
  AXE_CUDA_CHECK(cudaStreamSynchronize(stream_));
  cache_.clear();
}

std::vector<bool> CudaExecutor::peer_steps(const RankPlan& plan) const {
  const Prepared* p = lookup(plan);
  if (!p) return {};
  return std::vector<bool>(p->on_peer.begin(), p->on_peer.end());
}

void CudaExecutor::set_graphs(bool on) {
  graphs_ = on;
  if (on) return;
  for (auto& [key, p] : cache_) p->drop_graphs();  // a launch still in flight completes
}

void CudaExecutor::set_peer_chunk_bytes(std::int64_t bytes) {
  if (bytes < 0) fail("CudaExecutor::set_peer_chunk_bytes: " + std::to_string(bytes) + " bytes is negative");
  peer_chunk_bytes_ = bytes;
}

void CudaExecutor::set_overlap_min(std::int64_t bytes) {
  if (bytes < 0) fail("CudaExecutor::set_overlap_min: " + std::to_string(bytes) + " bytes is negative");
  overlap_min_ = bytes;
}

void CudaExecutor::set_pipeline(std::int64_t max_chunks, std::int64_t min_bytes, std::int64_t chunk_bytes) {
  if (max_chunks < 1 || max_chunks > kMaxPipelineChunks)
    fail("CudaExecutor::set_pipeline: max_chunks " + std::to_string(max_chunks) + " outside 1.." +
         std::to_string(kMaxPipelineChunks));
  if (min_bytes < 1) fail("CudaExecutor::set_pipeline: min_bytes " + std::to_string(min_bytes) + " < 1");
  if (chunk_bytes < 1) fail("CudaExecutor::set_pipeline: chunk_bytes " + std::to_string(chunk_bytes) + " < 1");
  max_chunks_ = max_chunks;
  min_pipeline_bytes_ = min_bytes;
  pipeline_chunk_bytes_ = chunk_bytes;
}

static bool same_plan(const RankPlan& a, const RankPlan& b) {
  return a.rank == b.rank && a.dtype == b.dtype && a.buffers == b.buffers && a.steps == b.steps && a.pads == b.pads;
}

CudaExecutor::Prepared* CudaExecutor::lookup(const RankPlan& plan) const {
  auto it = cache_.find(&plan);
  return it != cache_.end() && same_plan(it->second->plan, plan) ? it->second.get() : nullptr;
}

void CudaExecutor::build(Prepared& p) {
  p.drop_graphs();  // they hold the old steps' pointers
  const RankPlan& pl = p.exec;
  const std::int64_t es = size_of(pl.dtype);
  p.run = pipeline(pl, p.chunks);
  p.steps.clear();
  // pipeline() puts plan step i's chunks[i] chunks one after the other.
  std::vector<std::size_t>& origin = p.origin;
  origin.clear();
  for (std::size_t i = 0; i < pl.steps.size(); ++i)
    origin.insert(origin.end(), static_cast<std::size_t>(p.chunks.empty() ? 1 : p.chunks[i]), i);
  std::int64_t max_send[2] = {0, 0}, max_recv[2] = {0, 0};
  for (std::size_t j = 0; j < p.run.steps.size(); ++j) {
    const Step& s = p.run.steps[j];
    const bool piped = !p.chunks.empty() && p.chunks[origin[j]] > 1;
    PStep ps = build_step(pl, s, origin[j], comm_ != nullptr || peer_ != nullptr, piped ? 0 : overlap_min_,
                          p.on_peer[origin[j]] != 0, peer_unpack_);
    // Pipelined: the chunks this executor split (at most kMaxPipelineChunks). A step the planner
    // chunked for its staging limit (possibly hundreds of chunks) runs chunk after chunk on
    // stream_, as any other step.
    if (piped) {
      ps.chunk = s.chunk;
      ps.chunks = s.chunks;
    }
    ps.slot = static_cast<int>(ps.chunk % 2);
    max_send[ps.slot] = std::max(max_send[ps.slot], ps.send_elems * es);
    max_recv[ps.slot] = std::max(max_recv[ps.slot], ps.recv_elems * es);
    p.steps.push_back(std::move(ps));
  }
  // Collective groups of the run steps (the same steps on every rank, chunks being agreed); the
  // chunks of one step share the communicator of its first chunk.
  p.groups.clear();
  p.group_step.clear();
  for (std::size_t j = 0; j < p.run.steps.size(); ++j) {
    const Step& s = p.run.steps[j];
    if (native_kind(s.kind) && p.steps[j].chunk == 0) {
      p.groups.push_back(p.steps[j].path == Path::P2P ? std::vector<std::int64_t>{} : s.group);
      p.group_step.push_back(static_cast<int>(j));
    }
  }
  // Scratch: intermediate buffers, then the send and receive regions of the two staging slots.
  const std::size_t nb = pl.buffers.size();
  std::int64_t bytes = 0;
  p.inter_offset.assign(nb, -1);
  for (std::size_t i = 1; i + 1 < nb; ++i) {
    p.inter_offset[i] = bytes;
    bytes += align_up(pl.buffers[i] * es);
  }
  for (int slot = 0; slot < 2; ++slot) {
    p.send_offset[slot] = bytes;
    bytes += align_up(max_send[slot]);
    p.recv_offset[slot] = bytes;
    bytes += align_up(max_recv[slot]);
  }
  if (p.scratch) {
    quiesce();
    AXE_CUDA_CHECK(cudaStreamSynchronize(stream_));
    AXE_CUDA_CHECK(cudaFree(p.scratch));
    p.scratch = nullptr;
  }
  if (bytes > 0) AXE_CUDA_CHECK(cudaMalloc(&p.scratch, static_cast<std::size_t>(bytes)));
  p.scratch_bytes = bytes;
}

// Per plan step, the chunks this rank would run it in (1: none), from its unchunked build:
// pipelining (opt-in) and the staging bound.
void CudaExecutor::wish_chunks(Prepared& p) const {
  const RankPlan& pl = p.exec;
  const std::int64_t es = size_of(pl.dtype);
  p.wish.assign(pl.steps.size(), 1);
  p.peer_wish.assign(pl.steps.size(), 1);
  for (std::size_t i = 0; i < pl.steps.size(); ++i) {
    const Step& s = pl.steps[i];
    const auto& ps = p.steps[i];
    p.peer_wish[i] = peer_ ? peer_step_chunks(s, pl.dtype, peer_chunk_bytes_, pl.buffers.back() * es) : 1;
    if (ps.peer) {  // the peer transport's own chunks (see executor.hpp)
      p.wish[i] = p.peer_wish[i];
      continue;
    }
    if (s.chunks > 1 || (s.reduce && ps.path == Path::P2P)) continue;  // planner-chunked, or terms
    if (ps.path != Path::AllGather && ps.path != Path::ReduceScatter && ps.path != Path::P2P) continue;
    const auto [work, moved] = kernel_work(ps);
    if (moved == 0 || work == 0) continue;
    if (max_chunks_ >= 2 && work * es >= min_pipeline_bytes_)
      p.wish[i] = std::clamp<std::int64_t>(work * es / pipeline_chunk_bytes_, 2, max_chunks_);
    // Staging bound: a step staging more than the destination's local bytes (and at least
    // kStagingBoundMin) runs in enough chunks that its two staging slots fit in the destination.
    // The slot padding of a padded all-gather does not count: a few rows over the destination.
    const std::int64_t staging = (ps.send_elems + ps.recv_elems - ps.pad) * es, dst = pl.buffers.back() * es;
    if (staging > dst && staging >= kStagingBoundMin && dst > 0)
      p.wish[i] = std::max(p.wish[i], std::min<std::int64_t>(2 * ((staging + dst - 1) / dst), kMaxPipelineChunks));
  }
}

std::int64_t peer_step_chunks(const Step& s, DType dt, std::int64_t chunk_bytes, std::int64_t destination_bytes) {
  if (s.reduce || s.chunks > 1) return 1;
  const auto es = static_cast<std::int64_t>(size_of(dt));
  std::int64_t sent = 0, received = 0;
  for (const auto& m : s.sends) sent += m.elements();
  for (const auto& m : s.recvs) received += m.elements();
  std::int64_t k = 1;
  if (chunk_bytes > 0) k = (std::max(sent, received) * es + chunk_bytes - 1) / chunk_bytes;
  // The staging bound: every message is packed into staging.
  const std::int64_t staging = sent * es;
  if (staging > destination_bytes && staging >= CudaExecutor::kStagingBoundMin && destination_bytes > 0)
    k = std::max(k, 2 * ((staging + destination_bytes - 1) / destination_bytes));
  return std::clamp<std::int64_t>(k, 1, CudaExecutor::kMaxPipelineChunks);
}

bool CudaExecutor::prepare_local(const RankPlan& plan) {
  if (lookup(plan)) return false;
  auto p = std::make_unique<Prepared>();
  p->plan = plan;
  p->exec = run_passes(plan, cuda_passes());  // the same passes on every rank
  const DType dt = plan.dtype;
  const RankPlan& pl = p->exec;
  if (comm_ && plan.rank != comm_->rank())
    fail("CudaExecutor: the plan is for rank " + std::to_string(plan.rank) + " but this NCCL rank is " +
         std::to_string(comm_->rank()));
  if (peer_ && plan.rank != peer_->rank())
    fail("CudaExecutor: the plan is for rank " + std::to_string(plan.rank) + " but this peer-transport rank is " +
         std::to_string(peer_->rank()));
  // The peer transport alone carries every step; with NCCL too, connect() chooses per step.
  p->on_peer.assign(pl.steps.size(), peer_ && (!comm_ || forced_ == StepTransport::Peer) ? 1 : 0);
  build(*p);
  wish_chunks(*p);
  // Padding: the boxes pad_unwritten listed per buffer (none for the source).
  const std::size_t nb = pl.buffers.size();
  p->pads.resize(nb);
  for (std::size_t i = 1; i < nb; ++i) p->pads[i] = BoxList::copy(pl.pads[i], dt);
  // connect() agrees on the chunks (and splits communicators): needed whenever data moves.
  p->connected = (!comm_ && !peer_) || !moves_data(pl);
  // Bounded cache: plans are usually few and reused; an evicted one is simply prepared again
  // (the runtime's backend agrees on re-preparation across ranks, so eviction is per rank).
  if (cache_.size() >= 64) {
    quiesce();
    AXE_CUDA_CHECK(cudaStreamSynchronize(stream_));
    cache_.clear();
  }
  cache_[&plan] = std::move(p);
  return true;
}

void CudaExecutor::connect(const RankPlan& plan) {
  Prepared* p = lookup(plan);
  if (!p) fail("CudaExecutor::connect: the plan for rank " + std::to_string(plan.rank) + " is not prepared");
  if ((!comm_ && !peer_) || !moves_data(plan)) {
    p->connected = true;
    return;
  }
  if (!comm_) {
    // Every rank runs a step in the most chunks any rank asks for (the same calls on every rank).
    std::vector<std::int64_t> agreed = p->wish;
    const auto all = peer_->allgather(std::as_bytes(std::span<const std::int64_t>(agreed)));
    for (int q = 0; q < peer_->size(); ++q) {
      const auto& b = all[static_cast<std::size_t>(q)];
      if (b.size() != agreed.size() * sizeof(std::int64_t))
        fail("peer transport: rank " + std::to_string(q) + " published " + std::to_string(b.size()) +
             " bytes of chunk counts for a plan of " + std::to_string(agreed.size()) +
             " steps (the ranks run different plans)");
      for (std::size_t i = 0; i < agreed.size(); ++i) {
        std::int64_t v = 0;
        std::memcpy(&v, b.data() + i * sizeof v, sizeof v);
        agreed[i] = std::max(agreed[i], v);
      }
    }
    if (agreed != (p->chunks.empty() ? std::vector<std::int64_t>(agreed.size(), 1) : p->chunks)) {
      p->chunks = agreed;
      build(*p);
    }
    connect_peers(*p);
    p->connected = true;
    return;
  }
  // Pipelining: every rank splits a step into the largest number of chunks any rank wants. With
  // both transports the same all-reduce agrees on each step's transport (choose_transports).
  std::vector<std::int64_t> agreed = p->wish;
  const std::vector<char> was_peer = p->on_peer;
  if (peer_) choose_transports(*p, agreed);
  else comm_->allreduce_max(agreed, "CudaExecutor::connect (pipeline chunks)");
  if (agreed != (p->chunks.empty() ? std::vector<std::int64_t>(agreed.size(), 1) : p->chunks) ||
      p->on_peer != was_peer) {
    p->chunks = agreed;
    build(*p);
  }
  if (p->any_peer()) connect_peers(*p);
  comm_->ensure_groups(p->groups);
  for (std::size_t i = 0; i < p->groups.size(); ++i)
    if (!p->groups[i].empty()) {
      auto& ps = p->steps[static_cast<std::size_t>(p->group_step[i])];
      ps.comm = comm_->find_group(p->groups[i]);
      if (!ps.comm)
        fail("CudaExecutor::connect: rank " + std::to_string(plan.rank) + " has no communicator for step " +
             std::to_string(p->group_step[i]));
    }
  for (std::size_t j = 1; j < p->steps.size(); ++j)
    if (p->steps[j].chunk > 0) p->steps[j].comm = p->steps[j - 1].comm;
  p->connected = true;
}

// Both transports: this rank's costs join the chunk wishes in one all-reduce (max over the
// world), and every rank takes the same choice from the same agreed values (step_transport_costs,
// choose_step_transports); a step on the peer transport runs in its peer chunks (peer_step_chunks).
void CudaExecutor::choose_transports(Prepared& p, std::vector<std::int64_t>& agreed) {
  const RankPlan& pl = p.exec;
  const std::size_t n = pl.steps.size();
  const StepCostsNs mine = step_transport_costs(model_, pl);
  agreed.insert(agreed.end(), mine.network.begin(), mine.network.end());
  agreed.insert(agreed.end(), mine.peer.begin(), mine.peer.end());
  agreed.insert(agreed.end(), p.peer_wish.begin(), p.peer_wish.end());
  comm_->allreduce_max(agreed, "CudaExecutor::connect (pipeline chunks, transports)");
  p.on_peer = choose_step_transports(std::span<const std::int64_t>(agreed).subspan(n, n),
                                     std::span<const std::int64_t>(agreed).subspan(2 * n, n), forced_);
  for (std::size_t i = 0; i < n; ++i)
    if (p.on_peer[i]) agreed[i] = agreed[3 * n + i];  // its peer chunks
  agreed.resize(n);
}

StepCostsNs step_transport_costs(const CostModel* model, const RankPlan& plan) {
  auto ns = [](double s) { return static_cast<std::int64_t>(std::llround(std::min(s * 1e9, 1e18))); };
  StepCostsNs c;
  for (const Step& st : plan.steps) {
    const TransportCost t = model ? step_transport_cost(*model, st, plan.dtype) : TransportCost{};
    c.network.push_back(ns(t.network));
    c.peer.push_back(model && t.peer ? ns(*t.peer) : kNoPeerPrice);
  }
  return c;
}

std::vector<char> choose_step_transports(std::span<const std::int64_t> network_ns,
                                         std::span<const std::int64_t> peer_ns, StepTransport forced) {
  if (network_ns.size() != peer_ns.size())
    fail("choose_step_transports: " + std::to_string(network_ns.size()) + " NCCL costs but " +
         std::to_string(peer_ns.size()) + " peer costs");
  std::vector<char> on_peer(network_ns.size(), 0);
  for (std::size_t i = 0; i < on_peer.size(); ++i)
    on_peer[i] = forced == StepTransport::Peer || (forced == StepTransport::Model && peer_ns[i] < network_ns[i]);
  return on_peer;
}

// Peer transport: every rank publishes where each of its messages lies in its staging (run step,
// receiver, byte offset, bytes) and its staging's IPC handle; each receiver maps the staging of
// the ranks that send to it and points its receives there. Collective over the world.
void CudaExecutor::connect_peers(Prepared& p) {
  const std::int64_t es = size_of(p.exec.dtype);
  const int me = peer_->rank();
  std::vector<std::int64_t> table;  // [has staging, then step, receiver, offset, bytes ...]
  table.push_back(p.scratch ? 1 : 0);
  for (std::size_t j = 0; j < p.steps.size(); ++j)
    for (const auto& m : p.steps[j].sends)
      if (m.n > 0 && p.steps[j].peer)
        table.insert(table.end(), {static_cast<std::int64_t>(j), m.peer,
                                   p.send_offset[p.steps[j].slot] + m.off * es, m.n * es});
  // A plan connected again gives up the senders' staging it mapped before.
  if (p.peer)
    for (const auto& [q, post] : p.pinned) p.peer->unpin(q, post);
  p.pinned.clear();
  p.peer = peer_;
  std::vector<std::byte> blob(sizeof(PeerPost) + table.size() * sizeof(std::int64_t));
  const PeerPost staging = p.scratch ? peer_->export_staging(p.scratch) : PeerPost{};
  std::memcpy(blob.data(), &staging, sizeof staging);
  std::memcpy(blob.data() + sizeof(PeerPost), table.data(), table.size() * sizeof(std::int64_t));
  const auto all = peer_->allgather(blob);
  // (step, sender) -> the message in the sender's staging, mapped here; per sender, its scratch.
  std::map<std::pair<std::int64_t, std::int64_t>, std::pair<const char*, std::int64_t>> from;
  std::vector<const char*> scratch_of(static_cast<std::size_t>(peer_->size()), nullptr);
  for (int q = 0; q < peer_->size(); ++q) {
    const auto& b = all[static_cast<std::size_t>(q)];
    if (b.size() < sizeof(PeerPost) + sizeof(std::int64_t) ||
        (b.size() - sizeof(PeerPost)) % (4 * sizeof(std::int64_t)) != sizeof(std::int64_t))
      fail("peer transport: rank " + std::to_string(q) + " published a malformed message table");
    std::vector<std::int64_t> t((b.size() - sizeof(PeerPost)) / sizeof(std::int64_t));
    std::memcpy(t.data(), b.data() + sizeof(PeerPost), t.size() * sizeof(std::int64_t));
    const char* base = nullptr;
    for (std::size_t i = 1; i + 3 < t.size(); i += 4) {
      if (t[i + 1] != me) continue;
      if (!base) {
        if (q == me) {
          base = static_cast<const char*>(p.scratch);
        } else {
          PeerPost theirs;
          std::memcpy(&theirs, b.data(), sizeof theirs);
          if (!theirs.direct())
            fail("peer transport: rank " + std::to_string(q) + " sends from staging it did not export");
          base = peer_->map(q, theirs, true);
          p.pinned.push_back({q, theirs});
        }
        scratch_of[static_cast<std::size_t>(q)] = base;
      }
      from[{t[i], q}] = {base + t[i + 2], t[i + 3]};
    }
  }
  for (std::size_t j = 0; j < p.steps.size(); ++j)
    for (auto& m : p.steps[j].recvs) {
      if (m.n == 0 || !p.steps[j].peer) continue;
      auto it = from.find({static_cast<std::int64_t>(j), m.peer});
      if (it == from.end() || it->second.second != m.n * es)
        fail("peer transport: rank " + std::to_string(me) + " step " + std::to_string(j) + " expects " +
             std::to_string(m.n * es) + " bytes from rank " + std::to_string(m.peer) + ", which sends " +
             (it == from.end() ? std::string("none") : std::to_string(it->second.second)) +
             " (the ranks run different plans)");
      m.remote = it->second.first;
    }
  connect_from_input(p, scratch_of);
}

// Reads from the input (AXE_PEER_DIRECT, executor_internal.hpp Msg::from_input): every sender
// offers the send boxes of each message of a peer step that could be read from its input (a
// non-reducing, unchunked step reading the plan's source, or an intermediate buffer in its
// scratch, which its receivers have mapped as staging: then at that byte offset, with no posts);
// each receiver joins them with its receive boxes (compose_message) and accepts the messages that
// join; both sides mark those. `scratch_of`: each sender's scratch mapped here (connect_peers).
// Collective over the world (two all-gathers), after connect_peers' exchange.
void CudaExecutor::connect_from_input(Prepared& p, const std::vector<const char*>& scratch_of) {
  const int me = peer_->rank();
  auto eligible = [&](std::size_t j) {
    const Step& s = p.run.steps[j];
    const auto in = static_cast<std::size_t>(s.in);
    const bool in_scratch = s.in > 0 && in < p.inter_offset.size() && p.inter_offset[in] >= 0;
    return peer_direct_ && p.steps[j].peer && p.steps[j].chunks == 1 && !s.reduce && (s.in == 0 || in_scratch);
  };
  std::vector<std::int64_t> offers;  // [step, receiver, input's byte offset in scratch or -1, boxes ...] ...
  for (std::size_t j = 0; j < p.steps.size(); ++j) {
    if (!eligible(j)) continue;
    const int in = p.run.steps[j].in;
    for (const auto& m : p.run.steps[j].sends) {
      if (m.elements() == 0) continue;
      offers.push_back(static_cast<std::int64_t>(j));
      offers.push_back(m.peer);
      offers.push_back(in == 0 ? -1 : p.inter_offset[static_cast<std::size_t>(in)]);
      encode_send_boxes(m.boxes, offers);
    }
  }
  const auto all = peer_->allgather(std::as_bytes(std::span<const std::int64_t>(offers)));
  std::vector<std::int64_t> accepted;  // [step, sender] ...
  for (int q = 0; q < peer_->size(); ++q) {
    const auto& b = all[static_cast<std::size_t>(q)];
    if (b.size() % sizeof(std::int64_t) != 0)
      fail("peer transport: rank " + std::to_string(q) + " published a malformed table of inputs");
    std::vector<std::int64_t> w(b.size() / sizeof(std::int64_t));
    std::memcpy(w.data(), b.data(), b.size());
    for (std::size_t at = 0; at < w.size();) {
      if (at + 3 > w.size()) fail("peer transport: rank " + std::to_string(q) + " published a malformed table of inputs");
      const std::int64_t j = w[at], receiver = w[at + 1], in_at = w[at + 2];
      at += 3;
      auto boxes = decode_send_boxes(w, at);
      if (!boxes || j < 0 || static_cast<std::size_t>(j) >= p.steps.size() || in_at < -1)
        fail("peer transport: rank " + std::to_string(q) + " published a malformed table of inputs");
      if (receiver != me || q == me || !eligible(static_cast<std::size_t>(j))) continue;
      const char* scratch = scratch_of[static_cast<std::size_t>(q)];
      if (in_at >= 0 && !scratch) continue;  // (it sends to this rank, so its scratch is mapped)
      const auto& recvs = p.run.steps[static_cast<std::size_t>(j)].recvs;
      auto& mine = p.steps[static_cast<std::size_t>(j)].recvs;
      for (std::size_t i = 0; i < recvs.size(); ++i) {
        if (recvs[i].peer != q) continue;
        // Only a message whose staged form also lands by itself (one copy into out, or unpacked
        // straight from the sender's staging): a message unpacked from the receive region with
        // the step's others (AXE_PEER_UNPACK=0) would be overwritten there.
        if (!mine[i].direct && mine[i].unpack.empty()) break;
        auto joined = compose_message(*boxes, recvs[i].boxes);
        if (!joined) break;  // the message stays staged
        mine[i].from_input = true;
        mine[i].joined = BoxList::copy(*joined, p.exec.dtype);
        mine[i].input = in_at >= 0 ? scratch + in_at : nullptr;
        accepted.push_back(j);
        accepted.push_back(q);
        break;
      }
    }
  }
  const auto acks = peer_->allgather(std::as_bytes(std::span<const std::int64_t>(accepted)));
  for (int r = 0; r < peer_->size(); ++r) {
    const auto& b = acks[static_cast<std::size_t>(r)];
    if (b.size() % (2 * sizeof(std::int64_t)) != 0)
      fail("peer transport: rank " + std::to_string(r) + " published a malformed table of inputs it reads");
    std::vector<std::int64_t> w(b.size() / sizeof(std::int64_t));
    std::memcpy(w.data(), b.data(), b.size());
    for (std::size_t at = 0; at + 1 < w.size(); at += 2) {
      if (w[at + 1] != me) continue;
      const auto j = static_cast<std::size_t>(w[at]);
      if (j >= p.steps.size()) fail("peer transport: rank " + std::to_string(r) + " reads from a step it does not have");
      for (auto& m : p.steps[j].sends)
        if (m.peer == r) m.from_input = true;
    }
  }
  // The pack of a step's other messages, at their places in the send region.
  const DType dt = p.exec.dtype;
  for (std::size_t j = 0; j < p.steps.size(); ++j) {
    PStep& ps = p.steps[j];
    const auto& sends = p.run.steps[j].sends;
    ps.any_from_input = std::any_of(ps.sends.begin(), ps.sends.end(), [](const PStep::Msg& m) { return m.from_input; });
    if (!ps.any_from_input) continue;
    ps.input_in_scratch = p.run.steps[j].in != 0;
    if (sends.size() != ps.sends.size())
      fail("peer transport: step " + std::to_string(j) + " has " + std::to_string(sends.size()) + " sends, lowered to " +
           std::to_string(ps.sends.size()));
    ps.pack_staged = BoxList::copy({}, dt);
    for (std::size_t k = 0; k < sends.size(); ++k)
      if (!ps.sends[k].from_input && ps.sends[k].n > 0) ps.pack_staged.append(BoxList::pack(sends[k].boxes, dt, ps.sends[k].off));
  }
}

bool CudaExecutor::ready(const RankPlan& plan) const {
  const Prepared* p = lookup(plan);
  return p && p->connected;
}

std::int64_t CudaExecutor::staging_bytes(const RankPlan& plan) const {
  const Prepared* p = lookup(plan);
  return p ? p->scratch_bytes : -1;
}

std::vector<std::int64_t> CudaExecutor::pipeline_chunks(const RankPlan& plan) const {
  const Prepared* p = lookup(plan);
  if (!p) return {};
  return p->chunks.empty() ? std::vector<std::int64_t>(plan.steps.size(), 1) : p->chunks;
}

}  // namespace axe::cuda
