// Distributed tensors: (global shape, dtype, DistLayout, local buffer) on the runtime's ranks
// (DESIGN §3), and their redistribution through the planner (DESIGN §4).
//
// Every operation below that takes or returns a DistTensor is collective over all ranks of the
// Runtime (ranks outside the tensor's mesh take part with an empty local buffer). Before data
// moves, the ranks agree: each computes a fingerprint of the request from its text form (shapes,
// dtype, layouts, meshes) and any rank's bad input; a disagreement or a bad input on any rank is
// an axe::Error on every rank, and the source is never modified.
//
// Example on 4 ranks, x a 4x6 f64 tensor that every rank holds:
//   auto t = DistTensor::from_global(x, parse_mesh("dp=2,tp=2"), {Shard(0), Shard(1)});
//   // rank 1 = (dp 0, tp 1) holds rows 0..1, columns 3..5: local() has shape (2,3)
//   auto r = t.redistribute({Replicate(), Replicate()});   // all-gather: every rank holds x
//   HostTensor y = t.gather(0);                             // rank 0: y == x; others: no data
//
// Asynchrony: redistribute enqueues the plan with Backend::execute_async and may return before
// the data has moved (the CUDA backend: on its stream; the host backend: it has finished). Every
// host-visible read synchronizes first (Backend::synchronize): gather, gather_all, local,
// local_bytes, local_as, visualize and synchronize() itself; a later redistribute from the result
// needs no synchronization (the backend runs its work in order). Until then the result keeps
// the source's buffer alive, so the source tensor may be dropped at once (a result dropped
// before synchronizing frees its buffers through the backend, whose deallocation waits for its
// pending work: cudaFree does); errors of the pending work surface at the synchronizing call, on
// the ranks whose work failed.
//
// Ordering with the caller's stream instead (redistribute(to, CallerStream{s})): the plan waits
// for the work enqueued on the caller's CUDA stream so far, and work the caller enqueues on it
// afterwards waits for the plan, through events (Backend::wait_for_stream / signal_stream); the
// result's buffer is marked used on that stream (Buffer::used_on_stream), so its memory is
// returned only after the caller's work on it. Nothing waits on the host: a kernel on the stream
// may read the result right away. Host reads (gather, to_host, ...) still synchronize.
//
// Caller memory: wrap over a pointer aliases it without a copy (see wrap below); wrap by value
// copies.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <memory>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include "axe/runtime/backend.hpp"
#include "axe/core/dtype.hpp"
#include "axe/core/error.hpp"
#include "axe/dist/placement.hpp"
#include "axe/plan/plan.hpp"
#include "axe/runtime/runtime.hpp"

namespace axe {

template <class T>
constexpr DType dtype_of() {
  if constexpr (std::is_same_v<T, float>) return DType::F32;
  else if constexpr (std::is_same_v<T, double>) return DType::F64;
  else if constexpr (std::is_same_v<T, std::int32_t>) return DType::I32;
  else if constexpr (std::is_same_v<T, std::int64_t>) return DType::I64;
  else {
    static_assert(std::is_same_v<T, std::uint8_t>, "dtype_of: f16/bf16 have no C++ type here; use bytes");
    return DType::U8;
  }
}

// load_element / store_element (one element as double, and back) are in axe/core/dtype.hpp.

// A whole tensor in host memory, row-major.
struct HostTensor {
  std::vector<std::int64_t> shape;
  DType dtype = DType::F32;
  std::vector<std::byte> data;

