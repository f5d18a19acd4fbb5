// Hierarchical integer tuples, the shapes, strides and coordinates of CuTe layouts.
//
// An IntTuple is an int64 leaf or a tuple of IntTuples nested to any depth. Text form:
// "4", "(4)" (a rank-1 tuple, distinct from 4), "((2,3),4)", "()" (the empty tuple). Coordinates
// used for slicing may also hold the leaf "_" (see underscore()).
//
// Everything here follows NVIDIA CuTe (include/cute/int_tuple.hpp, include/cute/stride.hpp) with
// every integer treated as a static (compile-time) value, evaluated colexicographically: the
// leftmost mode is fastest.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <iosfwd>
#include <string>
#include <string_view>
#include <vector>

namespace axe::cute {

class IntTuple {
 public:
  // A leaf holding `v` (implicit, so `IntTuple t = 4;` works).
  IntTuple(std::int64_t v = 0);  // NOLINT(google-explicit-constructor)

  // A tuple of `elems`; `tuple({4})` is the rank-1 tuple "(4)", `tuple({})` is "()".
  static IntTuple tuple(std::vector<IntTuple> elems);

  bool is_int() const { return kind_ == Kind::kInt; }
  bool is_tuple() const { return kind_ == Kind::kTuple; }
  // The "_" leaf of a slicing coordinate; neither an int nor a tuple.
  bool is_underscore_leaf() const { return kind_ == Kind::kUnderscore; }

  // @pre is_int(); throws axe::Error otherwise.
  std::int64_t value() const;
  // @pre is_tuple(); throws axe::Error otherwise.
  const std::vector<IntTuple>& elems() const;

  // Number of top-level modes: 1 for a leaf, the element count for a tuple.
  std::size_t rank() const;
  // Mode i. A leaf's mode 0 is itself. Throws axe::Error when i >= rank().
  const IntTuple& operator[](std::size_t i) const;

  bool operator==(const IntTuple& other) const;
  bool operator!=(const IntTuple& other) const { return !(*this == other); }

 private:
  enum class Kind : std::uint8_t { kInt, kTuple, kUnderscore };
  friend IntTuple underscore();

  Kind kind_ = Kind::kInt;
  std::int64_t value_ = 0;
  std::vector<IntTuple> elems_;
};

// The "_" leaf used in slicing coordinates ("keep this mode").
IntTuple underscore();
bool is_underscore(const IntTuple& t);
// True when any leaf of `t` is "_".
bool has_underscore(const IntTuple& t);

// Text form: "((2,3),4)", "4", "(4)", "()", "_" for the underscore leaf. No spaces.
std::string to_string(const IntTuple& t);

// Streams to_string(t) (so test failures print tuples readably).
std::ostream& operator<<(std::ostream& os, const IntTuple& t);

// Parses the text form of an integer tuple (no "_"). Spaces between tokens are allowed.
// @post to_string(parse_int_tuple(s)) == s for every s without spaces.
// Throws axe::ParseError naming the position and what was expected; e.g. "(2,3" fails at 4
// expecting ',' or ')'. Integers outside int64 are rejected.
IntTuple parse_int_tuple(std::string_view text);

// Like parse_int_tuple but leaves may also be "_": parse_coord("(1,_,(0,2))").
IntTuple parse_coord(std::string_view text);

// Product of all leaves; 1 for "()". Example: product(((2,3),4)) == 24.
// Throws axe::Error on 64-bit overflow or on a "_" leaf.
std::int64_t product(const IntTuple& t);

// 0 for a leaf, 1 + the maximum depth of the elements for a tuple. depth(((2,3),4)) == 2.
int depth(const IntTuple& t);

// Same tree structure (leaves paired with leaves). congruent((2,(3,4)), (1,(2,6))) is true;
// congruent(4, (4)) is false.
bool congruent(const IntTuple& a, const IntTuple& b);

// CuTe's compatible(a, b): every coordinate of shape a is a coordinate of shape b. A leaf of a
// must equal the size of the corresponding mode of b; a tuple of a needs a tuple of b of the same
// rank. compatible(24, (4,6)) and compatible((4,6), (4,(2,3))) are true.
bool compatible(const IntTuple& a, const IntTuple& b);

// The leaves of `t` in order (a leaf gives one element).
std::vector<IntTuple> flatten_leaves(const IntTuple& t);
// flatten(t): a leaf stays a leaf; a tuple becomes the tuple of its leaves. flatten(((2,3),4))
// == (2,3,4).
IntTuple flatten(const IntTuple& t);

// A rank-1 tuple is replaced by its element, recursively: unwrap(((4))) == 4; others unchanged.
IntTuple unwrap(const IntTuple& t);

// Product of each top-level mode: product_each(((2,3),4)) == (6,4); a leaf stays itself.
IntTuple product_each(const IntTuple& t);

// CuTe's ceil_div on (tuples of) integers, with C++ truncating division: int/int is
// (a + b - 1) / b; tuple/int folds left, each mode taking ceil_div(a_i, rest) and the rest becoming
// ceil_div(rest, a_i); tuple/tuple is elementwise (missing modes of b are 1); int/tuple divides by
// product(b). Example: ceil_div((6,16), 4) == (2,16). Throws axe::Error on division by zero.
IntTuple ceil_div(const IntTuple& a, const IntTuple& b);

// The compact column-major (LayoutLeft) strides of `shape`, starting at `current`: the exclusive
// prefix product of the leaves, with stride 0 for every extent-1 leaf (as CuTe's compact_major).
// compact_col_major((2,1,(3,4))) == (1,0,(2,6)).
IntTuple compact_col_major(const IntTuple& shape, std::int64_t current = 1);

// Natural (congruent to `shape`) coordinate of a 1-D index, or of a tuple of per-mode 1-D indices,
// as CuTe's idx2crd(idx, shape): leaf k is (idx / s_k) % e_k with the compact column-major
// strides s_k (extent-1 leaves give 0).
// @pre 0 <= idx < product(shape) (per mode for a tuple idx); throws axe::Error otherwise.
// Example: idx2crd(7, (2,(2,2))) == (1,(1,1)); idx2crd((1,3), (2,(2,2))) == (1,(1,1)).
IntTuple idx2crd(std::int64_t idx, const IntTuple& shape);
IntTuple idx2crd(const IntTuple& idx, const IntTuple& shape);

// Index of a coordinate as CuTe's crd2idx: an int coordinate against a tuple shape is a 1-D
// (colexicographic) index whose excess beyond the shape is absorbed by the last mode; a tuple
// coordinate must have the rank of the shape and is applied mode by mode; an int coordinate
// against an int shape is coord * stride. A "_" leaf counts as 0 (the slicing offset).
// @pre no negative coordinate; throws axe::Error for negative coordinates, rank mismatch, a tuple
// coordinate against an int shape, a zero-size mode when splitting an index, or 64-bit overflow.
// Example: crd2idx((1,2), (2,(2,2)), (1,(2,4))) == 5; crd2idx(5, ...) == 5.
std::int64_t crd2idx(const IntTuple& crd, const IntTuple& shape, const IntTuple& stride);
// The column-major 1-D index of a coordinate: crd2idx(crd, shape, compact_col_major(shape)).
std::int64_t crd2idx(const IntTuple& crd, const IntTuple& shape);

std::size_t hash_value(const IntTuple& t);

}  // namespace axe::cute

template <>
struct std::hash<axe::cute::IntTuple> {
  std::size_t operator()(const axe::cute::IntTuple& t) const { return axe::cute::hash_value(t); }
};
