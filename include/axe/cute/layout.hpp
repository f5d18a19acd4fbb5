// CuTe layouts and their algebra, on the host, with runtime (dynamic) integers.
//
// A Layout is a pair of congruent IntTuples Shape:Stride. It maps an index (a 1-D index, a tuple
// of per-mode 1-D indices, or a natural coordinate congruent to the shape) to an offset, the
// coordinates being taken colexicographically (leftmost mode fastest), exactly as NVIDIA CuTe:
//
//   (2,(2,2)):(1,(2,4)) maps 0..7 to 0..7;  ((2,3),4):((1,2),6) prints as written.
//
// Every operation follows the C++ CuTe header (include/cute/layout.hpp) with all integers treated
// as static values: where C++ would fail a static_assert, we throw axe::Error with the same
// condition name ("Shape Divisibility Condition", "Non-injective Layout detected in complement",
// ...). Negative strides are accepted by the evaluation functions; operations that would turn
// them into a negative extent (complement, left_inverse) reject them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <iosfwd>
#include <string>
#include <string_view>
#include <vector>

#include "axe/cute/int_tuple.hpp"

namespace axe::cute {

class Layout {
 public:
  // The trivial layout 1:0.
  Layout();
  // @pre congruent(shape, stride), every extent >= 0, no "_" leaves, size fits in int64.
  // Throws axe::Error naming the broken condition. Example: Layout((2,3), (1,2)) is (2,3):(1,2).
  Layout(IntTuple shape, IntTuple stride);

  const IntTuple& shape() const { return shape_; }
  const IntTuple& stride() const { return stride_; }

  // L(i) for a 1-D index i >= 0. An index beyond size() is absorbed by the last mode, as CuTe
  // does: (2,2):(1,10)(5) == 1 + 2*10 == 21. Throws axe::Error for i < 0 or on overflow.
  std::int64_t operator()(std::int64_t i) const;
  // L(c) for a 1-D index, a tuple of per-mode 1-D indices, or a natural coordinate. Components of
  // a tuple coordinate must lie inside their mode (0 <= c < extent); only a top-level 1-D index
  // may exceed size(). Example: for (2,(2,2)):(1,(2,4)), L((1,2)) == L((1,(0,1))) == L(5) == 5.
  std::int64_t operator()(const IntTuple& coord) const;

  // layout<i>: the sublayout of top-level mode i (an int-shaped layout's mode 0 is itself).
  // Example: ((2,3),4):((1,2),6).mode(0) == (2,3):(1,2). Throws axe::Error if i >= rank.
  Layout mode(std::size_t i) const;

  // Same shape and same stride (not merely the same function).
  bool operator==(const Layout& other) const;
  bool operator!=(const Layout& other) const { return !(*this == other); }

 private:
  IntTuple shape_;
  IntTuple stride_;
};

// make_layout(shape): compact column-major (LayoutLeft) strides; extent-1 modes get stride 0 as
// in CuTe. make_layout((2,1,3)) == (2,1,3):(1,0,2); make_layout(4) == 4:1; make_layout(1) == 1:0.
Layout make_layout(IntTuple shape);
// Concatenation of modes into a tuple layout: make_layout({4:1, (2,3):(4,8)}) ==
// (4,(2,3)):(1,(4,8)); make_layout({8:1}) == (8):(1).
Layout make_layout(std::vector<Layout> modes);

// Number of elements of the domain: size((2,(2,2)):(1,(2,4))) == 8.
std::int64_t size(const Layout& l);
// Size of the codomain as C++ CuTe: 1 + sum over leaves of (extent-1)*|stride|; equals L(size-1)+1
// for non-negative strides. 0 for a layout of size 0. cosize((4,2):(2,1)) == 8.
// Throws axe::Error on 64-bit overflow.
std::int64_t cosize(const Layout& l);
// Number of top-level modes (1 for an int shape): rank(((2,3),4):((1,2),6)) == 2.
std::size_t rank(const Layout& l);
// depth(shape): 0 for an int shape, 1 for a flat tuple; depth(((2,3),4):((1,2),6)) == 2.
int depth(const Layout& l);

// "((2,3),4):((1,2),6)", "4:1", "(4):(1)": CuTe's text form.
std::string to_string(const Layout& l);
std::ostream& operator<<(std::ostream& os, const Layout& l);

// Inverse of to_string (spaces between tokens allowed); a bare integer n means n:1.
// Throws axe::ParseError with the position and what was expected; axe::Error if the parsed shape
// and stride are not a valid layout (not congruent, negative extent).
Layout parse_layout(std::string_view text);

// Flatten each mode as its own layout: flatten(((2,3),4):((1,2),6)) == (2,3,4):(1,2,6).
Layout flatten(const Layout& l);

// Simplify by merging modes while preserving the function on [0, size).
// @post size(result) == size(l), depth(result) <= 1, result(i) == l(i) for 0 <= i < size(l).
// Example: coalesce((2,(1,6)):(1,(6,2))) == 12:1; coalesce((4,1):(1,0)) == 4:1; all extent-1
// modes give 1:0.
Layout coalesce(const Layout& l);
// Coalesce at the terminals of `profile` (only its tuple structure matters); modes of l beyond
// the profile's rank are kept as they are.
// @pre rank(profile) <= rank(l) when profile is a tuple; throws axe::Error otherwise.
// Example: coalesce((2,(1,6)):(1,(6,2)), (1,1)) == (2,6):(1,2).
Layout coalesce(const Layout& l, const IntTuple& profile);
// Remove stride-0 and extent-1 modes, then coalesce. filter((2,4,3):(1,0,2)) == 6:1;
// filter((2,4,3):(1,0,4)) == (2,3):(1,4); a layout with nothing left gives 1:0.
Layout filter(const Layout& l);

// A tiler: a Layout, "_" (leave the mode alone) or a tuple of tilers applied mode by mode.
// An integer tiler n (C++ CuTe's Int<n> in a tile) is a layout tiler that remembers it was an
// integer: composition uses n:1, while logical_divide/logical_product use make_layout(n), which
// is 1:0 for n == 1 (as in C++).
class Tiler {
 public:
  static Tiler none();
  Tiler(Layout layout);  // NOLINT(google-explicit-constructor)
  static Tiler tuple(std::vector<Tiler> elems);
  // The integer tiler n. @pre n >= 0.
  static Tiler of_int(std::int64_t n);

