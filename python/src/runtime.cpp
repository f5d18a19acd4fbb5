// axe.init / axe.finalize and the distributed tensor (axe::DistTensor) under mpirun.
//
// The local shard crosses into Python without a copy: DistTensor.local_array() is an ndarray
// (numpy, or torch through DLPack) over the tensor's own buffer, kept alive by the array. When the
// storage of the local shard is a strided array of the held logical sub-tensor (every placement
// DTensor can express: each dim's memory iters merge into one stride), the view has that shape
// (a short tail of an uneven shard is left out: padding is never visible); otherwise it is the raw
// storage buffer (1-D, layout `storage`). Buffers from DistTensor.from_local alias the caller's
// memory (DistTensor::wrap over a pointer).
//
// Streams (cuda backend, torch): the calls that take `stream` (a CUDA stream handle, e.g. torch's
// current stream) order axe's work with it by events instead of host waits (Backend::
// wait_for_stream / signal_stream): redistribute waits for the stream, runs, and makes the stream
// wait for it; local_array makes the stream wait for axe's pending work (instead of synchronizing)
// and marks the buffer used on it (Buffer::used_on_stream: its memory is freed only after the
// stream's work on it). Without `stream` they synchronize on the host as before.
#include <nanobind/ndarray.h>
#include <nanobind/stl/unique_ptr.h>

#include <cstring>
#include <memory>
#include <unordered_map>

#include "axe/core/dtype.hpp"
#include "axe/core/error.hpp"
#include "common.hpp"

#ifdef AXE_PY_RUNTIME
#include <mpi.h>

#include <chrono>

#include "axe/runtime/dist_tensor.hpp"
#include "axe/runtime/runtime.hpp"
#endif

