#include "axe/dist/mesh.hpp"

#include <algorithm>
#include <string>

#include "axe/core/error.hpp"

namespace axe {

Mesh::Mesh(std::vector<std::pair<std::string, std::int64_t>> axes,
           std::vector<std::int64_t> ranks) {
  std::int64_t n = 1;
  for (const auto& [name, size] : axes) {
    if (name.empty()) fail("mesh: empty axis name");
    if (name == "m") fail("mesh: axis name 'm' is reserved for memory");
    Axis a(name);
    if (std::find(axes_.begin(), axes_.end(), a) != axes_.end())
      fail("mesh: axis '" + name + "' given twice");
    if (size < 1) fail("mesh: axis '" + name + "' has size " + std::to_string(size) + " < 1");
    // Checked per axis, so the product never overflows.
    if (size > kMaxMeshDevices / n)
      fail("mesh: axis '" + name + "' of size " + std::to_string(size) + " makes more than " +
           std::to_string(kMaxMeshDevices) + " devices (the limit)");
    axes_.push_back(a);
    sizes_.push_back(size);
    n *= size;
  }
  if (ranks.empty()) {
    ranks_.resize(static_cast<std::size_t>(n));
    for (std::int64_t i = 0; i < n; ++i) ranks_[static_cast<std::size_t>(i)] = i;
    return;
  }
  if (static_cast<std::int64_t>(ranks.size()) != n)
    fail("mesh: " + std::to_string(ranks.size()) + " ranks given for " + std::to_string(n) +
         " devices");
  ranks_ = std::move(ranks);
  first_ = ranks_[0];
  for (std::int64_t i = 0; i < n; ++i) {
    std::int64_t r = ranks_[static_cast<std::size_t>(i)];
    if (r < 0) fail("mesh: negative rank " + std::to_string(r));
    if (r - first_ != i) contiguous_ = false;  // both >= 0: no overflow (first_ + i could)
  }
  identity_ = contiguous_ && first_ == 0;
  if (!contiguous_) {
    for (std::int64_t i = 0; i < n; ++i) {
      if (!index_.emplace(ranks_[static_cast<std::size_t>(i)], i).second)
        fail("mesh: rank " + std::to_string(ranks_[static_cast<std::size_t>(i)]) +
             " given twice");
    }
  }
}

std::vector<std::pair<Axis, std::int64_t>> Mesh::extents() const {
  std::vector<std::pair<Axis, std::int64_t>> r;
  for (std::size_t i = 0; i < axes_.size(); ++i) r.emplace_back(axes_[i], sizes_[i]);
  return r;
}

std::optional<std::size_t> Mesh::axis_index(Axis a) const {
  for (std::size_t i = 0; i < axes_.size(); ++i)
    if (axes_[i] == a) return i;
  return std::nullopt;
}

std::int64_t Mesh::axis_size(Axis a) const {
  auto i = axis_index(a);
  if (!i) fail("mesh " + to_string(*this) + " has no axis '" + std::string(a.name()) + "'");
  return sizes_[*i];
}

std::optional<std::int64_t> Mesh::find_index(std::int64_t rank) const {
  if (contiguous_) {
    if (rank >= first_ && rank - first_ < size()) return rank - first_;  // first_ + size() may overflow
    return std::nullopt;
  }
  auto it = index_.find(rank);
  if (it == index_.end()) return std::nullopt;
  return it->second;
}

bool Mesh::contains(std::int64_t rank) const { return find_index(rank).has_value(); }

std::int64_t Mesh::index_of(std::int64_t rank) const {
  auto i = find_index(rank);
  if (!i) fail("rank " + std::to_string(rank) + " is not in mesh " + to_string(*this));
  return *i;
}

std::vector<std::int64_t> Mesh::coord_of_index(std::int64_t index) const {
  std::vector<std::int64_t> c(axes_.size());
  for (std::size_t k = axes_.size(); k-- > 0;) {
    c[k] = index % sizes_[k];
    index /= sizes_[k];
  }
  return c;
}

std::vector<std::int64_t> Mesh::coord(std::int64_t rank) const {
  return coord_of_index(index_of(rank));
}

std::int64_t Mesh::index_at(std::span<const std::int64_t> coord) const {
  if (coord.size() != axes_.size())
    fail("mesh " + to_string(*this) + ": coordinate has " + std::to_string(coord.size()) +
         " entries, expected " + std::to_string(axes_.size()));
  std::int64_t i = 0;
  for (std::size_t k = 0; k < axes_.size(); ++k) {
    if (coord[k] < 0 || coord[k] >= sizes_[k])
      fail("mesh " + to_string(*this) + ": coordinate " + std::to_string(coord[k]) +
           " outside axis '" + std::string(axes_[k].name()) + "'");
    i = i * sizes_[k] + coord[k];
  }
  return i;
}

std::int64_t Mesh::rank_at(std::span<const std::int64_t> coord) const {
  return ranks_[static_cast<std::size_t>(index_at(coord))];
}

std::vector<std::int64_t> Mesh::group(std::int64_t rank, std::span<const Axis> axes) const {
  std::vector<std::int64_t> c = coord(rank);
  std::vector<std::size_t> idx;
  std::int64_t n = 1;
  for (Axis a : axes) {
    auto i = axis_index(a);
    if (!i) fail("mesh " + to_string(*this) + " has no axis '" + std::string(a.name()) + "'");
    if (std::find(idx.begin(), idx.end(), *i) != idx.end())
      fail("group: axis '" + std::string(a.name()) + "' given twice");
    idx.push_back(*i);
    n *= sizes_[*i];
  }
  std::vector<std::int64_t> out;
  out.reserve(static_cast<std::size_t>(n));
  for (std::int64_t j = 0; j < n; ++j) {
    std::int64_t rest = j;
    for (std::size_t k = idx.size(); k-- > 0;) {
      c[idx[k]] = rest % sizes_[idx[k]];
      rest /= sizes_[idx[k]];
    }
    out.push_back(rank_at(c));
  }
  return out;
}

std::string to_string(const Mesh& m) {
  std::string s;
  for (std::size_t i = 0; i < m.ndim(); ++i) {
    if (i) s += ",";
    s += std::string(m.axes()[i].name()) + "=" + std::to_string(m.sizes()[i]);
  }
  if (!m.is_row_major()) {
    s += ":";
    const auto& r = m.ranks();
    bool contiguous = true;
    for (std::size_t i = 0; i < r.size(); ++i) contiguous = contiguous && r[i] - r[0] == std::int64_t(i);
    if (contiguous && r.size() > 1) {
      s += std::to_string(r.front()) + ".." + std::to_string(r.back());
    } else {
      for (std::size_t i = 0; i < r.size(); ++i) s += (i ? "," : "") + std::to_string(r[i]);
    }
  }
  return s;
}

namespace {
std::int64_t parse_int(std::string_view t, std::string_view whole) {
  std::string s(t);
  std::size_t used = 0;
  long long v = 0;
  try {
    v = std::stoll(s, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (s.empty() || used != s.size())
    fail("mesh '" + std::string(whole) + "': expected an integer, got '" + s + "'");
  return v;
}

std::vector<std::string_view> split(std::string_view t, char sep) {
  std::vector<std::string_view> out;
  std::size_t pos = 0;
  while (true) {
    std::size_t e = t.find(sep, pos);
    out.push_back(t.substr(pos, e == std::string_view::npos ? std::string_view::npos : e - pos));
    if (e == std::string_view::npos) break;
    pos = e + 1;
  }
  return out;
}
}  // namespace

Mesh parse_mesh(std::string_view text) {
  std::string_view axes_text = text, ranks_text;
  if (auto colon = text.find(':'); colon != std::string_view::npos) {
    axes_text = text.substr(0, colon);
    ranks_text = text.substr(colon + 1);
  }
  std::vector<std::pair<std::string, std::int64_t>> axes;
  if (!axes_text.empty()) {
    for (auto item : split(axes_text, ',')) {
      auto eq = item.find('=');
      if (eq == std::string_view::npos || eq == 0)
        fail("mesh '" + std::string(text) + "': expected NAME=SIZE, got '" + std::string(item) +
             "'");
      axes.emplace_back(std::string(item.substr(0, eq)), parse_int(item.substr(eq + 1), text));
    }
  }
  std::vector<std::int64_t> ranks;
  if (!ranks_text.empty()) {
    if (auto dots = ranks_text.find(".."); dots != std::string_view::npos) {
      std::int64_t a = parse_int(ranks_text.substr(0, dots), text);
      std::int64_t b = parse_int(ranks_text.substr(dots + 2), text);
      if (b < a) fail("mesh '" + std::string(text) + "': empty rank range");
      if (a < 0) fail("mesh '" + std::string(text) + "': negative rank " + std::to_string(a));
      // Bounded before it is built (a, b >= 0: b - a does not overflow).
      if (b - a >= kMaxMeshDevices)
        fail("mesh '" + std::string(text) + "': rank range " + std::to_string(a) + ".." + std::to_string(b) +
             " has more than " + std::to_string(kMaxMeshDevices) + " ranks (the device limit)");
      for (std::int64_t i = 0; i <= b - a; ++i) ranks.push_back(a + i);  // r <= b never ends at b = INT64_MAX
    } else {
      for (auto item : split(ranks_text, ',')) ranks.push_back(parse_int(item, text));
    }
  }
  return Mesh(std::move(axes), std::move(ranks));
}

}  // namespace axe
