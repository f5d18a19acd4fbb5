// CudaExecutor: the host executor's step walk (src/exec/executor.cpp) on device buffers.
//
// The path of every step is decided by its recorded kind and Step::equal_blocks, which the
// planner makes the same on every rank (plan.hpp, "Agreement"); this file never chooses a path
// from one rank's own traffic, so all members of a group always make the same NCCL calls. The
// shape of every collective step is checked by the host executor's check (plan/step_check.hpp),
// which throws naming the rank and the step.
#include "axe/cuda/executor.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <string>

#include "axe/core/bytes.hpp"
#include "axe/cuda/check.hpp"
#include "axe/cuda/kernels.hpp"
#include "axe/cuda/nccl_comm.hpp"
#include "axe/core/error.hpp"
#include "axe/plan/passes.hpp"
#include "axe/plan/step_check.hpp"

namespace axe::cuda {

namespace {

// How a step moves its data over NCCL: grouped ncclSend/ncclRecv (P2P) or one native collective.
// (Not a box mode: `Mode` elsewhere is a mode of a layout or box.)
enum class Path { P2P, AllGather, AllReduce, ReduceScatter, Broadcast };

// Kinds that have a native NCCL collective (used when Step::equal_blocks; an all-gather of
// unequal blocks also, with padded slots, see collective_path).
bool native_kind(StepKind k) {
  return k == StepKind::AllGather || k == StepKind::ReduceScatter || k == StepKind::AllReduce ||
         k == StepKind::Broadcast;
}

std::int64_t elements(const std::vector<Transfer>& boxes) {
  std::int64_t n = 0;
  for (const auto& b : boxes) n += b.elements();
  return n;
}
std::int64_t align_up(std::int64_t n) { return (n + 255) / 256 * 256; }

// Bytes to which the slots of a padded all-gather (unequal blocks) are rounded.
constexpr std::int64_t kSlotAlign = 256;

// One contiguous range on both sides (NCCL can then move the list in place): the plan's rule,
// contiguous_run (plan.hpp), on the list's merged boxes. It decides as on the Transfers the list
// was built from: BoxList drops empty boxes and extent-1 modes and joins exactly the modes that
// are row-major contiguous on both sides (kernels.cu, merge_modes), keeping offsets and
// element counts, so a merged box is one stride-1 mode exactly when its Transfer's modes are
// row-major contiguous on both sides.
std::optional<ContiguousRun> contiguous_run(const BoxList& l) { return axe::contiguous_run(l.boxes()); }

}  // namespace

namespace {

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
};

}  // namespace

struct CudaExecutor::Prepared {
  RankPlan plan;  // a copy: the cache key's content is checked against it
  // The plan through the CUDA passes (plan/passes.hpp): local slices folded (fold_slices), the
  // unwritten elements listed (pad_unwritten).
  RankPlan exec;
  // The plan that runs: `exec` with the steps pipelined (chunks[i] > 1) split (pipeline).
  RankPlan run;
  std::vector<PStep> steps;         // one per run step
  std::vector<std::size_t> origin;  // per run step: its plan step
  // Per plan step: the chunks this rank would pipeline it in (1: none), and the agreed number
  // (the maximum over the world, so that every member of a group makes the same calls).
  std::vector<std::int64_t> wish, chunks;
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
  ~Prepared() {
    if (scratch) cudaFree(scratch);
  }
};

namespace {

std::int64_t env_int(const char* name, std::int64_t fallback, std::int64_t min) {
  const char* v = std::getenv(name);
  if (!v || !*v) return fallback;
  char* end = nullptr;
  const long long x = std::strtoll(v, &end, 10);
  if (end == v || *end != '\0' || x < min)
    fail(std::string(name) + ": '" + v + "' is not an integer >= " + std::to_string(min));
  return x;
}

}  // namespace

