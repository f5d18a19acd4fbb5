// CudaExecutor: the host executor's step walk (src/plan/executor.cpp) on device buffers.
//
// The collective shape tests mirror Exec::try_collective in src/plan/executor.cpp, plus the
// condition NCCL adds (every member's block has the same size). Each test only reads facts every
// member of the group sees alike (block sizes are known to all members), so all members choose
// the same path and NCCL calls always match.
#include "axe/cuda/executor.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "axe/cuda/check.hpp"
#include "axe/cuda/kernels.hpp"
#include "axe/cuda/nccl_comm.hpp"
#include "axe/error.hpp"

namespace axe::cuda {

namespace {

enum class Mode { P2P, AllGather, AllReduce, ReduceScatter };

double identity(ReduceOp op) {
  switch (op) {
    case ReduceOp::Sum:
    case ReduceOp::Avg: return 0.0;
    case ReduceOp::Prod: return 1.0;
    case ReduceOp::Max: return -std::numeric_limits<double>::infinity();
    case ReduceOp::Min: return std::numeric_limits<double>::infinity();
  }
  return 0.0;
}

bool same_src(const std::vector<Transfer>& a, const std::vector<Transfer>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (a[i].extents != b[i].extents || a[i].src_offset != b[i].src_offset ||
        a[i].src_strides != b[i].src_strides)
      return false;
  return true;
}
bool same_dst(const std::vector<Transfer>& a, const std::vector<Transfer>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (a[i].extents != b[i].extents || a[i].dst_offset != b[i].dst_offset ||
        a[i].dst_strides != b[i].dst_strides)
      return false;
  return true;
}
const Message* find(const std::vector<Message>& v, std::int64_t peer) {
  for (const auto& m : v)
    if (m.peer == peer) return &m;
  return nullptr;
}
std::int64_t elements(const std::vector<Transfer>& boxes) {
  std::int64_t n = 0;
  for (const auto& b : boxes) n += b.elements();
  return n;
}
bool in_group(const Step& s) {
  auto has = [&](std::int64_t p) { return std::find(s.group.begin(), s.group.end(), p) != s.group.end(); };
  for (const auto& m : s.sends)
    if (!has(m.peer)) return false;
  for (const auto& m : s.recvs)
    if (!has(m.peer)) return false;
  return true;
}

std::int64_t align_up(std::int64_t n) { return (n + 255) / 256 * 256; }

}  // namespace

struct CudaExecutor::Prepared {
  RankPlan plan;  // a copy: the cache key's content is checked against it
  struct PStep {
    Mode mode = Mode::P2P;
    ncclComm_t comm = nullptr;
    int me = 0;               // index in the group (collectives)
    std::int64_t count = 0;   // elements per member block (collectives)
    BoxList fills;
    BoxList pack;             // in -> send region
    std::vector<std::pair<std::int64_t, std::pair<std::int64_t, std::int64_t>>> sends, recvs;
    std::vector<std::pair<std::int64_t, BoxList>> unpack;  // by term: recv region (src2: in)
    std::vector<Transfer> transposes;
    BoxList result;  // recv region -> out (all-reduce, reduce-scatter)
    std::int64_t send_elems = 0, recv_elems = 0;
  };
  std::vector<PStep> steps;
  void* scratch = nullptr;
  std::vector<std::int64_t> inter_offset;  // byte offset of buffer i in scratch (-1: none)
  std::int64_t send_offset = 0, recv_offset = 0;
  std::vector<BoxList> pads;  // per buffer: the whole buffer as one box
  ~Prepared() {
    if (scratch) cudaFree(scratch);
  }
};

CudaExecutor::CudaExecutor(NcclComm* comm, cudaStream_t stream) : comm_(comm), stream_(stream) {
  if (comm_) AXE_CUDA_CHECK(cudaSetDevice(comm_->device()));
  if (!stream_) {
    AXE_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
    owns_stream_ = true;
  }
  AXE_CUDA_CHECK(cudaEventCreateWithFlags(&done_, cudaEventDisableTiming));
}

CudaExecutor::~CudaExecutor() {
  if (stream_) cudaStreamSynchronize(stream_);
  cache_.clear();
  if (done_) cudaEventDestroy(done_);
  if (owns_stream_) cudaStreamDestroy(stream_);
}

static bool same_plan(const RankPlan& a, const RankPlan& b) {
  return a.rank == b.rank && a.dtype == b.dtype && a.buffers == b.buffers && a.steps == b.steps;
}

CudaExecutor::Prepared& CudaExecutor::prepare(const RankPlan& plan) {
  auto it = cache_.find(&plan);
  if (it != cache_.end() && same_plan(it->second->plan, plan)) return *it->second;
  auto p = std::make_unique<Prepared>();
  p->plan = plan;
  const DType dt = plan.dtype;
  const std::int64_t es = size_of(dt);
  const RankPlan& pl = p->plan;
  if (comm_ && plan.rank != comm_->rank())
    fail("CudaExecutor: the plan is for rank " + std::to_string(plan.rank) +
         " but this NCCL rank is " + std::to_string(comm_->rank()));

  // Decide each step's path and the groups to split.
  std::vector<std::vector<std::int64_t>> groups;  // per collective-kind step, in step order
  std::vector<int> group_step;
  std::int64_t max_send = 0, max_recv = 0;
  for (const Step& s : pl.steps) {
    Prepared::PStep ps;
    const auto& g = s.group;
    const bool coll = comm_ && is_collective(s.kind) && !g.empty() && in_group(s) &&
                      std::find(g.begin(), g.end(), plan.rank) != g.end();
    auto my_index = [&] { return static_cast<int>(std::find(g.begin(), g.end(), plan.rank) - g.begin()); };
    if (coll && s.kind == StepKind::AllGather && !s.reduce && !s.sends.empty() &&
        s.sends.size() + 1 == g.size()) {
      bool ok = true;
      const std::int64_t count = elements(s.sends[0].boxes);
      for (const auto& m : s.sends) ok = ok && same_src(m.boxes, s.sends[0].boxes);
      for (auto peer : g) {
        if (peer == plan.rank) continue;
        const Message* m = find(s.recvs, peer);
        ok = ok && m && m->elements() == count;
      }
      if (ok && count > 0) {
        ps.mode = Mode::AllGather;
        ps.count = count;
        ps.me = my_index();
      }
    } else if (coll && (s.kind == StepKind::ReduceScatter || s.kind == StepKind::AllReduce) &&
               s.reduce && !s.copies.empty() && s.recvs.size() + 1 == g.size() &&
               s.sends.size() + 1 == g.size()) {
      bool ok = true;
      for (const auto& c : s.copies) ok = ok && c.term == s.copies[0].term;
      for (const auto& m : s.recvs) ok = ok && same_dst(m.boxes, s.copies);
      const std::int64_t count = elements(s.copies);
      if (s.kind == StepKind::AllReduce) {
        for (const auto& m : s.sends) ok = ok && same_src(m.boxes, s.copies);
      } else {
        for (const auto& m : s.sends) ok = ok && m.elements() == count;
      }
      if (ok && count > 0) {
        ps.mode = s.kind == StepKind::AllReduce ? Mode::AllReduce : Mode::ReduceScatter;
        ps.count = count;
        ps.me = my_index();
      }
    }
    if (comm_ && is_collective(s.kind) &&
        (s.kind == StepKind::AllGather || s.kind == StepKind::AllReduce ||
         s.kind == StepKind::ReduceScatter)) {
      groups.push_back(ps.mode == Mode::P2P ? std::vector<std::int64_t>{} : g);
      group_step.push_back(static_cast<int>(p->steps.size()));
    }

    ps.fills = BoxList::copy(s.fills, dt);
    if (ps.mode == Mode::AllGather) {
      ps.pack = BoxList::pack(s.sends[0].boxes, dt, ps.me * ps.count);
      ps.recv_elems = ps.count * static_cast<std::int64_t>(g.size());
      BoxList u = BoxList::copy({}, dt);
      for (std::size_t i = 0; i < g.size(); ++i) {
        if (g[i] == plan.rank) continue;
        u.append(BoxList::unpack(find(s.recvs, g[i])->boxes, dt, static_cast<std::int64_t>(i) * ps.count));
      }
      BoxList c = BoxList::copy(s.copies, dt);
      c.from_second_source();
      u.append(c);
      ps.unpack.push_back({0, std::move(u)});
    } else if (ps.mode == Mode::AllReduce) {
      ps.pack = BoxList::pack(s.copies, dt, 0);
      ps.send_elems = ps.count;
      ps.recv_elems = ps.count;
      ps.result = BoxList::unpack(s.copies, dt, 0);
    } else if (ps.mode == Mode::ReduceScatter) {
      BoxList pk = BoxList::copy({}, dt);
      for (std::size_t i = 0; i < g.size(); ++i) {
        const auto& boxes = g[i] == plan.rank ? s.copies : find(s.sends, g[i])->boxes;
        pk.append(BoxList::pack(boxes, dt, static_cast<std::int64_t>(i) * ps.count));
      }
      ps.pack = std::move(pk);
      ps.send_elems = ps.count * static_cast<std::int64_t>(g.size());
      ps.recv_elems = ps.count;
      ps.result = BoxList::unpack(s.copies, dt, 0);
    } else {
      if (!s.sends.empty() || !s.recvs.empty()) {
        if (!comm_)
          fail("CudaExecutor: step " + std::string(to_string(s.kind)) +
               " has messages but the executor has no NCCL communicator");
      }
      std::vector<Transfer> all;
      std::int64_t pos = 0;
      for (const auto& m : s.sends) {
        all.insert(all.end(), m.boxes.begin(), m.boxes.end());
        ps.sends.push_back({m.peer, {pos, m.elements()}});
        pos += m.elements();
      }
      ps.pack = BoxList::pack(all, dt, 0);
      ps.send_elems = pos;
      pos = 0;
      std::map<std::int64_t, BoxList> by_term;
      auto term_of = [&](const Transfer& t) { return s.reduce ? t.term : 0; };
      for (const auto& m : s.recvs) {
        ps.recvs.push_back({m.peer, {pos, m.elements()}});
        for (const auto& b : m.boxes) {
          by_term[term_of(b)].append(BoxList::unpack({b}, dt, pos));
          pos += b.elements();
        }
      }
      ps.recv_elems = pos;
      for (const auto& c : s.copies) {
        if (!s.reduce && is_transpose(c)) {
          ps.transposes.push_back(c);
          continue;
        }
        BoxList l = BoxList::copy({c}, dt);
        l.from_second_source();
        by_term[term_of(c)].append(l);
      }
      for (auto& [t, l] : by_term) ps.unpack.push_back({t, std::move(l)});
    }
    max_send = std::max(max_send, ps.send_elems * es);
    max_recv = std::max(max_recv, ps.recv_elems * es);
    p->steps.push_back(std::move(ps));
  }

  if (comm_ && !groups.empty()) {
    comm_->ensure_groups(groups);
    for (std::size_t i = 0; i < groups.size(); ++i)
      if (!groups[i].empty()) p->steps[group_step[i]].comm = comm_->find_group(groups[i]);
  }

  // Scratch: intermediate buffers, then the send and receive regions.
  const std::size_t nb = pl.buffers.size();
  std::int64_t bytes = 0;
  p->inter_offset.assign(nb, -1);
  for (std::size_t i = 1; i + 1 < nb; ++i) {
    p->inter_offset[i] = bytes;
    bytes += align_up(pl.buffers[i] * es);
  }
  p->send_offset = bytes;
  bytes += align_up(max_send);
  p->recv_offset = bytes;
  bytes += align_up(max_recv);
  if (bytes > 0) AXE_CUDA_CHECK(cudaMalloc(&p->scratch, static_cast<std::size_t>(bytes)));
  for (std::size_t i = 0; i < nb; ++i) {
    Transfer whole{{pl.buffers[i]}, 0, {1}, 0, {1}, 0};
    p->pads.push_back(BoxList::copy({whole}, dt));
  }
  auto& ref = cache_[&plan];
  ref = std::move(p);
  return *ref;
}

void CudaExecutor::execute(const RankPlan& plan, const void* source, void* destination) {
  if (plan.buffers.empty()) return;
  if (comm_) AXE_CUDA_CHECK(cudaSetDevice(comm_->device()));
  Prepared& p = prepare(plan);
  launches_ = nccl_calls_ = 0;
  const DType dt = plan.dtype;
  const std::int64_t es = size_of(dt);
  const std::size_t nb = plan.buffers.size();
  char* scratch = static_cast<char*>(p.scratch);
  auto buf = [&](int i) -> void* {
    if (static_cast<std::size_t>(i) + 1 == nb) return destination;
    return scratch + p.inter_offset[static_cast<std::size_t>(i)];
  };
  const double pad = is_floating(dt) ? std::numeric_limits<double>::quiet_NaN() : 0.0;
  for (std::size_t i = 1; i < nb; ++i) {
    fill_boxes(p.pads[i], buf(static_cast<int>(i)), pad, stream_);
    ++launches_;
  }
  char* sendr = scratch + p.send_offset;
  char* recvr = scratch + p.recv_offset;
  for (std::size_t k = 0; k < plan.steps.size(); ++k) {
    const Step& s = p.plan.steps[k];
    auto& ps = p.steps[k];
    const void* in = s.in == 0 ? source : buf(s.in);
    void* out = buf(s.out);
    if (!ps.fills.empty()) {
      fill_boxes(ps.fills, out, identity(s.op), stream_);
      ++launches_;
    }
    if (ps.mode == Mode::AllGather) {
      char* mine = recvr + ps.me * ps.count * es;
      copy_boxes(ps.pack, in, recvr, stream_);
      AXE_NCCL_CHECK(ncclAllGather(mine, recvr, static_cast<std::size_t>(ps.count), nccl_type(dt), ps.comm, stream_));
      comm_->settle(ps.comm, "ncclAllGather");
      launches_ += 1;
      ++nccl_calls_;
    } else if (ps.mode == Mode::AllReduce) {
      copy_boxes(ps.pack, in, recvr, stream_);
      AXE_NCCL_CHECK(ncclAllReduce(recvr, recvr, static_cast<std::size_t>(ps.count), nccl_type(dt),
                                   nccl_op(s.op), ps.comm, stream_));
      comm_->settle(ps.comm, "ncclAllReduce");
      ++launches_;
      ++nccl_calls_;
    } else if (ps.mode == Mode::ReduceScatter) {
      copy_boxes(ps.pack, in, sendr, stream_);
      AXE_NCCL_CHECK(ncclReduceScatter(sendr, recvr, static_cast<std::size_t>(ps.count), nccl_type(dt),
                                       nccl_op(s.op), ps.comm, stream_));
      comm_->settle(ps.comm, "ncclReduceScatter");
      ++launches_;
      ++nccl_calls_;
    } else {
      if (!ps.pack.empty()) {
        copy_boxes(ps.pack, in, sendr, stream_);
        ++launches_;
      }
      if (!ps.sends.empty() || !ps.recvs.empty()) {
        AXE_NCCL_CHECK(ncclGroupStart());
        for (const auto& [peer, r] : ps.sends)
          if (r.second > 0)
            AXE_NCCL_CHECK(ncclSend(sendr + r.first * es, static_cast<std::size_t>(r.second * es), ncclUint8,
                                    static_cast<int>(peer), comm_->world(), stream_));
        for (const auto& [peer, r] : ps.recvs)
          if (r.second > 0)
            AXE_NCCL_CHECK(ncclRecv(recvr + r.first * es, static_cast<std::size_t>(r.second * es), ncclUint8,
                                    static_cast<int>(peer), comm_->world(), stream_));
        const ncclResult_t r = ncclGroupEnd();
        if (r != ncclSuccess && r != ncclInProgress)
          comm_->abort_and_throw(std::string("ncclGroupEnd (send/recv) failed: ") + ncclGetErrorString(r));
        comm_->settle(comm_->world(), "grouped ncclSend/ncclRecv");
        ++nccl_calls_;
      }
    }
    for (const auto& t : ps.transposes) {
      transform(t, dt, in, out, stream_);
      ++launches_;
    }
    if (ps.mode == Mode::AllReduce || ps.mode == Mode::ReduceScatter) {
      const double divide = s.op == ReduceOp::Avg ? static_cast<double>(s.terms) : 1.0;
      if (divide != 1.0) reduce_boxes(ps.result, recvr, out, s.op, false, divide, stream_);
      else copy_boxes(ps.result, recvr, out, stream_);
      ++launches_;
      continue;
    }
    for (const auto& [term, list] : ps.unpack) {
      if (list.empty()) continue;
      if (!s.reduce) {
        copy_boxes(list, recvr, out, stream_, in);
      } else {
        const double divide =
            s.op == ReduceOp::Avg && term == s.terms - 1 ? static_cast<double>(s.terms) : 1.0;
        reduce_boxes(list, recvr, out, s.op, term > 0, divide, stream_, in);
      }
      ++launches_;
    }
  }
  AXE_CUDA_CHECK(cudaEventRecord(done_, stream_));
}

void CudaExecutor::synchronize() {
  if (comm_) {
    comm_->wait(done_, "CudaExecutor::synchronize");
    return;
  }
  AXE_CUDA_CHECK(cudaEventSynchronize(done_));
}

}  // namespace axe::cuda
