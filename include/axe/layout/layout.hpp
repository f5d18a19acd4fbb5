// Axe layouts: shard D, replica R, partial P and offset O over named axes (DESIGN.md §2.2).
//
// An iter is (extent e > 0, stride s, axis a). A layout L = (D, R, P, O) maps a logical index x
// (the row-major flattening of a logical coordinate) to a set of physical coordinates:
//
//   digits  c_k = floor(x / prod_{l>k} e_l) mod e_k       (row-major over D: last iter fastest)
//   D(x)    = sum_k c_k * s_k @ a_k
//   L(x)    = { D(x) + r + p + O  |  r in R, p in P }      (R and P: every combination of digits)
//
// R holds full copies; P holds terms whose reduction (sum by default) is the value. Example, the
// tensor-core tile on logical shape (8,16):
//
//   S[(8,2,4,2):(4@lane,1@warp,1@lane,1)] + R[2:4@warp] + 5@warp
//   (2,9) -> x = 41 -> digits (2,1,0,1) -> {lane 8, warp 6, m 1} and {lane 8, warp 10, m 1}
//
// Text form: `S[...]` first, then `R[...]`, `P[...]` or `P<max>[...]`, then offsets `k@axis`
// (a bare integer is on `m`), joined by " + ". An iter list is `e:s` for one iter,
// `(e0,e1,...):(s0,s1,...)` for several and `():()` for none; a stride without `@axis` is on the
// memory axis `m`. Printing writes `P[...]` for the sum reduction, `@m` never, and the offsets in
// the order they were given (zeros included), so print(parse(s)) == s for printed text. Parsing
// skips whitespace between tokens and also accepts `@m` and `P<sum>`.
#pragma once

#include <compare>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace axe {

// An interned axis name. `m` (memory) is the default. Names compare by their text, so the order
// is the same in every process whatever order the names were interned in.
class Axis {
 public:
  Axis();                                // the memory axis `m`
  explicit Axis(std::string_view name);  // interns; throws axe::Error on an empty or bad name
  static Axis memory() { return Axis(); }
  std::string_view name() const;
  std::uint32_t id() const { return id_; }
  bool is_memory() const { return id_ == 0; }
  bool operator==(const Axis& o) const { return id_ == o.id_; }
  std::strong_ordering operator<=>(const Axis& o) const;  // by name

 private:
  std::uint32_t id_;
};

struct Iter {
  std::int64_t extent = 1;
  std::int64_t stride = 0;
  Axis axis;
  bool operator==(const Iter&) const = default;
};

enum class ReduceOp { Sum, Avg, Max, Min, Prod };
std::string_view to_string(ReduceOp op);  // "sum", "avg", "max", "min", "prod"
ReduceOp parse_reduce_op(std::string_view name);  // throws axe::Error on an unknown name
// The identity of the reduction: 0 for sum and avg, 1 for prod, -inf for max, +inf for min.
double reduce_identity(ReduceOp op);

// A physical coordinate: one value per axis. Axes that are absent are 0.
class PhysCoord {
 public:
  PhysCoord() = default;
  std::int64_t operator[](Axis a) const;
  void set(Axis a, std::int64_t v);
  void add(Axis a, std::int64_t v);  // checked against overflow
  // Entries in insertion order (the order of first appearance in the layout, `m` last).
  const std::vector<std::pair<Axis, std::int64_t>>& entries() const { return entries_; }
  // Equal as maps (absent == 0).
  bool operator==(const PhysCoord& o) const;

 private:
  std::vector<std::pair<Axis, std::int64_t>> entries_;
};
std::string to_string(const PhysCoord& c);  // "{lane 8, warp 6, m 1}"

// One element of L(x): where it lands, and which replica/partial term it is (row-major index
// over the digits of R, resp. P; 0 when R, resp. P, is empty).
struct Placement {
  PhysCoord coord;
  std::int64_t replica = 0;
  std::int64_t term = 0;
  bool operator==(const Placement&) const = default;
};

// The inverse image of one physical coordinate.
struct Preimage {
  std::int64_t index = 0;  // logical (row-major flat) index
  std::int64_t replica = 0;
  std::int64_t term = 0;
  bool operator==(const Preimage&) const = default;
};

class AxeLayout {
 public:
  AxeLayout() = default;  // empty D: one element, at the origin
  // Validates: every extent > 0; no axis offset twice; size, replica and term counts, spans and
  // every reachable coordinate fit in int64 (so forward never overflows). Throws axe::Error.
  // With P empty the reduction is meaningless and is stored as Sum (one spelling per layout).
  AxeLayout(std::vector<Iter> d, std::vector<Iter> r = {}, std::vector<Iter> p = {},
            std::vector<std::pair<Axis, std::int64_t>> offset = {}, ReduceOp op = ReduceOp::Sum);

  const std::vector<Iter>& shard() const { return d_; }
  const std::vector<Iter>& replica() const { return r_; }
  const std::vector<Iter>& partial() const { return p_; }
  // Offsets in the order they were given (an axis appears at most once).
  const std::vector<std::pair<Axis, std::int64_t>>& offset() const { return o_; }
  std::int64_t offset(Axis a) const;
  ReduceOp reduce_op() const { return op_; }

