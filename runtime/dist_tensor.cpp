// DistTensor: creation, scatter/gather and redistribution through cached plans.
#include "axe/runtime/dist_tensor.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>
#include <map>
#include <optional>

namespace axe {

namespace {
std::string shape_text(const std::vector<std::int64_t>& s) {
  std::string t = "(";
  for (std::size_t i = 0; i < s.size(); ++i) t += (i ? "," : "") + std::to_string(s[i]);
  return t + ")";
}
}  // namespace

HostTensor::HostTensor(std::vector<std::int64_t> s, DType t) : shape(std::move(s)), dtype(t) {
  const std::int64_t bytes = checked_mul(elements(), size_of(t),
                                         "HostTensor of shape " + shape_text(shape) + " " + std::string(to_string(t)) +
                                             ": its size in bytes");
  try {
    data.resize(static_cast<std::size_t>(bytes));
  } catch (const std::exception& e) {  // std::bad_alloc, std::length_error
    fail("HostTensor of shape " + shape_text(shape) + " " + std::string(to_string(t)) + ": cannot allocate " +
         std::to_string(bytes) + " bytes (" + e.what() + ")");
  }
}

std::int64_t HostTensor::elements() const {
  std::int64_t n = 1;
  for (auto e : shape) {
    if (e < 0) fail("HostTensor of shape " + shape_text(shape) + ": extent " + std::to_string(e) + " is negative");
    n = checked_mul(n, e, "HostTensor of shape " + shape_text(shape) + ": its number of elements");
  }
  return n;
}

const std::byte* HostTensor::element(std::int64_t i, const char* what) const {
  const std::int64_t n = elements(), es = size_of(dtype);
  if (i < 0 || i >= n)
    fail(std::string(what) + ": index " + std::to_string(i) + " outside the " + std::to_string(n) +
         " elements of shape " + shape_text(shape));
  if (static_cast<std::int64_t>(data.size()) / es <= i)
    fail(std::string(what) + ": index " + std::to_string(i) + " outside the data (" + std::to_string(data.size()) +
         " bytes of " + std::string(to_string(dtype)) + ")");
  return data.data() + i * es;
}

double HostTensor::get(std::int64_t i) const { return load_element(dtype, element(i, "HostTensor::get")); }

void HostTensor::set(std::int64_t i, double v) {
  store_element(dtype, const_cast<std::byte*>(element(i, "HostTensor::set")), v);
}

void HostTensor::check_as(DType t) const {
  if (t != dtype)
    fail("HostTensor::as<" + std::string(to_string(t)) + ">: the tensor's dtype is " + std::string(to_string(dtype)));
}

// ---- helpers --------------------------------------------------------------------------------

std::string request_text(const PlanRequest& r) {
  return to_string(r.from) + " -> " + to_string(r.to) + " dtype " + std::string(to_string(r.dtype));
}
std::uint64_t request_fingerprint(const PlanRequest& r) { return fingerprint(request_text(r)); }

namespace {

std::int64_t local_count(const DistLayout& l, std::int64_t rank) {
  return l.mesh().contains(rank) ? l.local_elements() : 0;
}

// "" when the layout's mesh fits the world, else the message.
std::string check_mesh(const DistLayout& l, const Runtime& rt) {
  for (auto r : l.mesh().ranks())
    if (r >= rt.size())
      return "mesh " + to_string(l.mesh()) + " names rank " + std::to_string(r) + " but the world has " +
             std::to_string(rt.size()) + " ranks (launch with -np " + std::to_string(r + 1) + " or more)";
  return "";
}

std::string layout_text(const DistLayout& l, DType t) { return to_string(l) + " dtype " + std::string(to_string(t)); }

Mesh root_mesh(int root) { return Mesh({{"axe_root", 1}}, {root}); }
Mesh world_mesh(int size) { return Mesh({{"axe_world", size}}); }

// Allocates `bytes` on this rank's backend before the agreement that precedes every operation:
// a failure (out of memory) becomes `err`, so the agreement raises it on every rank instead of
// leaving the other ranks to wait for this one until AXE_TIMEOUT_S.
std::shared_ptr<Buffer> allocate_before_agreement(Runtime& rt, std::int64_t bytes, std::string_view what,
                                                  std::string& err, bool zero = true) {
  if (!err.empty()) return nullptr;
  try {
    const auto n = static_cast<std::size_t>(bytes);
    return zero ? rt.backend().allocate(n) : rt.backend().allocate_uninitialized(n);
  } catch (const std::exception& e) {
    err = "rank " + std::to_string(rt.rank()) + ": cannot allocate " + std::to_string(bytes) + " bytes for " +
          std::string(what) + " on the " + std::string(rt.backend().name()) + " backend: " + e.what();
  }
  return nullptr;
}

// The local buffer from bytes built on the host: the bytes themselves on the host backend, else
// copied into `device` (allocated before the agreement by allocate_before_agreement).
std::shared_ptr<Buffer> local_buffer(Runtime& rt, std::vector<std::byte> local, std::shared_ptr<Buffer> device) {
  if (!device) return std::make_shared<HostBuffer>(std::move(local));
  rt.backend().copy_from_host(local, *device);
  return device;
}

// A device buffer for `bytes` host-built bytes, allocated before the agreement; null on the host
// backend, where the host bytes become the buffer.
std::shared_ptr<Buffer> device_buffer_before_agreement(Runtime& rt, std::int64_t bytes, std::string_view what,
                                                       std::string& err) {
  if (rt.backend().name() == "host") return nullptr;
  return allocate_before_agreement(rt, bytes, what, err);
}

DistLayout replicated(const std::vector<std::int64_t>& shape, const Mesh& m) {
  std::vector<AxisPlacement> p(m.ndim(), Replicate());
  return shard(std::span<const std::int64_t>(shape), m, std::span<const AxisPlacement>(p));
}

}  // namespace

// ---- DistTensor -----------------------------------------------------------------------------

Runtime& DistTensor::runtime() const {
  if (!rt_) fail("DistTensor: the tensor is undefined (default-constructed)");
  return *rt_;
}

DistTensor DistTensor::empty(const DistLayout& layout, DType dtype, Runtime& rt) {
  std::string err = check_mesh(layout, rt);
  const std::string text = layout_text(layout, dtype);
  auto buffer = allocate_before_agreement(rt, err.empty() ? local_count(layout, rt.rank()) * size_of(dtype) : 0,
                                          "DistTensor::empty", err);
  rt.agree("DistTensor::empty", err, fingerprint(text), text);
  return DistTensor(rt, layout, dtype, std::move(buffer));
}

DistTensor DistTensor::wrap(const DistLayout& layout, DType dtype, std::vector<std::byte> local, Runtime& rt) {
  return wrap_as("DistTensor::wrap", layout, dtype, std::move(local), rt);
}

DistTensor DistTensor::wrap_as(std::string_view what, const DistLayout& layout, DType dtype,
                               std::vector<std::byte> local, Runtime& rt) {
  std::string err = check_mesh(layout, rt);
  const std::int64_t want = local_count(layout, rt.rank()) * size_of(dtype);
  if (err.empty() && static_cast<std::int64_t>(local.size()) != want)
    err = "rank " + std::to_string(rt.rank()) + " passed a local buffer of " + std::to_string(local.size()) +
          " bytes; layout '" + to_string(layout) + "' with dtype " + std::string(to_string(dtype)) + " needs " +
          std::to_string(want) + " bytes (" + std::to_string(local_count(layout, rt.rank())) + " elements)";
  const std::string text = layout_text(layout, dtype);
  auto device = device_buffer_before_agreement(rt, err.empty() ? want : 0, what, err);
  rt.agree(what, err, fingerprint(text), text);
  return DistTensor(rt, layout, dtype, local_buffer(rt, std::move(local), std::move(device)));
}

DistTensor DistTensor::wrap(const DistLayout& layout, DType dtype, void* data, std::size_t bytes, Runtime& rt) {
  std::string err = check_mesh(layout, rt);
  const std::int64_t want = local_count(layout, rt.rank()) * size_of(dtype);
  if (err.empty() && static_cast<std::int64_t>(bytes) != want)
    err = "rank " + std::to_string(rt.rank()) + " passed caller memory of " + std::to_string(bytes) +
          " bytes; layout '" + to_string(layout) + "' with dtype " + std::string(to_string(dtype)) + " needs " +
          std::to_string(want) + " bytes (" + std::to_string(local_count(layout, rt.rank())) + " elements)";
  if (err.empty() && !data && bytes)
    err = "rank " + std::to_string(rt.rank()) + " passed a null pointer for " + std::to_string(bytes) + " bytes";
  std::shared_ptr<Buffer> buf;
  if (err.empty()) {
    try {
      buf = rt.backend().wrap_memory(data, bytes);
    } catch (const std::exception& e) {
      err = "rank " + std::to_string(rt.rank()) + ": " + e.what();
    }
  }
  const std::string text = layout_text(layout, dtype);
  rt.agree("DistTensor::wrap", err, fingerprint(text), text);
  return DistTensor(rt, layout, dtype, std::move(buf));
}

DistTensor DistTensor::from_global(const HostTensor& g, const DistLayout& layout, Runtime& rt) {
  std::string err = check_mesh(layout, rt);
  if (err.empty() && g.shape != layout.shape())
    err = "global tensor of shape " + shape_text(g.shape) + " for layout '" + to_string(layout) + "'";
  if (err.empty() && static_cast<std::int64_t>(g.data.size()) != g.elements() * size_of(g.dtype))
    err = "rank " + std::to_string(rt.rank()) + ": global tensor has " + std::to_string(g.data.size()) +
          " bytes, shape " + shape_text(g.shape) + " " + std::string(to_string(g.dtype)) + " needs " +
          std::to_string(g.elements() * size_of(g.dtype));
  const std::string text = layout_text(layout, g.dtype);
  auto device = device_buffer_before_agreement(
      rt, err.empty() ? local_count(layout, rt.rank()) * size_of(g.dtype) : 0, "DistTensor::from_global", err);
  rt.agree("DistTensor::from_global", err, fingerprint(text), text);

  const DType dt = g.dtype;
  const std::int64_t es = size_of(dt), n = local_count(layout, rt.rank());
  std::vector<std::byte> local(static_cast<std::size_t>(n * es));
  if (n > 0) {
    // Each memory slot of this rank: backward to (padded index, term), then the global value.
    const AxeLayout& L = layout.layout();
    const Mesh& mesh = layout.mesh();
    const auto dev = mesh.coord(rt.rank());
    const auto& shape = layout.shape();
    const auto& padded = layout.padded_shape();
    const ReduceOp op = L.reduce_op();
    const double pad = is_floating(dt) ? std::numeric_limits<double>::quiet_NaN() : 0.0;
    for (std::int64_t m = 0; m < n; ++m) {
      PhysCoord c;
      for (std::size_t a = 0; a < mesh.ndim(); ++a)
        if (dev[a]) c.set(mesh.axes()[a], dev[a]);
      if (m) c.set(Axis(), m);
      std::byte* dst = local.data() + m * es;
      auto pre = L.backward(c);
      if (!pre) {
        store_element(dt, dst, pad);
        continue;
      }
      // Padded row-major index -> padded coordinate -> logical coordinate (nested uneven dims
      // put padding inside a dim, not only at its end) -> global row-major index.
      std::int64_t x = pre->index, gi = 0, place = 1;
      bool inside = true;
      std::vector<std::int64_t> coord(padded.size());
      for (std::size_t d = padded.size(); d-- > 0;) {
        coord[d] = x % padded[d];
        x /= padded[d];
      }
      for (std::size_t d = shape.size(); d-- > 0;) {
        const auto logical = layout.logical_index(d, coord[d]);
        inside = inside && logical.has_value();
        if (!inside) break;
        gi += *logical * place;
        place *= shape[d];
      }
      if (!inside) {
        store_element(dt, dst, pad);
        continue;
      }
      const std::byte* src = g.data.data() + gi * es;
      const bool identity = pre->term != 0 && (op == ReduceOp::Sum || op == ReduceOp::Prod);
      if (identity) store_element(dt, dst, op == ReduceOp::Sum ? 0.0 : 1.0);
      else std::memcpy(dst, src, static_cast<std::size_t>(es));
    }
  }
  return DistTensor(rt, layout, dt, local_buffer(rt, std::move(local), std::move(device)));
}

DistTensor DistTensor::from_global(const HostTensor& g, const Mesh& mesh, std::span<const AxisPlacement> p,
                                   Runtime& rt) {
  return from_global(g, shard(std::span<const std::int64_t>(g.shape), mesh, p), rt);
}

DistTensor DistTensor::scatter(const HostTensor& g, const DistLayout& layout, int root, Runtime& rt) {
  // The request every rank must pass alike (only root's data is read).
  const std::string text = "scatter from root " + std::to_string(root) + " of " + shape_text(g.shape) + " " +
                           std::string(to_string(g.dtype)) + " to " + to_string(layout);
  std::string err = check_mesh(layout, rt);
  if (err.empty() && (root < 0 || root >= rt.size()))
    err = "scatter root " + std::to_string(root) + " outside the world of " + std::to_string(rt.size()) + " ranks";
  if (err.empty() && g.shape != layout.shape())
    err = "global tensor of shape " + shape_text(g.shape) + " for layout '" + to_string(layout) + "'";
  if (err.empty() && rt.rank() == root && static_cast<std::int64_t>(g.data.size()) != g.elements() * size_of(g.dtype))
    err = "scatter root " + std::to_string(root) + ": global tensor has " + std::to_string(g.data.size()) +
          " bytes, shape " + shape_text(g.shape) + " " + std::string(to_string(g.dtype)) + " needs " +
          std::to_string(g.elements() * size_of(g.dtype));
  rt.agree("DistTensor::scatter", err, fingerprint(text), text);
  DistLayout src = replicated(g.shape, root_mesh(root));
  std::vector<std::byte> mine;
  if (rt.rank() == root) mine = g.data;
  DistTensor s = wrap_as("DistTensor::scatter", src, g.dtype, std::move(mine), rt);
  return s.redistribute(layout);
}

HostTensor DistTensor::gather(int root) const {
  Runtime& rt = runtime();
  if (root < 0 || root >= rt.size())
    rt.agree("DistTensor::gather", "gather root " + std::to_string(root) + " outside the world of " +
                                       std::to_string(rt.size()) + " ranks");
  DistTensor r = redistribute(replicated(shape(), root_mesh(root)));
  HostTensor h;
  h.shape = shape();
  h.dtype = dtype_;
  r.synchronize();
  if (rt.rank() == root) {
    h.data.resize(r.buffer_->bytes());
    rt.backend().copy_to_host(*r.buffer_, h.data);
  }
  return h;
}

HostTensor DistTensor::gather_all() const {
  Runtime& rt = runtime();
  DistTensor r = redistribute(replicated(shape(), world_mesh(rt.size())));
  HostTensor h;
  h.shape = shape();
  h.dtype = dtype_;
  r.synchronize();
  h.data.resize(r.buffer_->bytes());
  rt.backend().copy_to_host(*r.buffer_, h.data);
  return h;
}

namespace {

// The host work of a redistribute that depends only on (runtime, cost model, source layout,
// destination layout, dtype): the request's text (what the ranks agree on) and this rank's plan.
// A training step repeats the same few redistributions, so the last 16 are kept per thread and
// found by comparing layouts (about 1 us) instead of rebuilding the text, re-validating the
// request and looking the plan up by its key (about 10 us).
struct Prepared {
  const Runtime* rt = nullptr;
  std::uint64_t cost_version = 0;
  DistLayout from, to;
  DType dtype = DType::F32;
  std::string text;
  std::shared_ptr<const RankPlan> plan;
  std::optional<ContiguousRun> view;  // view_run(*plan)
  // Once every rank has agreed on this request and has its plan ready: later calls skip the
  // agreement (unless AXE_AGREE_EACH_CALL=1), remembering whether every rank took a view.
  bool agreed = false;
  bool all_view = false;
};

Prepared* find_prepared(const Runtime& rt, const DistLayout& from, const DistLayout& to, DType dtype,
                              std::vector<Prepared>& memo) {
  for (std::size_t i = 0; i < memo.size(); ++i) {
    Prepared& e = memo[i];
    if (e.rt == &rt && e.cost_version == rt.cost_model_version() && e.dtype == dtype && e.from == from && e.to == to) {
      if (i > 0) std::rotate(memo.begin(), memo.begin() + static_cast<std::ptrdiff_t>(i),
                             memo.begin() + static_cast<std::ptrdiff_t>(i) + 1);
      return &memo.front();
    }
  }
  return nullptr;
}

}  // namespace

namespace {

// This rank's destination as one contiguous range of its source, when its plan is exactly that:
// one local-copy step whose copies, in destination order, form one contiguous run covering the
// whole destination (no fills, no messages, no padding). A rank that neither holds nor sends
// anything views trivially (an empty run). Computed once per memoized request.
std::optional<ContiguousRun> view_run(const RankPlan& plan) {
  for (const Step& s : plan.steps)
    if (!s.sends.empty() || !s.recvs.empty()) return std::nullopt;
  if (plan.buffers.empty() || plan.buffers.back() == 0) return ContiguousRun{};
  if (plan.steps.size() != 1 || plan.buffers.size() != 2) return std::nullopt;
  const Step& s = plan.steps[0];
  if (s.kind != StepKind::LocalCopy || s.reduce || !s.fills.empty()) return std::nullopt;
  std::vector<Transfer> boxes = s.copies;
  std::sort(boxes.begin(), boxes.end(), [](const Transfer& a, const Transfer& b) { return a.dst_offset < b.dst_offset; });
  auto run = contiguous_run(boxes);
  if (!run || run->dst != 0 || run->n != plan.buffers.back()) return std::nullopt;
  return run;
}

}  // namespace

DistTensor DistTensor::redistribute(const DistLayout& to) const {
  Runtime& rt = runtime();
  thread_local std::vector<Prepared> memo;
  std::string text, err;
  std::shared_ptr<const RankPlan> plan;
  std::optional<ContiguousRun> run;
  Prepared* hit = find_prepared(rt, layout_, to, dtype_, memo);
  if (hit) {
    text = hit->text;
    plan = hit->plan;
    run = hit->view;
  } else {
    PlanRequest req{layout_, to, dtype_};
    text = request_text(req);
    err = check_mesh(to, rt);
    if (err.empty()) {
      try {
        check_request(req);
        plan = cached_plan_rank(req, rt.rank(), rt.cost_model());
      } catch (const std::exception& e) {
        err = e.what();
      }
    }
    if (err.empty()) {
      run = view_run(*plan);
      if (memo.size() >= 16) memo.pop_back();
      memo.insert(memo.begin(), Prepared{&rt, rt.cost_model_version(), layout_, to, dtype_, text, plan, run});
    }
  }
  // A view where one suffices: when on every rank the destination is one contiguous range of the
  // source (R -> S(0), (R,R) -> (S(0),R), ...), the result aliases the source and nothing moves.
  const auto es = static_cast<std::size_t>(size_of(dtype_));
  const bool view = err.empty() && run && static_cast<std::size_t>(run->src + run->n) * es <= buffer_->bytes();
  // The plan writes every element of the destination (padding included): no zero fill. Allocated
  // before the agreement even when this rank could take a view (another rank may not: then this
  // one runs the plan too, and an allocation failure must be known to every rank in the agreement).
  auto buffer = allocate_before_agreement(rt, err.empty() ? local_count(to, rt.rank()) * size_of(dtype_) : 0,
                                          "the destination of DistTensor::redistribute", err, false);
  // One all-reduce agrees on the request, on whether any rank's backend still has plan-time work
  // (then the backend runs its own cross-rank preparation; else it only enqueues), and on whether
  // any rank cannot take a view (then every rank runs the plan, so the backends' collective
  // preparation is matched).
  const bool prepare_here = err.empty() && !plan->buffers.empty() && rt.backend().needs_preparation(*plan);
  std::uint64_t flags[2] = {prepare_here ? 1u : 0u, view ? 0u : 1u};
  // A request every rank agreed on before, with this rank's plan still ready, does not wait for
  // the other ranks (that wait was most of a cached call's host time): the check that they ask
  // for the same runs in the background (Runtime::agree_later) and a disagreement is raised by
  // the next call or synchronize(). AXE_AGREE_EACH_CALL=1 waits on every call.
  if (hit && hit->agreed && err.empty() && !prepare_here && !rt.failed() &&
      tunable_int("AXE_AGREE_EACH_CALL") == 0) {
    flags[1] = hit->all_view ? 0u : 1u;
    rt.agree_later("DistTensor::redistribute", fingerprint(text), text);
  } else {
    rt.agree("DistTensor::redistribute", err, fingerprint(text), text, std::span<std::uint64_t>(flags));
    // Past the agreement every rank has this request, and its plan ready once this call has
    // run (any preparation happens in it); the request is memo.front(), found or inserted above.
    memo.front().agreed = true;
    memo.front().all_view = flags[1] == 0;
  }
  const std::uint64_t prepares = flags[0];
  if (flags[1] == 0) {  // every rank views its source
    DistTensor t(rt, to, dtype_,
                 std::make_shared<BufferSlice>(buffer_, static_cast<std::size_t>(run->src) * es,
                                               static_cast<std::size_t>(local_count(to, rt.rank())) * es));
    t.plan_text_ = text + " (a view of the source: no copy)";
    t.pending_ = pending_;  // what the source's own pending work reads
    return t;
  }
  DistTensor t(rt, to, dtype_, std::move(buffer));
  t.plan_text_ = text;
  if (!plan->buffers.empty()) {
    // The result keeps the source buffer (which the pending work reads) and the plan alive
    // until it synchronizes.
    rt.backend().execute_agreed(*plan, *buffer_, *t.buffer_, prepares != 0);
    t.pending_ = std::make_shared<std::pair<std::shared_ptr<Buffer>, std::shared_ptr<const RankPlan>>>(buffer_, plan);
  }
  return t;
}

DistTensor DistTensor::redistribute(const DistLayout& to, CallerStream stream) const {
  Backend& b = runtime().backend();
  b.wait_for_stream(stream.handle);
  DistTensor r = redistribute(to);
  b.signal_stream(stream.handle);
  r.buffer_->used_on_stream(stream.handle);
  return r;
}

DistTensor DistTensor::redistribute(std::span<const AxisPlacement> p) const {
  return redistribute(shard(std::span<const std::int64_t>(shape()), mesh(), p));
}

DistTensor DistTensor::redistribute(const Mesh& m, std::initializer_list<AxisPlacement> p) const {
  return redistribute(shard(std::span<const std::int64_t>(shape()), m,
                            std::span<const AxisPlacement>(p.begin(), p.size())));
}

void DistTensor::synchronize() const {
  runtime().finish_agreements();
  runtime().backend().synchronize();
  pending_.reset();
}

namespace {
std::string device_bytes_error(const Buffer& b) {
  return "DistTensor::local_bytes / local_as: the local buffer (" + std::to_string(b.bytes()) +
         " bytes) is not host-addressable (device memory); copy it with to_host() / from_host()";
}
}  // namespace

std::vector<std::byte> DistTensor::to_host() const {
  synchronize();
  std::vector<std::byte> h(buffer_->bytes());
  runtime().backend().copy_to_host(*buffer_, h);
  return h;
}

void DistTensor::from_host(std::span<const std::byte> bytes) {
  synchronize();
  if (bytes.size() != buffer_->bytes())
    fail("DistTensor::from_host: rank " + std::to_string(runtime().rank()) + " passed " +
         std::to_string(bytes.size()) + " bytes, the local buffer of layout '" + to_string(layout_) + "' has " +
         std::to_string(buffer_->bytes()));
  runtime().backend().copy_from_host(bytes, *buffer_);
}

std::span<std::byte> DistTensor::local_bytes() {
  synchronize();
  std::byte* p = buffer_->host_data();
  if (!p && buffer_->bytes()) fail(device_bytes_error(*buffer_));
  return {p, buffer_->bytes()};
}

std::span<const std::byte> DistTensor::local_bytes() const {
  synchronize();
  const Buffer& b = *buffer_;
  const std::byte* p = b.host_data();
  if (!p && b.bytes()) fail(device_bytes_error(b));
  return {p, b.bytes()};
}

LocalView DistTensor::local() const {
  synchronize();
  LocalShard s = local_shard(layout_, runtime().rank());
  LocalView v;
  const Buffer& b = *buffer_;
  if (b.host_data()) v.bytes = {b.host_data(), b.bytes()};
  v.storage = s.storage;
  v.shape = s.shape;
  v.regions = s.regions;
  v.terms = s.terms;
  v.elements = s.buffer_elements;
  return v;
}

// ---- visualize ------------------------------------------------------------------------------

std::string DistTensor::visualize(const DistLayout& l) {
  std::string out = to_string(l) + "\n";
  const auto& shape = l.shape();
  const std::int64_t n = l.elements();
  std::map<std::int64_t, LocalShard> shards;
  for (auto r : l.mesh().ranks()) shards.emplace(r, local_shard(l, r));
  if (shape.size() != 2 || n > (1 << 16)) {
    for (const auto& [r, s] : shards) {
      out += "  rank " + std::to_string(r) + ":";
      if (s.regions.empty()) out += " nothing";
      for (std::size_t i = 0; i < s.regions.size(); ++i) {
        out += " " + to_string(s.regions[i]);
        if (l.layout().terms() > 1) out += " t" + std::to_string(s.terms[i]);
      }
      out += "\n";
    }
    return out;
  }
  // Owners per element: "r" or "r:t<k>" joined by ','.
  const std::int64_t R = shape[0], C = shape[1];
  std::vector<std::string> who(static_cast<std::size_t>(n));
  for (const auto& [r, s] : shards)
    for (std::size_t k = 0; k < s.regions.size(); ++k) {
      const auto& reg = s.regions[k];
      std::vector<std::int64_t> idx(reg.modes.size(), 0);
      while (true) {
        std::vector<std::int64_t> c = reg.begin;
        for (std::size_t j = 0; j < idx.size(); ++j) c[static_cast<std::size_t>(reg.modes[j].dim)] += idx[j] * reg.modes[j].step;
        if (c[0] < R && c[1] < C) {
          auto& w = who[static_cast<std::size_t>(c[0] * C + c[1])];
          std::string tag = std::to_string(r);
          if (l.layout().terms() > 1) tag += ":t" + std::to_string(s.terms[k]);
          if (("," + w).find("," + tag + ",") == std::string::npos) w += tag + ",";
        }
        std::size_t j = idx.size();
        while (j > 0 && ++idx[j - 1] == reg.modes[j - 1].extent) idx[--j] = 0;
        if (j == 0) break;
      }
    }
  for (auto& w : who) {
    if (!w.empty()) w.pop_back();
    if (w.empty()) w = "-";
  }
  auto same_rows = [&](std::int64_t a, std::int64_t b) {
    for (std::int64_t j = 0; j < C; ++j)
      if (who[static_cast<std::size_t>(a * C + j)] != who[static_cast<std::size_t>(b * C + j)]) return false;
    return true;
  };
  auto same_cols = [&](std::int64_t a, std::int64_t b) {
    for (std::int64_t i = 0; i < R; ++i)
      if (who[static_cast<std::size_t>(i * C + a)] != who[static_cast<std::size_t>(i * C + b)]) return false;
    return true;
  };
  std::vector<std::int64_t> rb{0}, cb{0};
  for (std::int64_t i = 1; i < R; ++i)
    if (!same_rows(i, i - 1)) rb.push_back(i);
  for (std::int64_t j = 1; j < C; ++j)
    if (!same_cols(j, j - 1)) cb.push_back(j);
  rb.push_back(R);
  cb.push_back(C);
  const bool tabular = rb.size() <= 33 && cb.size() <= 17;
  if (!tabular) {
    out += "  (" + std::to_string(rb.size() - 1) + " row blocks x " + std::to_string(cb.size() - 1) +
           " column blocks: too many to draw)\n";
    return out;
  }
  std::vector<std::vector<std::string>> cells;
  std::vector<std::string> head{""};
  for (std::size_t j = 0; j + 1 < cb.size(); ++j)
    head.push_back("cols " + std::to_string(cb[j]) + ":" + std::to_string(cb[j + 1]));
  cells.push_back(head);
  for (std::size_t i = 0; i + 1 < rb.size(); ++i) {
    std::vector<std::string> row{"rows " + std::to_string(rb[i]) + ":" + std::to_string(rb[i + 1])};
    for (std::size_t j = 0; j + 1 < cb.size(); ++j)
      row.push_back(who[static_cast<std::size_t>(rb[i] * C + cb[j])]);
    cells.push_back(row);
  }
  std::vector<std::size_t> width(cells[0].size(), 0);
  for (const auto& row : cells)
    for (std::size_t j = 0; j < row.size(); ++j) width[j] = std::max(width[j], row[j].size());
  for (const auto& row : cells) {
    out += " ";
    for (std::size_t j = 0; j < row.size(); ++j) out += " " + row[j] + std::string(width[j] - row[j].size() + 1, ' ');
    while (!out.empty() && out.back() == ' ') out.pop_back();
    out += "\n";
  }
  return out;
}

}  // namespace axe
