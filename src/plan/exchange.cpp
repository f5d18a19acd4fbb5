// One rank's sends and receives for a refined (source, destination) pair (DESIGN §4.2-4.3).
//
// Receiver q: per box, solve q's destination coordinate for the digits on destination device
// axes (and which replica / term q is); the digits left on source device axes enumerate the
// senders. A replicated source picks, per source axis, the replica whose coordinate equals q's
// own (so a rank that holds the data copies locally and a collective stays inside its group),
// else spreads the receivers over the replicas. Sender p does the mirror image and keeps the
// receivers that pick it. Both sides build each box with the same function and sort by the same
// key, so packed messages agree byte for byte. Work is proportional to the rank's messages.
#include <algorithm>
#include <map>

#include "axe/core/error.hpp"
#include "plan/internal.hpp"

namespace axe::internal {

namespace {

std::vector<std::int64_t> decode(std::int64_t x, const std::vector<SideIter>& it) {
  std::vector<std::int64_t> d(it.size());
  for (std::size_t i = it.size(); i-- > 0;) {
    d[i] = x % it[i].extent;
    x /= it[i].extent;
  }
  return d;
}

struct Keyed {
  std::vector<std::int64_t> key;
  Transfer t;
};

// Builds one rank's part of the direct exchange of a pair: the messages it receives (receive:
// per box, the senders of what it needs) and sends (send: the mirror image), keyed so that
// sender and receiver order each message's boxes alike, plus its local copies and fills.
class ExchangeBuilder {
 public:
  ExchangeBuilder(const Pair& p, std::int64_t rank, bool spread = false) : P(p), rank_(rank), spread_(spread) {
    rep_on.resize(static_cast<std::size_t>(P.src.naxes));
    for (std::size_t i = 0; i < P.src.rep.size(); ++i)
      if (P.src.rep[i].axis < P.src.naxes) {
        rep_on[static_cast<std::size_t>(P.src.rep[i].axis)].push_back(i);
        mesh_rep_.push_back(i);
        R_ *= P.src.rep[i].extent;
      }
  }

  // Is box t (needed by a receiver that does not hold it) split over the R source replicas?
  bool spreads(const Transfer&) const { return spread_ && R_ > 1; }

  // Replica j's part of t, keyed after k.
  void split(const Transfer& t, std::int64_t j, const std::vector<std::int64_t>& k, std::vector<Keyed>& out) {
    const std::int64_t e = t.elements();
    pieces_.clear();
    sub_boxes(t, e * j / R_, e * (j + 1) / R_, pieces_);
    for (std::size_t i = 0; i < pieces_.size(); ++i) {
      std::vector<std::int64_t> kk = k;
      kk.push_back(j);
      kk.push_back(static_cast<std::int64_t>(i));
      out.push_back({std::move(kk), std::move(pieces_[i])});
    }
  }

  // Replica digits (on mesh axes) of replica number j, row-major over mesh_rep_.
  void replica_digits(std::int64_t j, std::vector<std::int64_t>& r) const {
    for (std::size_t i = mesh_rep_.size(); i-- > 0;) {
      r[mesh_rep_[i]] = j % P.src.rep[mesh_rep_[i]].extent;
      j /= P.src.rep[mesh_rep_[i]].extent;
    }
  }
  std::int64_t replica_number(const std::vector<std::int64_t>& r) const {
    std::int64_t j = 0;
    for (auto i : mesh_rep_) j = j * P.src.rep[i].extent + r[i];
    return j;
  }

  std::int64_t reduced_index(const std::vector<std::int64_t>& ts) const {
    std::int64_t x = 0;
    for (auto j : P.reduced) x = x * P.src.part[j].extent + ts[j];
    return x;
  }

