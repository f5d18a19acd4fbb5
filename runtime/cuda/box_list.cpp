// BoxList (include/axe/cuda/box_list.hpp): merging modes, choosing units and the device tables of
// the box kernel and the generated copy, uploaded once and cached.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <numeric>
#include <string>

#include "axe/core/error.hpp"
#include "axe/cuda/box_list.hpp"
#include "axe/cuda/check.hpp"
#include "cuda/internal.hpp"

namespace axe::cuda {
namespace internal {

std::int64_t box_elements(const Transfer& t) {
  std::int64_t n = 1;
  for (auto e : t.extents) n *= e;
  return n;
}

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

}  // namespace internal

using internal::Desc;
using internal::box_elements;
using internal::check_box;
using internal::kChunk;
using internal::merge_modes;
using internal::unit_log2;

namespace {

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

}  // namespace

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

BoxList::Device BoxList::copy_device(std::int64_t tile_a, std::int64_t tile_b, bool words, cudaStream_t stream,
                                     bool flat) const {
  if (!tables_) return {};
  std::lock_guard<std::mutex> g(tables_->mu);
  auto [it, fresh] = tables_->copy_tiles.try_emplace({words ? -tile_a : tile_a, flat ? -tile_b : tile_b});
  const std::int64_t es = size_of(dtype_), v = 16 / es;
  Tables::Entry& e = it->second;
  if (fresh) {
    try {  // a failure leaves no half-built table behind: the next call builds it again
      std::vector<codegen::CopyBoxDesc> ds;
      auto add = [&](const Transfer& t, int source) {
        codegen::CopyBoxDesc d = internal::copy_box_desc(t);
        d.source = source;
        // Destination words: a row of L bytes touches at most (L + 30) / 16, tile_a / V per tile
        // (flat: the B rows' words one after another).
        const long long row_words = (d.A * es + 30) / 16;
        d.tiles_a = flat    ? (d.B * row_words + tile_a / v - 1) / (tile_a / v)
                    : words ? (row_words + tile_a / v - 1) / (tile_a / v)
                            : (d.A + tile_a - 1) / tile_a;
        d.tiles_b = flat ? 1 : (d.B + tile_b - 1) / tile_b;
        long long batch = 1, widest = 0;
        for (long long k = 0; k < d.nb; ++k) {
          batch *= d.bext[k];
          widest = std::max(widest, d.bext[k]);
        }
        d.first = e.chunks;
        d.per = d.tiles_a * d.tiles_b;
        d.tiles = d.per * batch;
        d.small = d.tiles < (1ll << 32) && widest < (1ll << 32) ? 1 : 0;
        e.chunks += d.tiles;
        e.modes = std::max(e.modes, static_cast<int>(t.extents.size()));
        ds.push_back(d);
      };
      for (std::size_t i = 0; i < boxes_.size(); ++i) {
        // A box of fewer rows than half a tile whose run spans two tiles or more is folded: its run
        // becomes rows of `fold` elements (a new mode, stride `fold` on both sides) and a tail box
        // of what is left, so a long contiguous run (an unpack of back-to-back rows merges into one)
        // fills whole tiles instead of one row of each. A row of tile_a - V elements touches at most
        // tile_a / V destination words, one tile's.
        const Transfer& t = boxes_[i];
        const std::size_t r = t.extents.size();
        const std::int64_t A = t.extents.back(), B = r >= 2 ? t.extents[r - 2] : 1;
        const std::int64_t fold = words ? tile_a - v : tile_a;
        if (flat || 2 * B > tile_b || fold <= 0 || A < 2 * fold || r + 1 > static_cast<std::size_t>(kMaxModes)) {
          add(t, source_[i]);
          continue;
        }
        Transfer main = t;
        main.extents.back() = A / fold;
        main.src_strides.back() = main.dst_strides.back() = fold;
        main.extents.push_back(fold);
        main.src_strides.push_back(1);
        main.dst_strides.push_back(1);
        add(main, source_[i]);
        if (A % fold) {
          Transfer tail = t;
          tail.extents.back() = A % fold;
          tail.src_offset += A / fold * fold;
          tail.dst_offset += A / fold * fold;
          add(tail, source_[i]);
        }
      }
      e.boxes = static_cast<std::int64_t>(ds.size());
      const std::size_t bytes = ds.size() * sizeof(codegen::CopyBoxDesc);
      if (bytes) {
        AXE_CUDA_CHECK(cudaMallocHost(&e.host, bytes));
        std::memcpy(e.host, ds.data(), bytes);
        AXE_CUDA_CHECK(cudaMalloc(&e.dev, bytes));
        AXE_CUDA_CHECK(cudaMemcpyAsync(e.dev, e.host, bytes, cudaMemcpyHostToDevice, stream));
      }
    } catch (...) {
      if (e.dev) cudaFree(e.dev);
      if (e.host) cudaFreeHost(e.host);
      tables_->copy_tiles.erase(it);
      throw;
    }
  }
  return {e.dev, e.chunks, static_cast<int>(e.boxes), e.modes};
}

}  // namespace axe::cuda
