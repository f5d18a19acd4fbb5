// A device mesh: named device axes with sizes, and the map between device coordinates and ranks.
//
// Mesh `dp=2,tp=4` has 8 devices. By default ranks are row-major over the axes (last axis
// fastest): coordinate (dp,tp) = (1,2) is rank 1*4 + 2 = 6. Any list of distinct non-negative
// ranks may be given instead, e.g. ranks {8..15} for a second mesh of the same shape (cross-mesh
// resharding) or {0,2,4,6,1,3,5,7} for a permuted one; device index i (row-major over the
// coordinates) is then rank ranks[i].
//
// A device axis is an Axe axis with the same name: a layout on a mesh puts device coordinates on
// those axes and the local storage on `m` (see placement.hpp).
//
// Groups: group(r, {tp}) are the ranks that share every coordinate of r except tp, ordered by tp;
// for `dp=2,tp=4`, group(6, {tp}) = {4,5,6,7} and group(6, {dp}) = {2,6}. With several axes the
// order is row-major over the axes in the order given: group(6, {tp,dp}) = {0,4,1,5,2,6,3,7}.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "axe/layout/layout.hpp"

namespace axe {

// The most devices a mesh may have: 2^20 (a mesh stores one rank per device, so "gpu=2147483648"
// would otherwise allocate 16 GiB from a 15-character text). More is an axe::Error.
inline constexpr std::int64_t kMaxMeshDevices = std::int64_t{1} << 20;

class Mesh {
 public:
  Mesh() = default;  // no axes, one device, rank 0
  // Throws axe::Error on an empty, duplicate or `m` axis name, a size < 1, more than
  // kMaxMeshDevices devices, a rank list of the wrong length, a negative or repeated rank.
  Mesh(std::vector<std::pair<std::string, std::int64_t>> axes,
       std::vector<std::int64_t> ranks = {});

  std::size_t ndim() const { return axes_.size(); }
  const std::vector<Axis>& axes() const { return axes_; }
  const std::vector<std::int64_t>& sizes() const { return sizes_; }
  // (axis, size) pairs, in mesh order: the `extents` argument of axe::check_valid.
  std::vector<std::pair<Axis, std::int64_t>> extents() const;
  std::optional<std::size_t> axis_index(Axis a) const;
  std::int64_t axis_size(Axis a) const;  // throws axe::Error on an axis not in the mesh
  std::int64_t size() const { return static_cast<std::int64_t>(ranks_.size()); }
  const std::vector<std::int64_t>& ranks() const { return ranks_; }
  bool is_row_major() const { return identity_; }  // ranks are 0..size()-1 in order

  bool contains(std::int64_t rank) const;
  // Row-major device index of `rank` (its position in ranks()); throws if not in the mesh.
  std::int64_t index_of(std::int64_t rank) const;
  std::optional<std::int64_t> find_index(std::int64_t rank) const;
  // Device coordinate of `rank`, one entry per axis. Law: rank_at(coord(r)) == r.
  std::vector<std::int64_t> coord(std::int64_t rank) const;
  std::vector<std::int64_t> coord_of_index(std::int64_t index) const;
  std::int64_t index_at(std::span<const std::int64_t> coord) const;
  std::int64_t rank_at(std::span<const std::int64_t> coord) const;
  // The ranks sharing every coordinate of `rank` but those on `axes`, row-major over `axes` in
  // the order given. `rank` is in the result; its size is the product of the axes' sizes.
  std::vector<std::int64_t> group(std::int64_t rank, std::span<const Axis> axes) const;

  bool operator==(const Mesh& o) const {
    return axes_ == o.axes_ && sizes_ == o.sizes_ && ranks_ == o.ranks_;
  }

 private:
  std::vector<Axis> axes_;
  std::vector<std::int64_t> sizes_;
  std::vector<std::int64_t> ranks_{0};
  bool identity_ = true;
  std::int64_t first_ = 0;  // ranks are first_, first_+1, ... when contiguous_
  bool contiguous_ = true;
  std::unordered_map<std::int64_t, std::int64_t> index_;  // rank -> index when not contiguous
};

// "dp=2,tp=4", followed by ":RANKS" when the ranks are not 0..n-1 in order, where RANKS is a
// comma list of ranks or a range "a..b" (inclusive): "gpu=4:4..7".
std::string to_string(const Mesh& m);
// Parses the text form above. Throws axe::Error naming the text on malformed input, and on a
// rank range that is negative or longer than kMaxMeshDevices (before building it).
Mesh parse_mesh(std::string_view text);

}  // namespace axe
