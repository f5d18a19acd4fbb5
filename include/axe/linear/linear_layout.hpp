// F2 linear layouts (Triton's LinearLayout, arXiv:2505.23819; ../shared/LINEAR_LAYOUTS.md §1-2).
//
// A linear layout L maps a hardware location to a logical tensor index and is linear over F2:
// L(x ^ y) = L(x) ^ L(y). It has
//   - named input dims (any Axe axis: `m`, `lane`, `warp`, `gpu`, ... or `in1`), each of size 2^k
//     and holding k bases: basis(d, i) = L(d = 2^i, every other input 0);
//   - named output dims of power-of-two sizes (logical dims, `dim0`, `dim1`, ...).
// Both lists are ordered minor-to-major: the order only matters for reshape, flatten and product.
// Everything else follows by XOR: apply(x) = XOR of the bases of the set bits of x.
//
// Example (TV-1, 4 threads x 4 warps on a 4x4 tensor): bases t: [(1,1),(2,2)], w: [(0,1),(0,2)]
// give L(t=3, w=1) = (1,1)^(2,2)^(0,1) = (3,2): the swizzle (t, w) -> (t, w ^ t).
//
// Representation: one uint64 column per input bit (input dims in order, bit 0 first) with the
// output dims packed into it, the first output dim in the lowest bits (so flatten_outs is the
// column itself). At most 64 input bits and 64 output bits in all.
//
// Text form: `{in1: [(1,1),(0,1)], in2: [(1,0),(1,2)]} -> [out1:4, out2:4]`; with one output dim
// the bases are plain integers: `{in: [2,1,4]} -> [out:8]`. An input dim of size 1 is written
// `in2: []`. print(parse(s)) == s for printed text; parsing skips whitespace.
//
// Fallibility (STYLE.md §6): operations whose result may not exist return std::optional
// (divide_left, divide_right, quotient); violated preconditions on user input throw axe::Error
// naming the dim and the values.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace axe::linear {

// A dim: a name and log2 of its size.
struct Dim {
  std::string name;
  int bits = 0;
  std::int64_t size() const { return std::int64_t{1} << bits; }
  bool operator==(const Dim&) const = default;
};

class LinearLayout {
 public:
  using Basis = std::vector<std::int64_t>;  // one value per output dim, in output-dim order
  using InBases = std::vector<std::pair<std::string, std::vector<Basis>>>;
  using OutSizes = std::vector<std::pair<std::string, std::int64_t>>;

  // The empty layout (no dims): the identity of product().
  LinearLayout() = default;
  // From bases and explicit output sizes. Validates (Triton's invariants, LINEAR_LAYOUTS.md §1.2):
  // names are identifiers, unique among inputs and among outputs; every basis has one value per
  // output dim, 0 <= value < that dim's size; sizes are powers of two; at most 64 input and 64
  // output bits; and, unless require_surjective is false, the image is the whole output space.
  // Throws axe::Error naming the dim, the basis and the value.
  LinearLayout(InBases bases, OutSizes outs, bool require_surjective = true);
  // The same with output sizes inferred: per output dim the least power of two strictly greater
  // than every basis value (value 5 -> 8, value 2 -> 4, all zero -> 1).
  // Example: {in1: [(1,0),(5,1),(2,2)]} -> out sizes (8,4).
  LinearLayout(InBases bases, std::vector<std::string> out_names, bool require_surjective = true);
  // From packed columns (see the header comment), validated like the constructors.
  static LinearLayout from_columns(std::vector<Dim> ins, std::vector<Dim> outs,
                                   std::vector<std::uint64_t> columns,
                                   bool require_surjective = true);

  // L(x) = x on one dim of `size` (a power of two; size 1 gives dims of size 1).
  static LinearLayout identity_1d(std::int64_t size, std::string in, std::string out);
  // L(x) = 0, output size `out_size` (surjective only when out_size == 1).
  static LinearLayout zeros_1d(std::int64_t size, std::string in, std::string out,
                               std::int64_t out_size = 1);
  // L(x) = stride * x: bases [stride * 2^i]; output size inferred.
  static LinearLayout strided_1d(std::int64_t size, std::int64_t stride, std::string in,
                                 std::string out);

