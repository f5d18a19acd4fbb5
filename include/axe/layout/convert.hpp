// Conversions between CuTe layouts and Axe layouts.
//
// A CuTe layout maps a coordinate to an offset and flattens coordinates colexicographically
// (leftmost mode fastest); an Axe layout's D flattens row-major (last iter fastest). Two
// conversions are therefore meaningful, and callers say which:
//
//   IndexOrder::Coordinate  the same map coordinate -> offset: CuTe (s0,s1):(d0,d1) and Axe
//                           S[(s0,s1):(d0,d1)] agree on every (i0,i1). Nested modes are flattened
//                           colexicographically inside each top-level mode (so their order is
//                           reversed in D to keep the function of the mode's 1-D index).
//   IndexOrder::Linear      the same map 1-D index -> offset: CuTe (s0,s1):(d0,d1) is Axe
//                           S[(s1,s0):(d1,d0)] (all modes reversed).
//
// Example: CuTe (8,16):(16,1) (row-major 8x16) is S[(8,16):(16,1)] under Coordinate order and
// S[(16,8):(1,16)] under Linear order.
#pragma once

#include "axe/layout/layout.hpp"
#include "axe/cute/layout.hpp"

namespace axe {

enum class IndexOrder { Coordinate, Linear };

// Every CuTe layout converts; all iters land on `axis` (default `m`), with no R, P or O.
AxeLayout from_cute(const cute::Layout& l, IndexOrder order, Axis axis = Axis());

// Converts when the Axe layout has only D iters on one axis, no R, no P and a zero offset;
// otherwise throws axe::Error naming what has no CuTe counterpart. With `shape` (Coordinate
// order), the result has one top-level mode per logical dim, grouped by `shape`.
cute::Layout to_cute(const AxeLayout& l, IndexOrder order);
cute::Layout to_cute(const AxeLayout& l, std::span<const std::int64_t> shape);

}  // namespace axe