  bool is_none() const { return kind_ == Kind::kNone; }
  // True for layouts and for integer tilers.
  bool is_layout() const { return kind_ == Kind::kLayout; }
  bool is_tuple() const { return kind_ == Kind::kTuple; }
  // An integer tiler (is_layout() is also true; layout() is n:1).
  bool is_int() const { return is_int_; }
  // @pre is_layout(); throws axe::Error otherwise.
  const Layout& layout() const;
  // @pre is_tuple(); throws axe::Error otherwise.
  const std::vector<Tiler>& elems() const;

  bool operator==(const Tiler& other) const;

 private:
  enum class Kind : std::uint8_t { kNone, kLayout, kTuple };
  Tiler() = default;
  Kind kind_ = Kind::kNone;
  bool is_int_ = false;
  Layout layout_;
  std::vector<Tiler> elems_;
};

// "<8:1,_>" for tuples, "_" for none, "n" for an integer tiler, the layout text otherwise.
std::string to_string(const Tiler& t);
std::ostream& operator<<(std::ostream& os, const Tiler& t);
// Parses "<8:1,4:2>", "<_,4:1>", nested "<<2:1,_>,4:1>", "_", a layout, or an int n meaning n:1.
Tiler parse_tiler(std::string_view text);

// Functional composition R = A o B.
// @post compatible(shape(B), shape(R)) and R(c) == A(B(c)) for every coordinate c of B (A being
// evaluated with its last mode absorbing the excess).
// Throws axe::Error "Stride Divisibility Condition" / "Shape Divisibility Condition" where C++
// CuTe's static checks fail. Example: (6,2):(8,2) o (4,3):(3,1) == ((2,2),3):((24,2),8);
// (8,8):(8,1) o 3:3 == 3:24.
Layout composition(const Layout& a, const Layout& b);
// By-mode composition: "_" returns a; a tuple tiler composes mode i of a with element i and DROPS
// the modes of a beyond the tiler's rank (as C++; pycute keeps them).
// @pre a tuple tiler's rank <= rank(a). Example: (12,(4,8)):(59,(13,1)) o <3:4,8:2> ==
// (3,(2,4)):(236,(26,1)).
Layout composition(const Layout& a, const Tiler& b);

// The complement of a with respect to `cotarget` (C++ CuTe's complement(a, cotarget)).
// @pre a is injective on its non-stride-0 modes and has no negative stride after filtering; else
// axe::Error ("Non-injective Layout detected in complement").
// @post R is ordered (R(i-1) < R(i)), R(i) for i > 0 is not in the image of a, and
// cosize(make_layout({a, R})) >= cotarget. Example: complement(4:2, 24) == (2,3):(1,8);
// complement((2,2):(1,6), 24) == (3,2):(2,12).
Layout complement(const Layout& a, std::int64_t cotarget);
// complement(a, cosize(filter(a))): the C++ default. complement(4:2) == 2:1.
Layout complement(const Layout& a);
// complement against a shape target, as used by C++'s logical_divide: the rest mode covers
// ceil_div(cotarget_shape, stride) mode by mode (see ceil_div). complement(4:1, (6,16)) == 32:4.
Layout complement(const Layout& a, const IntTuple& cotarget_shape);

// logical_divide(A, B) = A o (B, complement(B, shape(coalesce(A)))) for a layout B; by mode for a
// tuple tiler (modes of A beyond the tiler are kept); A for "_".
// @post rank == 2 for a layout tiler, compatible(B, R.mode(0)), R.mode(0) == A o B.
// Example: logical_divide(6:2, 2:1) == (2,3):(2,4).
Layout logical_divide(const Layout& a, const Tiler& b);
// zipped_divide: ((tiles...),(rests..., untiled modes...)). zipped_divide((4,6):(1,4), <2:1,3:1>)
// == ((2,3),(2,2)):((1,4),(2,12)).
Layout zipped_divide(const Layout& a, const Tiler& b);
// tiled_divide: ((tiles...), rests..., untiled modes...); a rank-1 rest mode is kept as is (C++;
// pycute unwraps it). tiled_divide((4,6):(1,4), <2:1,3:1>) == ((2,3),2,2):((1,4),2,12).
Layout tiled_divide(const Layout& a, const Tiler& b);

// logical_product(A, B) = (A, complement(A, size(A)*cosize(B)) o B) for a layout B; by mode for a
// tuple tiler; A for "_". @post rank == 2, R.mode(0) == A, compatible(B, R.mode(1)).
// Example: logical_product(2:1, 3:1) == (2,3):(1,2).
Layout logical_product(const Layout& a, const Tiler& b);
// zipped_product: ((blocks...),(products..., untiled modes...)), the tile_unzip of the logical
// product. zipped_product((2,3):(1,2), <2:1,4:1>) == ((2,3),(2,(2,2))):((1,2),(2,(1,6))).
Layout zipped_product(const Layout& a, const Tiler& b);
// tiled_product: ((blocks...), products..., untiled modes...); a rank-1 product mode is kept.
// tiled_product((2,3):(1,2), <2:1,4:1>) == ((2,3),2,(2,2)):((1,2),2,(1,6)).
Layout tiled_product(const Layout& a, const Tiler& b);
// blocked_product(A, B): pad both to the common rank R with 1:0 modes, take the logical product
// and zip (A_i, B_i), an int counting as a rank-1 tuple (the reference vectors' rule; C++'s
// cute::zip gives ((8,(3))) for blocked_product(8:1, (3):(1)) where we give ((8,3)), and does not
// compile for a tuple block against an int tiler). @post rank == max(rank(A), rank(B)),
// size == size(A)*size(B).
// Example: blocked_product((2,2):(1,2), (2,3):(1,2)) == ((2,2),(2,3)):((1,4),(2,8)).
Layout blocked_product(const Layout& a, const Layout& b);
// As blocked_product, but zipped (B_i, A_i): the tiles are interleaved.
// Example: raked_product((2,2):(1,2), (2,3):(1,2)) == ((2,2),(3,2)):((4,1),(8,2)).
Layout raked_product(const Layout& a, const Layout& b);
// Overloads taking a Tiler; @pre b.is_layout().
Layout blocked_product(const Layout& a, const Tiler& b);
Layout raked_product(const Layout& a, const Tiler& b);

// The right inverse (C++ CuTe: sort the coalesced modes by stride and follow the chain of
// contiguous strides starting at 1; negative and repeated strides are not followed).
// @post l(R(i)) == i for 0 <= i < size(R). Example: right_inverse((2,(2,2)):(4,(2,1))) ==
// (2,2,2):(4,2,1); right_inverse(4:2) == 1:0.
Layout right_inverse(const Layout& l);
// The left (quasi-)inverse (C++ CuTe).
// @post R(l(i)) == i for i < size(l) when l is injective; l(R(l(i))) == l(i) when l is injective
// up to stride-0 modes. (Not for every non-injective l: (6,4,5):(23,23,1) gives (23,4):(24,6).)
// Throws axe::Error "Left inverse divisibility condition" where C++ would, and for negative
// strides. Example: left_inverse(8:2) == (2,8):(0,1).
Layout left_inverse(const Layout& l);

// The sublayout of the modes where `coord` has "_" (CuTe's slice): modes with an integer
// coordinate are dropped, nested "_" are flattened into the result.
// @pre coord is "_", or congruent with the shape where it is a tuple, with integer components in
// range. Example: slice((_,1), (2,4):(1,2)) == (2):(1); slice((1,_), (2,(2,2)):(4,(2,1))) ==
// ((2,2)):((2,1)).
Layout slice(const IntTuple& coord, const Layout& l);
// The offset of the slice: crd2idx(coord, l) with "_" read as 0. slice_offset((1,_), (2,4):(1,2))
// == 1.
std::int64_t slice_offset(const IntTuple& coord, const Layout& l);

// Replicate `block` until its shape is target_shape (mode by mode), column-major order.
// @pre rank(block) <= rank(target_shape) and each product of a target mode is divisible by the
// size of the block's mode. Example: tile_to_shape((2,2):(1,2), (4,6)) ==
// ((2,2),(2,3)):((1,4),(2,8)).
Layout tile_to_shape(const Layout& block, const IntTuple& target_shape);

std::size_t hash_value(const Layout& l);

}  // namespace axe::cute

template <>
struct std::hash<axe::cute::Layout> {
  std::size_t operator()(const axe::cute::Layout& l) const { return axe::cute::hash_value(l); }
};
