// The executor: pack, transport, unpack (and reduce) for each step of a RankPlan.
#include "axe/exec/executor.hpp"

#include <algorithm>
#include <bit>
#include <chrono>
#include <cmath>
#include <cstring>
#include <limits>
#include <span>

#include "axe/core/error.hpp"
#include "axe/plan/step_check.hpp"
#include "plan/internal.hpp"

namespace axe {

namespace {

double combine(ReduceOp op, double a, double b) {
  switch (op) {
    case ReduceOp::Sum:
    case ReduceOp::Avg: return a + b;
    case ReduceOp::Prod: return a * b;
    case ReduceOp::Max: return std::max(a, b);
    case ReduceOp::Min: return std::min(a, b);
  }
  return a;
}

template <class T>
void reduce_typed(ReduceOp op, std::byte* dst, const std::byte* src, std::int64_t n) {
  for (std::int64_t i = 0; i < n; ++i) {
    T a, b;
    std::memcpy(&a, dst + i * sizeof(T), sizeof(T));
    std::memcpy(&b, src + i * sizeof(T), sizeof(T));
    T r = static_cast<T>(combine(op, static_cast<double>(a), static_cast<double>(b)));
    std::memcpy(dst + i * sizeof(T), &r, sizeof(T));
  }
}

template <class Load, class Store>
void reduce_16(ReduceOp op, std::byte* dst, const std::byte* src, std::int64_t n, Load ld, Store st) {
  for (std::int64_t i = 0; i < n; ++i) {
    std::uint16_t a, b;
    std::memcpy(&a, dst + 2 * i, 2);
    std::memcpy(&b, src + 2 * i, 2);
    std::uint16_t r = st(static_cast<float>(combine(op, ld(a), ld(b))));
    std::memcpy(dst + 2 * i, &r, 2);
  }
}

void scale(DType t, std::byte* p, std::int64_t n, double divisor) {
  for (std::int64_t i = 0; i < n; ++i) {
    std::byte* e = p + i * size_of(t);
    store_element(t, e, load_element(t, e) / divisor);
  }
}

// Calls f(offset) for every element of a box, row-major.
template <class F>
void for_box(std::span<const std::int64_t> ext, std::span<const std::int64_t> strides, std::int64_t base, F&& f) {
  const std::size_t n = ext.size();
  for (auto e : ext)
    if (e <= 0) return;
  if (n == 0) {
    f(base, std::int64_t{0});
    return;
  }
  std::vector<std::int64_t> idx(n, 0);
  std::int64_t off = base, linear = 0;
  while (true) {
    f(off, linear++);
    std::size_t k = n;
    while (k > 0) {
      --k;
      off += strides[k];
      if (++idx[k] < ext[k]) break;
      off -= strides[k] * ext[k];
      idx[k] = 0;
      if (k == 0) return;
    }
  }
}

void check_range(std::span<const std::int64_t> ext, std::span<const std::int64_t> st, std::int64_t off,
                 std::int64_t size, const char* what) {
  std::int64_t lo = off, hi = off;
  for (std::size_t i = 0; i < ext.size(); ++i) {
    if (ext[i] <= 0) return;
    std::int64_t span = st[i] * (ext[i] - 1);
    (span < 0 ? lo : hi) += span;
  }
  if (lo < 0 || hi >= size) fail(std::string("executor: ") + what + " box outside its buffer");
}

struct Exec {
  const RankPlan& plan;
  Transport& tr;
  std::int64_t es;
  DType dt;

  void pack(const std::vector<Transfer>& boxes, std::span<const std::byte> in, std::vector<std::byte>& out) {
    std::int64_t n = 0;
    for (const auto& b : boxes) n += b.elements();
    out.resize(static_cast<std::size_t>(n * es));
    std::int64_t pos = 0;
    for (const auto& b : boxes) {
      check_range(b.extents, b.src_strides, b.src_offset, static_cast<std::int64_t>(in.size()) / es, "source");
      for_box(b.extents, b.src_strides, b.src_offset, [&](std::int64_t off, std::int64_t) {
        std::memcpy(out.data() + pos * es, in.data() + off * es, static_cast<std::size_t>(es));
        ++pos;
      });
    }
  }

