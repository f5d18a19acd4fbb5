// libFuzzer target for mesh and placement text and the distributed layouts they build:
// parse_mesh, parse_placements, shard / DistLayout and local_shard.
//
// Input: up to three lines, "MESH\nPLACEMENTS\nSHAPE", e.g. "dp=2,tp=2\nS(0),R\n5,4". The second
// line may instead be an Axe layout (it contains '['), as `axe plan --from` takes either. The laws:
//   - each parser returns a value or throws axe::Error (nothing else escapes, nothing crashes);
//   - text round-trips: parse_mesh(to_string(m)) == m and prints the same; the placements print
//     (comma-joined to_string) and re-parse to equal placements;
//   - a mesh maps ranks to coordinates and back: rank_at(coord(r)) == r, index_of(r) is r's
//     position in ranks(), group(r, {a}) has axis_size(a) members and contains r;
//   - a distributed layout built from them (when the mesh has <= 64 devices and the shape <= 4096
//     elements) holds every (element, replica, partial term) exactly once over all ranks: the
//     local shards' regions add up to elements * replicas * terms, and each rank's buffer is
//     local_elements() long.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "axe/core/error.hpp"
#include "axe/dist/mesh.hpp"
#include "axe/dist/placement.hpp"
#include "fuzz_util.hpp"

namespace {

using axe::fuzz::broken;

std::optional<axe::Mesh> check_mesh(std::string_view input, std::string_view text) {
  axe::Mesh m;
  try {
    m = axe::parse_mesh(text);
  } catch (const axe::Error&) {
    return std::nullopt;
  }
  const std::string first = axe::to_string(m);
  try {
    axe::Mesh again = axe::parse_mesh(first);
    if (!(again == m) || axe::to_string(again) != first)
      broken("parse_mesh(to_string(m)) == m", input, first + " vs " + axe::to_string(again));
  } catch (const axe::Error& e) {
    broken("parse_mesh(to_string(m)) succeeds", input, first + ": " + e.what());
  }
  if (m.size() > 4096) return m;
  std::int64_t product = 1;
  for (auto s : m.sizes()) product *= s;
  if (product != m.size()) broken("mesh size == product of axis sizes", input, first);
  for (std::int64_t i = 0; i < m.size(); ++i) {
    const std::int64_t r = m.ranks()[static_cast<std::size_t>(i)];
    if (!m.contains(r) || m.index_of(r) != i) broken("index_of(ranks()[i]) == i", input, first);
    auto c = m.coord(r);
    if (m.rank_at(c) != r) broken("rank_at(coord(r)) == r", input, first);
    if (i < 8) {
      for (auto a : m.axes()) {
        std::vector<axe::Axis> one{a};
        auto g = m.group(r, one);
        bool found = false;
        for (auto x : g) found = found || x == r;
        if (static_cast<std::int64_t>(g.size()) != m.axis_size(a) || !found)
          broken("group(r, {a}) has size(a) members, r among them", input, first);
      }
    }
  }
  return m;
}

std::optional<std::vector<axe::AxisPlacement>> check_placements(std::string_view input,
                                                                std::string_view text) {
  std::vector<axe::AxisPlacement> ps;
  try {
    ps = axe::parse_placements(text);
  } catch (const axe::Error&) {
    return std::nullopt;
  }
  std::string first;
  for (std::size_t k = 0; k < ps.size(); ++k) first += (k ? "," : "") + axe::to_string(ps[k]);
  try {
    if (axe::parse_placements(first) != ps)
      broken("parse_placements(print(p)) == p", input, first);
  } catch (const axe::Error& e) {
    broken("parse_placements(print(p)) succeeds", input, first + ": " + e.what());
  }
  return ps;
}

// "5,4": at most 4 dims, each in 1..64 (a small tensor: the laws enumerate ranks, not elements).
std::optional<std::vector<std::int64_t>> small_shape(std::string_view text) {
  std::vector<std::int64_t> shape;
  for (auto item : axe::fuzz::split(text, ',')) {
    if (item.empty() || item.size() > 2) return std::nullopt;
    std::int64_t v = 0;
    for (char c : item) {
      if (c < '0' || c > '9') return std::nullopt;
      v = v * 10 + (c - '0');
    }
    if (v < 1 || v > 64) return std::nullopt;
    shape.push_back(v);
  }
  if (shape.size() > 4) return std::nullopt;
  return shape;
}

void check_dist(std::string_view input, const axe::DistLayout& l) {
  (void)axe::to_string(l);
  const axe::Mesh& mesh = l.mesh();
  if (mesh.size() > 64) return;
  const std::int64_t want = l.elements() * l.layout().replicas() * l.layout().terms();
  std::int64_t held = 0;
  for (auto r : mesh.ranks()) {
    axe::LocalShard s = axe::local_shard(l, r);
    if (s.buffer_elements != l.local_elements())
      broken("local_shard(l, r).buffer_elements == l.local_elements()", input, axe::to_string(l));
    if (s.terms.size() != s.regions.size())
      broken("one term index per region", input, axe::to_string(l));
    for (const auto& g : s.regions) held += g.elements();
  }
  if (held != want)
    broken("every (element, replica, term) is held exactly once", input,
           axe::to_string(l) + ": regions hold " + std::to_string(held) + ", expected " +
               std::to_string(want));
  // A rank outside the mesh holds nothing.
  std::int64_t outside = 0;
  for (auto r : mesh.ranks()) outside = std::max(outside, r + 1);
  if (axe::local_shard(l, outside).buffer_elements != 0)
    broken("a rank outside the mesh holds nothing", input, axe::to_string(l));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view input(reinterpret_cast<const char*>(data), size);
  auto lines = axe::fuzz::split(input, '\n');
  auto mesh = check_mesh(input, lines[0]);
  if (lines.size() < 2) return 0;
  const bool layout_text = lines[1].find('[') != std::string_view::npos;
  auto placements = layout_text ? std::nullopt : check_placements(input, lines[1]);
  if (!mesh || lines.size() < 3) return 0;
  auto shape = small_shape(lines[2]);
  if (!shape) return 0;
  try {
    if (layout_text) {
      check_dist(input, axe::DistLayout(*shape, axe::parse_axe_layout(lines[1]), *mesh));
    } else if (placements) {
      check_dist(input, axe::shard(std::span<const std::int64_t>(*shape), *mesh,
                                   std::span<const axe::AxisPlacement>(*placements)));
    }
  } catch (const axe::Error&) {
    // a placement that does not fit the mesh or the shape: reported, as it should be
  }
  return 0;
}