  // Source replica digits chosen by receiver q for a box whose source coordinate, replicas
  // excluded, is v (per source axis).
  void choose_rep(std::int64_t q, const std::vector<std::int64_t>& v, std::vector<std::int64_t>& r) {
    const Mesh& sm = P.src.layout->mesh();
    const Mesh& dm = P.dst.layout->mesh();
    const std::vector<std::int64_t>* qc = nullptr;
    if (q != cached_q_) {
      cached_q_ = q;
      auto idx = sm.find_index(q);
      q_in_src_ = idx.has_value();
      if (q_in_src_) q_src_coord_ = sm.coord_of_index(*idx);
      q_dst_index_ = dm.index_of(q);
    }
    if (q_in_src_) qc = &q_src_coord_;
    for (std::size_t a = 0; a < rep_on.size(); ++a) {
      const auto& ids = rep_on[a];
      if (ids.empty()) continue;
      bool done = false;
      if (qc) {
        std::vector<std::pair<std::int64_t, std::int64_t>> vars;
        for (auto i : ids) vars.push_back({P.src.rep[i].extent, P.src.rep[i].stride});
        auto sols = solve(vars, (*qc)[a] - v[a]);
        if (!sols.empty()) {
          for (std::size_t j = 0; j < ids.size(); ++j) r[ids[j]] = sols[0][j];
          done = true;
        }
      }
      if (!done) {
        std::int64_t count = 1;
        for (auto i : ids) count *= P.src.rep[i].extent;
        std::int64_t x = q_dst_index_ % count;
        for (std::size_t j = ids.size(); j-- > 0;) {
          r[ids[j]] = x % P.src.rep[ids[j]].extent;
          x /= P.src.rep[ids[j]].extent;
        }
      }
    }
    for (std::size_t i = 0; i < P.src.rep.size(); ++i)
      if (P.src.rep[i].axis == P.src.naxes) r[i] = 0;
  }

  // Source coordinate without replicas, per source axis (m excluded).
  std::vector<std::int64_t> src_coord_norep(const GBox& b, const Assign& s) {
    std::vector<std::int64_t> v(b.s_base.begin(), b.s_base.end() - 1);
    for (std::size_t i = 0; i < b.factors.size(); ++i) {
      const Factor& m = b.factors[i];
      if (m.s_axis < P.src.naxes) v[static_cast<std::size_t>(m.s_axis)] += s.fd[i] * m.s_stride;
    }
    for (std::size_t i = 0; i < P.src.part.size(); ++i)
      if (P.src.part[i].axis < P.src.naxes) v[static_cast<std::size_t>(P.src.part[i].axis)] += s.t[i] * P.src.part[i].stride;
    return v;
  }

  std::int64_t src_rank(const std::vector<std::int64_t>& v, const std::vector<std::int64_t>& r) {
    std::vector<std::int64_t> c = v;
    for (std::size_t i = 0; i < P.src.rep.size(); ++i)
      if (P.src.rep[i].axis < P.src.naxes) c[static_cast<std::size_t>(P.src.rep[i].axis)] += r[i] * P.src.rep[i].stride;
    return P.src.layout->mesh().rank_at(c);
  }

  std::int64_t dst_rank(const GBox& b, const std::vector<std::int64_t>& fd, const std::vector<std::int64_t>& rd,
                        const std::vector<std::int64_t>& td) {
    std::vector<std::int64_t> c(b.d_base.begin(), b.d_base.end() - 1);
    for (std::size_t i = 0; i < b.factors.size(); ++i) {
      const Factor& m = b.factors[i];
      if (m.d_axis < P.dst.naxes) c[static_cast<std::size_t>(m.d_axis)] += fd[i] * m.d_stride;
    }
    for (std::size_t i = 0; i < P.dst.rep.size(); ++i)
      if (P.dst.rep[i].axis < P.dst.naxes) c[static_cast<std::size_t>(P.dst.rep[i].axis)] += rd[i] * P.dst.rep[i].stride;
    for (std::size_t i = 0; i < P.dst.part.size(); ++i)
      if (P.dst.part[i].axis < P.dst.naxes) c[static_cast<std::size_t>(P.dst.part[i].axis)] += td[i] * P.dst.part[i].stride;
    return P.dst.layout->mesh().rank_at(c);
  }

