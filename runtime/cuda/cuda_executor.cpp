// CudaExecutor: the host executor's step walk (src/exec/executor.cpp) on device buffers.
//
// The path of every step is decided by its recorded kind and Step::equal_blocks, which the
// planner makes the same on every rank (plan.hpp, "Agreement"); this file never chooses a path
// from one rank's own traffic, so all members of a group always make the same NCCL calls. The
// shape of every collective step is checked by the one check both executors run
// (plan/step_check.hpp), which throws naming the rank and the step.
//
// This file: scheduling and dispatch (execute: streams, events, the NCCL calls). Preparation is in
// executor_prepare.cpp, lowering in executor_lower.cpp.
#include "axe/cuda/executor.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>
#include <string>

#include "axe/core/error.hpp"
#include "axe/cuda/check.hpp"
#include "axe/cuda/kernels.hpp"
#include "axe/cuda/nccl_comm.hpp"
#include "axe/cuda/peer_comm.hpp"
#include "executor_internal.hpp"

namespace axe::cuda {

using namespace internal;

void CudaExecutor::ensure_side_stream() {
  if (side_stream_) return;
  AXE_CUDA_CHECK(cudaStreamCreateWithFlags(&side_stream_, cudaStreamNonBlocking));
  AXE_CUDA_CHECK(cudaEventCreateWithFlags(&fork_, cudaEventDisableTiming));
  AXE_CUDA_CHECK(cudaEventCreateWithFlags(&join_, cudaEventDisableTiming));
}

void CudaExecutor::ensure_pull_streams(std::size_t n) {
  if (!pull_fork_) AXE_CUDA_CHECK(cudaEventCreateWithFlags(&pull_fork_, cudaEventDisableTiming));
  while (pull_streams_.size() < n) {
    cudaStream_t st = nullptr;
    AXE_CUDA_CHECK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
    pull_streams_.push_back(st);
    cudaEvent_t e = nullptr;
    AXE_CUDA_CHECK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
    pull_join_.push_back(e);
  }
}

void CudaExecutor::ensure_pipeline_streams() {
  if (pack_stream_) return;
  AXE_CUDA_CHECK(cudaStreamCreateWithFlags(&pack_stream_, cudaStreamNonBlocking));
  AXE_CUDA_CHECK(cudaStreamCreateWithFlags(&unpack_stream_, cudaStreamNonBlocking));
  events_.resize(3 * kMaxPipelineChunks + 1);
  peer_marks_.resize(kMaxPipelineChunks + 1);
  for (auto& e : events_) AXE_CUDA_CHECK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
}

void CudaExecutor::execute(const RankPlan& plan, const void* source, void* destination) {
  if (plan.buffers.empty()) return;
  if (comm_ && comm_->failed())
    fail("CudaExecutor: rank " + std::to_string(comm_->rank()) +
         ": NCCL failed earlier (communicators aborted); this executor cannot run plans any more");
  if (peer_ && peer_->failed())
    fail("CudaExecutor: rank " + std::to_string(peer_->rank()) +
         ": the peer transport failed earlier; this executor cannot run plans any more");
  if (comm_) AXE_CUDA_CHECK(cudaSetDevice(comm_->device()));
  if (peer_) AXE_CUDA_CHECK(cudaSetDevice(peer_->device()));
  if (prepare_local(plan)) connect(plan);
  Prepared& p = *lookup(plan);
  if (!p.connected) connect(plan);
  graphed_ = run_graph(p, source, destination);
  if (!graphed_) enqueue(p, source, destination);
  AXE_CUDA_CHECK(cudaEventRecord(done_, stream_));
}

bool CudaExecutor::run_graph(Prepared& p, const void* source, void* destination) {
  if (!graphs_ || p.no_graphs || p.any_peer()) return false;
  auto it = std::find_if(p.graphs.begin(), p.graphs.end(),
                         [&](const Prepared::Graph& g) { return g.source == source && g.destination == destination; });
  if (it == p.graphs.end()) {  // the pair's first call runs eagerly
    if (p.graphs.size() >= static_cast<std::size_t>(kGraphsPerPlan)) {
      if (p.graphs.front().exec) cudaGraphExecDestroy(p.graphs.front().exec);  // a launch in flight completes
      p.graphs.erase(p.graphs.begin());
    }
    p.graphs.push_back({source, destination});
    return false;
  }
  if (!it->exec) {
    if (cudaStreamBeginCapture(stream_, cudaStreamCaptureModeThreadLocal) != cudaSuccess) {
      cudaGetLastError();
      p.no_graphs = true;  // nothing was enqueued: run eagerly
      return false;
    }
    cudaGraph_t graph = nullptr;
    std::string error;
    try {
      enqueue(p, source, destination);
    } catch (const std::exception& e) {
      error = e.what();
    }
    cudaError_t e = cudaStreamEndCapture(stream_, &graph);
    cudaGraphExec_t exec = nullptr;
    if (error.empty() && e == cudaSuccess) e = cudaGraphInstantiate(&exec, graph, 0);
    if (graph) cudaGraphDestroy(graph);
    if (error.empty() && e != cudaSuccess) error = cudaGetErrorString(e);
    if (!error.empty()) {
      // NCCL counted the captured calls: this rank's communicators are out of step with the
      // others', so fail them all (the peers then fail within AXE_TIMEOUT_S, not hang).
      cudaGetLastError();
      p.no_graphs = true;
      const std::string what = "CudaExecutor: capturing a CUDA graph failed (" + error +
                               "); AXE_CUDA_GRAPHS=0 runs every plan step by step";
      if (comm_) comm_->abort_and_throw(what);
      fail(what);
    }
    it->exec = exec;
    it->launches = launches_;
    it->nccl_calls = nccl_calls_;
  }
  AXE_CUDA_CHECK(cudaGraphLaunch(it->exec, stream_));
  launches_ = it->launches;
  input_reads_ = source_reads_ = 0;  // graphs never have peer steps
  nccl_calls_ = it->nccl_calls;
  return true;
}

void CudaExecutor::enqueue(Prepared& p, const void* source, void* destination) {
  const RankPlan& plan = p.plan;
  launches_ = nccl_calls_ = input_reads_ = source_reads_ = 0;
  const DType dt = plan.dtype;
  const std::int64_t es = size_of(dt);
  const std::size_t nb = plan.buffers.size();
  char* scratch = static_cast<char*>(p.scratch);
  auto buf = [&](int i) -> void* {
    if (static_cast<std::size_t>(i) + 1 == nb) return destination;
    return scratch + p.inter_offset[static_cast<std::size_t>(i)];
  };
  // A plan that runs as a CUDA graph moves no box on the copy engines (copy_engine.hpp says
  // why). Its first, eager call takes the same policy, so that the tables of the boxes the
  // kernels move are uploaded before the capture, which cannot allocate.
  CopyEnginePolicy copies = copy_engine_policy();
  if (graphs_ && !p.no_graphs && !p.any_peer()) copies.min_bytes = 0;
  const double pad = is_floating(dt) ? std::numeric_limits<double>::quiet_NaN() : 0.0;
  for (std::size_t i = 1; i < nb; ++i) {
    if (p.pads[i].empty()) continue;  // every element is written by some step
    fill_boxes(p.pads[i], buf(static_cast<int>(i)), pad, stream_);
    ++launches_;
  }
  for (std::size_t k = 0; k < p.run.steps.size(); ++k) {
    const Step& s = p.run.steps[k];
    auto& ps = p.steps[k];
    const void* in = s.in == 0 ? source : buf(s.in);
    void* out = buf(s.out);
    const char* inc = static_cast<const char*>(in);
    char* outc = static_cast<char*>(out);
    char* sendr = scratch + p.send_offset[ps.slot];
    char* recvr = scratch + p.recv_offset[ps.slot];
    // Streams: pack on sp, the transfer on stream_, unpack on su. Unchunked steps use stream_ for
    // all three. Chunk c of a pipelined step: its pack waits until chunk c - 2 (same staging slot)
    // is unpacked, the transfer waits for its pack (and for chunk c - 2's unpack, which reads
    // the receive slot), its unpack for the transfer; after the last chunk stream_ joins su.
    cudaStream_t sp = stream_, su = stream_;
    const bool piped = ps.chunks > 1;
    cudaEvent_t* ev_pack = nullptr;
    cudaEvent_t* ev_unpack = nullptr;
    // Kernels of a chunk share the GPU with the transfer of its neighbours: fewer blocks per SM.
    struct Occupancy {
      int old = 0;
      explicit Occupancy(int n) : old(n > 0 ? set_box_blocks_per_sm(n) : 0) {}
      ~Occupancy() {
        if (old > 0) set_box_blocks_per_sm(old);
      }
    } occupancy(ps.chunks > 1 ? pipeline_blocks_per_sm_ : 0);
    if (piped) {
      ensure_pipeline_streams();
      sp = pack_stream_;
      su = unpack_stream_;
      ev_pack = events_.data() + 1;
      ev_unpack = events_.data() + 1 + 2 * kMaxPipelineChunks;
    }
    cudaEvent_t* ev_comm = piped ? events_.data() + 1 + kMaxPipelineChunks : nullptr;
    const std::int64_t c = ps.chunk;
    std::vector<std::pair<int, std::uint64_t>> reduced;  // peer messages reduced from staging: (sender, seq)
    if (!ps.fills.empty()) {
      fill_boxes(ps.fills, out, reduce_identity(s.op), stream_);
      ++launches_;
    }
    if (piped && c == 0) {
      AXE_CUDA_CHECK(cudaEventRecord(events_[0], stream_));
      AXE_CUDA_CHECK(cudaStreamWaitEvent(sp, events_[0], 0));
      AXE_CUDA_CHECK(cudaStreamWaitEvent(su, events_[0], 0));
    }
    if (piped && c >= 2) {
      AXE_CUDA_CHECK(cudaStreamWaitEvent(sp, ev_unpack[c - 2], 0));
      AXE_CUDA_CHECK(cudaStreamWaitEvent(stream_, ev_unpack[c - 2], 0));
    }
    // Peer chunks: what this rank had sent before the step, and after each chunk's signals.
    if (ps.peer && piped && c == 0) peer_marks_[0] = peer_->sent();
    bool packed = false;
    auto pack = [&](const BoxList& l, void* dst) {
      // Staging the peers read from is reused once they have copied out what was sent before,
      // or, for a peer chunk, what was sent up to the chunk before last (the same slot).
      if (dst == sendr && peer_ && p.any_peer()) {
        if (ps.peer && piped)
          peer_->wait_consumed(sp, peer_marks_[static_cast<std::size_t>(c >= 2 ? c - 1 : 0)]);
        else
          peer_->wait_consumed(sp);
      }
      copy_boxes(l, in, dst, sp, nullptr, copies);
      ++launches_;
      packed = true;
    };
    // Before the transfer on stream_: wait for this chunk's pack on sp. With `overlap`, fork the
    // local copies onto the side stream here, after the pack (so they share the GPU with the
    // transfer, not with the pack the transfer waits for); stream_ joins them at the step's end.
    auto before_transfer = [&] {
      if (piped && packed) {
        AXE_CUDA_CHECK(cudaEventRecord(ev_pack[c], sp));
        AXE_CUDA_CHECK(cudaStreamWaitEvent(stream_, ev_pack[c], 0));
      }
      if (ps.overlap) {
        ensure_side_stream();
        AXE_CUDA_CHECK(cudaEventRecord(fork_, stream_));
        AXE_CUDA_CHECK(cudaStreamWaitEvent(side_stream_, fork_, 0));
        if (!ps.local.empty()) {
          copy_boxes(ps.local, in, out, side_stream_, nullptr, copies);
          ++launches_;
        }
        for (const auto& t : ps.transposes) {
          transform(t, dt, in, out, side_stream_);
          ++launches_;
        }
        AXE_CUDA_CHECK(cudaEventRecord(join_, side_stream_));
      }
    };
    const auto n = static_cast<std::size_t>(ps.count);
    // count == 0 is the same on every member (equal blocks), so all members skip the call alike.
    // Whether a member reads / writes its own buffers directly (send_at, recv_at) is its own
    // choice: NCCL only needs the same call and count on every member.
    if (ps.path == Path::AllGather) {
      if (ps.count > 0) {
        const std::int64_t mine = ps.me * ps.count;  // own slot, elements from the base
        char* recvbuf = ps.recv_at >= 0 ? outc + ps.recv_at * es : recvr;
        const void* sendbuf = nullptr;
        if (ps.send_at >= 0) {
          sendbuf = inc + ps.send_at * es;  // NCCL copies the own block into its slot
        } else {
          // pack into the own slot: NCCL's in-place all-gather (sendbuff == recvbuff + rank*count)
          if (!ps.pack.empty()) pack(ps.pack, ps.recv_at >= 0 ? out : static_cast<void*>(recvr));
          sendbuf = recvbuf + mine * es;
        }
        before_transfer();
        AXE_NCCL_CHECK(ncclAllGather(sendbuf, recvbuf, n, nccl_type(dt), ps.comm, stream_));
        comm_->settle(ps.comm, "ncclAllGather");
        ++nccl_calls_;
      }
    } else if (ps.path == Path::Broadcast) {
      if (ps.count > 0) {
        if (!ps.pack.empty()) pack(ps.pack, recvr);
        before_transfer();
        AXE_NCCL_CHECK(ncclBroadcast(recvr, recvr, n, nccl_type(dt), ps.root, ps.comm, stream_));
        comm_->settle(ps.comm, "ncclBroadcast");
        ++nccl_calls_;
      }
    } else if (ps.count == 0 && (ps.path == Path::AllReduce || ps.path == Path::ReduceScatter)) {
      // nothing to reduce on any member
    } else if (ps.path == Path::AllReduce) {
      char* recvbuf = ps.recv_at >= 0 ? outc + ps.recv_at * es : recvr;
      const void* sendbuf = recvbuf;  // packed in place unless the term is contiguous in `in`
      if (ps.send_at >= 0)
        sendbuf = inc + ps.send_at * es;
      else
        pack(ps.pack, recvbuf);
      before_transfer();
      AXE_NCCL_CHECK(ncclAllReduce(sendbuf, recvbuf, n, nccl_type(dt), nccl_op(s.op), ps.comm, stream_));
      comm_->settle(ps.comm, "ncclAllReduce");
      ++nccl_calls_;
    } else if (ps.path == Path::ReduceScatter) {
      char* recvbuf = ps.recv_at >= 0 ? outc + ps.recv_at * es : recvr;
      const void* sendbuf = sendr;
      if (ps.send_at >= 0)
        sendbuf = inc + ps.send_at * es;
      else
        pack(ps.pack, sendr);
      before_transfer();
      AXE_NCCL_CHECK(ncclReduceScatter(sendbuf, recvbuf, n, nccl_type(dt), nccl_op(s.op), ps.comm, stream_));
      comm_->settle(ps.comm, "ncclReduceScatter");
      ++nccl_calls_;
    } else if (ps.peer) {
      // The peer transport (peer_comm.hpp): staging is free once the peers copied out what this
      // rank sent before (pack waits for that); tell the receivers, right after the pack on its
      // stream (a chunk's signals do not wait for the pulls of the chunk before); pull each
      // message once its sender says so. Messages reduced from the sender's staging are flagged
      // consumed after the step's reductions (below).
      // Messages read from the input (Msg::from_input): post where `in` lies to their receivers
      // (or, when it cannot be exported, that every message is packed), and pack only the others.
      bool from_input = ps.any_from_input && ps.input_in_scratch;  // mapped by the receivers already
      if (ps.any_from_input && !ps.input_in_scratch) {
        const PeerPost post = peer_->describe(in);
        from_input = post.direct();
        for (const auto& m : ps.sends)
          if (m.from_input) peer_->post(static_cast<int>(m.peer), post);
      }
      const BoxList& packs = from_input ? ps.pack_staged : ps.pack;
      if (!packs.empty()) pack(packs, sendr);
      for (const auto& m : ps.sends)
        if (m.n > 0) peer_->signal_ready(static_cast<int>(m.peer), sp);
      if (piped) peer_marks_[static_cast<std::size_t>(c) + 1] = peer_->sent();
      if (!ps.sends.empty() || !ps.recvs.empty()) {
        before_transfer();
        // Each sender's messages on a stream of its own when there are several senders (forked
        // here, joined below), so the pulls run at once.
        std::vector<std::int64_t> senders;
        for (const auto& m : ps.recvs)
          if (m.n > 0 && std::find(senders.begin(), senders.end(), m.peer) == senders.end()) senders.push_back(m.peer);
        const bool fork = senders.size() > 1;
        if (fork) {
          ensure_pull_streams(senders.size());
          AXE_CUDA_CHECK(cudaEventRecord(pull_fork_, stream_));
          for (std::size_t i = 0; i < senders.size(); ++i)
            AXE_CUDA_CHECK(cudaStreamWaitEvent(pull_streams_[i], pull_fork_, 0));
        }
        for (const auto& m : ps.recvs) {
          if (m.n == 0) continue;
          cudaStream_t pull = stream_;
          if (fork) pull = pull_streams_[static_cast<std::size_t>(
                          std::find(senders.begin(), senders.end(), m.peer) - senders.begin())];
          const PeerPost post = m.from_input && !m.input ? peer_->take(static_cast<int>(m.peer)) : PeerPost{};
          const std::uint64_t seq = peer_->wait_ready(static_cast<int>(m.peer), pull);
          if (m.input || post.direct()) {  // straight from the sender's input into out, both in their layouts
            if (m.input) {
              copy_boxes(m.joined, m.input, out, pull);
            } else {
              copy_boxes(m.joined, peer_->map(static_cast<int>(m.peer), post), out, pull);
              peer_->used(static_cast<int>(m.peer), post, pull);
              ++source_reads_;
            }
            peer_->signal_consumed(static_cast<int>(m.peer), seq, pull);
            ++launches_;
            ++input_reads_;
            continue;
          }
          if (!m.terms.empty()) {
            reduced.push_back({static_cast<int>(m.peer), seq});
            continue;
          }
          if (!m.unpack.empty())  // straight from the sender's staging into out, in its layout
            copy_boxes(m.unpack, m.remote, out, pull);
          else
            AXE_CUDA_CHECK(cudaMemcpyAsync((m.direct ? outc : recvr) + m.off * es, m.remote,
                                           static_cast<std::size_t>(m.n * es), cudaMemcpyDeviceToDevice, pull));
          peer_->signal_consumed(static_cast<int>(m.peer), seq, pull);
          ++launches_;
        }
        if (fork)
          for (std::size_t i = 0; i < senders.size(); ++i) {
            AXE_CUDA_CHECK(cudaEventRecord(pull_join_[i], pull_streams_[i]));
            AXE_CUDA_CHECK(cudaStreamWaitEvent(stream_, pull_join_[i], 0));
          }
      }
      // The input may change once the call returns: the step ends when its readers are done.
      if (from_input) peer_->wait_consumed(stream_);
    } else {
      if (!ps.pack.empty()) pack(ps.pack, sendr);
      if (!ps.sends.empty() || !ps.recvs.empty()) {
        before_transfer();
        AXE_NCCL_CHECK(ncclGroupStart());
        for (const auto& m : ps.sends)
          if (m.n > 0)
            AXE_NCCL_CHECK(ncclSend((m.direct ? inc : sendr) + m.off * es, static_cast<std::size_t>(m.n * es),
                                    ncclUint8, static_cast<int>(m.peer), comm_->data_world(), stream_));
        for (const auto& m : ps.recvs)
          if (m.n > 0)
            AXE_NCCL_CHECK(ncclRecv((m.direct ? outc : recvr) + m.off * es, static_cast<std::size_t>(m.n * es),
                                    ncclUint8, static_cast<int>(m.peer), comm_->data_world(), stream_));
        const ncclResult_t r = ncclGroupEnd();
        if (r != ncclSuccess && r != ncclInProgress)
          comm_->abort_and_throw(std::string("ncclGroupEnd (send/recv) failed: ") + ncclGetErrorString(r));
        comm_->settle(comm_->data_world(), "grouped ncclSend/ncclRecv");
        ++nccl_calls_;
      }
    }
    if (piped) {
      // A chunk without a transfer still orders its pack before its unpack.
      if (packed && ps.sends.empty() && ps.recvs.empty() && ps.count == 0) before_transfer();
      AXE_CUDA_CHECK(cudaEventRecord(ev_comm[c], stream_));
      AXE_CUDA_CHECK(cudaStreamWaitEvent(su, ev_comm[c], 0));
    }
    if (!ps.overlap)
      for (const auto& t : ps.transposes) {
        transform(t, dt, in, out, su);
        ++launches_;
      }
    if (ps.path == Path::AllReduce || ps.path == Path::ReduceScatter) {
      if (!ps.result.empty()) {
        const double divide = s.op == ReduceOp::Avg ? static_cast<double>(s.terms) : 1.0;
        if (ps.recv_at >= 0) {
          if (divide != 1.0) {  // avg: divide the result where NCCL wrote it (elementwise, in place)
            reduce_boxes(ps.in_place, out, out, s.op, false, divide, su);
            ++launches_;
          }
        } else {
          if (divide != 1.0)
            reduce_boxes(ps.result, recvr, out, s.op, false, divide, su);
          else
            copy_boxes(ps.result, recvr, out, su, nullptr, copies);
          ++launches_;
        }
      }
    } else if (!s.reduce) {
      for (const auto& [term, list] : ps.unpack) {
        if (list.empty()) continue;
        copy_boxes(list, recvr, out, su, in, copies);
        ++launches_;
      }
    } else {
      // Term by term (term 0 writes, later terms combine, the last divides for avg): the local and
      // staged boxes of the term, then each message's boxes of it from its sender's staging.
      // Within a term the sources write disjoint elements.
      std::set<std::int64_t> terms;
      for (const auto& u : ps.unpack) terms.insert(u.first);
      for (const auto& m : ps.recvs)
        for (const auto& u : m.terms) terms.insert(u.first);
      for (const std::int64_t term : terms) {
        const double divide = s.op == ReduceOp::Avg && term == s.terms - 1 ? static_cast<double>(s.terms) : 1.0;
        for (const auto& [t, list] : ps.unpack)
          if (t == term && !list.empty()) {
            reduce_boxes(list, recvr, out, s.op, term > 0, divide, su, in);
            ++launches_;
          }
        for (const auto& m : ps.recvs)
          for (const auto& [t, list] : m.terms)
            if (t == term && !list.empty()) {
              reduce_boxes(list, m.remote, out, s.op, term > 0, divide, su);
              ++launches_;
            }
      }
      for (const auto& [peer, seq] : reduced) peer_->signal_consumed(peer, seq, su);
    }
    if (piped) {
      AXE_CUDA_CHECK(cudaEventRecord(ev_unpack[c], su));
      if (c + 1 == ps.chunks) AXE_CUDA_CHECK(cudaStreamWaitEvent(stream_, ev_unpack[c], 0));
    }
    if (ps.overlap) AXE_CUDA_CHECK(cudaStreamWaitEvent(stream_, join_, 0));
  }
}

void wait_transports(cudaEvent_t event, NcclComm* comm, PeerComm* peer, const char* what) {
  if (comm && peer) {
    try {
      comm->wait(event, what);
    } catch (...) {
      peer->release_waits();  // NCCL is aborted and failed() from now on: no plan runs again
      throw;
    }
  } else if (comm) {
    comm->wait(event, what);
  } else if (peer) {
    peer->wait(event, what);
  } else {
    AXE_CUDA_CHECK(cudaEventSynchronize(event));
  }
}

void CudaExecutor::synchronize() { wait_transports(done_, comm_, peer_, "CudaExecutor::synchronize"); }

}  // namespace axe::cuda
