// Pack / unpack / reduce / fill over a list of strided boxes in one launch, and the swizzled
// shared-memory transpose (include/axe/cuda/kernels.hpp).
//
// Work split: every box is cut into chunks of kChunk units (a unit is 1..16 bytes, chosen per box
// on the host); the grid walks the chunks of all boxes (grid-stride), a block finds its box by a
// binary search over the chunk prefix sums. Inside a chunk, thread t handles units t, t + 256,
// t + 512, t + 768: consecutive threads touch consecutive units of the innermost run, so a warp
// reads 512 contiguous bytes when the run allows it, and each thread has four loads in flight
// before its first store. Rows the box kernel could only move in units of 1, 2 or 4 bytes (odd
// lengths, pitches or offsets) go through a second kernel over the same chunk scheme, whose unit
// is a 16-byte slot of the destination row (row_kernel below).
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <mutex>
#include <numeric>
#include <string>
#include <utility>

#include "axe/core/bytes.hpp"
#include "axe/cuda/check.hpp"
#include "axe/cuda/kernels.hpp"
#include "axe/core/error.hpp"

namespace axe::cuda {

void throw_cuda_error(cudaError_t e, const char* expr, const char* file, int line) {
  throw Error(std::string(file) + ":" + std::to_string(line) + ": " + expr +
              " failed: " + cudaGetErrorString(e));
}

namespace {

constexpr int kThreads = 256;
constexpr int kUnroll = 4;
constexpr long long kChunk = kThreads * kUnroll;

struct Desc {
  long long ext[kMaxModes];  // innermost extent in units
  long long sst[kMaxModes];  // strides in units
  long long dst[kMaxModes];
  long long soff, doff;  // units
  long long units;       // units in the box
  long long chunk_begin;
  int rank;
  int ulog;   // log2(unit bytes)
  int small;  // every index fits 32 bits
  int source;  // 0: src, 1: src2
};
static_assert(sizeof(Desc) % 8 == 0);

// A box of the realigned-row kernel: rows of `run` bytes, each `slots` 16-byte slots of the
// destination (the slots its row touches, at most (run + 30) / 16), over the outer modes.
struct RDesc {
  long long ext[kMaxModes];  // outer modes, outermost first
  long long sst[kMaxModes];  // strides in bytes
  long long dst[kMaxModes];
  long long soff, doff;  // bytes
  long long run;         // bytes per row
  long long slots;       // slots per row
  long long units;       // rows * slots
  long long chunk_begin;
  int rank;    // outer modes (0: one row)
  int small;   // units fit 32 bits
  int source;  // 0: src, 1: src2
  int pad_;
};
static_assert(sizeof(RDesc) % 8 == 0);

// ---- host side: merging modes and choosing units --------------------------------------------

std::int64_t box_elements(const Transfer& t) {
  std::int64_t n = 1;
  for (auto e : t.extents) n *= e;
  return n;
}

// Drops extent-1 modes and merges mode k into k+1 where both sides are contiguous across them.
Transfer merge_modes(const Transfer& t) {
  Transfer r;
  r.src_offset = t.src_offset;
  r.dst_offset = t.dst_offset;
  r.term = t.term;
  for (std::size_t k = 0; k < t.extents.size(); ++k) {
    if (t.extents[k] == 1) continue;
    if (!r.extents.empty() && r.src_strides.back() == t.src_strides[k] * t.extents[k] &&
        r.dst_strides.back() == t.dst_strides[k] * t.extents[k]) {
      r.extents.back() *= t.extents[k];
      r.src_strides.back() = t.src_strides[k];
      r.dst_strides.back() = t.dst_strides[k];
      continue;
    }
    r.extents.push_back(t.extents[k]);
    r.src_strides.push_back(t.src_strides[k]);
    r.dst_strides.push_back(t.dst_strides[k]);
  }
  if (r.extents.empty()) {
    r.extents = {1};
    r.src_strides = {1};
    r.dst_strides = {1};
  }
  return r;
}

void check_box(const Transfer& t) {
  if (t.extents.size() != t.src_strides.size() || t.extents.size() != t.dst_strides.size())
    fail("cuda::BoxList: box " + to_string(t) + " has extents and strides of different ranks");
  for (auto e : t.extents)
    if (e < 0) fail("cuda::BoxList: box " + to_string(t) + " has a negative extent");
}

// Largest power-of-two unit (bytes, <= cap) that the box allows.
int unit_log2(const Transfer& t, std::int64_t es, int cap) {
  const std::size_t r = t.extents.size();
  std::int64_t g = 16;
  g = std::gcd(g, static_cast<std::int64_t>(cap));
  if (t.src_strides[r - 1] != 1 || t.dst_strides[r - 1] != 1) g = std::gcd(g, es);
  g = std::gcd(g, t.extents[r - 1] * es);
  for (std::size_t k = 0; k + 1 < r; ++k) {
    g = std::gcd(g, std::abs(t.src_strides[k]) * es);
    g = std::gcd(g, std::abs(t.dst_strides[k]) * es);
  }
  g = std::gcd(g, std::abs(t.src_offset) * es);
  g = std::gcd(g, std::abs(t.dst_offset) * es);
  g = std::max(g, es);  // es divides every term above, so g >= es already unless cap < es
  int l = 0;
  while ((std::int64_t{1} << (l + 1)) <= g && (g % (std::int64_t{1} << (l + 1))) == 0) ++l;
  return l;
}

Desc make_desc(const Transfer& t, std::int64_t es, int cap, long long chunk_begin) {
  Desc d{};
  const int r = static_cast<int>(t.extents.size());
  if (r > kMaxModes)
    fail("cuda::BoxList: box " + to_string(t) + " has " + std::to_string(r) +
         " modes after merging, at most " + std::to_string(kMaxModes) + " are supported");
  const int ul = unit_log2(t, es, cap);
  const std::int64_t unit = std::int64_t{1} << ul;
  const std::int64_t per = unit / es;  // elements per unit (1 unless the inner run is contiguous)
  d.rank = r;
  d.ulog = ul;
  long long units = 1;
  for (int k = 0; k < r; ++k) {
    const bool inner = k == r - 1;
    d.ext[k] = inner ? t.extents[k] / per : t.extents[k];
    d.sst[k] = inner ? (per == 1 ? t.src_strides[k] : 1) : t.src_strides[k] * es / unit;
    d.dst[k] = inner ? (per == 1 ? t.dst_strides[k] : 1) : t.dst_strides[k] * es / unit;
    units *= d.ext[k];
  }
  d.soff = t.src_offset * es / unit;
  d.doff = t.dst_offset * es / unit;
  d.units = units;
  d.chunk_begin = chunk_begin;
  d.small = units < (1ll << 31) ? 1 : 0;
  return d;
}

// True when copy_boxes moves merged box `t` through the realigned-row kernel (kernels.hpp).
bool realigns(const Transfer& t, std::int64_t es, const CopyEnginePolicy& policy) {
  const std::size_t r = t.extents.size();
  return policy.realign_min_row > 0 && t.src_strides[r - 1] == 1 && t.dst_strides[r - 1] == 1 &&
         t.extents[r - 1] * es >= policy.realign_min_row && unit_log2(t, es, 16) <= 2;
}

RDesc make_rdesc(const Transfer& t, std::int64_t es, long long chunk_begin) {
  RDesc d{};
  const int r = static_cast<int>(t.extents.size());
  d.rank = r - 1;
  long long rows = 1;
  for (int k = 0; k + 1 < r; ++k) {
    d.ext[k] = t.extents[k];
    d.sst[k] = t.src_strides[k] * es;
    d.dst[k] = t.dst_strides[k] * es;
    rows *= t.extents[k];
  }
  d.soff = t.src_offset * es;
  d.doff = t.dst_offset * es;
  d.run = t.extents[r - 1] * es;
  d.slots = (d.run + 30) / 16;
  d.units = rows * d.slots;
  d.chunk_begin = chunk_begin;
  d.small = d.units < (1ll << 31) ? 1 : 0;
  return d;
}

}  // namespace

struct BoxList::Tables {
  std::mutex mu;
  struct Entry {
    void* dev = nullptr;
    void* host = nullptr;
    std::int64_t chunks = 0;
    int modes = 0;
  };
  std::map<int, Entry> by_align;         // key 0: the realigned-row table (row_device)
  CopyEnginePolicy split_policy{-1, 0};  // the policy `split` was computed for (none yet)
  BoxList::Split split;
  ~Tables() {
    for (auto& [a, e] : by_align) {
      if (e.dev) cudaFree(e.dev);
      if (e.host) cudaFreeHost(e.host);
    }
  }
};

// mode 0: copy, 1: pack (dst packed), 2: unpack (src packed)
BoxList BoxList::build(const std::vector<Transfer>& in, DType dt, int mode,
                       std::int64_t packed_base) {
  BoxList r;
  r.dtype_ = dt;
  r.tables_ = std::make_shared<Tables>();
  std::int64_t pos = packed_base;
  for (const auto& b : in) {
    check_box(b);
    Transfer t = b;
    const std::int64_t n = box_elements(b);
    if (mode != 0) {
      std::vector<std::int64_t> st(b.extents.size());
      std::int64_t s = 1;
      for (std::size_t k = b.extents.size(); k-- > 0;) {
        st[k] = s;
        s *= b.extents[k];
      }
      if (mode == 1) {
        t.dst_offset = pos;
        t.dst_strides = st;
      } else {
        t.src_offset = pos;
        t.src_strides = st;
      }
    }
    pos += n;
    if (n == 0) continue;
    r.boxes_.push_back(merge_modes(t));
    r.source_.push_back(0);
    if (r.boxes_.back().extents.size() > static_cast<std::size_t>(kMaxModes))
      fail("cuda::BoxList: box " + to_string(b) + " has " +
           std::to_string(r.boxes_.back().extents.size()) + " modes after merging, at most " +
           std::to_string(kMaxModes) + " are supported");
  }
  return r;
}

BoxList BoxList::pack(const std::vector<Transfer>& boxes, DType dt, std::int64_t base) {
  return build(boxes, dt, 1, base);
}
BoxList BoxList::unpack(const std::vector<Transfer>& boxes, DType dt, std::int64_t base) {
  return build(boxes, dt, 2, base);
}
BoxList BoxList::copy(const std::vector<Transfer>& boxes, DType dt) {
  return build(boxes, dt, 0, 0);
}

void BoxList::append(const BoxList& o) {
  if (o.empty()) return;
  if (!empty() && o.dtype_ != dtype_)
    fail("cuda::BoxList::append: dtypes differ (" + std::string(to_string(dtype_)) + " and " +
         std::string(to_string(o.dtype_)) + ")");
  dtype_ = o.dtype_;
  boxes_.insert(boxes_.end(), o.boxes_.begin(), o.boxes_.end());
  source_.insert(source_.end(), o.source_.begin(), o.source_.end());
  tables_ = std::make_shared<Tables>();
}

BoxList& BoxList::from_second_source() {
  for (auto& s : source_) s = 1;
  tables_ = std::make_shared<Tables>();
  return *this;
}

std::int64_t BoxList::elements() const {
  std::int64_t n = 0;
  for (const auto& b : boxes_) n += box_elements(b);
  return n;
}

namespace {

// The table under `key`, built by make(box, element size, first chunk) per box on first use.
template <class D, class Map, class Make>
BoxList::Device cached_table(Map& tables, int key, const std::vector<Transfer>& boxes,
                             const std::vector<int>& source, std::int64_t es, cudaStream_t stream,
                             const Make& make) {
  auto it = tables.find(key);
  if (it == tables.end()) {
    std::vector<D> ds;
    long long chunks = 0;
    for (std::size_t i = 0; i < boxes.size(); ++i) {
      ds.push_back(make(boxes[i], es, chunks));
      ds.back().source = source[i];
      chunks += (ds.back().units + kChunk - 1) / kChunk;
    }
    typename Map::mapped_type e;
    e.chunks = chunks;
    for (const auto& b : boxes) e.modes = std::max(e.modes, static_cast<int>(b.extents.size()));
    const std::size_t bytes = ds.size() * sizeof(D);
    if (bytes) {
      AXE_CUDA_CHECK(cudaMallocHost(&e.host, bytes));
      std::memcpy(e.host, ds.data(), bytes);
      AXE_CUDA_CHECK(cudaMalloc(&e.dev, bytes));
      AXE_CUDA_CHECK(cudaMemcpyAsync(e.dev, e.host, bytes, cudaMemcpyHostToDevice, stream));
    }
    it = tables.emplace(key, e).first;
  }
  return {it->second.dev, it->second.chunks, static_cast<int>(boxes.size()), it->second.modes};
}

}  // namespace

BoxList::Device BoxList::device(int align, cudaStream_t stream) const {
  if (!tables_) return {};
  std::lock_guard<std::mutex> g(tables_->mu);
  return cached_table<Desc>(tables_->by_align, align, boxes_, source_, size_of(dtype_), stream,
                            [align](const Transfer& b, std::int64_t es, long long chunks) {
                              return make_desc(b, es, align, chunks);
                            });
}

BoxList::Device BoxList::row_device(cudaStream_t stream) const {
  if (!tables_) return {};
  std::lock_guard<std::mutex> g(tables_->mu);
  return cached_table<RDesc>(tables_->by_align, 0, boxes_, source_, size_of(dtype_), stream,
                             make_rdesc);
}

// ---- copy engines ----------------------------------------------------------------------------

namespace {

CopyEnginePolicy env_policy() {
  CopyEnginePolicy p;
  if (const char* v = std::getenv("AXE_COPY_ENGINE_MIN"); v && *v) p.min_bytes = parse_bytes(v, "AXE_COPY_ENGINE_MIN");
  if (const char* v = std::getenv("AXE_COPY_ENGINE_UNIT"); v && *v) {
    char* end = nullptr;
    const long x = std::strtol(v, &end, 10);
    if (end == v || *end != '\0' || x < 1 || x > 17)
      fail(std::string("AXE_COPY_ENGINE_UNIT: '") + v + "' is not an integer in 1..17");
    p.unit_below = static_cast<int>(x);
  }
  if (const char* v = std::getenv("AXE_REALIGN_MIN_ROW"); v && *v)
    p.realign_min_row = parse_bytes(v, "AXE_REALIGN_MIN_ROW");
  return p;
}

std::mutex& policy_mu() {
  static std::mutex m;
  return m;
}
CopyEnginePolicy& policy_ref() {
  static CopyEnginePolicy p = env_policy();
  return p;
}

// The copy-engine calls for merged box `t` (element size es), appended to `out`; false (nothing
// appended) when the box does not qualify.
bool engine_calls(const Transfer& t, std::int64_t es, int source, const CopyEnginePolicy& policy,
                  std::vector<EngineCopy>& out) {
  const std::size_t r = t.extents.size();
  if (policy.min_bytes <= 0 || box_elements(t) * es < policy.min_bytes) return false;
  if (t.src_strides[r - 1] != 1 || t.dst_strides[r - 1] != 1) return false;
  // One contiguous run: cudaMemcpyAsync at any unit (it beats the kernel even on aligned runs).
  const std::int64_t unit = realigns(t, es, policy) ? 16 : std::int64_t{1} << unit_log2(t, es, 16);
  if (r > 1 && unit >= policy.unit_below) return false;
  const std::int64_t width = t.extents[r - 1] * es;
  constexpr std::int64_t kMaxPitch = std::numeric_limits<int>::max();  // cudaDeviceProp::memPitch
  EngineCopy c{source, t.src_offset * es, width, t.dst_offset * es, width, width, 1};
  if (r == 1) {
    out.push_back(c);
    return true;
  }
  if (width < kCopyEngineMinRow || r > 3) return false;
  const std::int64_t sp = t.src_strides[r - 2] * es, dp = t.dst_strides[r - 2] * es;
  if (sp < width || dp < width || sp > kMaxPitch || dp > kMaxPitch) return false;
  c.src_pitch = sp;
  c.dst_pitch = dp;
  const std::int64_t rows = t.extents[r - 2];
  const std::int64_t planes = r == 3 ? t.extents[0] : 1;
  if (r == 3 && (planes > 4 || t.src_strides[0] < 0 || t.dst_strides[0] < 0)) return false;
  // Calls of at most kMaxCopyEngineRows rows. (Added while chasing an "invalid argument" that
  // turned out to be a source range past its allocation; a probe on an H200 copied 131072 rows
  // in one call. The pieces cost nothing measurable and keep each call's size bounded.)
  const std::int64_t pieces = (rows + kMaxCopyEngineRows - 1) / kMaxCopyEngineRows;
  if (planes * pieces > kMaxCopyEngineCalls) return false;
  for (std::int64_t i = 0; i < planes; ++i)
    for (std::int64_t p = 0; p < pieces; ++p) {
      EngineCopy ci = c;
      ci.src_offset += (r == 3 ? i * t.src_strides[0] * es : 0) + p * kMaxCopyEngineRows * sp;
      ci.dst_offset += (r == 3 ? i * t.dst_strides[0] * es : 0) + p * kMaxCopyEngineRows * dp;
      ci.height = std::min(kMaxCopyEngineRows, rows - p * kMaxCopyEngineRows);
      out.push_back(ci);
    }
  return true;
}

}  // namespace

CopyEnginePolicy copy_engine_policy() {
  std::lock_guard<std::mutex> g(policy_mu());
  return policy_ref();
}

CopyEnginePolicy set_copy_engine_policy(CopyEnginePolicy policy) {
  if (policy.min_bytes < 0)
    fail("set_copy_engine_policy: min_bytes " + std::to_string(policy.min_bytes) + " is negative");
  if (policy.unit_below < 1 || policy.unit_below > 17)
    fail("set_copy_engine_policy: unit_below " + std::to_string(policy.unit_below) + " is outside 1..17");
  if (policy.realign_min_row < 0)
    fail("set_copy_engine_policy: realign_min_row " + std::to_string(policy.realign_min_row) +
         " is negative");
  std::lock_guard<std::mutex> g(policy_mu());
  return std::exchange(policy_ref(), policy);
}

BoxList::Split BoxList::split(const CopyEnginePolicy& policy) const {
  if (!tables_) return {};
  std::lock_guard<std::mutex> g(tables_->mu);
  Split& sp = tables_->split;
  if (tables_->split_policy == policy) return sp;
  sp = Split{};
  const std::int64_t es = size_of(dtype_);
  auto rows = std::make_shared<BoxList>(), rest = std::make_shared<BoxList>();
  for (auto* l : {rows.get(), rest.get()}) {
    l->dtype_ = dtype_;
    l->tables_ = std::make_shared<Tables>();
  }
  for (std::size_t i = 0; i < boxes_.size(); ++i) {
    std::vector<EngineCopy> calls;
    if (sp.engine.size() < static_cast<std::size_t>(kMaxCopyEngineCalls) &&
        engine_calls(boxes_[i], es, source_[i], policy, calls) &&
        sp.engine.size() + calls.size() <= static_cast<std::size_t>(kMaxCopyEngineCalls)) {
      sp.engine.insert(sp.engine.end(), calls.begin(), calls.end());
      continue;
    }
    BoxList& to = realigns(boxes_[i], es, policy) ? *rows : *rest;
    to.boxes_.push_back(boxes_[i]);
    to.source_.push_back(source_[i]);
  }
  if (!sp.engine.empty() || !rows->empty()) {
    if (!rows->empty()) sp.rows = std::move(rows);
    if (!rest->empty()) sp.rest = std::move(rest);
  }
  tables_->split_policy = policy;
  return sp;
}

std::vector<EngineCopy> engine_copies(const BoxList& list, const CopyEnginePolicy& policy) {
  return list.split(policy).engine;
}

std::vector<Transfer> realigned_rows(const BoxList& list, const CopyEnginePolicy& policy) {
  const auto rows = list.split(policy).rows;
  return rows ? rows->boxes() : std::vector<Transfer>{};
}

// ---- device side -----------------------------------------------------------------------------

namespace {

template <int B>
struct UnitOf;
template <>
struct UnitOf<1> {
  using type = unsigned char;
};
template <>
struct UnitOf<2> {
  using type = unsigned short;
};
template <>
struct UnitOf<4> {
  using type = unsigned int;
};
template <>
struct UnitOf<8> {
  using type = unsigned long long;
};
template <>
struct UnitOf<16> {
  using type = uint4;
};

__device__ __forceinline__ void offsets(const Desc& d, long long u, long long& so, long long& dof) {
  so = d.soff;
  dof = d.doff;
  if (d.small) {
    unsigned q = static_cast<unsigned>(u);
#pragma unroll
    for (int m = kMaxModes - 1; m > 0; --m) {
      if (m < d.rank) {
        const unsigned e = static_cast<unsigned>(d.ext[m]);
        const unsigned nq = q / e;
        const unsigned i = q - nq * e;
        q = nq;
        so += static_cast<long long>(i) * d.sst[m];
        dof += static_cast<long long>(i) * d.dst[m];
      }
    }
    so += static_cast<long long>(q) * d.sst[0];
    dof += static_cast<long long>(q) * d.dst[0];
  } else {
    long long q = u;
#pragma unroll
    for (int m = kMaxModes - 1; m > 0; --m) {
      if (m < d.rank) {
        const long long nq = q / d.ext[m];
        const long long i = q - nq * d.ext[m];
        q = nq;
        so += i * d.sst[m];
        dof += i * d.dst[m];
      }
    }
    so += q * d.sst[0];
    dof += q * d.dst[0];
  }
}

template <int B, class F>
__device__ __forceinline__ void run_chunk(const Desc& d, long long base, const char* src, char* dst,
                                          const F& f) {
  using U = typename UnitOf<B>::type;
  U v[kUnroll];
  long long dofs[kUnroll];
  bool ok[kUnroll];
#pragma unroll
  for (int k = 0; k < kUnroll; ++k) {
    const long long u = base + k * kThreads + threadIdx.x;
    ok[k] = u < d.units;
    if (ok[k]) {
      long long so;
      offsets(d, u, so, dofs[k]);
      if constexpr (F::reads_src) v[k] = reinterpret_cast<const U*>(src)[so];
    }
  }
#pragma unroll
  for (int k = 0; k < kUnroll; ++k)
    if (ok[k]) f.template apply<U>(v[k], reinterpret_cast<U*>(dst) + dofs[k]);
}

// Makes shared `sd` the descriptor of chunk c's box, unless it already is (a block's c only
// grows, so that is c < end, the end of sd's chunks, kept in a register): warp 0 searches for the
// last box whose first chunk is <= c, 32-ary (log32(boxes) rounds of dependent loads instead of
// log2(boxes)), then the block copies it, between barriers. Every thread of the block calls it with
// the same c, so a block walking the chunks of one box passes no barrier after its first (ncu on
// the realigned-row kernel, one H200: 39% of its stall cycles were at the barriers of a per-chunk
// search).
template <class D>
__device__ __forceinline__ void load_box(const D* __restrict__ table, int nboxes, long long c,
                                         D& sd, int& box, long long& end) {
  if (c < end) return;
  __syncthreads();  // every thread is done with the previous descriptor
  if (threadIdx.x < 32) {
    int lo = 0, n = nboxes;  // answer in [lo, lo + n)
    while (n > 1) {
      const int step = (n + 31) / 32;
      const int cand = lo + static_cast<int>(threadIdx.x) * step;
      const bool ok = cand < lo + n && table[cand].chunk_begin <= c;
      const unsigned mask = __ballot_sync(0xffffffffu, ok);
      const int last = 31 - __clz(mask);  // lane 0 always qualifies
      lo += last * step;
      n = min(step, n - last * step);
    }
    if (threadIdx.x == 0) box = lo;
  }
  __syncthreads();
  constexpr int words = sizeof(D) / 8;
  static_assert(words <= kThreads);
  if (threadIdx.x < words)
    reinterpret_cast<long long*>(&sd)[threadIdx.x] =
        reinterpret_cast<const long long*>(table + box)[threadIdx.x];
  __syncthreads();
  end = sd.chunk_begin + (sd.units + kChunk - 1) / kChunk;
}

// At least 3 blocks per SM (80 registers), what every instantiation reaches anyway; without it the
// compiler held ReduceF<double> to 64 registers and spilled 56 bytes.
template <class F>
__global__ void __launch_bounds__(kThreads, 3)
    box_kernel(const Desc* __restrict__ table, int nboxes, long long chunks, const char* src,
               char* dst, const char* src2, F f) {
  __shared__ Desc sd;
  __shared__ int box;
  long long end = 0;  // the end of sd's chunks (no box yet)
  for (long long c = blockIdx.x; c < chunks; c += gridDim.x) {
    load_box(table, nboxes, c, sd, box, end);
    const long long base = (c - sd.chunk_begin) * kChunk;
    const char* s = sd.source ? src2 : src;
    switch (sd.ulog) {
      case 0: run_chunk<1>(sd, base, s, dst, f); break;
      case 1: run_chunk<2>(sd, base, s, dst, f); break;
      case 2: run_chunk<4>(sd, base, s, dst, f); break;
      case 3: run_chunk<8>(sd, base, s, dst, f); break;
      default: run_chunk<16>(sd, base, s, dst, f); break;
    }
  }
}

// ---- realigned rows (kernels.hpp): 16-byte slots of the destination row -----------------------

// Bytes [b0, b1) of the 16-byte word at `w` (16-aligned), the others zero; one 16-byte load for
// the whole word, else ES-byte elements, so nothing outside [b0, b1) is read. b0 and b1 are
// multiples of ES in 0..16.
template <int ES>
__device__ __forceinline__ uint4 load_part(std::uintptr_t w, int b0, int b1) {
  if (b0 == 0 && b1 == 16) return *reinterpret_cast<const uint4*>(w);
  unsigned r[4] = {0, 0, 0, 0};
#pragma unroll
  for (int j = 0; j < 16; j += ES) {
    if (j < b0 || j >= b1) continue;
    const std::uintptr_t a = w + j;
    if constexpr (ES == 4)
      r[j / 4] = *reinterpret_cast<const unsigned*>(a);
    else if constexpr (ES == 2)
      r[j / 4] |= unsigned{*reinterpret_cast<const unsigned short*>(a)} << (8 * (j % 4));
    else
      r[j / 4] |= unsigned{*reinterpret_cast<const unsigned char*>(a)} << (8 * (j % 4));
  }
  return make_uint4(r[0], r[1], r[2], r[3]);
}

// Stores bytes [b0, b1) of v at the 16-byte word `w` (16-aligned): one 16-byte store for the
// whole word, else ES-byte elements.
template <int ES>
__device__ __forceinline__ void store_part(std::uintptr_t w, int b0, int b1, uint4 v) {
  if (b0 == 0 && b1 == 16) {
    *reinterpret_cast<uint4*>(w) = v;
    return;
  }
  const unsigned r[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
  for (int j = 0; j < 16; j += ES) {
    if (j < b0 || j >= b1) continue;
    const std::uintptr_t a = w + j;
    if constexpr (ES == 4)
      *reinterpret_cast<unsigned*>(a) = r[j / 4];
    else if constexpr (ES == 2)
      *reinterpret_cast<unsigned short*>(a) =
          static_cast<unsigned short>(r[j / 4] >> (8 * (j % 4)));
    else
      *reinterpret_cast<unsigned char*>(a) = static_cast<unsigned char>(r[j / 4] >> (8 * (j % 4)));
  }
}

// x clamped to 0..16: a byte position of a row range seen from one 16-byte word.
__device__ __forceinline__ int clamp16(long long x) {
  return static_cast<int>(min(max(x, 0ll), 16ll));
}

// Bytes k .. k + 15 (k < 16) of the 32 bytes a, b (little-endian: a's byte 0 first).
__device__ __forceinline__ uint4 shift_bytes(uint4 a, uint4 b, int k) {
  const unsigned w[8] = {a.x, a.y, a.z, a.w, b.x, b.y, b.z, b.w};
  const int q = k >> 2, r = 8 * (k & 3);
  unsigned s[5];
#pragma unroll
  for (int i = 0; i < 5; ++i)
    s[i] = q == 0 ? w[i] : q == 1 ? w[i + 1] : q == 2 ? w[i + 2] : w[i + 3];
  return make_uint4(__funnelshift_r(s[0], s[1], r), __funnelshift_r(s[1], s[2], r),
                    __funnelshift_r(s[2], s[3], r), __funnelshift_r(s[3], s[4], r));
}

// Slots base + t, base + t + 256, ... of box d: slot m of a row is the destination's 16-byte word
// m counted from the word holding the row's first byte. Its 16 bytes come from the source bytes
// at the same distance from the row's start, i.e. bytes k..k+15 of the two aligned source words
// they straddle. Every load is issued before the first store.
template <int ES, int R>
__device__ __forceinline__ void row_chunk(const RDesc& d, long long base, const char* src,
                                          char* dst) {
  uint4 lo[kUnroll], hi[kUnroll];
  std::uintptr_t dw[kUnroll];
  int sh[kUnroll], part[kUnroll];  // shift; the slot's bytes in its row: b0 | b1 << 8
  bool ok[kUnroll];
#pragma unroll
  for (int k = 0; k < kUnroll; ++k) {
    const long long u = base + k * kThreads + threadIdx.x;
    ok[k] = u < d.units;
    if (!ok[k]) continue;
    long long m, so = d.soff, dof = d.doff;
    if (d.small) {  // 32-bit division
      unsigned row = static_cast<unsigned>(u) / static_cast<unsigned>(d.slots);
      m = static_cast<unsigned>(u) - row * static_cast<unsigned>(d.slots);
#pragma unroll
      for (int i = R - 1; i >= 0; --i) {
        if (i < d.rank) {
          const unsigned e = static_cast<unsigned>(d.ext[i]);
          const unsigned nq = row / e;
          const unsigned j = row - nq * e;
          row = nq;
          so += static_cast<long long>(j) * d.sst[i];
          dof += static_cast<long long>(j) * d.dst[i];
        }
      }
    } else {
      long long row = u / d.slots;
      m = u - row * d.slots;
#pragma unroll
      for (int i = R - 1; i >= 0; --i) {
        if (i < d.rank) {
          const long long nq = row / d.ext[i];
          const long long j = row - nq * d.ext[i];
          row = nq;
          so += j * d.sst[i];
          dof += j * d.dst[i];
        }
      }
    }
    const std::uintptr_t D = reinterpret_cast<std::uintptr_t>(dst) + dof;
    dw[k] = (D & ~std::uintptr_t{15}) + 16 * static_cast<std::uintptr_t>(m);
    // the slot's first byte in the row: -15 .. run - 1
    const long long at = static_cast<long long>(dw[k] - D);
    ok[k] = at < d.run;
    if (!ok[k]) continue;
    part[k] = clamp16(-at) | clamp16(d.run - at) << 8;
    const std::uintptr_t s0 = reinterpret_cast<std::uintptr_t>(src) + so + at;  // its source byte
    const std::uintptr_t w0 = s0 & ~std::uintptr_t{15};
    sh[k] = static_cast<int>(s0 & 15);
    const long long wa = at - sh[k];  // w0's first byte in the row
    lo[k] = load_part<ES>(w0, clamp16(-wa), clamp16(d.run - wa));
    hi[k] = sh[k] ? load_part<ES>(w0 + 16, clamp16(-wa - 16), clamp16(d.run - wa - 16))
                  : make_uint4(0, 0, 0, 0);
  }
#pragma unroll
  for (int k = 0; k < kUnroll; ++k)
    if (ok[k])
      store_part<ES>(dw[k], part[k] & 0xff, part[k] >> 8, shift_bytes(lo[k], hi[k], sh[k]));
}

// ES: the element size (the partial words at the ends of a row move element by element; base
// pointers are element-aligned, as for the box kernel). R: the most outer modes of a box (1 for
// plain 2-D boxes, which then hold fewer registers).
template <int ES, int R>
__global__ void __launch_bounds__(kThreads)
    row_kernel(const RDesc* __restrict__ table, int nboxes, long long chunks, const char* src,
               char* dst, const char* src2) {
  __shared__ RDesc sd;
  __shared__ int box;
  long long end = 0;  // the end of sd's chunks (no box yet)
  for (long long c = blockIdx.x; c < chunks; c += gridDim.x) {
    load_box(table, nboxes, c, sd, box, end);
    row_chunk<ES, R>(sd, (c - sd.chunk_begin) * kChunk, sd.source ? src2 : src, dst);
  }
}

struct CopyF {
  static constexpr bool reads_src = true;
  template <class U>
  __device__ __forceinline__ void apply(const U& s, U* d) const {
    *d = s;
  }
};

struct FillF {
  static constexpr bool reads_src = false;
  uint4 pattern;  // the value replicated over 16 bytes
  template <class U>
  __device__ __forceinline__ void apply(const U&, U* d) const {
    U v;
    memcpy(&v, &pattern, sizeof(U));
    *d = v;
  }
};

// Arithmetic type of each storage type.
template <class T>
struct Arith {
  using type = T;
  __device__ static T load(T v) { return v; }
  __device__ static T store(T v) { return v; }
};
struct Half {
  unsigned short bits;
};
struct BHalf {
  unsigned short bits;
};
template <>
struct Arith<Half> {
  using type = float;
  __device__ static float load(Half v) { return __half2float(__ushort_as_half(v.bits)); }
  __device__ static Half store(float v) { return Half{__half_as_ushort(__float2half_rn(v))}; }
};
template <>
struct Arith<BHalf> {
  using type = float;
  __device__ static float load(BHalf v) {
    return __bfloat162float(__ushort_as_bfloat16(v.bits));
  }
  __device__ static BHalf store(float v) {
    return BHalf{__bfloat16_as_ushort(__float2bfloat16_rn(v))};
  }
};

template <class A>
__device__ __forceinline__ A combine(int op, A a, A b) {
  switch (op) {
    case 0:  // sum
    case 4:  // avg
      return static_cast<A>(a + b);
    case 1: return static_cast<A>(a * b);  // prod
    case 2: return a > b ? a : b;          // max
    default: return a < b ? a : b;         // min
  }
}

template <class T>
struct ReduceF {
  static constexpr bool reads_src = true;
  int op;
  int combine_it;
  double divide;
  template <class U>
  __device__ __forceinline__ void apply(const U& s, U* d) const {
    if constexpr (sizeof(U) >= sizeof(T)) {
      constexpr int n = sizeof(U) / sizeof(T);
      U dv = *d;
      T a[n], b[n];
      memcpy(a, &dv, sizeof(U));
      memcpy(b, &s, sizeof(U));
#pragma unroll
      for (int i = 0; i < n; ++i) {
        using A = typename Arith<T>::type;
        A r = Arith<T>::load(b[i]);
        if (combine_it) r = combine<A>(op, Arith<T>::load(a[i]), r);
        if (divide != 1.0) r = static_cast<A>(static_cast<double>(r) / divide);
        a[i] = Arith<T>::store(r);
      }
      memcpy(&dv, a, sizeof(U));
      *d = dv;
    }
  }
};

int pointer_align(const void* p) {
  const auto v = reinterpret_cast<std::uintptr_t>(p);
  int a = 16;
  while (a > 1 && (v % static_cast<std::uintptr_t>(a)) != 0) a >>= 1;
  return a;
}

thread_local int t_blocks_per_sm = 8;

int grid_for(std::int64_t chunks) {
  static int sms = [] {
    int dev = 0, n = 0;
    if (cudaGetDevice(&dev) != cudaSuccess ||
        cudaDeviceGetAttribute(&n, cudaDevAttrMultiProcessorCount, dev) != cudaSuccess)
      return 132;
    return n;
  }();
  return static_cast<int>(std::min<std::int64_t>(chunks, static_cast<std::int64_t>(sms) * t_blocks_per_sm));
}

template <int ES>
void launch_rows(const BoxList& rows, const char* src, char* dst, const char* src2,
                 cudaStream_t stream) {
  const auto dev = rows.row_device(stream);
  const auto* table = static_cast<const RDesc*>(dev.table);
  const int grid = grid_for(dev.chunks);
  if (dev.modes <= 2)
    row_kernel<ES, 1><<<grid, kThreads, 0, stream>>>(table, dev.boxes, dev.chunks, src, dst, src2);
  else
    row_kernel<ES, kMaxModes - 1>
        <<<grid, kThreads, 0, stream>>>(table, dev.boxes, dev.chunks, src, dst, src2);
  AXE_CUDA_CHECK(cudaGetLastError());
}

template <class F>
void launch(const BoxList& list, const void* src, void* dst, cudaStream_t stream, const F& f,
            const void* src2 = nullptr) {
  if (list.empty()) return;
  int align = pointer_align(dst);
  if (src) align = std::min(align, pointer_align(src));
  if (src2) align = std::min(align, pointer_align(src2));
  auto dev = list.device(align, stream);
  if (dev.chunks == 0) return;
  box_kernel<F><<<grid_for(dev.chunks), kThreads, 0, stream>>>(
      static_cast<const Desc*>(dev.table), dev.boxes, dev.chunks, static_cast<const char*>(src),
      static_cast<char*>(dst), static_cast<const char*>(src2), f);
  AXE_CUDA_CHECK(cudaGetLastError());
}

int op_code(ReduceOp op) {
  switch (op) {
    case ReduceOp::Sum: return 0;
    case ReduceOp::Prod: return 1;
    case ReduceOp::Max: return 2;
    case ReduceOp::Min: return 3;
    case ReduceOp::Avg: return 4;
  }
  return 0;
}

}  // namespace

int set_box_blocks_per_sm(int n) {
  if (n < 1 || n > 8) fail("set_box_blocks_per_sm: " + std::to_string(n) + " outside 1..8");
  const int old = t_blocks_per_sm;
  t_blocks_per_sm = n;
  return old;
}

void copy_boxes(const BoxList& list, const void* src, void* dst, cudaStream_t stream,
                const void* src2) {
  const BoxList::Split sp = list.split(copy_engine_policy());
  const BoxList* kernel_list = sp.engine.empty() && !sp.rows ? &list : sp.rest.get();
  for (const EngineCopy& c : sp.engine) {
    const char* s = static_cast<const char*>(c.source ? src2 : src) + c.src_offset;
    char* d = static_cast<char*>(dst) + c.dst_offset;
    if (c.height == 1)
      AXE_CUDA_CHECK(cudaMemcpyAsync(d, s, static_cast<std::size_t>(c.width), cudaMemcpyDeviceToDevice, stream));
    else
      AXE_CUDA_CHECK(cudaMemcpy2DAsync(d, static_cast<std::size_t>(c.dst_pitch), s,
                                       static_cast<std::size_t>(c.src_pitch), static_cast<std::size_t>(c.width),
                                       static_cast<std::size_t>(c.height), cudaMemcpyDeviceToDevice, stream));
  }
  if (sp.rows) {
    const auto* s = static_cast<const char*>(src);
    const auto* s2 = static_cast<const char*>(src2);
    auto* d = static_cast<char*>(dst);
    switch (size_of(list.dtype())) {  // 1, 2 or 4: realigns() admits no 8-byte unit
      case 4: launch_rows<4>(*sp.rows, s, d, s2, stream); break;
      case 2: launch_rows<2>(*sp.rows, s, d, s2, stream); break;
      default: launch_rows<1>(*sp.rows, s, d, s2, stream); break;
    }
  }
  if (kernel_list) launch(*kernel_list, src, dst, stream, CopyF{}, src2);
}

void reduce_boxes(const BoxList& list, const void* src, void* dst, ReduceOp op, bool combine_it,
                  double divide, cudaStream_t stream, const void* src2) {
  const int oc = op_code(op);
  const int c = combine_it ? 1 : 0;
  switch (list.dtype()) {
    case DType::F32: launch(list, src, dst, stream, ReduceF<float>{oc, c, divide}, src2); break;
    case DType::F64: launch(list, src, dst, stream, ReduceF<double>{oc, c, divide}, src2); break;
    case DType::F16: launch(list, src, dst, stream, ReduceF<Half>{oc, c, divide}, src2); break;
    case DType::BF16: launch(list, src, dst, stream, ReduceF<BHalf>{oc, c, divide}, src2); break;
    case DType::I32: launch(list, src, dst, stream, ReduceF<std::int32_t>{oc, c, divide}, src2); break;
    case DType::I64: launch(list, src, dst, stream, ReduceF<long long>{oc, c, divide}, src2); break;
    case DType::U8: launch(list, src, dst, stream, ReduceF<unsigned char>{oc, c, divide}, src2); break;
  }
}

std::uint64_t value_bits(DType t, double v) {
  std::uint64_t bits = 0;
  auto put = [&](auto x) { std::memcpy(&bits, &x, sizeof(x)); };
  switch (t) {
    case DType::F64: put(v); break;
    case DType::F32: put(static_cast<float>(v)); break;
    case DType::F16: put(__half_as_ushort(__float2half_rn(static_cast<float>(v)))); break;
    case DType::BF16:
      if (std::isnan(v)) put(static_cast<unsigned short>(0x7fc0));
      else put(__bfloat16_as_ushort(__float2bfloat16_rn(static_cast<float>(v))));
      break;
    case DType::I32:
      put(static_cast<std::int32_t>(std::isfinite(v) ? v : (v > 0 ? INT32_MAX : INT32_MIN)));
      break;
    case DType::I64:
      put(static_cast<std::int64_t>(std::isfinite(v) ? v : (v > 0 ? INT64_MAX : INT64_MIN)));
      break;
    case DType::U8:
      put(static_cast<std::uint8_t>(std::isfinite(v) ? v : (v > 0 ? 255 : 0)));
      break;
  }
  return bits;
}

void fill_boxes(const BoxList& list, void* dst, double value, cudaStream_t stream) {
  const std::uint64_t bits = value_bits(list.dtype(), value);
  const std::int64_t es = size_of(list.dtype());
  unsigned char pat[16];
  for (int i = 0; i < 16; ++i) pat[i] = static_cast<unsigned char>(bits >> (8 * (i % es)));
  FillF f;
  std::memcpy(&f.pattern, pat, 16);
  launch(list, nullptr, dst, stream, f);
}

// ---- transpose through an XOR-swizzled shared-memory tile ------------------------------------

namespace {

constexpr int kRows = 8;  // block (32, 8); a tile of T x T elements, T = 64 (32 for 8-byte)

struct TDesc {
  long long A, B;    // extents: mode a is contiguous in src, mode b in dst
  long long sa, sb;  // src strides of a and b (sa == 1)
  long long da, db;  // dst strides (db == 1)
  long long soff, doff;
  long long tiles_a, tiles_b, batch;
  int nb;  // batch modes
  long long bext[kMaxModes], bsst[kMaxModes], bdst[kMaxModes];
};

// Each thread loads kTile^2 / 256 elements before the barrier, so many loads are in flight.
template <class T, int kTile>
__global__ void __launch_bounds__(32 * kRows) transpose_kernel(TDesc d, const T* __restrict__ src,
                                                               T* __restrict__ dst) {
  __shared__ T tile[kTile][kTile];
  const int tx = threadIdx.x, ty = threadIdx.y;
  const long long tiles = d.tiles_a * d.tiles_b;
  for (long long z = blockIdx.z; z < d.batch; z += gridDim.z) {
    long long so = d.soff, dof = d.doff, q = z;
    for (int m = d.nb - 1; m >= 0; --m) {
      const long long i = q % d.bext[m];
      q /= d.bext[m];
      so += i * d.bsst[m];
      dof += i * d.bdst[m];
    }
    for (long long t = blockIdx.x; t < tiles; t += gridDim.x) {
      const long long a0 = (t % d.tiles_a) * kTile, b0 = (t / d.tiles_a) * kTile;
      const bool full = a0 + kTile <= d.A && b0 + kTile <= d.B;
#pragma unroll
      for (int j = 0; j < kTile; j += kRows) {
#pragma unroll
        for (int i = 0; i < kTile; i += 32) {
          const int r = ty + j, c = tx + i;  // r: b within the tile, c: a
          const long long a = a0 + c, b = b0 + r;
          if (full || (a < d.A && b < d.B))
            tile[r][transpose_swizzle(sizeof(T), r, c)] = src[so + a * d.sa + b * d.sb];
        }
      }
      __syncthreads();
#pragma unroll
      for (int j = 0; j < kTile; j += kRows) {
#pragma unroll
        for (int i = 0; i < kTile; i += 32) {
          const int c = ty + j, r = tx + i;  // c: a within the tile, r: b
          const long long a = a0 + c, b = b0 + r;
          if (full || (a < d.A && b < d.B))
            dst[dof + a * d.da + b * d.db] = tile[r][transpose_swizzle(sizeof(T), r, c)];
        }
      }
      __syncthreads();
    }
  }
}

template <class T, int kTile>
void launch_transpose(TDesc d, const void* src, void* dst, cudaStream_t stream) {
  d.tiles_a = (d.A + kTile - 1) / kTile;
  d.tiles_b = (d.B + kTile - 1) / kTile;
  const long long tiles = d.tiles_a * d.tiles_b;
  dim3 grid(static_cast<unsigned>(std::min<long long>(tiles, 1ll << 30)), 1,
            static_cast<unsigned>(std::min<long long>(d.batch, 65535)));
  transpose_kernel<T, kTile><<<grid, dim3(32, kRows), 0, stream>>>(d, static_cast<const T*>(src),
                                                                   static_cast<T*>(dst));
}

}  // namespace

bool is_transpose(const Transfer& box) {
  if (box.extents.size() != box.src_strides.size() || box.extents.size() != box.dst_strides.size())
    return false;
  Transfer t = merge_modes(box);
  if (box_elements(t) == 0) return false;
  const std::size_t r = t.extents.size();
  if (t.src_strides[r - 1] == 1 && t.dst_strides[r - 1] == 1) return false;
  int a = -1, b = -1;
  for (std::size_t k = 0; k < r; ++k) {
    if (t.src_strides[k] == 1 && t.extents[k] > 1 && a < 0) a = static_cast<int>(k);
    if (t.dst_strides[k] == 1 && t.extents[k] > 1 && b < 0) b = static_cast<int>(k);
  }
  return a >= 0 && b >= 0 && a != b && r <= static_cast<std::size_t>(kMaxModes);
}

void transform(const Transfer& box, DType dtype, const void* src, void* dst, cudaStream_t stream) {
  check_box(box);
  if (!is_transpose(box)) {
    copy_boxes(BoxList::copy({box}, dtype), src, dst, stream);
    return;
  }
  Transfer t = merge_modes(box);
  const int r = static_cast<int>(t.extents.size());
  int a = -1, b = -1;
  for (int k = 0; k < r; ++k) {
    if (t.src_strides[k] == 1 && t.extents[k] > 1 && a < 0) a = k;
    if (t.dst_strides[k] == 1 && t.extents[k] > 1 && b < 0) b = k;
  }
  TDesc d{};
  d.A = t.extents[a];
  d.B = t.extents[b];
  d.sa = t.src_strides[a];
  d.sb = t.src_strides[b];
  d.da = t.dst_strides[a];
  d.db = t.dst_strides[b];
  d.soff = t.src_offset;
  d.doff = t.dst_offset;
  d.batch = 1;
  for (int k = 0; k < r; ++k) {
    if (k == a || k == b) continue;
    d.bext[d.nb] = t.extents[k];
    d.bsst[d.nb] = t.src_strides[k];
    d.bdst[d.nb] = t.dst_strides[k];
    d.batch *= t.extents[k];
    ++d.nb;
  }
  switch (size_of(dtype)) {
    case 1: launch_transpose<unsigned char, transpose_tile(1)>(d, src, dst, stream); break;
    case 2: launch_transpose<unsigned short, transpose_tile(2)>(d, src, dst, stream); break;
    case 4: launch_transpose<unsigned int, transpose_tile(4)>(d, src, dst, stream); break;
    default: launch_transpose<unsigned long long, transpose_tile(8)>(d, src, dst, stream); break;
  }
  AXE_CUDA_CHECK(cudaGetLastError());
}

}  // namespace axe::cuda
