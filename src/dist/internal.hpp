// Dist internals: a distributed layout grouped by its padded shape (a side), the segments of a
// nested bound, and two sides refined to common factors (DESIGN §4.1), which both the local
// shards of one layout and the planner's exchanges are built from.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "axe/dist/placement.hpp"

namespace axe::internal {

// An iter of one side; axis is a mesh-axis index, or `mem` (== number of mesh axes) for `m`.
struct SideIter {
  std::int64_t extent = 1;
  int axis = 0;
  std::int64_t stride = 0;
};

// One layout, grouped by its padded shape, extent-1 iters dropped.
struct Side {
  const DistLayout* layout = nullptr;
  std::shared_ptr<const DistLayout> owner;  // keeps `layout` alive inside a Pair
  int naxes = 0;  // mesh axes; index naxes is `m`
  std::vector<std::vector<SideIter>> dims;  // per logical dim, outer first
  std::vector<SideIter> rep, part;
  std::vector<std::int64_t> offset;  // per axis, m last
  std::int64_t replicas = 1, terms = 1;
  ReduceOp op = ReduceOp::Sum;
  int mem() const { return naxes; }
};
// Throws axe::Error naming the layout when D does not group by the padded shape.
Side make_side(const DistLayout& l);
// Validity of a side against its mesh (axes, bounds, injectivity); throws axe::Error.
std::int64_t check_side(const Side& s);  // returns the local buffer size
std::vector<std::int64_t> infer_padded(const AxeLayout& l, const std::vector<std::int64_t>& shape);

// A logical range [lo, lo + len) of one dim held at padded indexes lo + shift ... (one piece of
// a nested bound; DistLayout::padded_index is affine with slope 1 on it).
struct Segment {
  std::int64_t lo = 0, len = 0, shift = 0;
};
// The maximal segments of n chunked nested over `parts` in a padded extent (ascending lo,
// covering [0, n)); O(prod(parts)) work. One segment with shift 0 for a plain bound.
std::vector<Segment> nest_segments(std::int64_t n, std::int64_t padded, const std::vector<std::int64_t>& parts);
std::vector<Segment> dim_segments(const DistLayout& l, std::size_t k);

// A factor of the common refinement: a digit of one dim's logical index, with its place value,
// and where it lands on each side.
struct Factor {
  std::int64_t extent = 1;
  int dim = 0;
  std::int64_t place = 1;
  int s_axis = 0;
  std::int64_t s_stride = 0;
  int d_axis = 0;
  std::int64_t d_stride = 0;
};
// A box of logical elements: the modes (full ranges) on top of fixed bases.
struct GBox {
  std::vector<Factor> factors;
  std::vector<std::int64_t> s_base, d_base;  // per axis incl. m (offsets included)
  std::vector<std::int64_t> begin;           // logical begin per dim
};

// "(a,b,c)": a shape or an index list as errors and plans print it.
std::string shape_text(const std::vector<std::int64_t>& v);
// "'LAYOUT'": a distributed layout's Axe layout, quoted, as errors name it.
std::string layout_name(const DistLayout& l);

// The refined digits of dim k over [0, n) when both sides' place values form one chain (outer
// first, extent-1 digits kept); sets chain = false otherwise.
std::vector<Factor> chain_factors(const Side& src, const Side& dst, std::size_t k, std::int64_t n, bool& chain);
// Disjoint boxes covering the logical tensor, each a product of refined digits of (src, dst) on
// bases that include both sides' offsets: the product over dims of refine_dim's pieces.
std::vector<GBox> common_boxes(const Side& src, const Side& dst);

// Every digit assignment of `vars` (extent, stride) with sum(d_i * stride_i) == target.
std::vector<std::vector<std::int64_t>> solve(const std::vector<std::pair<std::int64_t, std::int64_t>>& vars,
                                             std::int64_t target);

struct VarRef {
  enum Kind : std::uint8_t { FactorV, RepV, PartV } kind;
  std::size_t index;
};

struct Assign {
  std::vector<std::int64_t> fd, r, t;  // factor digits (-1 free), replica digits, term digits
};

// x = digits read row-major over the extents of `it` (last fastest).
std::int64_t row_major(const std::vector<std::int64_t>& digits, const std::vector<SideIter>& it);

// Calls f for every combination of digits over `extents` (row-major, last fastest).
template <class F>
void odometer(const std::vector<std::int64_t>& extents, F&& f) {
  std::vector<std::int64_t> d(extents.size(), 0);
  for (auto e : extents)
    if (e <= 0) return;
  while (true) {
    f(d);
    std::size_t i = d.size();
    while (i > 0) {
      --i;
      if (++d[i] < extents[i]) break;
      d[i] = 0;
      if (i == 0) return;
    }
    if (d.empty()) return;
  }
}

// Solves one side's device coordinate `c` for box b: every assignment of the factors on that
// side's device axes and of its replica and term digits. `mem_rep_all`: enumerate replica digits
// on `m` (destination: every slot needs data) or fix them to 0 (source: one copy sends).
std::vector<Assign> solve_side(const GBox& b, const Side& s, bool is_src,
                               const std::vector<std::int64_t>& c, bool mem_rep_all);

// The regions (and their term indices) that `rank` holds under side s, from the refinement of s
// with itself: one region per box and solution of rank's coordinate, replicas on `m` at 0.
void held_regions(const Side& s, std::int64_t rank, std::vector<StridedRegion>& regions,
                  std::vector<std::int64_t>& terms);

}  // namespace axe::internal
