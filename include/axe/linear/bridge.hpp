// Bridges into linear layouts: Axe layouts (both ways), CuTe layouts, Swizzle<B,M,S> and
// swizzled (composed) layouts (LINEAR_LAYOUTS.md §3).
//
// Conventions. A linear layout maps hardware to logical, so the Axe layout's axes become the
// input dims (`m` first, then the other axes in order of first appearance; one bit per power of
// two of the axis' span) and the logical dims of `shape` become the output dims, named `dim0`,
// `dim1`, ... and listed minor-to-major: [dim{n-1}, ..., dim1, dim0]. A packed column is then
// the row-major flat logical index (Axe's x), and flatten_outs names it `dim{n-1}`.
//
// Example: the tensor-core tile S[(8,2,4,2):(4@lane,1@warp,1@lane,1)] + R[2:4@warp] on (8,16):
//   m:    [(1,0)]
//   lane: [(2,0),(4,0),(0,1),(0,2),(0,4)]   (lane bits 0,1 -> columns 2,4; bits 2..4 -> rows 1,2,4)
//   warp: [(8,0),(0,0),(0,0)]               (warp bit 0 -> column 8; bit 2 is the replica
//                                            R[2:4@warp], bit 1 an unused gap: both broadcast)
// with bases written as (dim1, dim0) pairs, i.e. (column, row), and the offset 5@warp kept aside.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "axe/cute/layout.hpp"
#include "axe/cute/swizzle.hpp"
#include "axe/layout/layout.hpp"
#include "axe/linear/linear_layout.hpp"

namespace axe::linear {

// The output dims of a logical shape: [dim{n-1}:shape[n-1], ..., dim0:shape[0]].
// @pre every extent a power of two, else axe::Error naming the dim.
std::vector<Dim> logical_dims(std::span<const std::int64_t> shape);
// The shape back from such dims (dims read in reverse order).
std::vector<std::int64_t> logical_shape(const LinearLayout& l);

// An Axe layout as a linear layout plus its offset: every placement p of logical index x
// satisfies layout(p - offset) == x (per axis, ordinary subtraction), and every hardware location
// h within the axes' bits maps to layout(h).
struct AxeLinear {
  LinearLayout layout;
  std::vector<std::pair<std::string, std::int64_t>> offset;  // O, per axis, as in the Axe layout
  bool operator==(const AxeLinear&) const = default;
};

// Empty when to_linear(l, shape) succeeds, else the reason, naming the offending iter or dim:
//   - a logical extent or the shape's size that does not match, or is not a power of two;
//   - an iter whose extent or stride is not a power of two (stride 0 or negative included),
//     e.g. "iter 3:2@lane of S: extent 3 is not a power of two";
//   - two iters of one axis whose bit fields overlap (their sum carries, not an XOR), e.g.
//     "iters 2:1 and 2:1 of S overlap on axis m (bit 0)";
//   - a partial P (its copies hold different terms, no single element);
//   - more than 64 hardware bits in all.
// R iters become zero columns (broadcast bits); bits of an axis that no iter uses (gaps) too.
std::string linear_refusal(const AxeLayout& l, std::span<const std::int64_t> shape);
// The linear layout of `l` on the logical `shape` (row-major, prod(shape) == l.size()).
// Throws axe::Error with linear_refusal's reason.
// @post for every x and placement p of l.forward(x): layout(p.coord - offset) == x; the layout is
// surjective; it is injective iff l has no R and no gap.
AxeLinear to_linear(const AxeLayout& l, std::span<const std::int64_t> shape);

// The Axe layout of a linear layout whose input dims are axis names and whose columns are each
// a single logical bit or zero (a subpermutation matrix: distributed layouts): nonzero column
// (axis a, bit b) -> logical bit p becomes a D iter 2:2^b@a at digit p (runs merged), zero
// columns become R iters. `offset` is added as O. Throws axe::Error naming the input bit when a
// column combines several logical bits (an XOR swizzle), two bits hold the same logical bit, a
// logical bit is held by none (not surjective), or a dim name is not an axis name.
// @post to_linear(from_linear(l).layout, logical_shape(l)).layout == l when l's input dims are
// in to_linear's order (m first).
// Example: {m: [(1,0)], lane: [(2,0),(0,1)]} -> [dim1:4, dim0:2] is S[(4,2):(1@lane,1)] on (2,4).
struct AxeOnShape {
  AxeLayout layout;
  std::vector<std::int64_t> shape;
};
AxeOnShape from_linear(const LinearLayout& l,
                       std::span<const std::pair<std::string, std::int64_t>> offset = {});

// A CuTe layout as a linear layout from its (colexicographic) 1-D index `in` to the offset `out`:
// mode bit k of a leaf e:d is the basis d << k (d == 0 gives zero bases). The output size is the
// least power of two above every offset. Throws axe::Error naming the mode when an extent or a
// nonzero stride is not a power of two, a stride is negative, or two modes' offset fields overlap
// (e.g. (2,2):(1,1), whose sum carries).
// Example (TV-12): (2,2,2):(2,4,1) -> {in: [2,4,1]} -> [out:8].
LinearLayout from_cute(const cute::Layout& l, std::string in = "in", std::string out = "out");

// Swizzle<B,M,S> on `bits` offset bits (at least B+M+|S|): bit i maps to swizzle(2^i), i.e.
// 2^i, plus 2^(i-S) for i in the YYY mask. It is an involution: compose(s, s) == identity.
// Example (TV-13): Sw<2,3,3> on 8 bits: [1,2,4,8,16,32,72,144].
LinearLayout from_swizzle(const cute::Swizzle& s, int bits, std::string in = "offset",
                          std::string out = "offset");

// Swizzle o offset o layout: compose(from_cute(layout), from_swizzle(swizzle)). Throws axe::Error
// for a nonzero offset (the map is then affine, not linear) and as from_cute.
// Example (TV-14): Sw<3,3,3> o 0 o (8,64):(64,1) has the inverse of the Triton layout
// vec=8, perPhase=1, maxPhase=8.
LinearLayout from_cute(const cute::ComposedLayout& l, std::string in = "in",
                       std::string out = "out");

}  // namespace axe::linear