  // The box of the elements with factor digits fd (free: -1) on both sides.
  Transfer make_transfer(const GBox& b, const std::vector<std::int64_t>& fd, const std::vector<std::int64_t>& rs,
                         const std::vector<std::int64_t>& ts, const std::vector<std::int64_t>& rd,
                         const std::vector<std::int64_t>& td, bool src_side = true) {
    const int sm = P.src.naxes, dmm = P.dst.naxes;
    Transfer t;
    t.src_offset = b.s_base[static_cast<std::size_t>(sm)];
    t.dst_offset = b.d_base[static_cast<std::size_t>(dmm)];
    for (std::size_t i = 0; i < P.src.rep.size(); ++i)
      if (P.src.rep[i].axis == sm && !rs.empty()) t.src_offset += rs[i] * P.src.rep[i].stride;
    for (std::size_t i = 0; i < P.src.part.size(); ++i)
      if (P.src.part[i].axis == sm && !ts.empty()) t.src_offset += ts[i] * P.src.part[i].stride;
    for (std::size_t i = 0; i < P.dst.rep.size(); ++i)
      if (P.dst.rep[i].axis == dmm) t.dst_offset += rd[i] * P.dst.rep[i].stride;
    for (std::size_t i = 0; i < P.dst.part.size(); ++i)
      if (P.dst.part[i].axis == dmm) t.dst_offset += td[i] * P.dst.part[i].stride;
    for (std::size_t i = 0; i < b.factors.size(); ++i) {
      const Factor& m = b.factors[i];
      if (fd[i] >= 0) {
        if (m.s_axis == sm) t.src_offset += fd[i] * m.s_stride;
        if (m.d_axis == dmm) t.dst_offset += fd[i] * m.d_stride;
        continue;
      }
      // Joint coalescing with the previous free factor.
      std::int64_t ss = src_side ? m.s_stride : 0;
      if (!t.extents.empty() && t.src_strides.back() == m.extent * ss &&
          t.dst_strides.back() == m.extent * m.d_stride) {
        t.extents.back() *= m.extent;
        t.src_strides.back() = ss;
        t.dst_strides.back() = m.d_stride;
      } else {
        t.extents.push_back(m.extent);
        t.src_strides.push_back(ss);
        t.dst_strides.push_back(m.d_stride);
      }
    }
    return t;
  }

  std::vector<std::int64_t> key(std::size_t bi, const Assign& a, const std::vector<std::int64_t>& rd,
                                const std::vector<std::int64_t>& td, const std::vector<std::int64_t>& ts) {
    std::vector<std::int64_t> k;
    k.reserve(1 + a.fd.size() + rd.size() + td.size() + ts.size());
    k.push_back(static_cast<std::int64_t>(bi));
    k.insert(k.end(), a.fd.begin(), a.fd.end());
    k.insert(k.end(), rd.begin(), rd.end());
    k.insert(k.end(), td.begin(), td.end());
    k.insert(k.end(), ts.begin(), ts.end());
    return k;
  }

  // The factors of b that fd leaves free (-1) and that lie on a device axis of the source
  // (`on_src`) or destination side, with their extents.
  void free_on_mesh(const GBox& b, const std::vector<std::int64_t>& fd, bool on_src, std::vector<std::size_t>& free,
                    std::vector<std::int64_t>& ext) const {
    for (std::size_t i = 0; i < b.factors.size(); ++i)
      if (fd[i] < 0 && (on_src ? b.factors[i].s_axis < P.src.naxes : b.factors[i].d_axis < P.dst.naxes)) {
        free.push_back(i);
        ext.push_back(b.factors[i].extent);
      }
  }

  void receive() {
    const Mesh& dm = P.dst.layout->mesh();
    auto qi = dm.find_index(rank_);
    if (!qi) return;
    const std::vector<std::int64_t> c = dm.coord_of_index(*qi);
    const bool fill_zero = P.op == ReduceOp::Sum || P.op == ReduceOp::Prod;
    for (std::size_t bi = 0; bi < P.boxes.size(); ++bi) {
      const GBox& b = P.boxes[bi];
      for (Assign& need : solve_side(b, P.dst, false, c, true)) {
        const std::int64_t Td = row_major(need.t, P.dst.part);
        if (P.partial == PartialMode::Reduce && fill_zero) {
          bool zero = false;
          for (std::size_t i = 0; i < P.match.size(); ++i) zero = zero || (P.match[i] < 0 && need.t[i] != 0);
          if (zero) {
            ex.fills.push_back(make_transfer(b, need.fd, {}, {}, need.r, need.t, false));
            continue;
          }
        }
        std::vector<std::size_t> free_src;
        std::vector<std::int64_t> ext;
        free_on_mesh(b, need.fd, true, free_src, ext);
        std::vector<std::vector<std::int64_t>> term_sets;
        if (P.partial == PartialMode::Reduce) {
          std::vector<std::int64_t> te;
          for (auto j : P.reduced) te.push_back(P.src.part[j].extent);
          odometer(te, [&](const std::vector<std::int64_t>& d) {
            std::vector<std::int64_t> ts(P.src.part.size(), 0);
            for (std::size_t i = 0; i < P.match.size(); ++i)
              if (P.match[i] >= 0) ts[static_cast<std::size_t>(P.match[i])] = need.t[i];
            for (std::size_t k = 0; k < P.reduced.size(); ++k) ts[P.reduced[k]] = d[k];
            term_sets.push_back(std::move(ts));
          });
        } else if (P.partial == PartialMode::Match) {
          term_sets.push_back(decode(Td, P.src.part));
        } else {
          term_sets.push_back({});
        }
        Assign a = need;
        a.t.clear();
        std::vector<std::int64_t> rs(P.src.rep.size(), 0);
        odometer(ext, [&](const std::vector<std::int64_t>& d) {
          for (std::size_t j = 0; j < free_src.size(); ++j) a.fd[free_src[j]] = d[j];
          bool remote = false;
          std::int64_t elems = 0;
          for (const auto& ts : term_sets) {
            Assign s;
            s.fd = a.fd;
            s.t = ts;
            auto v = src_coord_norep(b, s);
            choose_rep(rank_, v, rs);
            std::int64_t p = src_rank(v, rs);
            Transfer t = make_transfer(b, a.fd, rs, ts, need.r, need.t);
            t.term = P.partial == PartialMode::Reduce ? reduced_index(ts) : 0;
            elems = t.elements();
            if (p == rank_) {
              ex.copies.push_back(std::move(t));
            } else if (spreads(t)) {
              remote = true;
              auto k = key(bi, a, need.r, need.t, ts);
              for (std::int64_t j = 0; j < R_; ++j) {
                replica_digits(j, rs);
                split(t, j, k, recv_[src_rank(v, rs)]);
              }
            } else {
              remote = true;
              recv_[p].push_back({key(bi, a, need.r, need.t, ts), std::move(t)});
            }
          }
          if (remote) ex.lower_bound_elements += elems;
        });
      }
    }
  }

