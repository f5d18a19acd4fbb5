// Linear algebra over F2 = GF(2) (addition is XOR, multiplication is AND) on vectors of at most 64
// coordinates, each vector packed in one uint64_t (bit i = coordinate i). These are the
// utilities under the linear layouts (LINEAR_LAYOUTS.md §1.1, §6): one elimination routine with
// lowest-set-bit pivots gives rank, span membership, solving with free variables set to 0,
// null space, complement and intersection of subspaces.
//
// Example: span{0b011, 0b110} has rank 2; 0b101 = 0b011 ^ 0b110 lies in it; its reduced echelon
// basis (pivots = lowest set bits) is {0b101 (pivot 0), 0b110 (pivot 1)}.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

namespace axe::linear::f2 {

using Vec = std::uint64_t;

// Lowest set bit of v (its pivot). @pre v != 0.
int pivot(Vec v);

// The reduced row echelon basis of span(vs): every vector's pivot is its lowest set bit, no other
// vector of the result has that bit set, sorted by pivot (ascending); zero vectors are dropped.
// @post span(result) == span(vs), result.size() == rank(vs), and it is unique for the span.
// Example: {0b011, 0b110, 0b101} -> {0b101, 0b110}.
std::vector<Vec> row_echelon(std::span<const Vec> vs);

// dim span(vs). Example: rank({1, 1, 2}) == 2.
int rank(std::span<const Vec> vs);

// The XOR of the columns selected by the set bits of x (a linear map applied to x).
// Example: combine({1, 6, 8}, 0b011) == 7.
Vec combine(std::span<const Vec> columns, std::uint64_t x);

// v in span(vs). Example: in_span({0b011, 0b110}, 0b101) is true.
bool in_span(std::span<const Vec> vs, Vec v);

// Solves XOR_{j in x} columns[j] == target for a mask x over the columns, with every free
// (non-pivot) column set to 0: column j is a pivot iff it is not in the span of columns 0..j-1
// (the pivot columns of the reduced echelon form of the matrix whose columns these are).
// The solution is therefore unique and "minimal" (Triton's lstsq). nullopt when target is not in
// the span. @pre columns.size() <= 64.
// Example: solve({1, 1, 2}, 3) == 0b101 (column 1 is free).
std::optional<Vec> solve(std::span<const Vec> columns, Vec target);

// Mask of the free (non-pivot) columns: column j is free iff it lies in span(columns[0..j)).
// @post rank(columns) + popcount(result) == columns.size(). Example: free_columns({1, 1, 2}) ==
// 0b010; free_columns({2, 0, 2}) == 0b110. @pre columns.size() <= 64.
Vec free_columns(std::span<const Vec> columns);

// A basis of the null space {x : XOR_{j in x} columns[j] == 0}, as masks over the columns: one
// vector per free column j, made of j and pivot columns only. @pre columns.size() <= 64.
// @post result.size() == columns.size() - rank(columns).
// Example: null_space({1, 1, 2}) == {0b011}.
std::vector<Vec> null_space(std::span<const Vec> columns);

// Unit vectors e_i (i < n, increasing) at the non-pivot positions of row_echelon(vs):
// span(vs) + span(result) == F2^n and the sum is direct. @pre every v < 2^n, n <= 64.
// Example: complement({0b0010, 0b0001}, 3) == {0b100}; complement({2}, 5) == {1, 4, 8, 16}.
std::vector<Vec> complement(std::span<const Vec> vs, int n);

// A basis (reduced echelon) of span(a) ∩ span(b).
// @post every vector lies in both spans and rank(a) + rank(b) == rank(a ∪ b) + result.size().
// Example: intersection({0b011, 0b100}, {0b111}) == {0b111}.
std::vector<Vec> intersection(std::span<const Vec> a, std::span<const Vec> b);

}  // namespace axe::linear::f2