  HostTensor() = default;
  // Zero-filled. Throws axe::Error naming the shape when an extent is negative, when the number
  // of elements or of bytes overflows 64 bits, or when the bytes cannot be allocated:
  // HostTensor({1 << 40, 1 << 22}, DType::F64) (2^62 elements, 2^65 bytes) and HostTensor({-4, 6})
  // both throw.
  HostTensor(std::vector<std::int64_t> s, DType t);
  template <class T>
  static HostTensor of(std::vector<std::int64_t> s, std::span<const T> values) {
    HostTensor h(std::move(s), dtype_of<T>());
    if (static_cast<std::int64_t>(values.size()) != h.elements())
      fail("HostTensor::of: " + std::to_string(values.size()) + " values for " + std::to_string(h.elements()) +
           " elements");
    if (!h.data.empty()) std::memcpy(h.data.data(), values.data(), h.data.size());
    return h;
  }
  // The product of the extents; throws axe::Error on a negative extent or a 64-bit overflow.
  std::int64_t elements() const;
  bool has_data() const { return !data.empty() || elements() == 0; }
  // Element i (row-major) as double, and back. Throws axe::Error naming the index and the size
  // when i is outside [0, elements()) or outside the data.
  double get(std::int64_t i) const;
  void set(std::int64_t i, double v);
  template <class T>
  std::span<T> as() {
    check_as(dtype_of<T>());
    return {reinterpret_cast<T*>(data.data()), data.size() / sizeof(T)};
  }
  template <class T>
  std::span<const T> as() const {
    check_as(dtype_of<T>());
    return {reinterpret_cast<const T*>(data.data()), data.size() / sizeof(T)};
  }

 private:
  void check_as(DType t) const;
  const std::byte* element(std::int64_t i, const char* what) const;
};

// A caller's CUDA stream (cudaStream_t as an integer; 0 = the legacy default stream) that a
// redistribute orders itself with (Backend::wait_for_stream / signal_stream).
struct CallerStream {
  std::uintptr_t handle = 0;
};

// This rank's shard: its bytes (host backend) and what they hold.
struct LocalView {
  std::span<const std::byte> bytes;  // storage order; empty when not host-addressable
  AxeLayout storage;                 // storage(layout): slot -> memory position
  std::vector<std::int64_t> shape;   // distinct indices held per dim
  std::vector<StridedRegion> regions;
  std::vector<std::int64_t> terms;
  std::int64_t elements = 0;         // buffer elements, padding included
};

class DistTensor {
 public:
  DistTensor() = default;

  // A zero-filled tensor. Collective (checks that every rank passes the same layout and dtype).
  static DistTensor empty(const DistLayout& layout, DType dtype, Runtime& rt = Runtime::current());
  // Wraps this rank's local buffer (storage order, layout.local_elements() elements on ranks of
  // the mesh, none elsewhere). Throws on every rank when any rank's size is wrong.
  static DistTensor wrap(const DistLayout& layout, DType dtype, std::vector<std::byte> local,
                         Runtime& rt = Runtime::current());
  template <class T>
  static DistTensor wrap(const DistLayout& layout, std::span<const T> local, Runtime& rt = Runtime::current()) {
    std::vector<std::byte> b(local.size_bytes());
    if (!b.empty()) std::memcpy(b.data(), local.data(), b.size());
    return wrap(layout, dtype_of<T>(), std::move(b), rt);
  }
  // Zero-copy: the tensor's local buffer IS the caller's `bytes` bytes at `data` (host backend:
  // host memory; another backend: memory its Backend::wrap_memory accepts, else an axe::Error on
  // every rank). Same size rule and agreement as the by-value wrap; `data` may be null only for
  // 0 bytes. The tensor aliases the memory: writes through local_bytes()/local_as() land in it
  // and the caller's writes show in the tensor. Operations never write a source: redistribute,
  // gather and gather_all only read it, and their results live in new buffers.
  // The caller must keep the memory alive, and not write it, while the tensor, any copy of it,
  // or a redistribution from it that is still pending (until synchronize()) exists; axe never
  // frees it.
  // Example (4 ranks, 8x6 f64, S(0) on gpu=4): std::vector<double> mine(12);  // 2 rows
  //   auto t = DistTensor::wrap(l, mine.data(), mine.size());  // t.local_bytes().data() == mine.data()
  static DistTensor wrap(const DistLayout& layout, DType dtype, void* data, std::size_t bytes,
                         Runtime& rt = Runtime::current());
  template <class T>
  static DistTensor wrap(const DistLayout& layout, T* data, std::size_t count, Runtime& rt = Runtime::current()) {
    return wrap(layout, dtype_of<T>(), static_cast<void*>(data), count * sizeof(T), rt);
  }
  // Scatters `global` from `root`: every rank passes the shape and dtype; only root's data is read.
  static DistTensor scatter(const HostTensor& global, const DistLayout& layout, int root = 0,
                            Runtime& rt = Runtime::current());
  // Every rank holds `global`; each keeps its own shard (no traffic). Partial placements put the
  // value on term 0 and the reduction's identity on the other terms.
  static DistTensor from_global(const HostTensor& global, const DistLayout& layout, Runtime& rt = Runtime::current());
  static DistTensor from_global(const HostTensor& global, const Mesh& mesh, std::span<const AxisPlacement> p,
                                Runtime& rt = Runtime::current());
  static DistTensor from_global(const HostTensor& global, const Mesh& mesh, std::initializer_list<AxisPlacement> p,
                                Runtime& rt = Runtime::current()) {
    return from_global(global, mesh, std::span<const AxisPlacement>(p.begin(), p.size()), rt);
  }