  void send() {
    const Mesh& sm = P.src.layout->mesh();
    auto pi = sm.find_index(rank_);
    if (!pi) return;
    const std::vector<std::int64_t> c = sm.coord_of_index(*pi);
    for (std::size_t bi = 0; bi < P.boxes.size(); ++bi) {
      const GBox& b = P.boxes[bi];
      for (Assign& have : solve_side(b, P.src, true, c, false)) {
        const std::int64_t Ts = row_major(have.t, P.src.part);
        std::vector<std::size_t> free_dst;
        std::vector<std::int64_t> ext;
        free_on_mesh(b, have.fd, false, free_dst, ext);
        const std::size_t nfree = free_dst.size();
        for (auto& it : P.dst.rep) ext.push_back(it.extent);
        std::vector<std::vector<std::int64_t>> tds;
        if (P.partial == PartialMode::Match) {
          tds.push_back(decode(Ts, P.dst.part));
        } else if (P.partial == PartialMode::Reduce) {
          // Kept digits follow the source term; filled digits: 0 (sum/prod) or every value.
          std::vector<std::int64_t> te;
          for (std::size_t i = 0; i < P.match.size(); ++i)
            te.push_back(P.match[i] >= 0 || P.op == ReduceOp::Sum || P.op == ReduceOp::Prod ? 1 : P.dst.part[i].extent);
          odometer(te, [&](const std::vector<std::int64_t>& d) {
            std::vector<std::int64_t> td(P.dst.part.size());
            for (std::size_t i = 0; i < P.match.size(); ++i)
              td[i] = P.match[i] >= 0 ? have.t[static_cast<std::size_t>(P.match[i])] : d[i];
            tds.push_back(std::move(td));
          });
        } else {
          tds.push_back({});
        }
        auto v = src_coord_norep(b, have);
        std::vector<std::int64_t> rs(P.src.rep.size(), 0), rd(P.dst.rep.size(), 0);
        Assign a = have;
        odometer(ext, [&](const std::vector<std::int64_t>& d) {
          for (std::size_t j = 0; j < nfree; ++j) a.fd[free_dst[j]] = d[j];
          for (std::size_t j = 0; j < rd.size(); ++j) rd[j] = d[nfree + j];
          for (const auto& td : tds) {
            std::int64_t q = dst_rank(b, a.fd, rd, td);
            if (q == rank_) continue;
            choose_rep(q, v, rs);
            if (spread_ && R_ > 1) {
              Transfer t = make_transfer(b, a.fd, rs, have.t, rd, td);
              if (spreads(t)) {
                if (src_rank(v, rs) == q) continue;  // q holds it and copies
                t.term = P.partial == PartialMode::Reduce ? reduced_index(have.t) : 0;
                split(t, replica_number(have.r), key(bi, a, rd, td, have.t), send_[q]);
                continue;
              }
            }
            if (rs != have.r) continue;
            Transfer t = make_transfer(b, a.fd, rs, have.t, rd, td);
            t.term = P.partial == PartialMode::Reduce ? reduced_index(have.t) : 0;
            send_[q].push_back({key(bi, a, rd, td, have.t), std::move(t)});
          }
        });
      }
    }
  }