  const std::vector<Dim>& in_dims() const { return ins_; }
  const std::vector<Dim>& out_dims() const { return outs_; }
  std::vector<std::string> in_names() const;
  std::vector<std::string> out_names() const;
  bool has_in_dim(std::string_view name) const;
  bool has_out_dim(std::string_view name) const;
  // log2 of the size; throws axe::Error for an unknown dim.
  int in_bits(std::string_view name) const;
  int out_bits(std::string_view name) const;
  std::int64_t in_size(std::string_view name) const { return std::int64_t{1} << in_bits(name); }
  std::int64_t out_size(std::string_view name) const { return std::int64_t{1} << out_bits(name); }
  int total_in_bits() const;
  int total_out_bits() const;
  // Where `name`'s bits start in a column (output) or in the flat input (input).
  int out_shift(std::string_view name) const;
  int in_shift(std::string_view name) const;

  // All columns, input dims in order, bit 0 first.
  const std::vector<std::uint64_t>& columns() const { return cols_; }
  std::uint64_t column(std::string_view in, int i) const;
  Basis basis(std::string_view in, int i) const;
  std::vector<Basis> bases(std::string_view in) const;

  // L(x) on named inputs; every input dim must be given once, each value in [0, size).
  // Returns one value per output dim, in output-dim order. Throws axe::Error otherwise.
  // Example (TV-11): {in1: [(4,2),(2,1),(1,0)], in2: [(1,2),(2,1)]} -> [out1:8, out2:4]:
  // apply({in1 1, in2 0}) = (4,2); apply({in1 0, in2 1}) = (1,2).
  std::vector<std::pair<std::string, std::int64_t>> apply(
      std::span<const std::pair<std::string, std::int64_t>> ins) const;
  // L on the flat input (input dims packed in order, the first lowest) to the packed output.
  std::uint64_t apply_flat(std::uint64_t x) const;

  // Same dims (names, sizes, order) and bases.
  bool operator==(const LinearLayout& o) const = default;

 private:
  std::vector<Dim> ins_, outs_;
  std::vector<std::uint64_t> cols_;
};

std::string to_string(const LinearLayout& l);
// Throws axe::ParseError (position, what was expected) or axe::Error (invalid layout).
// The parsed layout need not be surjective.
LinearLayout parse_linear_layout(std::string_view text);

// ---- Rank and friends --------------------------------------------------------------------------

// dim of the image. Example: rank({in: [1,1,2]} -> [out:4]) == 2.
int rank(const LinearLayout& l);
// rank == total output bits (every element is held somewhere).
bool is_surjective(const LinearLayout& l);
// rank == total input bits (no two locations hold the same element).
bool is_injective(const LinearLayout& l);
// surjective and injective.
bool is_invertible(const LinearLayout& l);

// Per input dim, the mask of its free (non-pivot) bits: bit i of dim d is free iff its column
// lies in the span of the columns before it (input dims in order).
// @post rank(l) + sum of popcounts == total input bits.
// Nuance (LINEAR_LAYOUTS.md §2): a canonical basis complement, not "bits whose flip leaves the
// output unchanged": for {in: [1,1]} the mask is 0b10. For distributed layouts (no repeated
// non-zero column) the free bits are exactly the zero (broadcast) columns.
// Example (TV-7): {in1: [(1,1),(2,2),(0,0)], in2: [(1,0),(0,1),(2,0)]} -> in1 0b100, in2 0b10.
std::vector<std::pair<std::string, std::uint64_t>> free_variable_masks(const LinearLayout& l);

// ---- Combining layouts --------------------------------------------------------------------------

// (then o first)(x) = then(first(x)) -- Triton's first.compose(then).
// @pre first's output dims are then's input dims (as sets) with out_size(first, d) <=
// in_size(then, d); else axe::Error naming the dim. The result has first's input dims and then's
// output dims (sizes included); it is surjective iff both are and the sizes match exactly, but it
// is not required to be. @post compose(l, identity on l's outputs) == l.
// Example (TV-3): {in1: [(1,1),(0,1)], in2: [(1,0),(1,2)]} -> [out1,out2] composed with
// {out1: [(2,2),(1,0)], out2: [(1,1),(2,1)]} -> [out3,out4] gives
// {in1: [(3,3),(1,1)], in2: [(2,2),(0,3)]} -> [out3:4, out4:4], not surjective.
LinearLayout compose(const LinearLayout& first, const LinearLayout& then);