CudaExecutor::CudaExecutor(NcclComm* comm, cudaStream_t stream) : comm_(comm), stream_(stream) {
  if (comm_) AXE_CUDA_CHECK(cudaSetDevice(comm_->device()));
  if (!stream_) {
    AXE_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
    owns_stream_ = true;
  }
  AXE_CUDA_CHECK(cudaEventCreateWithFlags(&done_, cudaEventDisableTiming));
  set_pipeline(env_int("AXE_PIPELINE_CHUNKS", max_chunks_, 1),
               env_int("AXE_PIPELINE_MIN_BYTES", min_pipeline_bytes_, 1));
  pipeline_blocks_per_sm_ = static_cast<int>(env_int("AXE_PIPELINE_BLOCKS_PER_SM", pipeline_blocks_per_sm_, 1));
  if (const char* v = std::getenv("AXE_OVERLAP_MIN"); v && *v) set_overlap_min(parse_bytes(v, "AXE_OVERLAP_MIN"));
  if (pipeline_blocks_per_sm_ > 8) fail("AXE_PIPELINE_BLOCKS_PER_SM: " + std::to_string(pipeline_blocks_per_sm_) + " > 8");
}

CudaExecutor::~CudaExecutor() {
  if (stream_) cudaStreamSynchronize(stream_);
  cache_.clear();
  for (cudaEvent_t e : events_) cudaEventDestroy(e);
  if (pack_stream_) cudaStreamDestroy(pack_stream_);
  if (unpack_stream_) cudaStreamDestroy(unpack_stream_);
  if (side_stream_) cudaStreamDestroy(side_stream_);
  if (fork_) cudaEventDestroy(fork_);
  if (join_) cudaEventDestroy(join_);
  if (done_) cudaEventDestroy(done_);
  if (owns_stream_) cudaStreamDestroy(stream_);
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

namespace {

// The native path of collective step `s` (plan step `index`), or P2P, with ps.count, ps.root
// and ps.me. The shape is the shared check's (plan/step_check.hpp), which throws naming rank and
// step when the rank's messages do not have the declared collective's shape; the path is this
// backend's choice.
Path collective_path(const RankPlan& plan, const Step& s, std::size_t index, PStep& ps) {
  const CollectiveShape shape = check_collective(plan.rank, s, index, "CudaExecutor");
  const auto g = static_cast<std::int64_t>(s.group.size());
  Path path = Path::P2P;
  switch (s.kind) {
    case StepKind::AllGather:
      ps.count = shape.count;
      path = Path::AllGather;
      if (!s.equal_blocks) {
        // Unequal blocks (an uneven dim): one all-gather of blocks padded to the largest, rounded
        // up to kSlotAlign bytes, into staging, when the padding is at most an eighth of the
        // data; else grouped send/recv. Every member sees every block's size (it receives all
        // others), so all members decide alike. Aligned slots keep NCCL on its fast path: an
        // all-gather of unaligned blocks ran 1.65x slower on 4 H200s (uneven S0->R).
        const std::int64_t unit = std::max<std::int64_t>(1, kSlotAlign / static_cast<std::int64_t>(size_of(plan.dtype)));
        ps.count = (shape.largest + unit - 1) / unit * unit;
        if (shape.largest == 0 || ps.count * g > shape.total + shape.total / 8) {
          ps.count = 0;
          path = Path::P2P;
        }
      }
      break;
    case StepKind::Broadcast:
      ps.root = static_cast<int>(shape.root);
      ps.count = shape.count;
      path = s.equal_blocks ? Path::Broadcast : Path::P2P;
      break;
    case StepKind::ReduceScatter:
    case StepKind::AllReduce:
      if (!s.equal_blocks) break;
      ps.count = shape.count;
      path = s.kind == StepKind::AllReduce ? Path::AllReduce : Path::ReduceScatter;
      break;
    default:  // all-to-all
      break;
  }
  if (path != Path::P2P) ps.me = static_cast<int>(shape.me);
  return path;
}

}  // namespace

CudaExecutor::Prepared* CudaExecutor::lookup(const RankPlan& plan) const {
  auto it = cache_.find(&plan);
  return it != cache_.end() && same_plan(it->second->plan, plan) ? it->second.get() : nullptr;
}

namespace {

// The run-time form of step `s` (plan step `index`, for messages) on this rank: the collective
// path, pack / unpack lists, zero-copy sends and in-place receives.
PStep build_step(const RankPlan& pl, const Step& s, std::size_t index, bool comm, std::int64_t overlap_min) {
  const DType dt = pl.dtype;
  PStep ps;
  // Local copies worth overlapping with the step's transfer (non-reducing steps: the copies and
  // the received boxes write disjoint elements of `out`, so they may run concurrently).
  const bool big_local = !s.reduce && overlap_min > 0 &&
                         elements(s.copies) * static_cast<std::int64_t>(size_of(dt)) >= overlap_min;
  const auto& g = s.group;
  // The host executor's rule: a collective kind on a group of 2 or more runs the collective.
  if (is_collective(s.kind) && g.size() > 1) {
    ps.path = collective_path(pl, s, index, ps);
  }
  if (ps.path != Path::P2P && !comm)
    fail("CudaExecutor: rank " + std::to_string(pl.rank) + " step " + std::to_string(index) + " (" +
         std::string(to_string(s.kind)) + ") needs NCCL but the executor has no communicator");

  ps.fills = BoxList::copy(s.fills, dt);
  if (ps.path == Path::AllGather) {
    ps.pack = BoxList::pack(s.sends.empty() ? std::vector<Transfer>{} : s.sends[0].boxes, dt, ps.me * ps.count);
    ps.recv_elems = ps.count * static_cast<std::int64_t>(g.size());
    const std::int64_t own = ps.pack.elements();
    if (!s.equal_blocks) {  // padded slots: the padding every member's slot carries beyond its block
      ps.pad = ps.recv_elems - own;
      for (const auto& m : s.recvs) ps.pad -= m.elements();
    }
    // NCCL reads `count` elements from send_at: with padded slots, past the own block, so only
    // where `in` holds them and the block starts 16-byte aligned; else it is packed into its slot.
    if (auto run = contiguous_run(ps.pack))
      if (s.equal_blocks || (run->src + ps.count <= pl.buffers[static_cast<std::size_t>(s.in)] &&
                             run->src * static_cast<std::int64_t>(size_of(dt)) % 16 == 0))
        ps.send_at = run->src;
    // In place: the local copy is exactly this rank's send block packed into one slot of
    // `out`, and every member's block arrives contiguously at the slot of its index.
    if (ps.count > 0 && !s.copies.empty()) {
      BoxList c = BoxList::copy(s.copies, dt);
      const std::int64_t slot = c.boxes().front().dst_offset;
      const std::int64_t base = slot - ps.me * ps.count;
      bool ok = base >= 0 && c.elements() == ps.count && BoxList::pack(s.sends[0].boxes, dt, slot).boxes() == c.boxes();
      for (std::size_t i = 0; ok && i < g.size(); ++i) {
        if (g[i] == pl.rank) continue;
        const Message* m = find_message(s.recvs, g[i]);
        auto run = m ? contiguous_run(BoxList::unpack(m->boxes, dt, 0)) : std::nullopt;
        ok = run && run->n == ps.count && run->dst == base + static_cast<std::int64_t>(i) * ps.count;
      }
      if (ok) {
        ps.recv_at = base;
        ps.pack = BoxList::pack(s.sends[0].boxes, dt, slot);  // into out's own slot
        ps.recv_elems = 0;
      }
    }
    if (ps.recv_at < 0) {
      BoxList u = BoxList::copy({}, dt);
      for (std::size_t i = 0; i < g.size(); ++i) {
        if (g[i] == pl.rank) continue;
        if (const Message* m = find_message(s.recvs, g[i]))
          u.append(BoxList::unpack(m->boxes, dt, static_cast<std::int64_t>(i) * ps.count));
      }
      BoxList c = BoxList::copy(s.copies, dt);
      if (big_local && ps.count > 0 && g.size() == 2) {  // the own block goes from in to out meanwhile
        ps.local = std::move(c);
        ps.overlap = true;
      } else {
        c.from_second_source();
        u.append(c);
      }
      ps.unpack.push_back({0, std::move(u)});
    }
  } else if (ps.path == Path::Broadcast) {
    ps.recv_elems = ps.count;
    BoxList u = BoxList::copy({}, dt);
    if (pl.rank == s.root)
      ps.pack = BoxList::pack(s.sends.empty() ? std::vector<Transfer>{} : s.sends[0].boxes, dt, 0);
    else if (!s.recvs.empty())
      u.append(BoxList::unpack(s.recvs[0].boxes, dt, 0));
    BoxList c = BoxList::copy(s.copies, dt);
    c.from_second_source();
    u.append(c);
    ps.unpack.push_back({0, std::move(u)});
  } else if (ps.path == Path::AllReduce) {
    ps.pack = BoxList::pack(s.copies, dt, 0);
    ps.send_elems = ps.count;
    ps.recv_elems = ps.count;
    ps.result = BoxList::unpack(s.copies, dt, 0);
    if (auto run = contiguous_run(ps.pack); run && run->n == ps.count) ps.send_at = run->src;
    if (auto run = contiguous_run(ps.result); run && run->n == ps.count) ps.recv_at = run->dst;
    if (ps.send_at >= 0 || ps.recv_at >= 0) ps.send_elems = 0;  // packs into out, or no pack
    if (ps.recv_at >= 0) ps.recv_elems = 0;
    if (ps.recv_at >= 0) ps.in_place = BoxList::copy({Transfer{{ps.count}, ps.recv_at, {1}, ps.recv_at, {1}, 0}}, dt);
  } else if (ps.path == Path::ReduceScatter) {
    BoxList pk = BoxList::copy({}, dt);
    for (std::size_t i = 0; i < g.size(); ++i) {
      if (ps.count == 0) break;  // count > 0: the step check found every member's block
      const auto& boxes = g[i] == pl.rank ? s.copies : find_message(s.sends, g[i])->boxes;
      pk.append(BoxList::pack(boxes, dt, static_cast<std::int64_t>(i) * ps.count));
    }
    ps.pack = std::move(pk);
    ps.send_elems = ps.count * static_cast<std::int64_t>(g.size());
    ps.recv_elems = ps.count;
    ps.result = BoxList::unpack(s.copies, dt, 0);
    if (auto run = contiguous_run(ps.pack); run && run->n == ps.send_elems) {
      ps.send_at = run->src;
      ps.send_elems = 0;
    }
    if (auto run = contiguous_run(ps.result); run && run->n == ps.count) {
      ps.recv_at = run->dst;
      ps.recv_elems = 0;
      ps.in_place = BoxList::copy({Transfer{{ps.count}, ps.recv_at, {1}, ps.recv_at, {1}, 0}}, dt);
    }
  } else {
    if ((!s.sends.empty() || !s.recvs.empty()) && !comm)
      fail("CudaExecutor: rank " + std::to_string(pl.rank) + " step " + std::to_string(index) + " (" +
           std::string(to_string(s.kind)) + ") has messages but the executor has no NCCL communicator");
    std::vector<Transfer> all;
    std::int64_t pos = 0;
    for (const auto& m : s.sends) {
      if (auto run = contiguous_run(BoxList::pack(m.boxes, dt, 0))) {  // send straight from in
        ps.sends.push_back({m.peer, run->src, m.elements(), true});
        continue;
      }
      all.insert(all.end(), m.boxes.begin(), m.boxes.end());
      ps.sends.push_back({m.peer, pos, m.elements(), false});
      pos += m.elements();
    }
    ps.pack = BoxList::pack(all, dt, 0);
    ps.send_elems = pos;
    pos = 0;
    std::map<std::int64_t, BoxList> by_term;
    auto term_of = [&](const Transfer& t) { return s.reduce ? t.term : 0; };
    for (const auto& m : s.recvs) {
      if (!s.reduce) {
        if (auto run = contiguous_run(BoxList::unpack(m.boxes, dt, 0))) {  // receive into out
          ps.recvs.push_back({m.peer, run->dst, m.elements(), true});
          continue;
        }
      }
      ps.recvs.push_back({m.peer, pos, m.elements(), false});
      for (const auto& b : m.boxes) {
        by_term[term_of(b)].append(BoxList::unpack({b}, dt, pos));
        pos += b.elements();
      }
    }
    ps.recv_elems = pos;
    // Overlap only with one peer, as for all-gathers: a copy beside an exchange with several
    // peers slows it (see "Overlap" in executor.hpp).
    std::vector<std::int64_t> peers;
    for (const auto& m : ps.sends) peers.push_back(m.peer);
    for (const auto& m : ps.recvs) peers.push_back(m.peer);
    std::sort(peers.begin(), peers.end());
    ps.overlap = big_local && !peers.empty() && std::unique(peers.begin(), peers.end()) - peers.begin() == 1;
    for (const auto& c : s.copies) {
      if (!s.reduce && is_transpose(c)) {
        ps.transposes.push_back(c);
        continue;
      }
      BoxList l = BoxList::copy({c}, dt);
      if (ps.overlap) {
        ps.local.append(l);
        continue;
      }
      l.from_second_source();
      by_term[term_of(c)].append(l);
    }
    for (auto& [t, l] : by_term) ps.unpack.push_back({t, std::move(l)});
  }
  return ps;
}

// Pack and unpack work of a step on this rank (elements moved by kernels around its transfer),
// and its transferred elements; 0 work when the step is one zero-copy call or purely local.
std::pair<std::int64_t, std::int64_t> kernel_work(const PStep& ps) {
  // A native collective whose block is contiguous in `in` (send_at >= 0) sends it as is: its
  // pack list (the own slot of an in-place all-gather) is never launched.
  const bool packs = ps.path == Path::P2P || ps.send_at < 0;
  std::int64_t work = (packs ? ps.pack.elements() : 0) + (ps.recv_at < 0 ? ps.result.elements() : 0) +
                     ps.local.elements();
  for (const auto& [t, l] : ps.unpack) work += l.elements();
  std::int64_t moved = 0;
  switch (ps.path) {
    case Path::AllGather:
    case Path::ReduceScatter:
      moved = ps.count;
      break;
    case Path::P2P:
      for (const auto& m : ps.sends) moved += m.n;
      for (const auto& m : ps.recvs) moved += m.n;
      break;
    default:
      break;
  }
  return {moved > 0 ? work : 0, moved};
}

// Whether any step of the plan goes beyond local copies (the same on every rank).
bool moves_data(const RankPlan& plan) {
  return std::any_of(plan.steps.begin(), plan.steps.end(), [](const Step& s) { return s.kind != StepKind::LocalCopy; });
}

}  // namespace

void CudaExecutor::build(Prepared& p) {
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
    PStep ps = build_step(pl, s, origin[j], comm_ != nullptr, piped ? 0 : overlap_min_);
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
  for (std::size_t i = 0; i < pl.steps.size(); ++i) {
    const Step& s = pl.steps[i];
    const auto& ps = p.steps[i];
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
  build(*p);
  wish_chunks(*p);
  // Padding: the boxes pad_unwritten listed per buffer (none for the source).
  const std::size_t nb = pl.buffers.size();
  p->pads.resize(nb);
  for (std::size_t i = 1; i < nb; ++i) p->pads[i] = BoxList::copy(pl.pads[i], dt);
  // connect() agrees on the chunks (and splits communicators): needed whenever data moves.
  p->connected = !comm_ || !moves_data(pl);
  // Bounded cache: plans are usually few and reused; an evicted one is simply prepared again
  // (the runtime's backend agrees on re-preparation across ranks, so eviction is per rank).
  if (cache_.size() >= 64) {
    AXE_CUDA_CHECK(cudaStreamSynchronize(stream_));
    cache_.clear();
  }
  cache_[&plan] = std::move(p);
  return true;
}

void CudaExecutor::connect(const RankPlan& plan) {
  Prepared* p = lookup(plan);
  if (!p) fail("CudaExecutor::connect: the plan for rank " + std::to_string(plan.rank) + " is not prepared");
  if (!comm_ || !moves_data(plan)) {
    p->connected = true;
    return;
  }
  // Pipelining: every rank splits a step into the largest number of chunks any rank wants.
  std::vector<std::int64_t> agreed = p->wish;
  comm_->allreduce_max(agreed, "CudaExecutor::connect (pipeline chunks)");
  if (agreed != (p->chunks.empty() ? std::vector<std::int64_t>(agreed.size(), 1) : p->chunks)) {
    p->chunks = agreed;
    build(*p);
  }
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

void CudaExecutor::ensure_side_stream() {
  if (side_stream_) return;
  AXE_CUDA_CHECK(cudaStreamCreateWithFlags(&side_stream_, cudaStreamNonBlocking));
  AXE_CUDA_CHECK(cudaEventCreateWithFlags(&fork_, cudaEventDisableTiming));
  AXE_CUDA_CHECK(cudaEventCreateWithFlags(&join_, cudaEventDisableTiming));
}

void CudaExecutor::ensure_pipeline_streams() {
  if (pack_stream_) return;
  AXE_CUDA_CHECK(cudaStreamCreateWithFlags(&pack_stream_, cudaStreamNonBlocking));
  AXE_CUDA_CHECK(cudaStreamCreateWithFlags(&unpack_stream_, cudaStreamNonBlocking));
  events_.resize(3 * kMaxPipelineChunks + 1);
  for (auto& e : events_) AXE_CUDA_CHECK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
}

void CudaExecutor::execute(const RankPlan& plan, const void* source, void* destination) {
  if (plan.buffers.empty()) return;
  if (comm_ && comm_->failed())
    fail("CudaExecutor: rank " + std::to_string(comm_->rank()) +
         ": NCCL failed earlier (communicators aborted); this executor cannot run plans any more");
  if (comm_) AXE_CUDA_CHECK(cudaSetDevice(comm_->device()));
  if (prepare_local(plan)) connect(plan);
  Prepared& p = *lookup(plan);
  if (!p.connected) connect(plan);
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
    bool packed = false;
    auto pack = [&](const BoxList& l, void* dst) {
      copy_boxes(l, in, dst, sp);
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
          copy_boxes(ps.local, in, out, side_stream_);
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
            copy_boxes(ps.result, recvr, out, su);
          ++launches_;
        }
      }
    } else {
      for (const auto& [term, list] : ps.unpack) {
        if (list.empty()) continue;
        if (!s.reduce) {
          copy_boxes(list, recvr, out, su, in);
        } else {
          const double divide = s.op == ReduceOp::Avg && term == s.terms - 1 ? static_cast<double>(s.terms) : 1.0;
          reduce_boxes(list, recvr, out, s.op, term > 0, divide, su, in);
        }
        ++launches_;
      }
    }
    if (piped) {
      AXE_CUDA_CHECK(cudaEventRecord(ev_unpack[c], su));
      if (c + 1 == ps.chunks) AXE_CUDA_CHECK(cudaStreamWaitEvent(stream_, ev_unpack[c], 0));
    }
    if (ps.overlap) AXE_CUDA_CHECK(cudaStreamWaitEvent(stream_, join_, 0));
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