  static std::vector<Message> messages(std::map<std::int64_t, std::vector<Keyed>>& m) {
    std::vector<Message> out;
    out.reserve(m.size());
    for (auto& [peer, list] : m) {
      std::sort(list.begin(), list.end(), [](const Keyed& x, const Keyed& y) { return x.key < y.key; });
      Message msg;
      msg.peer = peer;
      msg.boxes.reserve(list.size());
      for (auto& k : list) msg.boxes.push_back(std::move(k.t));
      out.push_back(std::move(msg));
    }
    return out;
  }

  std::int64_t receive_only() {
    receive();
    return ex.lower_bound_elements;
  }

  Exchange run() {
    send();
    receive();
    ex.sends = messages(send_);
    ex.recvs = messages(recv_);
    return std::move(ex);
  }

 private:
  const Pair& P;
  std::int64_t rank_;
  std::vector<std::vector<std::size_t>> rep_on;
  std::int64_t cached_q_ = -1;
  bool q_in_src_ = false;
  std::vector<std::int64_t> q_src_coord_;
  std::int64_t q_dst_index_ = 0;
  std::map<std::int64_t, std::vector<Keyed>> send_, recv_;
  Exchange ex;
  bool spread_ = false;
  std::vector<std::size_t> mesh_rep_;  // source replica iters on mesh axes
  std::int64_t R_ = 1;                 // source replicas on mesh axes
  std::vector<Transfer> pieces_;
};

}  // namespace

Exchange exchange(const Pair& p, std::int64_t rank, bool spread) { return ExchangeBuilder(p, rank, spread).run(); }

std::int64_t lower_bound_elements(const Pair& p, std::int64_t rank) { return ExchangeBuilder(p, rank).receive_only(); }

// Appends the sub-boxes holding elements [lo, hi) of t (row-major over its extents, last fastest),
// in element order: at most two partial boxes per mode plus one full run.
void sub_boxes(const Transfer& t, std::int64_t lo, std::int64_t hi, std::vector<Transfer>& out) {
  if (lo >= hi) return;
  const std::size_t n = t.extents.size();
  std::int64_t inner_buf[17];
  std::vector<std::int64_t> inner_vec;
  std::int64_t* inner = inner_buf;
  if (n + 1 > 17) {
    inner_vec.resize(n + 1);
    inner = inner_vec.data();
  }
  inner[n] = 1;
  for (std::size_t i = n; i-- > 0;) inner[i] = inner[i + 1] * t.extents[i];
  auto emit = [&](std::size_t i, std::int64_t first, std::int64_t count, std::int64_t so, std::int64_t dof) {
    Transfer b;
    b.term = t.term;
    if (i == n) {
      b.src_offset = so;
      b.dst_offset = dof;
    } else {
      b.src_offset = so + first * t.src_strides[i];
      b.dst_offset = dof + first * t.dst_strides[i];
      b.extents.assign(t.extents.begin() + static_cast<std::ptrdiff_t>(i), t.extents.end());
      b.src_strides.assign(t.src_strides.begin() + static_cast<std::ptrdiff_t>(i), t.src_strides.end());
      b.dst_strides.assign(t.dst_strides.begin() + static_cast<std::ptrdiff_t>(i), t.dst_strides.end());
      b.extents[0] = count;
    }
    out.push_back(std::move(b));
  };
  // [lo, hi) inside the sub-box of modes i.. (inner[i] elements) at offsets (so, dof).
  auto rec = [&](auto&& self, std::size_t i, std::int64_t l, std::int64_t h, std::int64_t so, std::int64_t dof) -> void {
    if (i == n) {
      emit(i, 0, 1, so, dof);
      return;
    }
    if (l == 0 && h == inner[i]) {
      emit(i, 0, t.extents[i], so, dof);
      return;
    }
    const std::int64_t in = inner[i + 1], ss = t.src_strides[i], ds = t.dst_strides[i];
    std::int64_t a = l / in;
    const std::int64_t b = h / in;
    if (l % in) {
      if (a == (h - 1) / in) {
        self(self, i + 1, l - a * in, h - a * in, so + a * ss, dof + a * ds);
        return;
      }
      self(self, i + 1, l - a * in, in, so + a * ss, dof + a * ds);
      ++a;
    }
    if (b > a) emit(i, a, b - a, so, dof);
    if (h % in) self(self, i + 1, 0, h - b * in, so + b * ss, dof + b * ds);
  };
  rec(rec, 0, lo, hi, t.src_offset, t.dst_offset);
}

}  // namespace axe::internal
