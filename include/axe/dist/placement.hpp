// Distributed layouts on a mesh, and the DTensor/JAX placement sugar that builds them.
//
// A DistLayout is (logical global shape, Axe layout, mesh). The layout's D iters on a mesh axis
// give device coordinates, those on `m` the position in the local buffer; R iters on a mesh axis
// replicate, P iters hold partial terms. Its domain is the *padded* shape: a logical dim of n
// split over p devices is held as ceil(n/p)*p (torch.chunk: full shards, then a short or empty
// tail; DESIGN §2.3). Padding never travels and is never visible to users.
//
// Example, shape (5,4) on mesh gpu=4, Shard(0): ceil(5/4) = 2 rows per rank, padded shape (8,4):
//   S[(4,2,4):(1@gpu,4,1)]
//   rank 0 rows [0,2), rank 1 rows [2,4), rank 2 row [4,5), rank 3 nothing (local shape (0,4));
//   every rank's buffer is 8 elements, row-major (2,4); rank 2's second row is padding.
//
// Placements, DTensor style (one per mesh axis, in mesh order):
//   shard({64,128}, parse_mesh("dp=2,tp=2"), {Shard(0), Shard(1)})
//     -> S[(2,32,2,64):(1@dp,64,1@tp,1)]
//   {Shard(0), Replicate()} -> S[(2,32,128):(1@dp,128,1)] + R[2:1@tp]
//   {Replicate(), Partial()} -> S[(64,128):(128,1)] + R[2:1@dp] + P[2:1@tp]
// Several mesh axes on one dim split it in mesh-axis order (the first axis is the major block):
//   {Shard(0), Shard(0)} on dp=2,tp=2 puts row block 2*dp + tp on device (dp,tp).
// JAX style (each item names its axes; unnamed axes replicate):
//   {Shard(0, {"tp","dp"})} puts row block 2*tp + dp on device (dp,tp).
//
// Uneven dims over several mesh axes. DTensor style chunks NESTED, in mesh-axis order (exactly
// DTensor's distribute_tensor / compute_local_shape_and_global_offset): torch.chunk over the
// first axis, then torch.chunk of that local piece over the next, ... The padded extent is the
// same as one chunk over the product (ceil(ceil(n/a)/b) == ceil(n/(ab))), only where the padding
// sits differs. Worked by hand, rows over dp=2 then tp=2 (devices (0,0),(0,1),(1,0),(1,1)):
//   n=10: dp 5,5; tp 3,2 | 3,2  -> shards 3,2,3,2 at rows 0,3,5,8 (padded 12, local 3)
//   n=7:  dp 4,3; tp 2,2 | 2,1  -> shards 2,2,2,1 at rows 0,2,4,6 (same as flat chunk)
//   n=5:  dp 3,2; tp 2,1 | 1,1  -> shards 2,1,1,1 at rows 0,2,3,4 (flat chunk: 2,2,1,0)
//   n=3 over dp=4,tp=2: dp 1,1,1,0; tp 1,0 each -> one row on (0,0),(1,0),(2,0), rest empty.
// JAX style (axes named in one item) is ONE torch.chunk over the product of the axes' sizes
// (JAX pads the dim to a multiple of the product), so for n=5: 2,2,1,0.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "axe/layout/layout.hpp"
#include "axe/dist/mesh.hpp"

namespace axe {

struct AxisPlacement {
  enum class Kind : std::uint8_t { Shard, Replicate, Partial };
  Kind kind = Kind::Replicate;
  int dim = 0;                  // Shard: the tensor dim (negative counts from the end)
  ReduceOp op = ReduceOp::Sum;  // Partial: the reduction
  std::vector<Axis> axes;       // JAX style: the mesh axes, major first; empty: DTensor style
  bool operator==(const AxisPlacement&) const = default;
};
AxisPlacement Shard(int dim);
AxisPlacement Shard(int dim, std::initializer_list<std::string_view> axes);
AxisPlacement Replicate();
AxisPlacement Partial(ReduceOp op = ReduceOp::Sum);
AxisPlacement Partial(ReduceOp op, std::initializer_list<std::string_view> axes);
// "S(0)", "S(0,{dp,tp})", "R", "P", "P(max)", "P(max,{tp})".
std::string to_string(const AxisPlacement& p);
// Comma-separated placements, one per mesh axis: "S(0),R,P(max)". Throws axe::ParseError.
std::vector<AxisPlacement> parse_placements(std::string_view text);

// Normalised placements: what each mesh axis does, and per tensor dim the mesh axes (indices
// into mesh.axes()) that split it, major first.
struct Sharding {
  std::vector<AxisPlacement> per_axis;      // kind, dim, op; `axes` empty
  std::vector<std::vector<std::size_t>> dim_axes;
  // True (DTensor style): a dim over several axes chunks nested, one level per axis; false (JAX
  // style): one chunk over the product of the axes' sizes.
  bool nested = true;
  bool operator==(const Sharding&) const = default;
};
std::string to_string(const Sharding& s);  // DTensor style "S(0),R", with "{..}" when reordered

class DistLayout {
 public:
  DistLayout() = default;
  // Validates, throwing axe::Error that names the layout, the mesh and the broken condition:
  // every non-memory axis of `layout` is a mesh axis; device coordinates lie inside the mesh;
  // memory offsets are >= 0; no two (element, replica, term) land on one (device, memory) slot;
  // the layout admits `shape`: its size is prod(padded) with padded[k] >= shape[k] and its D
  // groups by `padded`. `padded` empty: shape itself when the sizes agree, otherwise inferred
  // from the trailing dim forwards (each dim takes the fewest iters reaching shape[k]).
  //
  // `nest` (optional, one entry per dim, empty entries allowed): the logical bounds of a dim
  // chunked nested over parts (p1, p2, ...) (DTensor's several mesh axes on one dim, see the
  // top of this file). Requires padded[k] == prod(p) * ceil(shape[k] / prod(p)). A dim with no
  // entry (or one part) has the plain bound: logical index i is padded index i, i < shape[k].
  DistLayout(std::vector<std::int64_t> shape, AxeLayout layout, Mesh mesh,
             std::vector<std::int64_t> padded = {}, std::vector<std::vector<std::int64_t>> nest = {});