// The direct sum ("product", Triton's operator*), `inner` minor: input and output dim lists are
// merged by their ordered supremum (ties biased to inner's list; axe::Error when the two orders
// conflict); a shared input dim lists inner's bases first, then outer's; a shared output dim
// holds inner's values in its low bits and outer's shifted above them.
// @post product(product(a, b), c) == product(a, product(b, c)) up to dim order; product(empty, l)
// == l == product(l, empty).
// Example (TV-4): identity_1d(4, in, o1) * identity_1d(8, in, o2) ==
// {in: [(1,0),(2,0),(0,1),(0,2),(0,4)]} -> [o1:4, o2:8].
LinearLayout product(const LinearLayout& inner, const LinearLayout& outer);
inline LinearLayout operator*(const LinearLayout& inner, const LinearLayout& outer) {
  return product(inner, outer);
}

// C with a(x) == b(C(x)) for every x (C = b^-1 o a, Triton's a.invertAndCompose(b)).
// @pre b is surjective and a, b have the same output dims with the same sizes; else axe::Error.
// Input dims present in both with equal bases map by identity (Triton's broadcasting heuristic,
// used when the rest still solves); every other bit takes the minimal solution (free variables of
// b set to 0: the smallest offset / replica 0 when b is not injective). The result has a's input
// dims and b's input dims (sizes) as outputs; it need not be surjective.
// @post compose(invert_and_compose(a, b), b) == a.
// Example (TV-5): {in1: [2,1,4]} -> [out:8] with {in2: [4,1,2]} -> [out:8] gives
// {in1: [4,2,1]} -> [in2:8]; with the non-injective {in2: [0,2,1,4]} -> [out:8] it gives
// {in1: [2,4,8]} -> [in2:16].
LinearLayout invert_and_compose(const LinearLayout& a, const LinearLayout& b);

// L^-1 (input and output dims swap roles). @pre is_invertible(l); else axe::Error.
// @post compose(l, invert(l)) == identity on l's inputs.
LinearLayout invert(const LinearLayout& l);

// A right inverse: compose(pseudo_invert(l), l) == identity on l's outputs, choosing for each
// element the location with every free variable 0 (Triton's pseudoinvert =
// identity.invertAndCompose(l)). @pre l surjective; else axe::Error.
// Example: pseudo_invert({in: [8,16,1,2,4]} -> [out:32]) == {out: [4,8,16,1,2]} -> [in:32].
LinearLayout pseudo_invert(const LinearLayout& l);

// ---- Restructuring -------------------------------------------------------------------------------

// Restrict to the input dims `ins` (others set to 0) and the output dims `outs` (others
// dropped), keeping l's order and the output sizes. Names not in l are axe::Error.
// Example (TV-9): {in1: [(1,0),(0,1),(2,0)], in2: [(0,1)]} -> [out1:4, out2:2] restricted to
// ({in1,in2}, {out1}) is {in1: [1,0,2], in2: [0]} -> [out1:4].
LinearLayout sublayout(const LinearLayout& l, std::span<const std::string> ins,
                       std::span<const std::string> outs);
// Every basis of sublayout(l, ins, outs) is 0.
bool sublayout_is_zero(const LinearLayout& l, std::span<const std::string> ins,
                       std::span<const std::string> outs);

// Reorder the input (output) dims; `order` must be a permutation of the names.
LinearLayout transpose_ins(const LinearLayout& l, std::span<const std::string> order);
LinearLayout transpose_outs(const LinearLayout& l, std::span<const std::string> order);