  std::int64_t size() const;          // prod of D's extents
  std::int64_t replicas() const;      // prod of R's extents (1 when empty)
  std::int64_t terms() const;         // prod of P's extents (1 when empty)
  // Axes in order of first appearance in D, R, P, O, with `m` moved last.
  std::vector<Axis> axes() const;
  // 1 + sum |s|(e-1) over the D, R and P iters on `a` (the offset is not part of the span).
  std::int64_t span(Axis a) const;

  // Forward: every placement of logical index x, replicas outer, partial terms inner.
  // @pre 0 <= x < size(), else axe::Error.
  std::vector<Placement> forward(std::int64_t x) const;
  // The same for a logical coordinate of `shape` (row-major; prod(shape) must equal size()).
  std::vector<Placement> forward(std::span<const std::int64_t> coord,
                                 std::span<const std::int64_t> shape) const;
  // D(x) + O: the placement with replica 0 and term 0.
  PhysCoord forward_first(std::int64_t x) const;

  // Backward: the logical index and replica/term of a physical coordinate, or nullopt if no
  // element lands there (axes the layout does not use must be 0). Throws axe::Error if the layout
  // is not invertible (two (element, replica, term) triples on one coordinate), naming the clash.
  // Invertibility is proved per axis (the map is a product over axes): sorted by |stride|, each
  // stride exceeding the reach of the smaller ones proves it and makes decoding digit-by-digit
  // (O(iters log iters) per call); otherwise the axis' digit combinations are enumerated when
  // there are at most 2^20, and beyond that backward throws "cannot prove the iters invertible".
  // The proof of the last layout is cached per thread.
  // Example: for the tensor-core tile, {lane 8, warp 10, m 1} -> index 41, replica 1.
  std::optional<Preimage> backward(const PhysCoord& c) const;

  bool operator==(const AxeLayout& o) const;  // structural (offsets compared as maps)

 private:
  std::vector<Iter> d_, r_, p_;
  std::vector<std::pair<Axis, std::int64_t>> o_;
  ReduceOp op_ = ReduceOp::Sum;
};

std::string to_string(const AxeLayout& l);  // the text form; parse(to_string(l)) == l
// Throws axe::ParseError (position + what was expected) on malformed text.
AxeLayout parse_axe_layout(std::string_view text);

// ---- Canonical form (paper §3.3) -------------------------------------------------------------
// D0: drop extent-1 iters of D; D1: merge adjacent D iters (e1:s1 @a, e2:s2 @a) with s1 == e2*s2
// into (e1*e2):s2 @a; a stride-0 D iter is put on `m` (it lands nowhere). R and P are
// multisets: C0 drop extent-1 and stride-0 iters (a stride-0 copy coincides with another, so the
// set of coordinates is kept although replicas()/terms() may shrink), C1 make strides
// non-negative (the offset absorbs s(e-1)), C2 merge iters whose strides are multiples
// (e1:s1, e2:s2 with s2 == e1*s1 -> (e1*e2):s1), then sort by (axis name, stride, extent).
// Zero offsets are dropped and the rest sorted by axis name.
// @post canonicalize(l) maps every x to the same set of coordinates as l; it is idempotent.
// Example: S[(8,8,8,4,2):(512,64,8,2,1)] -> S[4096:1].
AxeLayout canonicalize(const AxeLayout& l);
// canonicalize(a) == canonicalize(b). Sound (true implies the same function); as in the paper it
// is complete only under the gap condition, so distinct canonical forms may rarely still agree.
bool equivalent(const AxeLayout& a, const AxeLayout& b);

// ---- Group by a shape (paper Alg. 1) ---------------------------------------------------------
// Splits D's iters so that they fall into consecutive blocks whose extents multiply to shape[k]
// (an iter e:s straddling a boundary becomes (e/r : s*r, r : s)); extent-1 iters stay in the block
// being filled, a dim of extent 1 gets an empty block. If the given iters do not split, the
// D1-merged shard is tried. @post the result maps every x as l does.
// Example: S[(4,6):(6,1)] by (2,12) -> S[(2,2,6):(12,6,1)], boundaries [0,1,3].
struct Grouped {
  AxeLayout layout;
  std::vector<std::size_t> boundaries;  // block k is iters [boundaries[k], boundaries[k+1])
};
// nullopt when an iter extent does not split along the shape (e.g. S[6:1] by (4,?)).
// Throws axe::Error when prod(shape) != size().
std::optional<Grouped> group(const AxeLayout& l, std::span<const std::int64_t> shape);

// ---- Tile / Kronecker product (paper Alg. 2) -------------------------------------------------
// f(x, y) = f_outer(x) * span(inner) + f_inner(y) per axis, on the logical shape
// outer_shape[k] * inner_shape[k]. Outer R/O are scaled by the inner span, inner R/P/O kept.
// Example: S[(8,8):(8,1)] (8,8) x S[(2,4):(1,2)] (2,4) -> S[(8,2,32):(64,1,2)] after canonicalize.
// Outer P is scaled like R. Throws axe::Error if the ranks differ, a shape does not match its
// layout's size, a layout cannot be grouped by its shape, or both have P with different ops.
AxeLayout tile(const AxeLayout& outer, std::span<const std::int64_t> outer_shape,
               const AxeLayout& inner, std::span<const std::int64_t> inner_shape);