  const std::vector<std::int64_t>& shape() const { return shape_; }
  const std::vector<std::int64_t>& padded_shape() const { return padded_; }
  const AxeLayout& layout() const { return layout_; }
  const Mesh& mesh() const { return mesh_; }
  // Set when built from placements (the planner then knows the DTensor transition).
  const std::optional<Sharding>& sharding() const { return sharding_; }
  // Elements of every rank's local buffer (1 + the largest memory coordinate; padding included).
  std::int64_t local_elements() const { return local_elements_; }
  std::int64_t elements() const;  // prod(shape)
  // Per dim, the parts of its nested chunking (empty: plain bound). Only dims whose nesting
  // moves padding are kept (e.g. n=7 over 2x2 equals the plain bound and is stored empty).
  const std::vector<std::vector<std::int64_t>>& nest() const { return nest_; }
  bool nested() const;  // some dim has a nested bound
  // Logical index i of dim k -> its padded index (the D domain). Plain bound: i. Nested, n=10
  // over (2,2): 0,1,2,3,4 -> 0,1,2,3,4 and 5..9 -> 6..10 (padded 11 is padding).
  std::int64_t padded_index(std::size_t k, std::int64_t i) const;
  // The inverse: nullopt for a padding slot. Law: logical_index(k, padded_index(k, i)) == i.
  std::optional<std::int64_t> logical_index(std::size_t k, std::int64_t padded) const;

  bool operator==(const DistLayout& o) const {
    return shape_ == o.shape_ && padded_ == o.padded_ && layout_ == o.layout_ &&
           mesh_ == o.mesh_ && nest_ == o.nest_;
  }

 private:
  friend DistLayout shard(std::span<const std::int64_t>, const Mesh&, const Sharding&);
  std::vector<std::int64_t> shape_, padded_;
  AxeLayout layout_;
  Mesh mesh_;
  std::optional<Sharding> sharding_;
  std::int64_t local_elements_ = 1;
  std::vector<std::vector<std::int64_t>> nest_;  // empty or one entry per dim
};
// "S[...] on dp=2,tp=2 shape (64,128)", with " padded (..)" when padded and " nested d0:(2,2)"
// per dim with a nested bound.
std::string to_string(const DistLayout& l);

// Normalises placements: either one per mesh axis without axes (DTensor style) or any number
// with explicit axes (JAX style, unnamed axes replicate). Throws axe::Error on a dim out of
// range, an axis used twice, a count that does not match the mesh, mixed styles, or two
// different Partial ops.
Sharding make_sharding(std::size_t ndim, const Mesh& mesh, std::span<const AxisPlacement> p);
// The layout of the placements: per dim d over axes (a1..ak) with product p and chunk
// c = ceil(n/p): D iters (size(a1):1@a1, ..., size(ak):1@ak, c:stride) with the local buffer
// row-major over the chunks; R[size:1@a] per replicated axis; P<op>[size:1@a] per partial axis.
// With s.nested and k >= 2 the dim's logical bounds are nested (see DistLayout::nest()).
DistLayout shard(std::span<const std::int64_t> shape, const Mesh& mesh, const Sharding& s);
DistLayout shard(std::span<const std::int64_t> shape, const Mesh& mesh,
                 std::span<const AxisPlacement> placements);
inline DistLayout shard(std::initializer_list<std::int64_t> shape, const Mesh& mesh,
                        std::initializer_list<AxisPlacement> placements) {
  return shard(std::span<const std::int64_t>(shape.begin(), shape.size()), mesh,
               std::span<const AxisPlacement>(placements.begin(), placements.size()));
}

// A strided set of global logical elements: begin + sum_j i_j * step_j along dim_j,
// 0 <= i_j < extent_j.
struct StridedRegion {
  struct Mode {
    int dim = 0;
    std::int64_t extent = 1;
    std::int64_t step = 1;
    bool operator==(const Mode&) const = default;
  };
  std::vector<std::int64_t> begin;
  std::vector<Mode> modes;
  std::int64_t elements() const;
  bool operator==(const StridedRegion&) const = default;
};
std::string to_string(const StridedRegion& r);  // "[32:64, 0:128]" for boxes, else modes

// What one rank holds. Example: (5,4) Shard(0) on gpu=4, rank 2: shape (1,4), regions
// {[4:5, 0:4]}, storage S[(2,4):(4,1)], buffer 8 elements. A rank outside the mesh holds nothing.
struct LocalShard {
  std::vector<std::int64_t> shape;      // per dim, how many distinct indices it holds
  std::vector<StridedRegion> regions;   // the logical elements it holds (one per replica/term)
  std::vector<std::int64_t> terms;      // partial term index of each region (0 if not partial)
  AxeLayout storage;                    // storage(layout): the local buffer's layout
  std::int64_t buffer_elements = 0;     // 0 when the rank is not in the mesh
};
LocalShard local_shard(const DistLayout& l, std::int64_t rank);

}  // namespace axe
