// Generic swizzling (LINEAR_LAYOUTS.md §4.2) and the F2 form of the bank model.
#include "axe/linear/swizzle.hpp"

#include <algorithm>
#include <bit>
#include <cstdlib>
#include <ostream>

#include "axe/core/error.hpp"
#include "axe/linear/bridge.hpp"
#include "axe/linear/f2.hpp"
#include "linear/internal.hpp"

namespace axe::linear {
namespace {

using f2::Vec;

constexpr int kMaxTensorBits = 20;  // as bank_conflicts' enumeration guard (2^20 elements)

std::vector<Vec> columns_of(const LinearLayout& l, std::string_view dim) {
  std::vector<Vec> cols;
  if (!l.has_in_dim(dim)) return cols;
  for (int i = 0; i < l.in_bits(dim); ++i) cols.push_back(l.column(dim, i));
  return cols;
}

int log2_of(std::int64_t v) { return std::countr_zero(static_cast<std::uint64_t>(v)); }

void check_element_bytes(std::int64_t b) {
  if (b != 1 && b != 2 && b != 4 && b != 8 && b != 16) {
    fail("element size " + std::to_string(b) + " bytes is not 1, 2, 4, 8 or 16");
  }
}

// The widest access for `element_bytes`, as log2 of the elements of one 16-byte vector.
int max_vector_bits(std::int64_t element_bytes) { return log2_of(16 / element_bytes); }

// Lanes served per phase, as log2: 32 for accesses of <= 4 bytes, 16 for 8, 8 for 16.
int phase_lane_bits(std::int64_t vector_bytes) {
  return vector_bytes <= 4 ? 5 : 5 - log2_of(vector_bytes / 4);
}

LinearLayout shared_from_columns(std::vector<Vec> cols, const std::vector<Dim>& outs) {
  int n = static_cast<int>(cols.size());
  return LinearLayout::from_columns({{"m", n}}, outs, std::move(cols));
}

// The thread layout as a linear layout, checked for what the F2 cost model assumes.
LinearLayout thread_linear(const AxeLayout& l, std::span<const std::int64_t> shape,
                           const std::string& who) {
  std::string text = who + " thread layout " + to_string(l);
  for (const Axis& a : l.axes()) {
    if (a.name() != "m" && a.name() != "lane" && a.name() != "warp") {
      fail(text + " uses axis '" + std::string(a.name()) + "' (allowed: m, lane, warp)");
    }
  }
  auto why = linear_refusal(l, shape);
  if (!why.empty()) fail(text + " is not F2-linear: " + why);
  auto al = to_linear(l, shape);
  for (const auto& [a, o] : al.offset) {
    if (o != 0) fail(text + " has the offset " + std::to_string(o) + "@" + a + " (not supported)");
  }
  const LinearLayout& ll = al.layout;
  if (ll.has_in_dim("lane") && ll.in_bits("lane") > 5) {
    fail(text + " reaches lane " + std::to_string(ll.in_size("lane") - 1) + " (a warp has 32)");
  }
  int reg_bits = ll.has_in_dim("m") ? ll.in_bits("m") : 0;
  int warp_bits = ll.has_in_dim("warp") ? ll.in_bits("warp") : 0;
  if (reg_bits + warp_bits > 17) {  // bank_conflicts' guard: warps x 32 x registers <= 2^22
    fail(text + " has 2^" + std::to_string(warp_bits) + " warps x 2^" + std::to_string(reg_bits) +
         " registers, more than 2^17 in all");
  }
  // Every hardware location holds an element: 2^bits == elements x replicas.
  std::int64_t slots = std::int64_t{1} << ll.total_in_bits();
  if (slots != l.size() * l.replicas()) {
    fail(text + " leaves " + std::to_string(slots - l.size() * l.replicas()) + " of its " +
         std::to_string(slots) + " hardware locations (registers, lanes, warps) unused");
  }
  return ll;
}

// Longest prefix of nonzero, linearly independent columns, at most `cap`.
int independent_prefix(const std::vector<Vec>& cols, int cap) {
  int k = 0;
  std::vector<Vec> seen;
  while (k < cap && k < static_cast<int>(cols.size())) {
    Vec c = cols[static_cast<std::size_t>(k)];
    if (c == 0 || f2::in_span(seen, c)) break;
    seen.push_back(c);
    ++k;
  }
  return k;
}

int intersection_dim(const std::vector<Vec>& a, const std::vector<Vec>& b) {
  return static_cast<int>(f2::intersection(a, b).size());
}

struct Side {
  std::vector<Vec> regs, lanes;
};

// The lanes of one phase when `vector` of `side` (its register prefix equal to vbasis' prefix)
// is the access, minus the directions inside the vector basis.
std::vector<Vec> phase_tile(const Side& side, const std::vector<Vec>& vbasis,
                            std::int64_t element_bytes, std::vector<Vec>* own_vector) {
  std::size_t k = 0;
  while (k < vbasis.size() && k < side.regs.size() && side.regs[k] == vbasis[k]) ++k;
  own_vector->assign(vbasis.begin(), vbasis.begin() + static_cast<std::ptrdiff_t>(k));
  int pbits = phase_lane_bits((std::int64_t{1} << k) * element_bytes);
  std::vector<Vec> tile;
  for (std::size_t i = 0; i < side.lanes.size() && static_cast<int>(i) < pbits; ++i) {
    Vec c = side.lanes[i];
    if (c != 0 && !f2::in_span(vbasis, c)) tile.push_back(c);
  }
  return tile;
}

// Generic swizzling for one vector basis: offset bits = [vector | bank | segment].
std::vector<Vec> generic_columns(const Side& src, const Side& dst, const std::vector<Vec>& vbasis,
                                 int n, std::int64_t element_bytes) {
  int v = static_cast<int>(vbasis.size());
  std::vector<Vec> vec_s, vec_d;
  auto tile_s = phase_tile(src, vbasis, element_bytes, &vec_s);
  auto tile_d = phase_tile(dst, vbasis, element_bytes, &vec_d);
  // What one phase touches on each side, in tensor directions (conflicts lie in its span).
  auto touched_s = tile_s, touched_d = tile_d;
  touched_s.insert(touched_s.end(), vec_s.begin(), vec_s.end());
  touched_d.insert(touched_d.end(), vec_d.begin(), vec_d.end());
  int len_bank = std::min(log2_of(128 / element_bytes) - v, n - v);
  int len_seg = n - v - std::max(0, len_bank);
  // Candidates: unit directions (free when neither side's phase uses them), then a ^ b for a lane
  // direction of each side (a conflict-free diagonal for both), then the lanes themselves.
  std::vector<Vec> pool;
  for (int i = 0; i < n; ++i) pool.push_back(Vec{1} << i);
  for (Vec a : tile_s) {
    for (Vec b : tile_d) pool.push_back(a ^ b);
  }
  pool.insert(pool.end(), tile_s.begin(), tile_s.end());
  pool.insert(pool.end(), tile_d.begin(), tile_d.end());
  std::vector<Vec> segment;
  std::vector<Vec> chosen = vbasis;
  for (int allowed = 0; allowed <= 2 * n && static_cast<int>(segment.size()) < len_seg; ++allowed) {
    for (Vec c : pool) {
      if (static_cast<int>(segment.size()) == len_seg) break;
      if (c == 0 || f2::in_span(chosen, c)) continue;
      auto more = segment;
      more.push_back(c);
      int cost = intersection_dim(touched_s, more) - intersection_dim(touched_s, segment) +
                 intersection_dim(touched_d, more) - intersection_dim(touched_d, segment);
      if (cost > allowed) continue;
      segment = std::move(more);
      chosen.push_back(c);
    }
  }
  auto bank = f2::complement(chosen, n);
  std::vector<Vec> cols = vbasis;
  cols.insert(cols.end(), bank.begin(), bank.end());
  cols.insert(cols.end(), segment.begin(), segment.end());
  return cols;
}

ExchangeCost exchange_cost(const LinearLayout& shared, const LinearLayout& from,
                           const LinearLayout& to, std::int64_t element_bytes) {
  return {access_cost(shared, from, element_bytes), access_cost(shared, to, element_bytes)};
}

std::vector<Vec> swizzle_columns(const cute::Swizzle& sw, int n) {
  std::vector<Vec> cols;
  for (int i = 0; i < n; ++i) cols.push_back(static_cast<Vec>(sw(std::int64_t{1} << i)));
  return cols;
}

// Every Sw<B,M,S> with B >= 1, |S| >= B and B + M + |S| <= n: first S > 0 in increasing B, M, S,
// then the same with S < 0 (CuTe's left shifts).
std::vector<cute::Swizzle> all_swizzles(int n) {
  std::vector<cute::Swizzle> out;
  for (int sign : {1, -1}) {
    for (int b = 1; 2 * b <= n; ++b) {
      for (int m = 0; b + m + b <= n; ++m) {
        for (int s = b; b + m + s <= n; ++s) out.emplace_back(b, m, sign * s);
      }
    }
  }
  return out;
}

}  // namespace

std::string to_string(const AccessCost& c) {
  return std::to_string(c.instructions) + " x " + std::to_string(c.vector_bytes) + " B, " +
         std::to_string(c.wavefronts) + " wavefronts";
}

std::string to_string(const ExchangeCost& c) {
  return "store " + to_string(c.store) + "; load " + to_string(c.load) + "; total " +
         std::to_string(c.wavefronts()) + " wavefronts, " + std::to_string(c.instructions()) +
         " instructions per warp";
}

std::ostream& operator<<(std::ostream& os, const AccessCost& c) { return os << to_string(c); }
std::ostream& operator<<(std::ostream& os, const ExchangeCost& c) { return os << to_string(c); }

AccessCost access_cost(const LinearLayout& shared, const LinearLayout& threads,
                       std::int64_t element_bytes) {
  check_element_bytes(element_bytes);
  if (shared.in_dims().size() != 1 || shared.in_dims()[0].name != "m" || !is_invertible(shared)) {
    fail("access_cost: the shared layout " + internal::brief(shared) +
         " is not an invertible layout of the offset m");
  }
  if (shared.out_dims() != threads.out_dims()) {
    fail("access_cost: the shared layout " + internal::brief(shared) + " and the thread layout " +
         internal::brief(threads) + " have different tiles");
  }
  if (shared.total_in_bits() > 40 || threads.total_in_bits() > 40) {
    fail("access_cost: more than 2^40 shared elements or hardware locations (" +
         internal::brief(shared) + ", " + internal::brief(threads) + ")");
  }
  const auto& scols = shared.columns();
  auto off = [&](Vec c) { return *f2::solve(scols, c); };
  auto regs = columns_of(threads, "m"), lanes = columns_of(threads, "lane"),
       warps = columns_of(threads, "warp");
  // The widest vector: registers 0..k-1 at offsets 2^0..2^(k-1), every other bit aligned.
  int k = 0;
  int cap = std::min(max_vector_bits(element_bytes), static_cast<int>(regs.size()));
  while (k < cap && off(regs[static_cast<std::size_t>(k)]) == Vec{1} << k) ++k;
  for (; k > 0; --k) {
    Vec low = (Vec{1} << k) - 1;
    bool aligned = true;
    for (std::size_t i = static_cast<std::size_t>(k); i < regs.size(); ++i) aligned = aligned && !(off(regs[i]) & low);
    for (Vec c : lanes) aligned = aligned && !(off(c) & low);
    for (Vec c : warps) aligned = aligned && !(off(c) & low);
    if (aligned) break;
  }
  AccessCost cost;
  cost.vector_bytes = (std::int64_t{1} << k) * element_bytes;
  cost.instructions = (std::int64_t{1} << regs.size()) >> k;
  int pbits = phase_lane_bits(cost.vector_bytes);
  int lane_bits = static_cast<int>(lanes.size());
  std::int64_t phases = std::int64_t{1} << std::max(0, lane_bits - pbits);
  // Word (4-byte) coordinates relative to lane 0: the phase's lanes, and the words of one vector.
  int shift = log2_of(element_bytes);
  auto word = [&](Vec o) { return (o << shift) >> 2; };
  std::vector<Vec> touched;
  for (int i = 0; i < std::min(lane_bits, pbits); ++i) touched.push_back(word(off(lanes[static_cast<std::size_t>(i)])));
  for (std::int64_t w = 1; w < cost.vector_bytes / 4; w *= 2) touched.push_back(static_cast<Vec>(w));
  // Words in bank 0: word bits >= 5.
  int word_bits = shared.total_in_bits() + shift - 2;
  std::vector<Vec> rows;
  for (int b = 5; b < word_bits; ++b) rows.push_back(Vec{1} << b);
  std::int64_t per_phase = std::int64_t{1} << intersection_dim(touched, rows);
  cost.wavefronts = (std::int64_t{1} << warps.size()) * cost.instructions * phases * per_phase;
  return cost;
}

std::vector<std::int64_t> shared_offsets(const LinearLayout& shared) {
  if (!is_invertible(shared)) fail("shared_offsets: " + internal::brief(shared) + " is not invertible");
  auto inv = invert(shared);
  std::int64_t n = std::int64_t{1} << shared.total_in_bits();
  std::vector<std::int64_t> out(static_cast<std::size_t>(n));
  for (std::int64_t x = 0; x < n; ++x) {
    out[static_cast<std::size_t>(x)] = static_cast<std::int64_t>(inv.apply_flat(static_cast<std::uint64_t>(x)));
  }
  return out;
}

LinearLayout row_major_linear(std::span<const std::int64_t> shape) {
  auto outs = logical_dims(shape);
  int n = 0;
  for (const auto& d : outs) n += d.bits;
  std::vector<Vec> cols;
  for (int i = 0; i < n; ++i) cols.push_back(Vec{1} << i);
  return shared_from_columns(std::move(cols), outs);
}

LinearLayout swizzled_linear(const cute::Swizzle& sw, std::span<const std::int64_t> shape) {
  auto outs = logical_dims(shape);
  int n = 0;
  for (const auto& d : outs) n += d.bits;
  if (sw.bits + sw.base + std::abs(sw.shift) > n) {
    fail(cute::to_string(sw) + " needs " + std::to_string(sw.bits + sw.base + std::abs(sw.shift)) +
         " offset bits but the tile has " + std::to_string(n));
  }
  return shared_from_columns(swizzle_columns(sw, n), outs);
}

std::optional<SwizzledAxe> as_swizzled_axe(const LinearLayout& shared) {
  if (shared.in_dims().size() != 1 || shared.in_dims()[0].name != "m" || !is_invertible(shared)) {
    return std::nullopt;
  }
  int n = shared.total_in_bits();
  std::vector<cute::Swizzle> tries{cute::Swizzle()};
  for (const auto& sw : all_swizzles(n)) tries.push_back(sw);
  for (const auto& sw : tries) {
    // offset = sw(axe(x))  <=>  axe^-1 = shared o sw (sw is an involution).
    std::vector<Vec> cols;
    bool permutation = true;
    for (Vec c : swizzle_columns(sw, n)) {
      Vec t = shared.apply_flat(c);
      permutation = permutation && std::popcount(t) == 1;
      cols.push_back(t);
    }
    if (!permutation) continue;
    auto ll = shared_from_columns(std::move(cols), shared.out_dims());
    return SwizzledAxe{sw, from_linear(ll).layout};
  }
  return std::nullopt;
}

SwizzlePlan optimal_swizzle(const AxeLayout& from, const AxeLayout& to,
                            std::span<const std::int64_t> shape, std::int64_t element_bytes) {
  check_element_bytes(element_bytes);
  auto outs = logical_dims(shape);
  int n = 0;
  for (const auto& d : outs) n += d.bits;
  if (n > kMaxTensorBits) {
    fail("the tile has 2^" + std::to_string(n) + " elements, more than 2^20");
  }
  auto src = thread_linear(from, shape, "the source");
  auto dst = thread_linear(to, shape, "the destination");
  int ws = src.has_in_dim("warp") ? src.in_bits("warp") : 0;
  int wd = dst.has_in_dim("warp") ? dst.in_bits("warp") : 0;
  if (ws != wd) {
    fail("the source thread layout " + to_string(from) + " uses " + std::to_string(1 << ws) +
         " warp(s) but the destination " + to_string(to) + " uses " + std::to_string(1 << wd));  // ws, wd <= 17
  }
  Side s{columns_of(src, "m"), columns_of(src, "lane")};
  Side d{columns_of(dst, "m"), columns_of(dst, "lane")};
  int vmax = std::min(max_vector_bits(element_bytes), n);
  int ps = independent_prefix(s.regs, vmax), pd = independent_prefix(d.regs, vmax);
  int common = 0;
  while (common < std::min(ps, pd) && s.regs[static_cast<std::size_t>(common)] == d.regs[static_cast<std::size_t>(common)]) ++common;
  std::vector<std::vector<Vec>> vbases;
  auto prefix = [](const std::vector<Vec>& v, int k) {
    return std::vector<Vec>(v.begin(), v.begin() + k);
  };
  for (int k = 0; k <= common; ++k) vbases.push_back(prefix(s.regs, k));
  for (int k = common + 1; k <= ps; ++k) vbases.push_back(prefix(s.regs, k));
  for (int k = common + 1; k <= pd; ++k) vbases.push_back(prefix(d.regs, k));

  SwizzlePlan plan;
  bool have = false;
  for (const auto& vb : vbases) {
    auto ll = shared_from_columns(generic_columns(s, d, vb, n, element_bytes), outs);
    auto cost = exchange_cost(ll, src, dst, element_bytes);
    if (!have || cost.better_than(plan.cost)) {
      plan.shared = ll;
      plan.cost = cost;
      have = true;
    }
  }
  plan.origin = "generic";
  auto rm = row_major_linear(shape);
  plan.row_major = exchange_cost(rm, src, dst, element_bytes);
  plan.best_swizzle_cost = plan.row_major;
  for (const auto& sw : all_swizzles(n)) {
    auto cost = exchange_cost(swizzled_linear(sw, shape), src, dst, element_bytes);
    if (!plan.best_swizzle || cost.better_than(plan.best_swizzle_cost)) {
      plan.best_swizzle = sw;
      plan.best_swizzle_cost = cost;
    }
  }
  // Never worse than the baselines (the generic algorithm is a heuristic on the segment).
  if (plan.best_swizzle && plan.best_swizzle_cost.better_than(plan.cost)) {
    plan.shared = swizzled_linear(*plan.best_swizzle, shape);
    plan.cost = plan.best_swizzle_cost;
    plan.origin = "swizzle";
  }
  if (plan.row_major.better_than(plan.cost)) {
    plan.shared = rm;
    plan.cost = plan.row_major;
    plan.origin = "row-major";
  }
  plan.axe = as_swizzled_axe(plan.shared);
  return plan;
}

}  // namespace axe::linear