  // Writes (or reduces) packed data into out with the destination side of the boxes.
  void unpack(const Transfer& b, const std::byte* data, std::span<std::byte> out, bool reduce_it, ReduceOp op,
              double divide) {
    check_range(b.extents, b.dst_strides, b.dst_offset, static_cast<std::int64_t>(out.size()) / es, "destination");
    for_box(b.extents, b.dst_strides, b.dst_offset, [&](std::int64_t off, std::int64_t i) {
      std::byte* d = out.data() + off * es;
      if (reduce_it) reduce_into(dt, op, d, data + i * es, 1);
      else std::memcpy(d, data + i * es, static_cast<std::size_t>(es));
      if (divide != 1.0) scale(dt, d, 1, divide);
    });
  }

  void fill(const Transfer& b, std::span<std::byte> out, double v) {
    check_range(b.extents, b.dst_strides, b.dst_offset, static_cast<std::int64_t>(out.size()) / es, "fill");
    for_box(b.extents, b.dst_strides, b.dst_offset,
            [&](std::int64_t off, std::int64_t) { store_element(dt, out.data() + off * es, v); });
  }

  void local_copies(const Step& s, std::span<const std::byte> in, std::span<std::byte> out) {
    std::vector<std::byte> tmp;
    for (const auto& c : s.copies) {
      pack({c}, in, tmp);
      unpack(c, tmp.data(), out, false, s.op, 1.0);
    }
  }

  // A collective step: this rank calls the transport's collective, whatever its own share is
  // (possibly empty), because every member of the group does.
  void run_collective(const Step& s, std::size_t index, std::span<const std::byte> in, std::span<std::byte> out) {
    const auto& g = s.group;
    const CollectiveShape shape = check_collective(plan.rank, s, index);  // throws on a planner bug
    switch (s.kind) {
      case StepKind::AllGather: {
        std::vector<std::byte> mine;
        if (!s.sends.empty()) pack(s.sends[0].boxes, in, mine);
        std::vector<std::vector<std::byte>> store(g.size());
        std::vector<RecvBuffer> blocks(g.size());
        for (std::size_t i = 0; i < g.size(); ++i) {
          blocks[i].peer = g[i];
          if (const Message* m = g[i] == plan.rank ? nullptr : find_message(s.recvs, g[i])) {
            store[i].resize(static_cast<std::size_t>(m->elements() * es));
            blocks[i].data = store[i];
          }
        }
        tr.all_gather(g, mine, blocks);
        local_copies(s, in, out);
        for (std::size_t i = 0; i < g.size(); ++i)
          if (const Message* m = g[i] == plan.rank ? nullptr : find_message(s.recvs, g[i])) unpack_message(*m, store[i].data(), out);
        return;
      }
      case StepKind::AllToAll: {
        std::vector<std::vector<std::byte>> sstore(g.size()), rstore(g.size());
        std::vector<SendBuffer> sb(g.size());
        std::vector<RecvBuffer> rb(g.size());
        for (std::size_t i = 0; i < g.size(); ++i) {
          sb[i].peer = rb[i].peer = g[i];
          if (g[i] == plan.rank) continue;
          if (const Message* m = find_message(s.sends, g[i])) {
            pack(m->boxes, in, sstore[i]);
            sb[i].data = sstore[i];
          }
          if (const Message* m = find_message(s.recvs, g[i])) {
            rstore[i].resize(static_cast<std::size_t>(m->elements() * es));
            rb[i].data = rstore[i];
          }
        }
        tr.all_to_all(g, sb, rb);
        local_copies(s, in, out);
        for (std::size_t i = 0; i < g.size(); ++i)
          if (const Message* m = g[i] == plan.rank ? nullptr : find_message(s.recvs, g[i])) unpack_message(*m, rstore[i].data(), out);
        return;
      }
      case StepKind::Broadcast: {
        const std::size_t root = shape.root;
        std::vector<std::byte> data;
        const Message* m = nullptr;
        if (plan.rank == s.root) {
          if (!s.sends.empty()) pack(s.sends[0].boxes, in, data);
        } else {
          if (!s.recvs.empty()) {
            m = &s.recvs[0];
            data.resize(static_cast<std::size_t>(m->elements() * es));
          }
        }
        tr.broadcast(g, root, data);
        local_copies(s, in, out);
        if (m) unpack_message(*m, data.data(), out);
        return;
      }
      case StepKind::ReduceScatter:
      case StepKind::AllReduce: {
        std::vector<std::byte> mine, result;
        pack(s.copies, in, mine);
        result.resize(mine.size());
        if (s.kind == StepKind::AllReduce) {
          tr.all_reduce(g, mine, result, dt, s.op);
        } else {
          std::vector<std::vector<std::byte>> store(g.size());
          std::vector<SendBuffer> sb(g.size());
          for (std::size_t i = 0; i < g.size(); ++i) {
            sb[i].peer = g[i];
            if (g[i] == plan.rank) {
              sb[i].data = mine;
            } else if (const Message* m = find_message(s.sends, g[i])) {
              pack(m->boxes, in, store[i]);
              sb[i].data = store[i];
            }
          }
          tr.reduce_scatter(g, sb, result, dt, s.op);
        }
        double divide = s.op == ReduceOp::Avg ? static_cast<double>(s.terms) : 1.0;
        std::int64_t pos = 0;
        for (const auto& c : s.copies) {
          unpack(c, result.data() + pos * es, out, false, s.op, divide);
          pos += c.elements();
        }
        return;
      }
      default: return;  // not reached: check_collective rejects every other kind
    }
  }