  // The global tensor (partial terms reduced) on `root`; other ranks get shape and dtype, no data.
  HostTensor gather(int root = 0) const;
  HostTensor gather_all() const;

  // A new tensor in `to` (same global shape; any mesh whose ranks exist); this one is untouched.
  // Asynchronous (see the header comment): reads of the result synchronize first.
  // A view where one suffices: when on every rank the destination shard is one contiguous range
  // of the local source (R -> S(0) with a divisible dim 0, (R,R) -> (S(0),R), ...), the result
  // shares the source's storage (its buffer is a BufferSlice of it) and nothing is copied, as
  // torch.chunk views do in DTensor; writes through either then show in the other. last_plan()
  // ends with "(a view of the source: no copy)". The ranks decide together (in the one agreement):
  // if any rank's shard is strided or padded, every rank copies.
  // The agreement: the first call of a request (source layout, destination, dtype) waits for every
  // rank to agree on it; later calls of a request every rank agreed on (kept per thread, the last
  // 16) start the same check in the background (Runtime::agree_later) and return without waiting
  // for the other ranks; the next operation or synchronize() raises a disagreement on every rank.
  // AXE_AGREE_EACH_CALL=1 waits on every call.
  DistTensor redistribute(const DistLayout& to) const;
  DistTensor redistribute(std::span<const AxisPlacement> p) const;  // same mesh
  DistTensor redistribute(std::initializer_list<AxisPlacement> p) const {
    return redistribute(std::span<const AxisPlacement>(p.begin(), p.size()));
  }
  DistTensor redistribute(const Mesh& mesh, std::initializer_list<AxisPlacement> p) const;
  // The same, ordered with the caller's stream by events (see "Ordering with the caller's stream"
  // above): backend.wait_for_stream(s), redistribute(to), backend.signal_stream(s), and the
  // result's buffer marked used on s. The host backend: redistribute(to).
  // Example (cuda): fill<<<g, b, 0, s>>>(src_ptr);
  //   auto r = t.redistribute(to, CallerStream{reinterpret_cast<std::uintptr_t>(s)});
  //   use<<<g, b, 0, s>>>(r.buffer().device_data());   // sees the redistributed values
  DistTensor redistribute(const DistLayout& to, CallerStream stream) const;

  bool defined() const { return rt_ != nullptr; }
  const DistLayout& layout() const { return layout_; }
  const Mesh& mesh() const { return layout_.mesh(); }
  const std::vector<std::int64_t>& shape() const { return layout_.shape(); }
  DType dtype() const { return dtype_; }
  Runtime& runtime() const;
  // Waits for this rank's pending redistributions (Backend::synchronize) and releases what the
  // tensor kept alive for them. Local (not collective); a no-op on the host backend.
  void synchronize() const;
  // Storage layout and what this rank holds; bytes is empty when the buffer is not
  // host-addressable (the CUDA backend): read it with to_host().
  LocalView local() const;