// Flatten all input bits in dim order and re-split them into `dims` (name, size) in order; the
// sizes must be powers of two multiplying to the total input size. reshape_outs does the same
// with the output values (value_d << shift_d).
// Example (TV-6): {in1: [1,4,8], in2: [2]} reshaped to ins [(in3,2),(in4,8)] is
// {in3: [1], in4: [4,8,2]}; {in1: [1,4,8], in2: [3]} -> [out:16] reshaped to outs
// [(out2,2),(out3,8)] is {in1: [(1,0),(0,2),(0,4)], in2: [(1,1)]}.
// @post reshape_ins(reshape_ins(l, d), original dims) == l (likewise for outputs).
LinearLayout reshape_ins(const LinearLayout& l,
                         std::span<const std::pair<std::string, std::int64_t>> dims);
LinearLayout reshape_outs(const LinearLayout& l,
                          std::span<const std::pair<std::string, std::int64_t>> dims);
// One input (output) dim named like the first, holding all bits. No dims stays no dims.
LinearLayout flatten_ins(const LinearLayout& l);
LinearLayout flatten_outs(const LinearLayout& l);

// Stack the input dims of b after a's (same output dims and sizes; disjoint input names) /
// the output dims of b after a's (same input dims and sizes; disjoint output names).
// @post sublayout(concat_ins(a, b), a's ins, outs) == a.
LinearLayout concat_ins(const LinearLayout& a, const LinearLayout& b);
LinearLayout concat_outs(const LinearLayout& a, const LinearLayout& b);

// ---- Division -------------------------------------------------------------------------------------

// C with a == product(b, C) up to a's dim order, or nullopt when a is not of that block form
// (on every input dim of b, a's first bases are b's and the rest are multiples of b's output
// sizes). C has exactly a's input and output dims, those b lacks keeping their size and the others
// divided (a size-1 dim where b covers all).
// @post when it exists, product(b, C) equals a after transpose to a's dim order.
// Example (TV-8): divide_left(identity_1d(8, in, out), identity_1d(4, in, out)) ==
// identity_1d(2, in, out).
std::optional<LinearLayout> divide_left(const LinearLayout& a, const LinearLayout& b);
// C with a == product(C, b) up to dim order, or nullopt.
std::optional<LinearLayout> divide_right(const LinearLayout& a, const LinearLayout& b);

// l is trivial over `dims` when each is both an input and an output dim of equal size, the square
// sublayout on `dims` is the identity, the other inputs do not reach `dims` and `dims` do not reach
// the other outputs. quotient drops such dims (nullopt when l is not trivial over them).
// Example: quotient({reg: [(1,0)], lane: [(0,1)]} -> [reg:2, lane:2], {lane}) ==
// {reg: [1]} -> [reg:2].
bool is_trivial_over(const LinearLayout& l, std::span<const std::string> dims);
std::optional<LinearLayout> quotient(const LinearLayout& l, std::span<const std::string> dims);

// ---- Vectorisation and duplicates -------------------------------------------------------------------

// The number V of consecutive values of the first input dim that map to consecutive values of the
// first output dim (the vector width of an access): 2^min(c, t) with c the number of leading
// bases of the first input dim equal to (2^i, 0, ..., 0) and t the trailing zeros of the OR of the
// first output value of every other basis (63 when that OR is 0). 1 for a layout without dims.
// Examples (TV-10): identity_1d(4) -> 4; {in: [1,2,4,9]} -> 1; [1,2,4,10] -> 2; [1,4,2] -> 2.
std::int64_t num_consecutive_in_out(const LinearLayout& l);

// Per input dim, the mask of its zero columns: the bits along which the layout broadcasts (every
// value of that bit holds the same element).
std::vector<std::pair<std::string, std::uint64_t>> broadcast_masks(const LinearLayout& l);
// The duplicate-free layout: every free bit (free_variable_masks) removed from its input dim, so
// sizes shrink. @post is_injective(result), and the image (set of values) is l's.
// Example: {lane: [(0,1),(0,0),(1,0)]} -> [d1:2, d0:2] becomes {lane: [(0,1),(1,0)]}.
LinearLayout remove_duplicates(const LinearLayout& l);

}  // namespace axe::linear

template <>
struct std::hash<axe::linear::LinearLayout> {
  std::size_t operator()(const axe::linear::LinearLayout& l) const noexcept;
};
