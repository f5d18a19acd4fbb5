// Conversion plans (LINEAR_LAYOUTS.md §5): mechanism choice, the PR 7558 decomposition and the
// shared-memory round trip, and the plans' text form (the simulator: convert_simulate.cpp).
#include "axe/linear/convert_plan.hpp"

#include "axe/linear/swizzle.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <sstream>

#include "axe/core/error.hpp"
#include "axe/linear/banks.hpp"
#include "axe/linear/bridge.hpp"
#include "axe/linear/f2.hpp"
#include "linear/internal.hpp"

namespace axe::linear {
namespace {

using Cols = std::vector<std::uint64_t>;

constexpr std::int64_t kMaxSlots = std::int64_t{1} << 22;

// A thread layout split into its columns per hardware dim (packed row-major tile index).
struct Thread {
  Cols m, lane, warp;
  LinearLayout normalized;  // input dims exactly [m, lane, warp]
};

Cols columns_of(const LinearLayout& l, const char* dim) {
  Cols c;
  if (!l.has_in_dim(dim)) return c;
  for (int i = 0; i < l.in_bits(dim); ++i) c.push_back(l.column(dim, i));
  return c;
}

Thread thread_of(const AxeLayout& l, std::span<const std::int64_t> shape, const char* what) {
  std::int64_t n = 1;
  for (auto e : shape) {
    if (e <= 0 || __builtin_mul_overflow(n, e, &n)) fail("the shape is empty or overflows");
  }
  if (n > kMaxSlots) {
    fail("the tile has " + std::to_string(n) +
         " elements, more than 2^22 (too many to plan and "
         "simulate on the host)");
  }
  if (l.size() != n) {
    fail(std::string(what) + " " + to_string(l) + " holds " + std::to_string(l.size()) +
         " elements but the tile has " + std::to_string(n) + " (it must cover the tile)");
  }
  for (const Axis& a : l.axes()) {
    if (a.name() != "m" && a.name() != "lane" && a.name() != "warp") {
      fail(std::string(what) + " " + to_string(l) + " uses axis '" + std::string(a.name()) +
           "' (allowed: m, lane, warp)");
    }
  }
  auto why = linear_refusal(l, shape);
  if (!why.empty()) fail(std::string(what) + " " + to_string(l) + " is not F2-linear: " + why);
  auto al = to_linear(l, shape);
  for (const auto& [axis, o] : al.offset) {
    if (o != 0) {
      fail(std::string(what) + " " + to_string(l) + " has an offset " + std::to_string(o) + "@" +
           axis + " (conversion plans take layouts without offsets)");
    }
  }
  if (!is_surjective(al.layout))
    fail(std::string(what) + " " + to_string(l) + " does not cover the tile");
  Thread t;
  t.m = columns_of(al.layout, "m");
  t.lane = columns_of(al.layout, "lane");
  t.warp = columns_of(al.layout, "warp");
  if (t.m.size() + t.warp.size() > 17) {
    fail(std::string(what) + " " + to_string(l) + " uses 2^" + std::to_string(t.m.size()) +
         " registers x 2^" + std::to_string(t.warp.size()) +
         " warps, more than 2^22 register slots with 32 lanes (too many to plan on the host)");
  }
  if (t.lane.size() > 5) {
    fail(std::string(what) + " " + to_string(l) + " uses " +
         std::to_string(std::int64_t{1} << t.lane.size()) + " lanes (a warp has 32)");
  }
  std::vector<Dim> ins{{"m", static_cast<int>(t.m.size())},
                       {"lane", static_cast<int>(t.lane.size())},
                       {"warp", static_cast<int>(t.warp.size())}};
  Cols all = t.m;
  all.insert(all.end(), t.lane.begin(), t.lane.end());
  all.insert(all.end(), t.warp.begin(), t.warp.end());
  t.normalized = LinearLayout::from_columns(ins, al.layout.out_dims(), all, false);
  return t;
}

// x with bit k moved to bit perm[k].
std::uint64_t permute_bits(std::uint64_t x, const std::vector<int>& perm) {
  std::uint64_t r = 0;
  for (std::size_t k = 0; k < perm.size(); ++k) {
    if (x >> k & 1) r |= std::uint64_t{1} << perm[k];
  }
  return r;
}

std::int64_t moves_of(const RenameOp& r) {
  std::int64_t n = 0;
  for (std::size_t i = 0; i < r.from.size(); ++i) n += r.from[i] != static_cast<std::int64_t>(i);
  return n;
}

bool is_identity_rename(const RenameOp& r, std::int64_t size) {
  return static_cast<std::int64_t>(r.from.size()) == size && moves_of(r) == 0;
}

// The intra-warp plan of PR 7558, or nullopt when the conversion is not a permutation of
// (register, lane) bits inside each warp.
std::optional<ConvertPlan> shuffle_plan(const Thread& s, const Thread& t) {
  if (s.warp != t.warp || s.lane.size() != t.lane.size()) return std::nullopt;
  const int nL = static_cast<int>(s.lane.size());
  // Strip broadcast (zero) register bits; pad both to nR register bits.
  std::vector<int> s_keep, t_keep;
  for (std::size_t i = 0; i < s.m.size(); ++i) {
    if (s.m[i]) s_keep.push_back(static_cast<int>(i));
  }
  for (std::size_t i = 0; i < t.m.size(); ++i) {
    if (t.m[i]) t_keep.push_back(static_cast<int>(i));
  }
  const int nR = static_cast<int>(std::max(s_keep.size(), t_keep.size()));
  if (nR > 16) return std::nullopt;
  Cols sc(static_cast<std::size_t>(nR + nL), 0), tc(sc.size(), 0);
  for (std::size_t k = 0; k < s_keep.size(); ++k) sc[k] = s.m[static_cast<std::size_t>(s_keep[k])];
  for (std::size_t k = 0; k < t_keep.size(); ++k) tc[k] = t.m[static_cast<std::size_t>(t_keep[k])];
  for (int j = 0; j < nL; ++j) {
    sc[static_cast<std::size_t>(nR + j)] = s.lane[static_cast<std::size_t>(j)];
    tc[static_cast<std::size_t>(nR + j)] = t.lane[static_cast<std::size_t>(j)];
  }
  // pi: source bit -> destination bit with the same column (S(h) == T(P(h))).
  const int n = nR + nL;
  std::vector<int> pi(static_cast<std::size_t>(n), -1);
  std::vector<bool> used(static_cast<std::size_t>(n), false);
  Cols s_nonzero, t_nonzero;
  for (int b = 0; b < n; ++b) {
    if (sc[static_cast<std::size_t>(b)]) s_nonzero.push_back(sc[static_cast<std::size_t>(b)]);
    if (tc[static_cast<std::size_t>(b)]) t_nonzero.push_back(tc[static_cast<std::size_t>(b)]);
  }
  if (f2::rank(s_nonzero) != static_cast<int>(s_nonzero.size()) ||
      f2::rank(t_nonzero) != static_cast<int>(t_nonzero.size()) ||
      s_nonzero.size() != t_nonzero.size()) {
    return std::nullopt;
  }
  for (int b = 0; b < n; ++b) {
    auto c = sc[static_cast<std::size_t>(b)];
    if (!c) continue;
    auto it = std::find(tc.begin(), tc.end(), c);
    if (it == tc.end()) return std::nullopt;  // same span, not a permutation of bits
    int d = static_cast<int>(it - tc.begin());
    pi[static_cast<std::size_t>(b)] = d;
    used[static_cast<std::size_t>(d)] = true;
  }
  // Zero columns: fixed points first, then register with register, lane with lane, then mixed.
  auto is_reg = [&](int b) { return b < nR; };
  for (int b = 0; b < n; ++b) {
    if (pi[static_cast<std::size_t>(b)] < 0 && !tc[static_cast<std::size_t>(b)] &&
        !used[static_cast<std::size_t>(b)]) {
      pi[static_cast<std::size_t>(b)] = b;
      used[static_cast<std::size_t>(b)] = true;
    }
  }
  for (int pass = 0; pass < 2; ++pass) {
    for (int b = 0; b < n; ++b) {
      if (pi[static_cast<std::size_t>(b)] >= 0) continue;
      for (int d = 0; d < n; ++d) {
        if (used[static_cast<std::size_t>(d)] || tc[static_cast<std::size_t>(d)]) continue;
        if (pass == 0 && is_reg(b) != is_reg(d)) continue;
        pi[static_cast<std::size_t>(b)] = d;
        used[static_cast<std::size_t>(d)] = true;
        break;
      }
    }
  }
  // P = mixed o lane o reg: A = register bits going to lanes, B = lane bits going to registers.
  std::vector<int> A, B;
  for (int b = 0; b < n; ++b) {
    int d = pi[static_cast<std::size_t>(b)];
    if (is_reg(b) && !is_reg(d)) A.push_back(b);
    if (!is_reg(b) && is_reg(d)) B.push_back(b);
  }
  // Pairs (i in pi(B), j in pi(A)); pair pi(b) with b when b in pi(A) so lanes stay in place.
  std::vector<int> I, J;
  for (int b : A) J.push_back(pi[static_cast<std::size_t>(b)]);
  std::vector<std::pair<int, int>> pairs;  // (register bit i, lane bit j), both absolute
  std::vector<bool> j_used(J.size(), false), b_used(B.size(), false);
  for (std::size_t k = 0; k < B.size(); ++k) {
    auto it = std::find(J.begin(), J.end(), B[k]);
    if (it != J.end()) {
      pairs.push_back({pi[static_cast<std::size_t>(B[k])], B[k]});
      j_used[static_cast<std::size_t>(it - J.begin())] = true;
      b_used[k] = true;
    }
  }
  for (std::size_t k = 0; k < B.size(); ++k) {
    if (b_used[k]) continue;
    for (std::size_t q = 0; q < J.size(); ++q) {
      if (j_used[q]) continue;
      j_used[q] = true;
      pairs.push_back({pi[static_cast<std::size_t>(B[k])], J[q]});
      break;
    }
  }
  auto partner_of_reg = [&](int i) {
    for (auto [r, l] : pairs) {
      if (r == i) return l;
    }
    return -1;
  };
  auto partner_of_lane = [&](int j) {
    for (auto [r, l] : pairs) {
      if (l == j) return r;
    }
    return -1;
  };
  // rho on register bits, lambda on lane bits (local indices).
  std::vector<int> rho(static_cast<std::size_t>(nR)), lambda(static_cast<std::size_t>(nL));
  for (int b = 0; b < nR; ++b) {
    int d = pi[static_cast<std::size_t>(b)];
    rho[static_cast<std::size_t>(b)] = is_reg(d) ? d : partner_of_lane(d);
  }
  for (int j = 0; j < nL; ++j) {
    int b = nR + j, d = pi[static_cast<std::size_t>(b)];
    lambda[static_cast<std::size_t>(j)] = (is_reg(d) ? partner_of_reg(d) : d) - nR;
  }
  std::vector<int> lambda_inv(static_cast<std::size_t>(nL));
  for (int j = 0; j < nL; ++j)
    lambda_inv[static_cast<std::size_t>(lambda[static_cast<std::size_t>(j)])] = j;
  std::vector<int> rho_inv(static_cast<std::size_t>(nR));
  for (int b = 0; b < nR; ++b)
    rho_inv[static_cast<std::size_t>(rho[static_cast<std::size_t>(b)])] = b;

  ConvertPlan plan;
  plan.mechanism = Mechanism::shuffles;
  plan.lanes = std::int64_t{1} << nL;
  plan.warps = std::int64_t{1} << s.warp.size();
  plan.src_registers = std::int64_t{1} << s.m.size();
  plan.dst_registers = std::int64_t{1} << t.m.size();
  const std::int64_t R = std::int64_t{1} << nR;
  // Rename: stripped/padded register i (after rho) = original source register.
  RenameOp first;
  for (std::int64_t i = 0; i < R; ++i) {
    std::uint64_t pre = permute_bits(static_cast<std::uint64_t>(i), rho_inv);  // rho^-1(i)
    std::int64_t orig = 0;
    for (std::size_t k = 0; k < s_keep.size(); ++k) {
      if (pre >> k & 1) orig |= std::int64_t{1} << s_keep[k];
    }
    first.from.push_back(orig);
  }
  if (!is_identity_rename(first, plan.src_registers)) plan.ops.push_back(first);
  bool lane_trivial = true;
  for (int j = 0; j < nL; ++j)
    lane_trivial = lane_trivial && lambda[static_cast<std::size_t>(j)] == j;
  if (pairs.size() == 1 && lane_trivial) {
    plan.ops.push_back(ShipOp{pairs[0].first, pairs[0].second - nR});
  } else if (!pairs.empty() || !lane_trivial) {
    for (auto [i, j] : pairs)
      plan.ops.push_back(CondSwapOp{i, lambda_inv[static_cast<std::size_t>(j - nR)]});
    ShuffleOp sh;
    for (int k = 0; k < nL; ++k)
      sh.lane_map.push_back(std::uint64_t{1} << lambda_inv[static_cast<std::size_t>(k)]);
    for (std::int64_t r = 0; r < R; ++r) {
      std::uint64_t mask = 0;
      for (auto [i, j] : pairs) {
        if (r >> i & 1) mask |= std::uint64_t{1} << (j - nR);
      }
      sh.lane_xor.push_back(permute_bits(mask, lambda_inv));
    }
    plan.ops.push_back(sh);
    for (auto [i, j] : pairs) plan.ops.push_back(CondSwapOp{i, j - nR});
  }
  // Unstrip: destination register t reads stripped register (its kept bits packed).
  RenameOp last;
  for (std::int64_t r = 0; r < plan.dst_registers; ++r) {
    std::int64_t idx = 0;
    for (std::size_t k = 0; k < t_keep.size(); ++k) {
      if (r >> t_keep[k] & 1) idx |= std::int64_t{1} << k;
    }
    last.from.push_back(idx);
  }
  if (!is_identity_rename(last, R)) plan.ops.push_back(last);
  return plan;
}


// The shared tile when the caller names none: the optimal swizzle for this exchange
// (swizzle.hpp) where it is a Swizzle over an Axe layout, else the row-major tile.
SharedLayout default_shared(const AxeLayout& from, const AxeLayout& to, std::span<const std::int64_t> shape,
                            std::int64_t element_bytes) {
  try {
    const SwizzlePlan p = optimal_swizzle(from, to, shape, element_bytes);
    if (p.axe) return SharedLayout{p.axe->layout, p.axe->swizzle, std::nullopt};
    SharedLayout sl = row_major_shared(shape);
    sl.linear = p.shared;
    return sl;
  } catch (const Error&) {
    // layouts the optimizer refuses (gaps, offsets, limits) still have the row-major round trip
  }
  return row_major_shared(shape);
}

// ldmatrix.x4 for loading thread layout t through the shared offsets (LoadOp): the matrix register
// bits and the cost (per thread instructions; wavefronts over all warps: per matrix, the most
// distinct 16-byte rows one bank quad serves), or nullopt when it does not apply.
struct Ldmatrix {
  int bits[2] = {-1, -1};
  std::int64_t instructions = 0, wavefronts = 0;
};
std::optional<Ldmatrix> ldmatrix_load(const Thread& t, const Cols& offset_cols,
                                      std::int64_t element_bytes) {
  if ((element_bytes != 2 && element_bytes != 4) || t.lane.size() != 5) return std::nullopt;
  auto off = [&](std::uint64_t col) { return f2::combine(offset_cols, col); };
  const std::uint64_t per_word = 4 / static_cast<std::uint64_t>(element_bytes);  // elements per 32 bits
  const std::uint64_t row = 16 / static_cast<std::uint64_t>(element_bytes);      // elements per row
  Cols m, lane, warp;
  for (auto c : t.m) m.push_back(off(c));
  for (auto c : t.lane) lane.push_back(off(c));
  for (auto c : t.warp) warp.push_back(off(c));
  std::size_t first_reg = 0;
  if (per_word == 2) {
    if (m.empty() || m[0] != 1) return std::nullopt;
    first_reg = 1;
  }
  if (lane[0] != per_word || lane[1] != 2 * per_word) return std::nullopt;
  auto starts_row = [&](std::uint64_t c) { return c != 0 && c % row == 0; };
  for (std::size_t k = 2; k < 5; ++k) {
    if (!starts_row(lane[k])) return std::nullopt;
  }
  for (auto c : warp) {
    if (c % row) return std::nullopt;
  }
  Ldmatrix l;
  int found = 0;
  for (std::size_t k = first_reg; k < m.size(); ++k) {
    if (!starts_row(m[k])) return std::nullopt;  // broadcasts, or a register inside a row
    if (found < 2) l.bits[found++] = static_cast<int>(k);
  }
  if (found < 2) return std::nullopt;
  const std::int64_t regs = std::int64_t{1} << m.size();
  l.instructions = regs / static_cast<std::int64_t>(4 * per_word);
  const std::uint64_t mb0 = std::uint64_t{1} << l.bits[0], mb1 = std::uint64_t{1} << l.bits[1];
  for (std::int64_t w = 0; w < (std::int64_t{1} << warp.size()); ++w) {
    std::uint64_t wo = 0;
    for (std::size_t k = 0; k < warp.size(); ++k) {
      if (w >> k & 1) wo ^= warp[k];
    }
    for (std::int64_t g = 0; g < regs; ++g) {
      const auto ug = static_cast<std::uint64_t>(g);
      if ((ug & (mb0 | mb1)) || (per_word == 2 && (ug & 1))) continue;  // one group per instruction
      for (std::uint64_t j = 0; j < 4; ++j) {
        const std::uint64_t r = ug | ((j & 1) ? mb0 : 0) | ((j & 2) ? mb1 : 0);
        std::map<std::uint64_t, std::set<std::uint64_t>> quads;  // bank quad -> rows
        for (std::uint64_t i = 0; i < 8; ++i) {
          std::uint64_t o = wo ^ (i & 1 ? lane[2] : 0) ^ (i & 2 ? lane[3] : 0) ^ (i & 4 ? lane[4] : 0);
          for (std::size_t k = 0; k < m.size(); ++k) {
            if (r >> k & 1) o ^= m[k];
          }
          quads[(o / row) % 8].insert(o / row);
        }
        std::int64_t most = 0;
        for (const auto& [q, rows] : quads) most = std::max<std::int64_t>(most, static_cast<std::int64_t>(rows.size()));
        l.wavefronts += most;
      }
    }
  }
  return l;
}

// A thread layout with its register bits reordered (new bit k = old bit perm[k]), or nullopt
// when the result is no Axe layout (a column that mixes logical bits).
struct Renamed {
  AxeLayout layout;
  Thread thread;
  std::vector<int> perm;
};
std::optional<Renamed> rename_registers(const Thread& t, const std::vector<int>& perm) {
  Renamed r{AxeLayout{}, t, perm};
  for (std::size_t k = 0; k < perm.size(); ++k) r.thread.m[k] = t.m[static_cast<std::size_t>(perm[k])];
  Cols all = r.thread.m;
  all.insert(all.end(), t.lane.begin(), t.lane.end());
  all.insert(all.end(), t.warp.begin(), t.warp.end());
  r.thread.normalized = LinearLayout::from_columns(t.normalized.in_dims(), t.normalized.out_dims(), all, false);
  try {
    r.layout = from_linear(r.thread.normalized).layout;
  } catch (const Error&) {
    return std::nullopt;
  }
  return r;
}

bool is_identity(const std::vector<int>& perm) {
  for (std::size_t k = 0; k < perm.size(); ++k) {
    if (perm[k] != static_cast<int>(k)) return false;
  }
  return true;
}

// The register orders worth trying for a shared round trip: as given, and the registers both
// layouts hold first (the same elements, in the same order in both), so that a vector can span
// them on both sides (Triton's vbasis = the intersection of the register spans, then the registers
// of one side that are lanes of the other -- which the optimizer's register prefixes reach).
// Example: 128x64 f16 from 8 columns per thread to 8 rows per thread, both repeating row 64 in
// their registers: row 64 first makes 32-bit pairs on both sides.
std::vector<std::pair<std::vector<int>, std::vector<int>>> register_orders(const Thread& s, const Thread& t,
                                                                             std::int64_t element_bytes) {
  std::vector<int> ps(s.m.size()), pt(t.m.size());
  for (std::size_t k = 0; k < ps.size(); ++k) ps[k] = static_cast<int>(k);
  for (std::size_t k = 0; k < pt.size(); ++k) pt[k] = static_cast<int>(k);
  std::vector<std::pair<std::vector<int>, std::vector<int>>> out{{ps, pt}};
  std::vector<int> cs, ct;
  std::vector<bool> used_s(s.m.size()), used_t(t.m.size());
  for (std::size_t i = 0; i < s.m.size(); ++i) {
    if (s.m[i] == 0) continue;
    for (std::size_t j = 0; j < t.m.size(); ++j) {
      if (!used_t[j] && t.m[j] == s.m[i]) {
        cs.push_back(static_cast<int>(i));
        ct.push_back(static_cast<int>(j));
        used_s[i] = used_t[j] = true;
        break;
      }
    }
  }
  if (!cs.empty()) {
    for (std::size_t i = 0; i < s.m.size(); ++i) if (!used_s[i]) cs.push_back(static_cast<int>(i));
    for (std::size_t j = 0; j < t.m.size(); ++j) if (!used_t[j]) ct.push_back(static_cast<int>(j));
    if (!is_identity(cs) || !is_identity(ct)) out.push_back({cs, ct});
  }
  // For ldmatrix on the destination: the source registers holding what the destination's lanes
  // 0 and 1 (after its register 0 for 2-byte elements) hold, first, so that a source vector is one
  // 16-byte row of the destination's matrices (Triton's ldmatrix tiles).
  Cols want;
  if (element_bytes == 2 && !t.m.empty()) want.push_back(t.m[0]);
  if (t.lane.size() >= 2) want.insert(want.end(), {t.lane[0], t.lane[1]});
  std::vector<int> ls;
  for (auto c : want) {
    for (std::size_t i = 0; i < s.m.size(); ++i) {
      if (c != 0 && s.m[i] == c) ls.push_back(static_cast<int>(i));
    }
  }
  if ((element_bytes == 2 || element_bytes == 4) && ls.size() == want.size() && !want.empty()) {
    for (std::size_t i = 0; i < s.m.size(); ++i) {
      if (std::find(ls.begin(), ls.end(), static_cast<int>(i)) == ls.end()) ls.push_back(static_cast<int>(i));
    }
    if (!is_identity(ls)) out.push_back({ls, pt});
  }
  return out;
}

ConvertPlan shared_plan(const AxeLayout& from, const AxeLayout& to, const Thread& s0,
                        const Thread& t0, std::span<const std::int64_t> shape,
                        const ConvertOptions& opts) {
  const std::int64_t n = from.size();
  // The register orders to try (a caller's shared layout keeps the given order), each with its
  // shared layout and the bank model's cost; the fewest wavefronts, then instructions, win.
  struct Candidate {
    Renamed s, t;
    SharedLayout shared;
    std::vector<std::int64_t> offsets;
    BankReport st, ld;
    std::optional<Ldmatrix> matrix;  // the load by ldmatrix, where it applies and is no worse
  };
  std::optional<Candidate> best;
  auto tries = register_orders(s0, t0, opts.element_bytes);
  if (opts.shared) tries.resize(1);
  for (const auto& [ps, pt] : tries) {
    std::optional<Renamed> rs = Renamed{from, s0, ps}, rt = Renamed{to, t0, pt};
    if (!is_identity(ps)) rs = rename_registers(s0, ps);
    if (!is_identity(pt)) rt = rename_registers(t0, pt);
    if (!rs || !rt) continue;
    Candidate c{*rs, *rt, opts.shared ? *opts.shared : default_shared(rs->layout, rt->layout, shape, opts.element_bytes), {}, {}, {}, std::nullopt};
    c.offsets = shared_offsets(c.shared, n);
    c.st = bank_conflicts(c.offsets, rs->layout, shape, opts.element_bytes);
    c.ld = bank_conflicts(c.offsets, rt->layout, shape, opts.element_bytes);
    // ldmatrix in one repetition only (the whole tile in the budget).
    const bool one_round = n * opts.element_bytes <= opts.shared_budget_bytes;
    if (auto cols = one_round ? linear_offsets(c.offsets) : std::nullopt) {
      auto lm = ldmatrix_load(rt->thread, *cols, opts.element_bytes);
      if (lm && lm->wavefronts <= c.ld.wavefronts && lm->instructions < c.ld.instructions) c.matrix = lm;
    }
    auto key = [](const Candidate& x) {
      const std::int64_t lw = x.matrix ? x.matrix->wavefronts : x.ld.wavefronts;
      const std::int64_t li = x.matrix ? x.matrix->instructions : x.ld.instructions;
      return std::pair{x.st.wavefronts + lw, x.st.instructions + li};
    };
    if (!best || key(c) < key(*best)) best = std::move(c);
  }
  const Thread& s = best->s.thread;
  const Thread& t = best->t.thread;
  ConvertPlan plan;
  plan.mechanism = Mechanism::shared;
  plan.shared = best->shared;
  plan.lanes = std::int64_t{1} << std::max(s.lane.size(), t.lane.size());
  plan.warps = std::int64_t{1} << s.warp.size();
  plan.src_registers = std::int64_t{1} << s.m.size();
  plan.dst_registers = std::int64_t{1} << t.m.size();
  const std::vector<std::int64_t>& offsets = best->offsets;
  std::int64_t span = 1;
  for (std::int64_t x = 0; x < n; ++x) {
    std::int64_t o = offsets[static_cast<std::size_t>(x)];
    if (o < 0)
      fail("the shared layout puts element " + std::to_string(x) + " at a negative offset");
    span = std::max(span, o + 1);
  }
  std::int64_t pow2 = 1;
  while (pow2 < span) pow2 *= 2;
  if (opts.shared_budget_bytes < opts.element_bytes) {
    fail("the shared budget " + std::to_string(opts.shared_budget_bytes) +
         " bytes cannot hold one element of " + std::to_string(opts.element_bytes) + " bytes");
  }
  std::int64_t chunk = 1;
  while (chunk * 2 <= opts.shared_budget_bytes / opts.element_bytes && chunk * 2 <= pow2)
    chunk *= 2;
  plan.chunk = chunk;
  const std::int64_t reps = pow2 / chunk;
  std::uint64_t skip = 0;
  int shift = 0;
  for (const auto& [dim, mask] : free_variable_masks(s.normalized)) {
    skip |= mask << shift;
    shift += s.normalized.in_bits(dim);
  }
  // Source registers in the chosen order (new bit k = old bit perm[k]): a rename, no instruction.
  if (!is_identity(best->s.perm)) {
    RenameOp r;
    for (std::int64_t i = 0; i < plan.src_registers; ++i)
      r.from.push_back(static_cast<std::int64_t>(permute_bits(static_cast<std::uint64_t>(i), best->s.perm)));
    plan.ops.push_back(r);
  }
  for (std::int64_t w = 0; w < reps; ++w) {
    if (w) plan.ops.push_back(BarrierOp{});
    plan.ops.push_back(StoreOp{s.normalized, skip, w});
    plan.ops.push_back(BarrierOp{});
    LoadOp load{t.normalized, w};
    if (best->matrix && reps == 1) {
      load.ldmatrix = true;
      load.matrix_bits[0] = best->matrix->bits[0];
      load.matrix_bits[1] = best->matrix->bits[1];
    }
    plan.ops.push_back(load);
  }
  // And the loaded registers back in the destination's order.
  if (!is_identity(best->t.perm)) {
    std::vector<int> inverse(best->t.perm.size());
    for (std::size_t k = 0; k < inverse.size(); ++k) inverse[static_cast<std::size_t>(best->t.perm[k])] = static_cast<int>(k);
    RenameOp r;
    for (std::int64_t i = 0; i < plan.dst_registers; ++i)
      r.from.push_back(static_cast<std::int64_t>(permute_bits(static_cast<std::uint64_t>(i), inverse)));
    plan.ops.push_back(r);
  }
  plan.counts.store_wavefronts = best->st.wavefronts;
  const bool matrix = best->matrix && reps == 1;
  plan.counts.load_wavefronts = matrix ? best->matrix->wavefronts : best->ld.wavefronts;
  plan.counts.store_instructions = best->st.instructions;
  plan.counts.load_instructions = matrix ? best->matrix->instructions : best->ld.instructions;
  plan.counts.shared_bytes = chunk * opts.element_bytes;
  plan.counts.repetitions = reps;
  return plan;
}

void count(ConvertPlan& plan) {
  ConvertCounts& c = plan.counts;
  std::int64_t regs = plan.src_registers;
  for (const auto& op : plan.ops) {
    if (const auto* r = std::get_if<RenameOp>(&op)) {
      c.register_moves += moves_of(*r);
      regs = static_cast<std::int64_t>(r->from.size());
    } else if (std::holds_alternative<CondSwapOp>(op) || std::holds_alternative<CondXorOp>(op)) {
      c.selects += regs;
    } else if (const auto* sh = std::get_if<ShuffleOp>(&op)) {
      bool map_identity = true;
      for (std::size_t k = 0; k < sh->lane_map.size(); ++k) {
        map_identity = map_identity && sh->lane_map[k] == std::uint64_t{1} << k;
      }
      for (auto x : sh->lane_xor) c.shuffles += (x != 0 || !map_identity);
    } else if (std::holds_alternative<ShipOp>(op)) {
      c.selects += 3 * regs / 2;
      c.shuffles += regs / 2;
    } else if (std::holds_alternative<BarrierOp>(op)) {
      ++c.barriers;
    }
  }
}

}  // namespace

std::string to_string(Mechanism m) {
  switch (m) {
    case Mechanism::none:
      return "none";
    case Mechanism::registers:
      return "registers";
    case Mechanism::shuffles:
      return "shuffles";
    case Mechanism::shared:
      return "shared";
  }
  return "?";
}

SharedLayout row_major_shared(std::span<const std::int64_t> shape) {
  std::string e, st;
  std::int64_t stride = 1;
  std::vector<std::int64_t> strides(shape.size());
  for (std::size_t k = shape.size(); k-- > 0;) {
    strides[k] = stride;
    stride *= shape[k];
  }
  for (std::size_t k = 0; k < shape.size(); ++k) {
    e += (k ? "," : "") + std::to_string(shape[k]);
    st += (k ? "," : "") + std::to_string(strides[k]);
  }
  std::string text = shape.size() == 1 ? "S[" + e + ":" + st + "]" : "S[(" + e + "):(" + st + ")]";
  return {parse_axe_layout(text), std::nullopt, std::nullopt};
}

std::optional<std::vector<std::uint64_t>> linear_offsets(const std::vector<std::int64_t>& offsets) {
  const std::size_t n = offsets.size();
  std::vector<std::uint64_t> cols;
  for (std::size_t b = 1; b < n; b <<= 1) cols.push_back(static_cast<std::uint64_t>(offsets[b]));
  for (std::size_t x = 0; x < n; ++x) {
    if (f2::combine(cols, x) != static_cast<std::uint64_t>(offsets[x])) return std::nullopt;
  }
  return cols;
}

std::vector<std::int64_t> shared_offsets(const SharedLayout& sl, std::int64_t n) {
  std::vector<std::int64_t> off(static_cast<std::size_t>(n));
  if (sl.linear) {
    if (sl.linear->total_out_bits() >= 63 || (std::int64_t{1} << sl.linear->total_out_bits()) != n ||
        !is_invertible(*sl.linear)) {
      fail("the linear shared layout " + to_string(*sl.linear) + " is not a bijection onto the " +
           std::to_string(n) + " elements of the tile");
    }
    const LinearLayout inv = invert(*sl.linear);  // logical (row-major index) -> offset
    for (std::int64_t x = 0; x < n; ++x)
      off[static_cast<std::size_t>(x)] = static_cast<std::int64_t>(inv.apply_flat(static_cast<std::uint64_t>(x)));
    return off;
  }
  for (std::int64_t x = 0; x < n; ++x) {
    std::int64_t o = sl.smem.forward_first(x)[Axis()];
    off[static_cast<std::size_t>(x)] = sl.swizzle ? (*sl.swizzle)(o) : o;
  }
  return off;
}

namespace {
// A shared layout the caller gives is taken as it is: it must be over m and place every element
// of the tile at its own non-negative offset.
void check_shared_layout(const SharedLayout& sh, std::span<const std::int64_t> shape) {
  std::int64_t n = 1;
  for (auto e : shape) n *= e;
  const std::string name = sh.linear ? "the linear shared layout"
                                     : "the shared layout " + to_string(sh.smem) +
                                           (sh.swizzle ? " with " + cute::to_string(*sh.swizzle) : "");
  if (!sh.linear) {
    for (const auto& a : sh.smem.axes())
      if (a.name() != "m")
        fail(name + " uses axis '" + std::string(a.name()) + "' (a shared layout is over m, the element offset)");
    if (sh.smem.size() != n) fail(name + " has " + std::to_string(sh.smem.size()) + " elements, the tile " + std::to_string(n));
  }
  std::vector<std::int64_t> sorted = shared_offsets(sh, n);
  std::sort(sorted.begin(), sorted.end());
  for (std::size_t k = 0; k < sorted.size(); ++k)
    if (sorted[k] < 0 || (k && sorted[k] == sorted[k - 1]))
      fail(name + (sorted[k] < 0 ? " puts an element at a negative offset " : " puts two elements at offset ") +
           std::to_string(sorted[k]));
}
}  // namespace

ConvertPlan plan_conversion(const AxeLayout& from, const AxeLayout& to,
                            std::span<const std::int64_t> shape, const ConvertOptions& opts) {
  Thread s = thread_of(from, shape, "the source layout");
  if (opts.shared) check_shared_layout(*opts.shared, shape);
  Thread t = thread_of(to, shape, "the destination layout");
  if (s.warp.size() != t.warp.size()) {
    fail("the source layout " + to_string(from) + " uses " +
         std::to_string(std::int64_t{1} << s.warp.size()) + " warp(s) but the destination layout " +
         to_string(to) + " uses " + std::to_string(std::int64_t{1} << t.warp.size()));
  }
  ConvertPlan plan;
  plan.lanes = std::int64_t{1} << std::max(s.lane.size(), t.lane.size());
  plan.warps = std::int64_t{1} << s.warp.size();
  plan.src_registers = std::int64_t{1} << s.m.size();
  plan.dst_registers = std::int64_t{1} << t.m.size();
  if (s.normalized == t.normalized) {
    plan.mechanism = Mechanism::none;
    return plan;
  }
  // Registers: every destination thread finds its elements in its own source registers, at
  // R(r) ^ Q(lane, warp) (R, Q linear): per lane or warp bit with Q != 0 a conditional register
  // permutation, then one rename.
  // A destination on fewer lanes reads as one that copies into the others (never checked).
  Cols t_lane = t.lane;
  if (t_lane.size() < s.lane.size()) t_lane.resize(s.lane.size(), 0);
  if (s.lane.size() == t_lane.size()) {
    bool ok = true;
    auto solve = [&](std::uint64_t target) -> std::int64_t {
      auto x = f2::solve(s.m, target);
      if (!x) ok = false;
      return x ? static_cast<std::int64_t>(*x) : 0;
    };
    std::vector<std::int64_t> per_bit;
    for (auto c : t.m) per_bit.push_back(solve(c));
    std::vector<ConvertOp> ops;
    for (std::size_t j = 0; j < t_lane.size() && ok; ++j) {
      if (auto q = solve(t_lane[j] ^ s.lane[j])) {
        ops.push_back(CondXorOp{static_cast<int>(j), -1, q});
      }
    }
    for (std::size_t j = 0; j < t.warp.size() && ok; ++j) {
      if (auto q = solve(t.warp[j] ^ s.warp[j])) {
        ops.push_back(CondXorOp{-1, static_cast<int>(j), q});
      }
    }
    if (ok) {
      RenameOp r;
      for (std::int64_t i = 0; i < plan.dst_registers; ++i) {
        std::int64_t src = 0;
        for (std::size_t k = 0; k < per_bit.size(); ++k) {
          if (i >> k & 1) src ^= per_bit[k];
        }
        r.from.push_back(src);
      }
      plan.mechanism = Mechanism::registers;
      plan.ops = ops;
      plan.ops.push_back(r);
      count(plan);
      // Zero lane or warp columns may be gaps (no data) rather than copies.
      if (ops.empty() || simulate(plan, from, to, shape).empty()) return plan;
      plan.ops.clear();
      plan.counts = {};
    }
  }
  std::optional<ConvertPlan> shuffled;
  if (opts.choice != ConvertOptions::Choice::shared) {
    if (auto sp = shuffle_plan(s, t)) {
      count(*sp);
      // Zero lane columns may be gaps (no data) rather than copies: keep the plan only when the
      // simulation proves it.
      if (simulate(*sp, from, to, shape).empty()) shuffled = std::move(sp);
    }
  }
  if (shuffled && opts.choice == ConvertOptions::Choice::shuffles) return *shuffled;
  plan = shared_plan(from, to, s, t, shape, opts);
  count(plan);
  if (shuffled &&
      issue_cost(shuffled->counts, shuffled->warps) <= issue_cost(plan.counts, plan.warps)) {
    return *shuffled;
  }
  return plan;
}

std::int64_t issue_cost(const ConvertCounts& c, std::int64_t warps) {
  // A barrier across warps (bar.sync) weighs 32; with one warp it is a bar.warp.sync, 4: TV-19
  // through shared memory took 49.6 ns per round trip against 71.6 by shuffles on one H100
  // (tile_bench --choose, 2026-11-25).
  return c.selects + 2 * c.shuffles + c.store_instructions + c.load_instructions +
         2 * c.wavefronts() / std::max<std::int64_t>(1, warps) + (warps > 1 ? 32 : 4) * c.barriers;
}

std::string to_string(const ConvertOp& op) {
  std::ostringstream os;
  auto list = [&](const auto& v) {
    os << "(";
    for (std::size_t k = 0; k < v.size(); ++k) os << (k ? "," : "") << v[k];
    os << ")";
  };
  if (const auto* r = std::get_if<RenameOp>(&op)) {
    os << "rename registers: " << moves_of(*r) << " moves, register i <- ";
    list(r->from);
  } else if (const auto* c = std::get_if<CondSwapOp>(&op)) {
    os << "select: swap register bit " << c->reg_bit << " where lane bit " << c->lane_bit
       << " is set";
  } else if (const auto* x = std::get_if<CondXorOp>(&op)) {
    os << "select: register i <- register i ^ " << x->reg_xor << " where "
       << (x->lane_bit >= 0 ? "lane" : "warp") << " bit "
       << (x->lane_bit >= 0 ? x->lane_bit : x->warp_bit) << " is set";
  } else if (const auto* s = std::get_if<ShuffleOp>(&op)) {
    os << "shfl.sync.idx: source lane = map(lane) ^ xor[register], map ";
    list(s->lane_map);
    os << ", xor ";
    list(s->lane_xor);
  } else if (const auto* p = std::get_if<ShipOp>(&op)) {
    os << "ship: register bit " << p->reg_bit << " <-> lane bit " << p->lane_bit
       << " (select, shfl.sync.bfly " << (1 << p->lane_bit) << ", 2 selects per register pair)";
  } else if (const auto* st = std::get_if<StoreOp>(&op)) {
    os << "store to shared (source layout), repetition " << st->window;
  } else if (std::holds_alternative<BarrierOp>(op)) {
    os << "barrier";
  } else if (const auto* ld = std::get_if<LoadOp>(&op)) {
    os << "load from shared (destination layout), repetition " << ld->window;
    if (ld->ldmatrix) {
      os << ", ldmatrix.x4 (matrix = register bits " << ld->matrix_bits[0] << ","
         << ld->matrix_bits[1] << ")";
    }
  }
  return os.str();
}

std::string to_string(const ConvertPlan& plan) {
  std::string s = "mechanism: " + to_string(plan.mechanism) + "\n";
  for (const auto& op : plan.ops) s += "  " + to_string(op) + "\n";
  return s;
}

}  // namespace axe::linear