  // Host copies of this rank's local buffer, on every backend (the portable way to read or write
  // a shard): to_host() synchronizes, then copies the buffer (storage order, padding included)
  // through Backend::copy_to_host; from_host() synchronizes, then overwrites the buffer with
  // exactly buffer().bytes() bytes (axe::Error naming both sizes otherwise). Local, not
  // collective. Example (cuda backend, 8x6 f64, S(0) on gpu=2): t.to_host().size() == 192 and
  // t.to_host_as<double>()[0] is row 0 (rank 0) or row 4 (rank 1), column 0.
  std::vector<std::byte> to_host() const;
  template <class T>
  std::vector<T> to_host_as() const {
    if (dtype_of<T>() != dtype_) fail("DistTensor::to_host_as: tensor dtype is " + std::string(to_string(dtype_)));
    std::vector<std::byte> b = to_host();
    std::vector<T> v(b.size() / sizeof(T));
    if (!b.empty()) std::memcpy(v.data(), b.data(), b.size());
    return v;
  }
  void from_host(std::span<const std::byte> bytes);
  template <class T>
  void from_host(std::span<const T> values) {
    if (dtype_of<T>() != dtype_) fail("DistTensor::from_host: tensor dtype is " + std::string(to_string(dtype_)));
    from_host(std::as_bytes(values));
  }

  // In-place host access to the local buffer, for host-addressable buffers only (the host
  // backend, or caller host memory): synchronizes, then returns the bytes themselves (writes land
  // in the tensor). On a device buffer (the CUDA backend) axe::Error: use to_host / from_host.
  std::span<std::byte> local_bytes();
  std::span<const std::byte> local_bytes() const;
  template <class T>
  std::span<T> local_as() {
    if (dtype_of<T>() != dtype_) fail("DistTensor::local_as: tensor dtype is " + std::string(to_string(dtype_)));
    auto b = local_bytes();
    return {reinterpret_cast<T*>(b.data()), b.size() / sizeof(T)};
  }
  // The local buffer, without synchronizing (for backends and plans run by hand).
  const Buffer& buffer() const { return *buffer_; }
  Buffer& buffer() { return *buffer_; }
  // The text of the last redistribution's plan outline ("" before any).
  const std::string& last_plan() const { return plan_text_; }

  // Who holds what (no communication), like DTensor's visualize_sharding: for rank-2 tensors a
  // table of row x column blocks naming the ranks that hold each block (partial terms marked
  // "t<k>"); other ranks list each rank's regions.
  std::string visualize() const {
    synchronize();
    return visualize(layout_);
  }
  static std::string visualize(const DistLayout& layout);

 private:
  DistTensor(Runtime& rt, DistLayout layout, DType dtype, std::shared_ptr<Buffer> buffer)
      : rt_(&rt), layout_(std::move(layout)), dtype_(dtype), buffer_(std::move(buffer)) {}
  // wrap by value, its errors naming the operation `what` (wrap, or scatter which wraps root's data).
  static DistTensor wrap_as(std::string_view what, const DistLayout& layout, DType dtype,
                            std::vector<std::byte> local, Runtime& rt);

  Runtime* rt_ = nullptr;
  DistLayout layout_;
  DType dtype_ = DType::F32;
  std::shared_ptr<Buffer> buffer_;
  std::string plan_text_;
  // What a pending execute_async into buffer_ reads (the source buffer, the plan), released by
  // synchronize().
  mutable std::shared_ptr<const void> pending_;
};

// Text form of a request and its fingerprint (the value the ranks compare before a plan runs).
std::string request_text(const PlanRequest& r);
std::uint64_t request_fingerprint(const PlanRequest& r);

}  // namespace axe