// ---- Tile-of recognition (paper Alg. 3) ------------------------------------------------------
// The outer layout O with tile(O, shape/inner_shape, inner, inner_shape) equivalent to l, or
// nullopt when l is not a tiling of inner (a dim not divisible, inner's D not a block of l's,
// outer strides/offsets not multiples of inner's span, inner's R/P not contained in l's).
// Throws axe::Error if the ranks differ or a shape does not match its layout's size.
// Example: S[(8,2,8,3):(48,3,6,1)] on (16,24) with inner S[(2,3):(3,1)] on (2,3) -> S[(8,8):(8,1)].
std::optional<AxeLayout> tile_of(const AxeLayout& l, std::span<const std::int64_t> shape,
                                 const AxeLayout& inner,
                                 std::span<const std::int64_t> inner_shape);

// ---- Slice by a region ------------------------------------------------------------------------
// The layout of the sub-tensor region[k] = [begin, end) per dim, on shape (end-begin, ...), such
// that slice(c) == l(begin + c); R and P are kept, the corner l(begin) goes into the offset.
// Per dim (D grouped by `shape`) the longest suffix of the dim's iters whose extent product P
// divides begin and length is kept whole; the remaining run of n = length/P values from
// b = begin/P must sit in the next iter up (extent E, stride s, r = b mod E):
//   no-wrap            r + n <= E         -> n:s
//   symmetric one-wrap r + n/2 == E       -> (2 : Δ - r*s, n/2 : s), Δ the change of the upper
//                                            iters across the carry, on a single axis.
// nullopt when neither rule applies (or D does not group by `shape`). Throws axe::Error for a
// region that is empty, out of range or of the wrong rank. Example: S[(2,8,3,8):(192,8,64,1)] on
// (16,24), rows [0,8) x cols [8,24) -> S[(8,2,8):(8,64,1)] + 64 on (8,16); S[(2,8):(100,1)] on
// (16), [4,12) -> S[(2,4):(96,1)] + 4.
struct Range {
  std::int64_t begin = 0;
  std::int64_t end = 0;
};
std::optional<AxeLayout> slice(const AxeLayout& l, std::span<const std::int64_t> shape,
                               std::span<const Range> region);

// ---- Direct sum -------------------------------------------------------------------------------
// (A + B)(x, y) = A(x) + B(y) on the interleaved domain (a_0, b_0, a_1, b_1, ...) (per dim, A's
// block then B's block). R, P and O are unioned / added. Throws axe::Error if the ranks differ,
// a shape does not match or does not group its layout, or both have P with different ops.
// Example: S[(2,2):(8,2)] (2,2) + S[(2,2):(4,1)] (2,2) -> S[(2,2,2,2):(8,4,2,1)].
AxeLayout direct_sum(const AxeLayout& a, std::span<const std::int64_t> a_shape,
                     const AxeLayout& b, std::span<const std::int64_t> b_shape);

// ---- Storage and projection -------------------------------------------------------------------
// The per-owner memory layout: every iter (and offset) not on `m` dropped. Its domain is the
// local shard. Example: S[(2,32,2,64):(1@gpu,64,2@gpu,1)] -> S[(32,64):(64,1)].
AxeLayout storage(const AxeLayout& l);
// Keep only what lands on `axes`: D keeps its extents (an iter on another axis becomes stride 0
// on `m`, so it contributes nothing), R, P and O keep only the iters and offsets on `axes`.
// @post project(l)(x) is l(x) with the other axes' components dropped.
// Example: S[(2,32,128):(1@gpu,128,1)] onto {gpu} -> S[(2,32,128):(1@gpu,0,0)].
AxeLayout project(const AxeLayout& l, std::span<const Axis> axes);

// ---- Validity ---------------------------------------------------------------------------------
// A storage layout is valid when no two (logical element, partial term) pairs land on the same
// (device, memory) slot and every coordinate on an axis named in `extents` lies in [0, extent).
// Copies of one (element, term) may share a slot (replicas are a set). Decided per axis like
// backward: nested strides prove it, else the axis' combinations are enumerated (up to 2^20);
// beyond that the layout is reported as not proven valid.
// Returns an empty string when valid, otherwise a message naming the clash or the bad coordinate.
// Throws axe::Error when an extent is <= 0.
std::string check_valid(const AxeLayout& l,
                        std::span<const std::pair<Axis, std::int64_t>> extents = {});
inline bool is_valid(const AxeLayout& l,
                     std::span<const std::pair<Axis, std::int64_t>> extents = {}) {
  return check_valid(l, extents).empty();
}

}  // namespace axe

template <>
struct std::hash<axe::Axis> {
  std::size_t operator()(const axe::Axis& a) const noexcept;
};
template <>
struct std::hash<axe::AxeLayout> {
  std::size_t operator()(const axe::AxeLayout& l) const noexcept;  // consistent with ==
};