  void unpack_message(const Message& m, const std::byte* data, std::span<std::byte> out) {
    std::int64_t pos = 0;
    for (const auto& b : m.boxes) {
      unpack(b, data + pos * es, out, false, ReduceOp::Sum, 1.0);
      pos += b.elements();
    }
  }

  void run_step(const Step& s, std::size_t index, std::span<const std::byte> in, std::span<std::byte> out) {
    for (const auto& f : s.fills) fill(f, out, reduce_identity(s.op));
    if (is_collective(s.kind) && s.group.size() > 1) {
      run_collective(s, index, in, out);
      return;
    }
    std::vector<std::vector<std::byte>> sstore(s.sends.size()), rstore(s.recvs.size());
    std::vector<SendBuffer> sb(s.sends.size());
    std::vector<RecvBuffer> rb(s.recvs.size());
    for (std::size_t i = 0; i < s.sends.size(); ++i) {
      pack(s.sends[i].boxes, in, sstore[i]);
      sb[i] = {s.sends[i].peer, sstore[i]};
    }
    for (std::size_t i = 0; i < s.recvs.size(); ++i) {
      rstore[i].resize(static_cast<std::size_t>(s.recvs[i].elements() * es));
      rb[i] = {s.recvs[i].peer, rstore[i]};
    }
    tr.exchange(sb, rb);
    struct Op {
      const Transfer* t;
      const std::byte* data;
    };
    std::vector<std::vector<std::byte>> cstore(s.copies.size());
    std::vector<Op> ops;
    for (std::size_t i = 0; i < s.copies.size(); ++i) {
      pack({s.copies[i]}, in, cstore[i]);
      ops.push_back({&s.copies[i], cstore[i].data()});
    }
    for (std::size_t i = 0; i < s.recvs.size(); ++i) {
      std::int64_t pos = 0;
      for (const auto& b : s.recvs[i].boxes) {
        ops.push_back({&b, rstore[i].data() + pos * es});
        pos += b.elements();
      }
    }
    if (s.reduce) {
      std::stable_sort(ops.begin(), ops.end(), [](const Op& a, const Op& b) { return a.t->term < b.t->term; });
    }
    for (const auto& o : ops) {
      bool red = s.reduce && o.t->term > 0;
      double divide = s.reduce && s.op == ReduceOp::Avg && o.t->term == s.terms - 1 ? static_cast<double>(s.terms) : 1.0;
      unpack(*o.t, o.data, out, red, s.op, divide);
    }
  }
};

}  // namespace

void reduce_into(DType dtype, ReduceOp op, std::byte* dst, const std::byte* src, std::int64_t count) {
  switch (dtype) {
    case DType::F64: reduce_typed<double>(op, dst, src, count); break;
    case DType::F32: reduce_typed<float>(op, dst, src, count); break;
    case DType::I32: reduce_typed<std::int32_t>(op, dst, src, count); break;
    case DType::I64: reduce_typed<std::int64_t>(op, dst, src, count); break;
    case DType::U8: reduce_typed<std::uint8_t>(op, dst, src, count); break;
    case DType::F16: reduce_16(op, dst, src, count, half_to_float, float_to_half); break;
    case DType::BF16: reduce_16(op, dst, src, count, bf16_to_float, float_to_bf16); break;
  }
}

void execute(const RankPlan& plan, Transport& transport, std::span<const std::byte> source,
             std::span<std::byte> destination) {
  const std::int64_t es = size_of(plan.dtype);
  if (plan.buffers.empty()) return;
  if (static_cast<std::int64_t>(source.size()) != plan.buffers.front() * es)
    fail("execute on rank " + std::to_string(plan.rank) + ": source buffer has " + std::to_string(source.size()) +
         " bytes, the plan expects " + std::to_string(plan.buffers.front() * es));
  if (static_cast<std::int64_t>(destination.size()) != plan.buffers.back() * es)
    fail("execute on rank " + std::to_string(plan.rank) + ": destination buffer has " +
         std::to_string(destination.size()) + " bytes, the plan expects " + std::to_string(plan.buffers.back() * es));
  Exec ex{plan, transport, es, plan.dtype};
  const std::size_t nb = plan.buffers.size();
  std::vector<std::vector<std::byte>> staging(nb);
  auto pad = [&](std::span<std::byte> b) {
    double v = is_floating(plan.dtype) ? std::numeric_limits<double>::quiet_NaN() : 0.0;
    for (std::size_t i = 0; i + static_cast<std::size_t>(es) <= b.size(); i += static_cast<std::size_t>(es))
      store_element(plan.dtype, b.data() + i, v);
  };
  for (std::size_t i = 1; i + 1 < nb; ++i) staging[i].resize(static_cast<std::size_t>(plan.buffers[i] * es));
  auto buf = [&](int i) -> std::span<std::byte> {
    if (static_cast<std::size_t>(i) + 1 == nb) return destination;
    return staging[static_cast<std::size_t>(i)];
  };
  // Padding: the boxes of RankPlan::pads (pad_unwritten) when listed, else every buffer whole.
  if (plan.pads.empty()) {
    for (std::size_t i = 1; i < nb; ++i) pad(buf(static_cast<int>(i)));
  } else {
    if (plan.pads.size() != nb)
      fail("execute on rank " + std::to_string(plan.rank) + ": the plan lists pads for " +
           std::to_string(plan.pads.size()) + " buffers, it has " + std::to_string(nb));
    const double v = is_floating(plan.dtype) ? std::numeric_limits<double>::quiet_NaN() : 0.0;
    for (std::size_t i = 1; i < nb; ++i)
      for (const auto& b : plan.pads[i]) ex.fill(b, buf(static_cast<int>(i)), v);
  }
  for (std::size_t i = 0; i < plan.steps.size(); ++i) {
    const Step& s = plan.steps[i];
    std::span<const std::byte> in = s.in == 0 ? source : std::span<const std::byte>(buf(s.in));
    ex.run_step(s, i, in, buf(s.out));
  }
}

// ---- default collectives over exchange() --------------------------------------------------

void Transport::all_gather(std::span<const std::int64_t> group, std::span<const std::byte> mine,
                           std::span<const RecvBuffer> blocks) {
  std::vector<SendBuffer> s;
  std::vector<RecvBuffer> r;
  for (std::size_t i = 0; i < group.size(); ++i) {
    if (group[i] == rank()) continue;
    if (!mine.empty()) s.push_back({group[i], mine});
    if (!blocks[i].data.empty()) r.push_back(blocks[i]);
  }
  exchange(s, r);
}

void Transport::all_to_all(std::span<const std::int64_t> group, std::span<const SendBuffer> send,
                           std::span<const RecvBuffer> recv) {
  std::vector<SendBuffer> s;
  std::vector<RecvBuffer> r;
  for (std::size_t i = 0; i < group.size(); ++i) {
    if (group[i] == rank()) continue;
    if (!send[i].data.empty()) s.push_back(send[i]);
    if (!recv[i].data.empty()) r.push_back(recv[i]);
  }
  exchange(s, r);
}

void Transport::reduce_scatter(std::span<const std::int64_t> group, std::span<const SendBuffer> send,
                               std::span<std::byte> out, DType dtype, ReduceOp op) {
  std::vector<SendBuffer> s;
  std::vector<RecvBuffer> r;
  std::vector<std::vector<std::byte>> store(group.size());
  for (std::size_t i = 0; i < group.size(); ++i) {
    if (group[i] == rank()) continue;
    if (!send[i].data.empty()) s.push_back(send[i]);
    if (!out.empty()) {
      store[i].resize(out.size());
      r.push_back({group[i], store[i]});
    }
  }
  exchange(s, r);
  bool first = true;
  const std::int64_t n = static_cast<std::int64_t>(out.size()) / size_of(dtype);
  for (std::size_t i = 0; i < group.size(); ++i) {
    const std::byte* src = group[i] == rank() ? send[i].data.data() : store[i].data();
    if (out.empty()) break;
    if (first) std::memcpy(out.data(), src, out.size());
    else reduce_into(dtype, op, out.data(), src, n);
    first = false;
  }
}

void Transport::broadcast(std::span<const std::int64_t> group, std::size_t root, std::span<std::byte> data) {
  std::vector<SendBuffer> s;
  std::vector<RecvBuffer> r;
  if (group[root] == rank()) {
    if (!data.empty())
      for (std::size_t i = 0; i < group.size(); ++i)
        if (i != root) s.push_back({group[i], data});
  } else if (!data.empty()) {
    r.push_back({group[root], data});
  }
  exchange(s, r);
}

void Transport::all_reduce(std::span<const std::int64_t> group, std::span<const std::byte> in,
                           std::span<std::byte> out, DType dtype, ReduceOp op) {
  std::vector<SendBuffer> s(group.size());
  for (std::size_t i = 0; i < group.size(); ++i) s[i] = {group[i], in};
  reduce_scatter(group, s, out, dtype, op);
}

// ---- in-memory transport -----------------------------------------------------------------

void InMemoryNetwork::post(std::int64_t from, std::int64_t to, std::vector<std::byte> data) {
  {
    std::lock_guard<std::mutex> g(mu_);
    bytes_ += static_cast<std::int64_t>(data.size());
    box_[{from, to}].push_back(std::move(data));
  }
  cv_.notify_all();
}

std::vector<std::byte> InMemoryNetwork::take(std::int64_t from, std::int64_t to) {
  std::unique_lock<std::mutex> g(mu_);
  auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_);
  while (true) {
    if (aborted_) fail("simulated rank " + std::to_string(to) + ": aborted (another rank failed)");
    auto it = box_.find({from, to});
    if (it != box_.end() && !it->second.empty()) {
      auto d = std::move(it->second.front());
      it->second.pop_front();
      return d;
    }
    if (cv_.wait_until(g, deadline) == std::cv_status::timeout)
      fail("simulated rank " + std::to_string(to) + ": timed out waiting for a message from rank " +
           std::to_string(from));
  }
}

void InMemoryNetwork::abort() {
  {
    std::lock_guard<std::mutex> g(mu_);
    aborted_ = true;
  }
  cv_.notify_all();
}

std::int64_t InMemoryNetwork::bytes_moved() const {
  std::lock_guard<std::mutex> g(mu_);
  return bytes_;
}

void InMemoryTransport::exchange(std::span<const SendBuffer> sends, std::span<const RecvBuffer> recvs) {
  for (const auto& s : sends) net_.post(rank_, s.peer, std::vector<std::byte>(s.data.begin(), s.data.end()));
  for (const auto& r : recvs) {
    auto d = net_.take(r.peer, rank_);
    if (d.size() != r.data.size())
      fail("simulated rank " + std::to_string(rank_) + ": message from rank " + std::to_string(r.peer) + " has " +
           std::to_string(d.size()) + " bytes, expected " + std::to_string(r.data.size()));
    // An empty message may come with null pointers, which memcpy must not be given.
    if (!d.empty()) std::memcpy(r.data.data(), d.data(), d.size());
  }
}

}  // namespace axe