namespace axe::py {

// The strided view of a rank's local shard in its storage buffer, in elements; nullopt when the
// storage is not one (the raw buffer is then the view).
struct LocalStrides {
  std::int64_t offset = 0;
  std::vector<std::int64_t> shape, strides;
};

std::optional<LocalStrides> local_strides(const DistLayout& dl, std::int64_t rank) {
  LocalShard s = local_shard(dl, rank);
  LocalStrides v;
  const std::size_t nd = dl.shape().size();
  if (s.buffer_elements == 0) {  // not in the mesh
    v.shape.assign(nd, 0);
    v.strides.assign(nd, 0);
    return v;
  }
  const AxeLayout& l = dl.layout();
  for (const auto* list : {&l.replica(), &l.partial()})
    for (const auto& it : *list)
      if (it.axis.is_memory() && it.extent > 1 && it.stride != 0) return std::nullopt;
  auto g = group(l, std::span<const std::int64_t>(dl.padded_shape()));
  if (!g || s.shape.size() != nd) return std::nullopt;
  const auto& d = g->layout.shard();
  for (std::size_t k = 0; k < nd; ++k) {
    std::vector<std::pair<std::int64_t, std::int64_t>>
        modes;  // (extent, stride) of memory iters, outer first
    for (std::size_t i = g->boundaries[k]; i < g->boundaries[k + 1]; ++i) {
      const Iter& it = d[i];
      if (!it.axis.is_memory() || it.extent == 1) continue;
      if (it.stride == 0) return std::nullopt;
      if (!modes.empty() && modes.back().second == it.extent * it.stride)
        modes.back() = {modes.back().first * it.extent, it.stride};
      else
        modes.emplace_back(it.extent, it.stride);
    }
    if (modes.size() > 1) return std::nullopt;
    const std::int64_t extent = modes.empty() ? 1 : modes[0].first;
    if (s.shape[k] > extent) return std::nullopt;
    v.shape.push_back(s.shape[k]);
    v.strides.push_back(modes.empty() ? 0 : modes[0].second);
  }
  v.offset = l.offset(Axis::memory());
  std::int64_t lo = v.offset, hi = v.offset;
  bool empty = false;
  for (std::size_t k = 0; k < nd; ++k) {
    if (v.shape[k] == 0) empty = true;
    const std::int64_t reach = (v.shape[k] - 1) * v.strides[k];
    (reach < 0 ? lo : hi) += reach;
  }
  if (!empty && (lo < 0 || hi >= s.buffer_elements)) return std::nullopt;
  return v;
}

nb::dlpack::dtype dl_dtype(DType t, bool bf16_as_uint16) {
  using nb::dlpack::dtype_code;
  auto make = [](dtype_code c, int bits) {
    return nb::dlpack::dtype{static_cast<std::uint8_t>(c), static_cast<std::uint8_t>(bits), 1};
  };
  switch (t) {
    case DType::F32:
      return make(dtype_code::Float, 32);
    case DType::F16:
      return make(dtype_code::Float, 16);
    case DType::BF16:
      return bf16_as_uint16 ? make(dtype_code::UInt, 16) : make(dtype_code::Bfloat, 16);
    case DType::F64:
      return make(dtype_code::Float, 64);
    case DType::I32:
      return make(dtype_code::Int, 32);
    case DType::I64:
      return make(dtype_code::Int, 64);
    case DType::U8:
      return make(dtype_code::UInt, 8);
  }
  fail("unknown dtype");
}

// axe's dtype of a DLPack dtype; `name` ("" or e.g. "bf16") overrides it for raw bits of the same
// size.
DType dtype_of(nb::dlpack::dtype t, const std::string& name) {
  using nb::dlpack::dtype_code;
  if (!name.empty()) {
    DType d = parse_dtype(name);
    if (t.bits != size_of(d) * 8 || t.lanes != 1)
      fail("dtype '" + name + "' has " + std::to_string(size_of(d) * 8) +
           "-bit elements; the array's have " + std::to_string(t.bits));
    return d;
  }
  const auto c = static_cast<dtype_code>(t.code);
  if (t.lanes == 1) {
    if (c == dtype_code::Float && t.bits == 32) return DType::F32;
    if (c == dtype_code::Float && t.bits == 16) return DType::F16;
    if (c == dtype_code::Float && t.bits == 64) return DType::F64;
    if (c == dtype_code::Bfloat && t.bits == 16) return DType::BF16;
    if (c == dtype_code::Int && t.bits == 32) return DType::I32;
    if (c == dtype_code::Int && t.bits == 64) return DType::I64;
    if (c == dtype_code::UInt && t.bits == 8) return DType::U8;
  }
  static const char* codes[] = {"int", "uint", "float", "?", "bfloat", "complex", "bool"};
  std::string cname = t.code < 7 ? codes[t.code] : "code " + std::to_string(t.code);
  fail("unsupported dtype " + cname + std::to_string(t.bits) +
       (t.lanes != 1 ? "x" + std::to_string(t.lanes) : "") +
       ": axe's dtypes are f32, f16, bf16, f64, i32, i64 and u8 (a uint16 array of bf16 bits: pass "
       "dtype='bf16')");
}

#ifdef AXE_PY_RUNTIME
namespace {

std::unique_ptr<Runtime> g_runtime;
std::uint64_t g_generation = 0;  // bumped by finalize: tensors of an older runtime refuse to run

Runtime& runtime() {
  if (!g_runtime) fail("axe.init() has not been called (or axe.finalize() was)");
  return *g_runtime;
}

struct PyTensor {
  DistTensor t;
  nb::object keep;  // caller memory a from_local tensor aliases
  std::uint64_t generation = 0;
  const DistTensor& get() const {
    if (!g_runtime || generation != g_generation)
      fail("this tensor belongs to a runtime that axe.finalize() ended");
    return t;
  }
};

PyTensor* make(DistTensor t, nb::object keep = nb::object()) {
  auto* p = new PyTensor{std::move(t), std::move(keep), g_generation};
  return p;
}

// An ndarray over `bytes` owned by `owner`, in the framework named ("numpy", "torch", "none").
nb::object array_over(void* data, const std::vector<std::int64_t>& shape64,
                      const std::vector<std::int64_t>& strides, DType dtype, nb::handle owner,
                      const std::string& framework, int device_type, int device_id) {
  std::vector<std::size_t> shape(shape64.begin(), shape64.end());
  const bool torch = framework == "torch";
  nb::dlpack::dtype dt = dl_dtype(dtype, !torch);
  if (torch)
    return nb::cast(nb::ndarray<nb::pytorch>(data, shape.size(), shape.data(), owner,
                                             strides.data(), dt, device_type, device_id));
  if (framework == "numpy") {
    if (device_type != nb::device::cpu::value)
      fail(
          "DistTensor.local: the shard is in GPU memory (cuda backend), which numpy cannot view: "
          "use "
          "local_array('torch') or local_array('dlpack'), full_tensor(), or "
          "axe.init(backend='host') for numpy");
    return nb::cast(nb::ndarray<nb::numpy>(data, shape.size(), shape.data(), owner, strides.data(),
                                           dt, device_type, device_id));
  }
  if (framework == "dlpack")
    return nb::cast(nb::ndarray<nb::array_api>(data, shape.size(), shape.data(), owner,
                                               strides.data(), dt, device_type, device_id));
  fail("framework '" + framework + "': expected 'numpy', 'torch' or 'dlpack'");
}

nb::object local_array(const PyTensor& pt, const std::string& framework, int device_id, bool raw,
                       std::optional<std::uintptr_t> stream) {
  const DistTensor& t = pt.get();
  Runtime& rt = t.runtime();
  if (stream && !t.buffer().host_data()) {
    // The consumer's stream waits for axe's pending work on the buffer; no host wait.
    rt.backend().signal_stream(*stream);
    t.buffer().used_on_stream(*stream);
  } else {
    t.synchronize();
  }
  // The owner keeps the buffer (and the caller memory under it) alive as long as the array.
  auto* hold = new PyTensor{t, pt.keep, pt.generation};
  nb::capsule owner(hold, [](void* p) noexcept { delete static_cast<PyTensor*>(p); });
  Buffer& b = const_cast<Buffer&>(t.buffer());
  void* data = b.host_data();
  int device_type = nb::device::cpu::value;
  if (!data && b.bytes() > 0) {
    data = b.device_data();
    device_type = nb::device::cuda::value;
    if (!data) fail("DistTensor.local: the buffer is neither host memory nor CUDA device memory");
  } else if (!data && framework != "numpy" && rt.backend().name() == "cuda") {
    // An empty shard (an uneven dim's last ranks, a rank outside the mesh) of a device tensor is
    // an empty tensor on the device too, as DTensor's is.
    device_type = nb::device::cuda::value;
  }
  auto v = raw ? std::nullopt : local_strides(t.layout(), rt.rank());
  if (v) {
    auto* base = static_cast<std::byte*>(data);
    if (base) base += v->offset * size_of(t.dtype());
    return array_over(base, v->shape, v->strides, t.dtype(), owner, framework, device_type,
                      device_id);
  }
  const std::int64_t n = static_cast<std::int64_t>(b.bytes()) / size_of(t.dtype());
  return array_over(data, {n}, {1}, t.dtype(), owner, framework, device_type, device_id);
}

// The global tensor of a gather, as a numpy array owning the HostTensor's bytes.
nb::object host_array(HostTensor h) {
  if (!h.has_data()) return nb::none();
  auto* held = new HostTensor(std::move(h));
  nb::capsule owner(held, [](void* p) noexcept { delete static_cast<HostTensor*>(p); });
  std::vector<std::int64_t> strides(held->shape.size(), 1);
  for (std::size_t k = held->shape.size(); k-- > 1;) strides[k - 1] = strides[k] * held->shape[k];
  return array_over(held->data.data(), held->shape, strides, held->dtype, owner, "numpy",
                    nb::device::cpu::value, 0);
}

HostTensor host_tensor(const nb::ndarray<nb::ro>& a, DType dt, bool with_data) {
  HostTensor h;
  for (std::size_t k = 0; k < a.ndim(); ++k)
    h.shape.push_back(static_cast<std::int64_t>(a.shape(k)));
  h.dtype = dt;
  if (!with_data) return h;
  if (a.device_type() != nb::device::cpu::value)
    fail("distribute: the global tensor must be in host memory");
  std::int64_t expect = 1;
  for (std::size_t k = a.ndim(); k-- > 0;) {
    if (a.shape(k) != 1 && a.stride(k) != expect)
      fail("distribute: the global tensor must be C-contiguous");
    expect *= static_cast<std::int64_t>(a.shape(k));
  }
  const std::size_t bytes = a.nbytes();
  h.data.resize(bytes);
  if (bytes) std::memcpy(h.data.data(), a.data(), bytes);
  return h;
}

}  // namespace
#endif

void bind_runtime(nb::module_& m) {
  m.def(
      "_local_strides",
      [](const DistLayout& dl, std::int64_t rank) -> nb::object {
        auto v = local_strides(dl, rank);
        if (!v) return nb::none();
        return nb::make_tuple(v->offset, v->shape, v->strides);
      },
      "(offset, shape, strides) in elements of the local shard's strided view in its storage "
      "buffer, or None");
  m.def("dtype_size", [](const std::string& name) { return size_of(parse_dtype(name)); });
#ifndef AXE_PY_RUNTIME
  m.attr("HAVE_RUNTIME") = false;
  m.def("_init", [](const std::string&, double) {
    fail(
        "axe.init: this build of axe has no distributed runtime (MPI was not found when it was "
        "built: install "
        "libopenmpi-dev and reinstall)");
  });
#else
  m.attr("HAVE_RUNTIME") = true;
  m.def(
      "_init",
      [](const std::string& backend, double timeout_s) {
        if (g_runtime) fail("axe.init: already initialized (call axe.finalize() first)");
        int finalized = 0;
        MPI_Finalized(&finalized);
        if (finalized)
          fail(
              "axe.init: MPI was finalized in this process (by axe.finalize()); MPI cannot start "
              "twice");
        RuntimeOptions o;
        o.backend = backend;
        o.timeout_s = timeout_s;
        g_runtime = std::make_unique<Runtime>(o);
        ++g_generation;
      },
      nb::arg("backend") = "", nb::arg("timeout_s") = 0.0);
  m.def("_finalize", [] {
    if (!g_runtime) return false;
    g_runtime->backend().synchronize();
    ++g_generation;
    g_runtime.reset();
    return true;
  });
  m.def("is_initialized", [] { return g_runtime != nullptr; });
  m.def(
      "_backends", [] { return registered_backends(); }, "The backends built into this extension.");
  m.def("rank", [] { return runtime().rank(); });
  m.def("world_size", [] { return runtime().size(); });
  m.def("local_rank", [] { return runtime().local_rank(); });
  m.def("backend", [] { return std::string(runtime().backend().name()); });
  m.def("barrier", [] { runtime().barrier(); });
  m.def(
      "empty_cache", [] { return runtime().backend().release_cached_memory(); },
      "Backend::release_cached_memory: gives the device memory axe keeps cached for reuse back to "
      "the system (torch may then use it); returns its bytes (0 on the host backend). Local.");
  m.def(
      "_wait_for_stream", [](std::uintptr_t s) { runtime().backend().wait_for_stream(s); },
      "Backend::wait_for_stream: axe's later work waits for everything enqueued on CUDA stream "
      "`s` so far (an event; no host wait; nothing on the host backend).");
  m.def(
      "_signal_stream", [](std::uintptr_t s) { runtime().backend().signal_stream(s); },
      "Backend::signal_stream: later work on CUDA stream `s` waits for everything axe enqueued "
      "so far (an event; no host wait; nothing on the host backend).");

  nb::class_<PyTensor>(m, "_DistTensor")
      .def_static(
          "distribute",
          [](nb::ndarray<nb::ro> a, const std::string& dtype, nb::handle spec, const Mesh& mesh,
             std::optional<int> src_rank) {
            Runtime& rt = runtime();
            DType dt = dtype_of(a.dtype(), dtype);
            HostTensor h = host_tensor(a, dt, !src_rank || *src_rank == rt.rank());
            DistLayout l = to_dist_layout(spec, h.shape, mesh, "placements");
            if (src_rank) return make(DistTensor::scatter(h, l, *src_rank, rt));
            return make(DistTensor::from_global(h, l, rt));
          },
          nb::rv_policy::take_ownership)
      .def_static(
          "from_local",
          [](nb::ndarray<> a, nb::object keep, const std::string& dtype, const DistLayout& l) {
            Runtime& rt = runtime();
            DType dt = dtype_of(a.dtype(), dtype);
            // Contiguous (any shape): the buffer is the caller's memory, in storage order.
            bool contiguous = true;
            std::int64_t expect = 1;
            for (std::size_t k = a.ndim(); k-- > 0;) {
              if (a.shape(k) != 1 && a.stride(k) != expect) contiguous = false;
              expect *= static_cast<std::int64_t>(a.shape(k));
            }
            if (!contiguous)
              fail("from_local: the local buffer must be contiguous (storage order)");
            if (a.device_type() == nb::device::cuda::value && rt.backend().name() != "cuda")
              fail("from_local: a CUDA tensor needs the cuda backend (this runtime's is '" +
                   std::string(rt.backend().name()) + "')");
            return make(DistTensor::wrap(l, dt, a.data(), a.nbytes(), rt), std::move(keep));
          },
          nb::rv_policy::take_ownership)
      .def(
          "redistribute",
          [](const PyTensor& p, nb::handle spec, std::optional<Mesh> mesh,
             std::optional<std::uintptr_t> stream) {
            const DistTensor& t = p.get();
            // The result keeps the caller memory under the source only when it is a view of it.
            // A copy's pending reads of that memory are ordered before the caller's stream
            // (stream: signal_stream; from_local records the tensor's use on it) or finished (the
            // host backend), so the caller may free it: a distributed tensor does not pin the
            // global tensor it was made from.
            auto run = [&](const DistLayout& to) {
              DistTensor r =
                  stream ? t.redistribute(to, CallerStream{*stream}) : t.redistribute(to);
              const bool view = dynamic_cast<const BufferSlice*>(&r.buffer()) != nullptr;
              return make(std::move(r), view ? p.keep : nb::object());
            };
            if (!mesh && nb::isinstance<nb::str>(spec)) {
              // Text on the tensor's own mesh: the DistLayout is cached by (text, source layout),
              // so a training loop's repeated call parses nothing (bounded: cleared at 4096
              // entries).
              static std::unordered_map<std::string, DistLayout> cache;
              std::string key = nb::cast<std::string>(spec);
              key += '\n';
              key += to_string(t.layout());
              auto it = cache.find(key);
              if (it == cache.end()) {
                DistLayout to = to_dist_layout(spec, t.shape(), t.mesh(), "placements");
                if (cache.size() >= 4096) cache.clear();
                it = cache.emplace(std::move(key), std::move(to)).first;
              }
              return run(it->second);
            }
            DistLayout to = to_dist_layout(spec, t.shape(), mesh ? *mesh : t.mesh(), "placements");
            return run(to);
          },
          nb::rv_policy::take_ownership, nb::arg("spec"), nb::arg("mesh") = nb::none(),
          nb::arg("stream") = nb::none())
      .def(
          "_bench_redistribute",
          [](const PyTensor& p, const DistLayout& to, int iters,
             std::optional<std::uintptr_t> stream) {
            // The C++ call alone, for the Python-overhead benchmark
            // (examples/python/overhead_bench.py). With `stream`: ordered by events, one host
            // wait at the end (what a torch loop does).
            const DistTensor& t = p.get();
            auto t0 = std::chrono::steady_clock::now();
            for (int i = 0; i < iters; ++i) {
              if (stream) {
                DistTensor r = t.redistribute(to, CallerStream{*stream});
              } else {
                DistTensor r = t.redistribute(to);
                r.synchronize();
              }
            }
            if (stream) t.runtime().backend().synchronize();
            return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() /
                   iters;
          },
          nb::arg("to"), nb::arg("iters"), nb::arg("stream") = nb::none())
      .def("local_array", &local_array, nb::arg("framework") = "numpy", nb::arg("device_id") = 0,
           nb::arg("raw") = false, nb::arg("stream") = nb::none())
      .def("full_tensor", [](const PyTensor& p) { return host_array(p.get().gather_all()); })
      .def(
          "gather", [](const PyTensor& p, int root) { return host_array(p.get().gather(root)); },
          nb::arg("root") = 0)
      .def("visualize", [](const PyTensor& p) { return p.get().visualize(); })
      .def("synchronize", [](const PyTensor& p) { p.get().synchronize(); })
      .def("buffer_address",
           [](const PyTensor& p) {
             Buffer& b = const_cast<Buffer&>(p.get().buffer());
             return reinterpret_cast<std::uintptr_t>(
                 b.host_data() ? static_cast<void*>(b.host_data()) : b.device_data());
           })
      .def("buffer_bytes", [](const PyTensor& p) { return p.get().buffer().bytes(); })
      .def_prop_ro("dist_layout", [](const PyTensor& p) { return p.get().layout(); })
      .def_prop_ro("shape", [](const PyTensor& p) { return p.get().shape(); })
      .def_prop_ro("dtype",
                   [](const PyTensor& p) { return std::string(to_string(p.get().dtype())); })
      .def_prop_ro("last_plan", [](const PyTensor& p) { return p.get().last_plan(); });
#endif
}

}  // namespace axe::py
